// Partitioning: cutting a placed graph into one graph per device, joined by
// _Send/_Recv pairs. Each tensor that crosses to a device is sent once,
// however many consumers it has there; a control edge across devices
// becomes a tiny tensor sent from a node that runs after the source.
//
// Loops (white paper §4.4): for each loop frame that runs on several
// devices, each of them gets a control loop (Enter -> Merge -> Switch on
// the frame's LoopCond, received each iteration -> NextIteration; Exit)
// that steps its part of the frame in time with the LoopCond's device; the
// frame's _Recvs there wait for it, so each runs in the frame and iteration
// of its _Send (the rendezvous key carries both). Nested frames too. A
// value crosses devices before an Enter or a NextIteration, never after.
//
// Options: Recv scheduling (graph/recv_schedule.h) gives each _Recv a
// control input so it starts as late as the step allows; lossy transfers
// send float32 tensors as bfloat16 (a Cast on each side; rounding to
// nearest even, NaN stays NaN, Inf stays Inf).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "weir/framework/node_def.h"
#include "weir/graph/graph.h"
#include "weir/graph/recv_schedule.h"

namespace weir {

struct PartitionOptions {
  // Each device's incarnation number, for rendezvous keys; null: 0.
  std::function<uint64_t(const std::string& device)> incarnation;
  bool schedule_recvs = false;
  RecvScheduleOptions recv_schedule;  // its cost model
  bool lossy_float_transfers = false;
};

// Device name -> its partition. REQUIRES: every node has an assigned device.
// Appends to `changes` (may be null) a line per scheduled Recv (capped), the
// number of control loops and of lossy transfers. InvalidArgument for loop
// structure that cannot be split (see BuildControlFlowInfo; a frame on
// several devices without a LoopCond).
Status PartitionGraph(const Graph& graph, const PartitionOptions& options,
                      std::map<std::string, GraphDef>* partitions,
                      std::vector<std::string>* changes = nullptr);

// The part that a _Send's node name shares with its _Recv's ("a/0/to/..."
// for both "_send/a/0/to/..." and "_recv/a/0/to/..."), or empty for any
// other name. For traces that pair them.
std::string_view TransferPairName(std::string_view node_name);
// True for a _Send's node name, false for a _Recv's.
bool IsSendName(std::string_view node_name);

}  // namespace weir
