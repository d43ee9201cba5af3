// Placement: choosing a device for every node (white paper §3.2.1, §4.3).
//
// Feasibility comes first and apart from choice: a node may run on the
// devices that have a kernel for it and match its requested spec ("",
// "/device:CPU:1", "/job:w/task:0/device:CPU:*", ...). Nodes colocated by
// "_class" = ["loc:@other"], and a resource's producer with every op that
// takes it (its DT_RESOURCE handle, or an input TensorFlow declares Ref(T):
// framework/ref_inputs.h), form one group that shares one device: the
// intersection of its members' feasible devices. As in TensorFlow, the
// request of an op that takes a handle narrows the group only where it can:
// one that no device of the group matches yields to the resource's device
// (the explanation says so); the other members' requests and every member's
// kernels must all hold, else an error lists them.
//
// The choice is a greedy simulation with a CostModel. Nodes are walked in
// topological order, keeping each device's busy time (a node may fill an
// idle gap another left) and each node's finish time. A group is placed when its first member is
// reached, on the feasible device where that member would finish earliest (its inputs' arrival
// times include the transfers from other devices) plus the rest of the group's compute there; ties
// go to the lowest device index. A group with one feasible device is forced. A source node with no
// colocation (a Const, an _Arg) is placed with its first consumer, where it costs no transfer. With
// one device, or `simulate` off, every node goes on the default device when feasible, else its
// first feasible device; this costs only the feasibility check.
#pragma once

#include <string>
#include <vector>

#include "weir/framework/kernel_registry.h"
#include "weir/graph/cost_model.h"
#include "weir/graph/graph.h"

namespace weir {

struct PlacementOptions {
  const KernelRegistry* kernels = nullptr;  // REQUIRED
  const CostModel* cost_model = nullptr;  // null: a default CostModel
  int default_device = 0;
  bool simulate = true;  // false: the default device when feasible
  // Colocation targets missing from the graph are an error unless this is
  // set; the compiler sets it because it places a pruned graph, after
  // checking the whole graph with CheckColocationTargets.
  bool ignore_missing_colocation_targets = false;
};

// Why one node went where it did.
struct NodePlacement {
  std::string node;
  std::string op;
  std::vector<int> feasible;  // device indices
  // Per feasible device, in the same order (empty when not evaluated: not
  // simulated, or placed with its consumer or group): the node's simulated
  // finish there, and what its inputs' transfers cost.
  std::vector<double> finish_micros;
  std::vector<double> transfer_micros;
  int chosen = -1;
  double finish = 0;  // simulated finish on the chosen device
  std::string reason;  // "requested /device:CPU:1", "earliest finish (...)", ...
};

struct PlacementExplanation {
  std::vector<std::string> devices;  // full names, by index
  std::vector<NodePlacement> nodes;  // in placement order
  double simulated_step_micros = 0;  // 0 when not simulated
  // A table: one line per node (device, reason, candidates).
  std::string ToString() const;
};

// Sets assigned_device on every node. Errors (InvalidArgument): a malformed
// request; a colocation target that does not exist (naming node and target);
// a group no device satisfies, listing each member's constraint (its
// request, whom it is colocated with, whose resource it uses, the dtypes it
// has no kernel for) and the devices available. `explanation`, when given, is filled (costly).
// REQUIRES: devices non-empty; default_device indexes it; options.kernels.
Status PlaceGraph(Graph* graph, const std::vector<DeviceInfo>& devices,
                  const PlacementOptions& options, PlacementExplanation* explanation = nullptr);

// InvalidArgument naming the first node whose "_class" names a node that is
// not in `graph`.
Status CheckColocationTargets(const Graph& graph);

// The simulated step time of an already placed graph (every node has an
// assigned device among `devices`), by the same model the placer uses.
StatusOr<double> SimulatePlacedStep(const Graph& graph, const std::vector<DeviceInfo>& devices,
                                    const CostModel& cost_model);

// "N nodes on CPU:0" lines, for the compiler's pass record.
std::vector<std::string> SummarizePlacement(const Graph& graph);

}  // namespace weir
