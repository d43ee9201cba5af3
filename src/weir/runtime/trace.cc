#include <nlohmann/json.hpp>
#include <set>

#include "weir/runtime/session.h"

namespace weir {

std::string RunMetadata::ChromeTrace() const {
  // One process per device, one track per thread; complete ("X") events.
  nlohmann::json events = nlohmann::json::array();
  std::vector<std::string> devices;
  auto pid_of = [&](const std::string& device) {
    auto it = std::find(devices.begin(), devices.end(), device);
    if (it != devices.end()) return static_cast<int>(it - devices.begin());
    devices.push_back(device);
    return static_cast<int>(devices.size() - 1);
  };
  for (const NodeExecStats& node : step_stats.nodes) {
    events.push_back({{"name", node.node_name},
                      {"cat", node.op},
                      {"ph", "X"},
                      {"ts", node.start_micros},
                      {"dur", std::max<int64_t>(0, node.end_micros - node.start_micros)},
                      {"pid", pid_of(node.device)},
                      {"tid", node.thread_id},
                      {"args", {{"op", node.op}, {"bytes_allocated", node.bytes_allocated}}}});
  }
  for (size_t pid = 0; pid < devices.size(); ++pid) {
    events.push_back({{"name", "process_name"},
                      {"ph", "M"},
                      {"pid", pid},
                      {"args", {{"name", devices[pid]}}}});
  }
  nlohmann::json trace = {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
  return trace.dump();
}

}  // namespace weir
