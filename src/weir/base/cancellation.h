// CancellationManager: how a step tells its blocked kernels to give up.
// Asynchronous kernels (Recv, queue ops) register a callback; StartCancel
// runs every registered callback once, so no kernel waits forever.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>

namespace weir {

using CancellationToken = int64_t;

class CancellationManager {
 public:
  CancellationManager() = default;
  CancellationManager(const CancellationManager&) = delete;
  CancellationManager& operator=(const CancellationManager&) = delete;

  CancellationToken GetToken() { return next_token_.fetch_add(1, std::memory_order_relaxed); }

  // Registers `callback` to run on StartCancel. Returns false (and does not
  // register) if cancellation has already started: the caller must then
  // cancel itself.
  bool RegisterCallback(CancellationToken token, std::function<void()> callback);
  // Returns true if the callback was removed before it ran; false if it has
  // run or is running (the caller must then expect the cancellation).
  bool DeregisterCallback(CancellationToken token);

  // Runs all callbacks (outside the lock); later registrations fail.
  void StartCancel();
  bool IsCancelled() const { return cancelled_.load(std::memory_order_acquire); }

 private:
  std::atomic<int64_t> next_token_{0};
  std::atomic<bool> cancelled_{false};
  std::mutex mu_;
  std::map<CancellationToken, std::function<void()>> callbacks_;
};

}  // namespace weir
