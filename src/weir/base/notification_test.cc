#include "weir/base/notification.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace weir {
namespace {

using Clock = std::chrono::steady_clock;

TEST(NotificationTest, WaitForTimesOutWhenNotNotified) {
  Notification n;
  EXPECT_FALSE(n.HasBeenNotified());
  auto start = Clock::now();
  EXPECT_FALSE(n.WaitFor(std::chrono::milliseconds(20)));
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(20));
  EXPECT_FALSE(n.HasBeenNotified());
}

TEST(NotificationTest, NotifiedBeforeWaiting) {
  Notification n;
  n.Notify();
  EXPECT_TRUE(n.HasBeenNotified());
  EXPECT_TRUE(n.WaitFor(std::chrono::microseconds(0)));
  n.Wait();  // returns at once
  n.Notify();  // a second Notify is harmless
  EXPECT_TRUE(n.HasBeenNotified());
}

TEST(NotificationTest, NotifyWakesEveryWaiter) {
  Notification n;
  constexpr int kWaiters = 6;
  std::atomic<int> woke{0};
  std::atomic<int> timed_wait_result{0};  // 0: not yet, 1: true, 2: false
  std::vector<std::thread> threads;
  for (int i = 0; i < kWaiters; ++i) {
    threads.emplace_back([&] {
      n.Wait();
      woke.fetch_add(1);
    });
  }
  threads.emplace_back([&] {
    timed_wait_result = n.WaitFor(std::chrono::seconds(60)) ? 1 : 2;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(woke.load(), 0);  // still blocked
  auto start = Clock::now();
  n.Notify();
  for (auto& t : threads) t.join();
  EXPECT_EQ(woke.load(), kWaiters);
  EXPECT_EQ(timed_wait_result.load(), 1);
  // The timed waiter was woken, not released by its 60 s timeout.
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(30));
}

}  // namespace
}  // namespace weir
