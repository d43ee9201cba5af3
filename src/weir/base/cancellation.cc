#include "weir/base/cancellation.h"

#include <vector>

namespace weir {

bool CancellationManager::RegisterCallback(CancellationToken token,
                                           std::function<void()> callback) {
  std::lock_guard<std::mutex> lock(mu_);
  if (cancelled_.load(std::memory_order_relaxed)) return false;
  callbacks_.emplace(token, std::move(callback));
  return true;
}

bool CancellationManager::DeregisterCallback(CancellationToken token) {
  std::lock_guard<std::mutex> lock(mu_);
  return callbacks_.erase(token) > 0;
}

void CancellationManager::StartCancel() {
  std::map<CancellationToken, std::function<void()>> to_run;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (cancelled_.load(std::memory_order_relaxed)) return;
    cancelled_.store(true, std::memory_order_release);
    to_run.swap(callbacks_);
  }
  for (auto& [token, callback] : to_run) callback();
}

}  // namespace weir
