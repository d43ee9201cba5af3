#include "weir/base/cancellation.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <set>
#include <thread>
#include <vector>

namespace weir {
namespace {

TEST(CancellationManagerTest, TokensAreDistinct) {
  CancellationManager cm;
  std::set<CancellationToken> tokens;
  for (int i = 0; i < 100; ++i) tokens.insert(cm.GetToken());
  EXPECT_EQ(tokens.size(), 100u);
}

TEST(CancellationManagerTest, StartCancelRunsEachCallbackOnce) {
  CancellationManager cm;
  int runs[3] = {0, 0, 0};
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(cm.RegisterCallback(cm.GetToken(), [&runs, i] { ++runs[i]; }));
  }
  EXPECT_FALSE(cm.IsCancelled());
  EXPECT_EQ(runs[0] + runs[1] + runs[2], 0);  // nothing runs before cancel
  cm.StartCancel();
  EXPECT_TRUE(cm.IsCancelled());
  EXPECT_EQ(runs[0], 1);
  EXPECT_EQ(runs[1], 1);
  EXPECT_EQ(runs[2], 1);
  cm.StartCancel();  // a second cancel runs nothing again
  EXPECT_EQ(runs[0] + runs[1] + runs[2], 3);
}

TEST(CancellationManagerTest, RegistrationAfterCancelFailsAndNeverRuns) {
  CancellationManager cm;
  cm.StartCancel();
  int runs = 0;
  EXPECT_FALSE(cm.RegisterCallback(cm.GetToken(), [&] { ++runs; }));
  cm.StartCancel();
  EXPECT_EQ(runs, 0);
}

TEST(CancellationManagerTest, DeregisterBeforeCancel) {
  CancellationManager cm;
  int kept = 0, removed = 0;
  CancellationToken keep = cm.GetToken(), remove = cm.GetToken();
  ASSERT_TRUE(cm.RegisterCallback(keep, [&] { ++kept; }));
  ASSERT_TRUE(cm.RegisterCallback(remove, [&] { ++removed; }));
  EXPECT_TRUE(cm.DeregisterCallback(remove));
  EXPECT_FALSE(cm.DeregisterCallback(remove));  // already gone
  cm.StartCancel();
  EXPECT_EQ(kept, 1);
  EXPECT_EQ(removed, 0);
}

TEST(CancellationManagerTest, DeregisterAfterCancelReportsCallbackRan) {
  CancellationManager cm;
  int runs = 0;
  CancellationToken token = cm.GetToken();
  ASSERT_TRUE(cm.RegisterCallback(token, [&] { ++runs; }));
  cm.StartCancel();
  EXPECT_FALSE(cm.DeregisterCallback(token));
  EXPECT_EQ(runs, 1);
}

TEST(CancellationManagerTest, DeregisterUnknownToken) {
  CancellationManager cm;
  EXPECT_FALSE(cm.DeregisterCallback(cm.GetToken()));
}

TEST(CancellationManagerTest, CallbacksRunOutsideTheLock) {
  // A callback that touches the manager (as a cancelled kernel cleaning up
  // does) must not deadlock.
  CancellationManager cm;
  CancellationToken token = cm.GetToken();
  bool deregistered = true, registered = true;
  ASSERT_TRUE(cm.RegisterCallback(token, [&] {
    deregistered = cm.DeregisterCallback(token);
    registered = cm.RegisterCallback(cm.GetToken(), [] {});
  }));
  cm.StartCancel();
  EXPECT_FALSE(deregistered);
  EXPECT_FALSE(registered);
}

TEST(CancellationManagerTest, ConcurrentRegisterAndCancel) {
  // Every callback whose registration succeeded runs exactly once; every
  // callback whose registration failed never runs.
  for (int round = 0; round < 20; ++round) {
    CancellationManager cm;
    constexpr int kThreads = 8;
    constexpr int kPerThread = 200;
    std::vector<std::atomic<int>> runs(kThreads * kPerThread);
    std::vector<char> accepted(kThreads * kPerThread, 0);
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        while (!go.load()) {
        }
        for (int i = 0; i < kPerThread; ++i) {
          int k = t * kPerThread + i;
          accepted[k] = cm.RegisterCallback(cm.GetToken(), [&runs, k] { runs[k].fetch_add(1); });
        }
      });
    }
    std::thread canceller([&] {
      while (!go.load()) {
      }
      cm.StartCancel();
    });
    go.store(true);
    for (auto& t : threads) t.join();
    canceller.join();
    ASSERT_TRUE(cm.IsCancelled());
    for (size_t k = 0; k < runs.size(); ++k) {
      ASSERT_EQ(runs[k].load(), accepted[k] ? 1 : 0) << "callback " << k;
    }
  }
}

}  // namespace
}  // namespace weir
