#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "weir/graph/partition.h"
#include "weir/runtime/session.h"

namespace weir {

std::string RunMetadata::ChromeTrace() const {
  // One process per device (pids in device-name order), one row per thread
  // inside it, complete ("X") events for nodes, and a flow arrow ("s" on the
  // _Send, "f" on its _Recv) per transfer.
  std::map<std::string, int> pids;
  for (const NodeExecStats& node : step_stats.nodes) pids.emplace(node.device, 0);
  int next_pid = 0;
  for (auto& [device, pid] : pids) pid = next_pid++;

  nlohmann::json events = nlohmann::json::array();
  std::set<std::pair<int, int>> threads;
  // Per transfer (the name a _Send shares with its _Recv): its sends and
  // recvs in start order; the k-th of each pair up (loops send repeatedly).
  struct Transfer {
    std::vector<const NodeExecStats*> sends, recvs;
  };
  std::map<std::string_view, Transfer> transfers;
  for (const NodeExecStats& node : step_stats.nodes) {
    const int pid = pids.at(node.device);
    threads.insert({pid, node.thread_id});
    events.push_back({{"name", node.node_name},
                      {"cat", node.op},
                      {"ph", "X"},
                      {"ts", node.start_micros},
                      {"dur", std::max<int64_t>(0, node.end_micros - node.start_micros)},
                      {"pid", pid},
                      {"tid", node.thread_id},
                      {"args", {{"op", node.op}, {"bytes_allocated", node.bytes_allocated}}}});
    if (!node.frame_name.empty()) {
      events.back()["args"]["frame"] = node.frame_name;
      events.back()["args"]["iteration"] = node.iteration;
    }
    std::string_view pair = TransferPairName(node.node_name);
    if (pair.empty() || (node.op != "_Send" && node.op != "_Recv")) continue;
    Transfer& transfer = transfers[pair];
    (node.op == "_Send" ? transfer.sends : transfer.recvs).push_back(&node);
  }
  int64_t next_flow = 1;
  auto by_start = [](const NodeExecStats* a, const NodeExecStats* b) {
    return a->start_micros < b->start_micros;
  };
  for (auto& [pair, transfer] : transfers) {
    std::stable_sort(transfer.sends.begin(), transfer.sends.end(), by_start);
    std::stable_sort(transfer.recvs.begin(), transfer.recvs.end(), by_start);
    const size_t n = std::min(transfer.sends.size(), transfer.recvs.size());
    for (size_t k = 0; k < n; ++k) {
      const NodeExecStats& send = *transfer.sends[k];
      const NodeExecStats& recv = *transfer.recvs[k];
      const int64_t id = next_flow++;
      // The start binds to the _Send's slice (its start lies inside it), the
      // end to the slice enclosing the _Recv's end ("bp": "e"): the arrow
      // runs from the value leaving to the value arriving.
      events.push_back({{"name", std::string(pair)},
                        {"cat", "transfer"},
                        {"ph", "s"},
                        {"id", id},
                        {"ts", send.start_micros},
                        {"pid", pids.at(send.device)},
                        {"tid", send.thread_id}});
      events.push_back({{"name", std::string(pair)},
                        {"cat", "transfer"},
                        {"ph", "f"},
                        {"bp", "e"},
                        {"id", id},
                        {"ts", std::max(recv.start_micros, recv.end_micros)},
                        {"pid", pids.at(recv.device)},
                        {"tid", recv.thread_id}});
    }
  }
  for (const auto& [device, pid] : pids) {
    events.push_back(
        {{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"args", {{"name", device}}}});
    events.push_back({{"name", "process_sort_index"},
                      {"ph", "M"},
                      {"pid", pid},
                      {"args", {{"sort_index", pid}}}});
  }
  for (const auto& [pid, tid] : threads) {
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", pid},
                      {"tid", tid},
                      {"args", {{"name", StrCat("thread ", tid)}}}});
  }
  nlohmann::json trace = {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
  return trace.dump();
}

}  // namespace weir
