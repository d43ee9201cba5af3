#include "weir/base/threadpool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
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
  // Expensive units: the range must be split.
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

// Holds one of `pool`'s cores from another thread until Release().
class CoreHolder {
 public:
  explicit CoreHolder(ThreadPool* pool)
      : thread_([this, pool] {
          ThreadPool::ScopedBusy busy(pool);
          holding_.Notify();
          release_.Wait();
        }) {
    holding_.Wait();
  }
  ~CoreHolder() {
    Release();
    thread_.join();
  }
  void Release() {
    if (!release_.HasBeenNotified()) release_.Notify();
  }

 private:
  Notification holding_, release_;
  std::thread thread_;
};

// Runs `shards` shards of `millis` each; returns the pool thread ids that
// ran them (-1: the caller).
std::multiset<int> ShardThreads(ThreadPool* pool, int shards, int millis,
                                const std::function<void(int64_t)>& on_shard = nullptr) {
  std::mutex mu;
  std::multiset<int> ids;
  pool->ParallelFor(shards, int64_t{1} << 40, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      if (on_shard) on_shard(i);
      std::this_thread::sleep_for(std::chrono::milliseconds(millis));
      std::lock_guard<std::mutex> lock(mu);
      ids.insert(pool->CurrentThreadId());
    }
  });
  return ids;
}

TEST(ThreadPoolTest, ParallelForRunsOnTheCallerWhenNoCoreIsIdle) {
  ThreadPool pool("test", 2);
  // Another kernel holds one core; the caller counts as the other.
  CoreHolder other(&pool);
  const std::multiset<int> ids = ShardThreads(&pool, 6, 2);
  EXPECT_EQ(ids.size(), 6u);
  EXPECT_EQ(ids.count(-1), 6u) << "shards ran on pool threads while both cores were busy";
}

TEST(ThreadPoolTest, ParallelForRecruitsACoreFreedMidway) {
  ThreadPool pool("test", 2);
  CoreHolder other(&pool);
  // The other kernel finishes while the first shard runs: a pool thread
  // joins for the remaining shards.
  const std::multiset<int> ids =
      ShardThreads(&pool, 8, 20, [&](int64_t shard) { if (shard == 0) other.Release(); });
  EXPECT_EQ(ids.size(), 8u);
  EXPECT_LT(ids.count(-1), 8u) << "no pool thread joined after a core became idle";
}

// Back-to-back calls from two threads, with pauses around the workers' spin
// time between them: work goes to spinning workers, to sleeping ones, and
// is offered just as a spinner gives up. Every call covers its range once.
TEST(ThreadPoolTest, BackToBackParallelForsFromTwoThreadsEachCoverOnce) {
  ThreadPool pool("test", 2);
  std::atomic<int> miscovered{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 2; ++t) {
    callers.emplace_back([&, t] {
      std::mt19937 gen(t);
      for (int call = 0; call < 2000; ++call) {
        constexpr int64_t kTotal = 64;
        std::vector<std::atomic<int>> visits(kTotal);
        pool.ParallelFor(kTotal, int64_t{1} << 20, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) visits[i].fetch_add(1);
        });
        for (const auto& v : visits) miscovered += v.load() != 1;
        if (call % 2 == 1) std::this_thread::sleep_for(std::chrono::microseconds(gen() % 120));
      }
    });
  }
  for (auto& c : callers) c.join();
  EXPECT_EQ(miscovered.load(), 0);
}

TEST(ThreadPoolTest, AClaimedCoreIsLeftToTheWorkThatClaimedIt) {
  ThreadPool pool("test", 2);
  // Work queued for another thread claims the second core.
  pool.ClaimCore();
  std::multiset<int> ids = ShardThreads(&pool, 6, 2);
  EXPECT_EQ(ids.count(-1), 6u) << "a pool thread took the claimed core";
  // The thread that runs the work takes the claim over and releases it.
  std::thread([&] { ThreadPool::ScopedBusy busy(&pool, ThreadPool::ScopedBusy::kClaimed); })
      .join();
  ids = ShardThreads(&pool, 8, 20);
  EXPECT_LT(ids.count(-1), 8u) << "the released core was not recruited";
}

// A helper woken from sleep may start only after the caller has run every
// shard itself (here: both workers are held, so it cannot start at all).
// Its core must not stay counted busy meanwhile, or the next ParallelFor
// (the next kernel, microseconds later) finds no idle core to recruit.
TEST(ThreadPoolTest, AHelperThatStartsLateHoldsNoCore) {
  ThreadPool pool("test", 2);
  Notification release;
  std::atomic<int> held{0};
  for (int i = 0; i < 2; ++i) {
    pool.Schedule([&] {
      held.fetch_add(1);
      release.Wait();
    });
  }
  while (held.load() < 2) std::this_thread::yield();
  EXPECT_EQ(pool.BusyCores(), 0);
  const std::multiset<int> ids = ShardThreads(&pool, 4, 1);
  EXPECT_EQ(ids.count(-1), 4u) << "a held worker ran a shard";
  EXPECT_EQ(pool.BusyCores(), 0) << "the late helper's core is still counted busy";
  // A ParallelFor now recruits the idle core again (the helper it wakes
  // waits behind the held workers, so the caller still runs every shard).
  EXPECT_EQ(ShardThreads(&pool, 4, 1).count(-1), 4u);
  EXPECT_EQ(pool.BusyCores(), 0);
  release.Notify();
}

TEST(ThreadPoolTest, ScopedBusyNestsOnOneThread) {
  ThreadPool pool("test", 2);
  {
    ThreadPool::ScopedBusy outer(&pool);
    ThreadPool::ScopedBusy inner(&pool);  // the same thread: still one core
    // One core is left, so a pool thread helps.
    const std::multiset<int> ids = ShardThreads(&pool, 4, 20);
    EXPECT_LT(ids.count(-1), 4u);
  }
}

TEST(ThreadPoolTest, NestedParallelForFinishesAndCoversOnce) {
  // Every shard of the outer loop runs an inner loop; callers run their
  // own unclaimed shards, so nesting can't deadlock even with every pool
  // thread inside an outer shard.
  ThreadPool pool("test", 2);
  constexpr int64_t kOuter = 16, kInner = 64;
  std::vector<std::atomic<int>> visits(kOuter * kInner);
  pool.ParallelFor(kOuter, int64_t{1} << 30, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      pool.ParallelFor(kInner, int64_t{1} << 30, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) visits[o * kInner + i].fetch_add(1);
      });
    }
  });
  for (int64_t i = 0; i < kOuter * kInner; ++i) ASSERT_EQ(visits[i].load(), 1) << i;
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
