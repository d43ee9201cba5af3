#include "weir/framework/step_stats.h"

#include <atomic>
#include <chrono>

namespace weir {

int CurrentThreadTraceId() {
  static std::atomic<int> next_id{0};
  thread_local const int id = next_id.fetch_add(1);
  return id;
}

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace weir
