#include "weir/base/threadpool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "weir/base/notification.h"

namespace weir {
namespace {

TEST(ThreadPoolTest, NumThreads) {
  ThreadPool pool("test", 3);
  EXPECT_EQ(pool.NumThreads(), 3);
}

TEST(ThreadPoolTest, ScheduleRunsEverything) {
  constexpr int kTasks = 1000;
  std::atomic<int> ran{0};
  Notification all_done;
  ThreadPool pool("test", 4);
  for (int i = 0; i < kTasks; ++i) {
    pool.Schedule([&] {
      if (ran.fetch_add(1) + 1 == kTasks) all_done.Notify();
    });
  }
  ASSERT_TRUE(all_done.WaitFor(std::chrono::seconds(30)));
  EXPECT_EQ(ran.load(), kTasks);
}

TEST(ThreadPoolTest, DestructorWaitsForScheduledWork) {
  constexpr int kTasks = 200;
  std::atomic<int> ran{0};
  {
    ThreadPool pool("test", 2);
    for (int i = 0; i < kTasks; ++i) {
      pool.Schedule([&] {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
        ran.fetch_add(1);
      });
    }
  }
  EXPECT_EQ(ran.load(), kTasks);
}

TEST(ThreadPoolTest, CurrentThreadId) {
  constexpr int kThreads = 3;
  ThreadPool pool("test", kThreads);
  EXPECT_EQ(pool.CurrentThreadId(), -1);  // the test thread is not ours

  constexpr int kTasks = 64;
  std::mutex mu;
  std::vector<int> ids;
  std::atomic<int> done{0};
  Notification all_done;
  ThreadPool other("other", 1);
  std::atomic<int> id_in_other_pool{-2};
  for (int i = 0; i < kTasks; ++i) {
    pool.Schedule([&, i] {
      {
        std::lock_guard<std::mutex> lock(mu);
        ids.push_back(pool.CurrentThreadId());
      }
      if (i == 0) id_in_other_pool = other.CurrentThreadId();
      if (done.fetch_add(1) + 1 == kTasks) all_done.Notify();
    });
  }
  ASSERT_TRUE(all_done.WaitFor(std::chrono::seconds(30)));
  for (int id : ids) {
    EXPECT_GE(id, 0);
    EXPECT_LT(id, kThreads);
  }
  // A thread of one pool is not a thread of another.
  EXPECT_EQ(id_in_other_pool.load(), -1);
}

// Runs ParallelFor and checks every index in [0, total) is visited once.
void CheckCoversOnce(ThreadPool* pool, int64_t total, int64_t cost, int* num_shards) {
  std::vector<std::atomic<int>> visits(total);
  std::atomic<int> shards{0};
  pool->ParallelFor(total, cost, [&](int64_t begin, int64_t end) {
    EXPECT_LE(0, begin);
    EXPECT_LT(begin, end);
    EXPECT_LE(end, total);
    shards.fetch_add(1);
    for (int64_t i = begin; i < end; ++i) visits[i].fetch_add(1);
  });
  for (int64_t i = 0; i < total; ++i) {
    ASSERT_EQ(visits[i].load(), 1) << "index " << i << " of " << total;
  }
  *num_shards = shards.load();
}

TEST(ThreadPoolTest, ParallelForCoversRangeExactlyOnceWithSeveralShards) {
  ThreadPool pool("test", 4);
  int shards = 0;
  // Expensive units: Eigen's cost model must split the range.
  CheckCoversOnce(&pool, 10007, 100000, &shards);
  EXPECT_GE(shards, 2);
  // Cheap units over a small range: may run as one shard, still exactly once.
  CheckCoversOnce(&pool, 3, 1, &shards);
  EXPECT_GE(shards, 1);
  CheckCoversOnce(&pool, 1, 1000000, &shards);
  EXPECT_EQ(shards, 1);
}

TEST(ThreadPoolTest, ParallelForUsesPoolThreads) {
  ThreadPool pool("test", 4);
  std::mutex mu;
  std::set<int> ids;
  pool.ParallelFor(4096, 1000000, [&](int64_t, int64_t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::lock_guard<std::mutex> lock(mu);
    ids.insert(pool.CurrentThreadId());
  });
  // Shards ran on at least one pool thread, not only on the caller (-1).
  EXPECT_TRUE(std::any_of(ids.begin(), ids.end(), [](int id) { return id >= 0; }));
}

TEST(ThreadPoolTest, ParallelForOfNothingCallsNothing) {
  ThreadPool pool("test", 2);
  std::atomic<int> calls{0};
  pool.ParallelFor(0, 100, [&](int64_t, int64_t) { calls.fetch_add(1); });
  pool.ParallelFor(-5, 100, [&](int64_t, int64_t) { calls.fetch_add(1); });
  EXPECT_EQ(calls.load(), 0);
}

TEST(ThreadPoolTest, NumSchedulableCpusIsPositive) {
  EXPECT_GE(NumSchedulableCpus(), 1);
}

}  // namespace
}  // namespace weir
