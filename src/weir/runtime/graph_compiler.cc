#include "weir/runtime/graph_compiler.h"

#include <chrono>
#include <set>

#include "weir/graph/algorithm.h"
#include "weir/graph/cost_model.h"
#include "weir/graph/function_inline.h"
#include "weir/graph/function_library.h"
#include "weir/graph/fuse_ops.h"
#include "weir/graph/optimize_cse.h"
#include "weir/graph/partition.h"
#include "weir/runtime/constant_folding.h"

namespace weir {
namespace {

using Changes = std::vector<std::string>*;

// Runs one pass and, when asked, records its effect.
class PassRunner {
 public:
  PassRunner(Graph* graph, bool record, std::vector<PassRecord>* records)
      : graph_(graph), record_(record), records_(records) {}

  // `pass` appends its change lines to the vector it is given (null when not
  // recording) and returns a Status.
  template <typename Pass>
  Status Run(const char* name, Pass&& pass) {
    if (!record_) return pass(Changes{nullptr});
    PassRecord record;
    record.pass = name;
    record.nodes_before = graph_->num_nodes();
    auto start = std::chrono::steady_clock::now();
    Status status = pass(&record.changes);
    record.micros =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    record.nodes_after = graph_->num_nodes();
    records_->push_back(std::move(record));
    return status;
  }

 private:
  Graph* graph_;
  bool record_;
  std::vector<PassRecord>* records_;
};

// A stateful node of the session's own graph (not one a pass made: those
// have no lasting state of their own and may reuse a name with another
// meaning in another signature).
bool IsSessionStatefulNode(const Graph& source, const Node& node) {
  if (!node.is_stateful()) return false;
  const Node* original = source.FindNode(node.name());
  return original != nullptr && original->type_string() == node.type_string();
}

// Requests, for each stateful node placed by an earlier compilation, the
// device it was placed on (a full name, so it is the only feasible one).
void PinStatefulNodes(const Graph& source,
                      const std::unordered_map<std::string, std::string>& devices, Graph* graph) {
  if (devices.empty()) return;
  for (Node* node : graph->nodes()) {
    if (!IsSessionStatefulNode(source, *node)) continue;
    auto it = devices.find(node->name());
    if (it != devices.end()) node->set_requested_device(it->second);
  }
}

void RecordStatefulNodes(const Graph& source, const Graph& graph,
                         std::unordered_map<std::string, std::string>* devices) {
  for (const Node* node : graph.nodes()) {
    if (IsSessionStatefulNode(source, *node)) {
      devices->emplace(node->name(), node->assigned_device());
    }
  }
}

}  // namespace

StatusOr<CompiledGraph> CompileGraph(const Graph& source, const StepSignature& signature,
                                     const CompileEnv& env, const CompileOptions& options) {
  if (env.devices.empty() || env.kernels == nullptr) {
    return errors::Internal("CompileGraph needs devices and a kernel registry");
  }
  CompiledGraph compiled;
  auto graph = std::make_unique<Graph>();
  PassRunner passes(graph.get(), options.record_passes, &compiled.passes);
  WEIR_RETURN_IF_ERROR(passes.Run("copy the graph", [&](Changes) {
    graph->CopyFrom(source);
    return Status::OK();
  }));

  RewrittenStep step;
  WEIR_RETURN_IF_ERROR(passes.Run("rewrite feeds and fetches, prune", [&](Changes changes) {
    WEIR_ASSIGN_OR_RETURN(step, RewriteForStep(graph.get(), signature));
    if (changes != nullptr) {
      changes->push_back(StrCat(step.feeds.size(), " feeds, ", signature.fetches.size(),
                                " fetches, ", signature.targets.size(), " targets; pruned ",
                                step.pruned, " nodes"));
    }
    return Status::OK();
  }));
  compiled.feeds = std::move(step.feeds);
  compiled.fetches = signature.fetches;

  // Calls and functional control flow need a library; most graphs have none.
  if (!graph->function_library().empty()) {
    WEIR_RETURN_IF_ERROR(passes.Run("expand functions", [&](Changes changes) -> Status {
      const int before = graph->num_nodes();
      WEIR_RETURN_IF_ERROR(ExpandFunctions(graph.get()));
      // What the step needs of the bodies (a fetched output needs only its
      // part; side effects are kept through the call's node).
      std::vector<Node*> roots;
      for (const std::string& name : step.protected_nodes) {
        Node* node = graph->FindNode(name);
        if (node != nullptr && node->type_string() == "_Retval") roots.push_back(node);
      }
      for (const std::string& target : signature.targets) {
        Node* node = graph->FindNode(target);
        if (node == nullptr) {
          StatusOr<TensorId> id = ParseTensorName(target);
          if (id.ok()) node = graph->FindNode(id->node);
        }
        if (node != nullptr) roots.push_back(node);
      }
      const int expanded = graph->num_nodes();
      const int pruned = PruneToRoots(graph.get(), roots);
      if (changes != nullptr) {
        changes->push_back(StrCat(before, " -> ", expanded, " nodes expanded; pruned ", pruned));
      }
      return Status::OK();
    }));
  }

  if (options.cse) {
    WEIR_RETURN_IF_ERROR(passes.Run("cse", [&](Changes changes) -> Status {
      CseOptions cse;
      cse.protected_nodes = &step.protected_nodes;
      return EliminateCommonSubexpressions(graph.get(), cse, changes).status();
    }));
  }
  if (options.fold_constants && env.host_device != nullptr) {
    WEIR_RETURN_IF_ERROR(passes.Run("fold constants", [&](Changes changes) -> Status {
      ConstantFoldingOptions fold;
      fold.max_constant_bytes = options.max_folded_constant_bytes;
      fold.protected_nodes = &step.protected_nodes;
      return FoldConstants(graph.get(), env.host_device, *env.kernels, fold, changes).status();
    }));
  }

  WEIR_RETURN_IF_ERROR(passes.Run("place", [&](Changes changes) -> Status {
    // Targets are checked on the whole graph: the pruned one may lack some.
    WEIR_RETURN_IF_ERROR(CheckColocationTargets(source));
    PlacementOptions placement;
    placement.kernels = env.kernels;
    placement.cost_model = env.cost_model;
    placement.simulate = options.cost_model_placement;
    placement.ignore_missing_colocation_targets = true;
    std::unique_lock<std::mutex> pins;
    if (env.stateful_placements != nullptr) {
      pins = std::unique_lock<std::mutex>(env.stateful_placements->mu);
      PinStatefulNodes(source, env.stateful_placements->devices, graph.get());
    }
    WEIR_RETURN_IF_ERROR(PlaceGraph(graph.get(), env.devices, placement,
                                    options.explain_placement ? &compiled.placement : nullptr));
    if (env.stateful_placements != nullptr) {
      RecordStatefulNodes(source, *graph, &env.stateful_placements->devices);
    }
    if (changes != nullptr) {
      for (std::string& line : SummarizePlacement(*graph)) changes->push_back(std::move(line));
    }
    return Status::OK();
  }));

  if (options.fuse_kernels) {
    WEIR_RETURN_IF_ERROR(passes.Run("fuse", [&](Changes changes) -> Status {
      WEIR_ASSIGN_OR_RETURN(int fused, FuseKernels(graph.get()));
      if (changes != nullptr) changes->push_back(StrCat(fused, " chains fused"));
      return Status::OK();
    }));
  }

  std::set<std::string> used_devices;
  for (const Node* node : graph->nodes()) used_devices.insert(node->assigned_device());
  if (used_devices.size() == 1) {
    CompiledPartition partition;
    partition.device = *used_devices.begin();
    partition.graph = std::move(graph);
    compiled.partitions.push_back(std::move(partition));
    return compiled;
  }
  std::map<std::string, GraphDef> partitions;
  WEIR_RETURN_IF_ERROR(passes.Run("partition", [&](Changes changes) -> Status {
    PartitionOptions partition_options;
    partition_options.incarnation = env.incarnation;
    partition_options.schedule_recvs = options.schedule_recvs;
    partition_options.lossy_float_transfers = options.lossy_transfers;
    // The Recv schedule's costs: the placer's (measured times where known).
    CostModel estimates;
    const CostModel& costs = env.cost_model != nullptr ? *env.cost_model : estimates;
    std::map<std::string, const DeviceInfo*> device_info;
    for (const DeviceInfo& device : env.devices) device_info[device.name] = &device;
    partition_options.recv_schedule.node_micros = [&](const Node* node) {
      auto it = device_info.find(node->assigned_device());
      return it == device_info.end() ? 1.0 : costs.NodeMicros(*node, *it->second);
    };
    partition_options.recv_schedule.transfer_micros = [&](const Node* src, int port,
                                                          const std::string& from,
                                                          const std::string& to) {
      return costs.TransferMicros(from, to, port < 0 ? 4.0 : CostModel::OutputBytes(*src, port));
    };
    WEIR_RETURN_IF_ERROR(PartitionGraph(*graph, partition_options, &partitions, changes));
    if (changes != nullptr) {
      for (const auto& [device, def] : partitions) {
        changes->push_back(StrCat(device, ": ", def.nodes.size(), " nodes"));
      }
    }
    return Status::OK();
  }));
  for (auto& [device, def] : partitions) {
    CompiledPartition partition;
    partition.device = device;
    partition.def = std::move(def);
    compiled.partitions.push_back(std::move(partition));
  }
  return compiled;
}

std::string DescribePasses(const std::vector<PassRecord>& passes) {
  std::string out;
  for (const PassRecord& pass : passes) {
    out += StrCat(pass.pass, ": ", pass.nodes_before, " -> ", pass.nodes_after, " nodes (",
                  static_cast<int64_t>(pass.micros), " us)\n");
    for (const std::string& change : pass.changes) out += StrCat("  ", change, "\n");
  }
  return out;
}

}  // namespace weir
