// Recv scheduling (white paper §5.2): a _Recv that starts as soon as its
// value is sent holds that value (and whatever its consumers allocate) from
// then on, however late the value is needed. ScheduleRecvs picks, for each
// tensor that crosses to a device, a node on that device after which its
// _Recv may start without delaying the step under a cost model: the
// partitioner adds that node as a control input of the _Recv.
//
// Sound by construction: the added edges never close a cycle, across
// devices included, so they cannot deadlock a step (recv_schedule.cc proves
// it), and they only order nodes, so they never change a result.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "weir/graph/graph.h"

namespace weir {

struct RecvScheduleOptions {
  // Estimated run time of `node` in microseconds; null: 1 us per node.
  std::function<double(const Node* node)> node_micros;
  // Estimated time to move output `port` of `src` (Edge::kControlSlot for a
  // control edge) from `src_device` to `dst_device`, in microseconds; null:
  // its bytes (when its shape is known, else 0) at 10 GB/s.
  std::function<double(const Node* src, int port, const std::string& src_device,
                       const std::string& dst_device)>
      transfer_micros;
};

// A transfer: output `port` of node id `src` going to device `dst_device`.
using TransferKey = std::tuple<int, int, std::string>;

struct RecvSchedule {
  // Per data transfer that gains from waiting: the node on its destination
  // device after which its _Recv starts.
  std::map<TransferKey, const Node*> start_after;
};

// REQUIRES: every node has an assigned device. Graphs with control flow
// (Switch, Merge, loops) get an empty schedule: a control input from a node
// in an untaken branch would make the _Recv dead. Appends one line per
// scheduled Recv to `changes` (may be null; at most 50 lines plus a count).
StatusOr<RecvSchedule> ScheduleRecvs(const Graph& graph, const RecvScheduleOptions& options,
                                     std::vector<std::string>* changes);

}  // namespace weir
