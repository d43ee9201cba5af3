// Notification: a one-shot event that threads can wait for. A waiter may
// destroy it as soon as Wait (or a WaitFor that returned true) returns:
// both take the mutex Notify holds while it signals, so by then Notify is
// done with the object. (HasBeenNotified alone gives no such guarantee.)
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

namespace weir {

class Notification {
 public:
  void Notify() {
    std::lock_guard<std::mutex> lock(mu_);
    notified_.store(true, std::memory_order_release);
    cv_.notify_all();
  }
  bool HasBeenNotified() const { return notified_.load(std::memory_order_acquire); }
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return HasBeenNotified(); });
  }
  // Returns false on timeout.
  bool WaitFor(std::chrono::microseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [this] { return HasBeenNotified(); });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<bool> notified_{false};
};

}  // namespace weir
