// The graph compiler: from (graph, feeds, fetches, targets, devices) to one
// optimized, placed graph per device, ready for an executor.
//
//   rewrite feeds/fetches -> prune -> expand function calls (when the graph
//     has a function library) -> CSE -> constant folding -> place
//     -> fuse -> partition (+ Recv scheduling, lossy transfers)
//
// It is a function of its inputs and knows nothing of sessions, so the local
// session and a distributed master drive the same pipeline: the master sends
// each partition's GraphDef to the worker that owns its device, the local
// session imports it in-process. Every pass is a free function in graph/ (or
// runtime/ when it runs kernels), switched by CompileOptions.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "weir/framework/device.h"
#include "weir/framework/kernel_registry.h"
#include "weir/framework/node_def.h"
#include "weir/graph/graph.h"
#include "weir/graph/placer.h"
#include "weir/graph/subgraph.h"

namespace weir {

struct CompileOptions {
  bool cse = true;             // merge equal stateless nodes
  bool fold_constants = true;  // evaluate constant subgraphs at compile time
  int64_t max_folded_constant_bytes = int64_t{10} << 20;  // larger results stay unfolded
  bool fuse_kernels = true;    // op chains -> fused kernels (graph/fuse_ops.h)
  bool schedule_recvs = true;  // start each _Recv as late as it can (ALAP)
  bool lossy_transfers = false;  // float32 crosses devices as bfloat16
  // Place by the cost model's simulation (graph/placer.h); false: every
  // node on the first device that can run it.
  bool cost_model_placement = true;
  bool explain_placement = false;  // fill CompiledGraph::placement
  // Record every node's count and changes per pass (CompiledGraph::passes).
  bool record_passes = false;
};

// The devices a session's earlier compilations gave the stateful nodes of
// its graph (variables, queues, random ops...), by node name. Such a node
// keeps its state on its device, so every later signature places it there
// too, for the session's life, as TensorFlow does: otherwise a variable
// created by one run's placement could be looked for on another device by
// the next (each signature is placed on its own).
struct StatefulPlacements {
  std::mutex mu;
  std::unordered_map<std::string, std::string> devices;  // guarded by mu
};

// What the compiler works with besides the graph.
struct CompileEnv {
  std::vector<DeviceInfo> devices;  // where nodes may be placed
  const KernelRegistry* kernels = nullptr;
  // A local CPU device on which constant folding runs kernels; null turns
  // folding off.
  Device* host_device = nullptr;
  // The incarnation of each device, for rendezvous keys.
  std::function<uint64_t(const std::string& device)> incarnation;
  // Node times measured in earlier steps, for placement; null: estimates.
  const CostModel* cost_model = nullptr;
  // The session's stateful placements: read and extended by each
  // compilation; null places every signature afresh.
  StatefulPlacements* stateful_placements = nullptr;
};

// One pass's effect on the graph, for `weir inspect` and the docs.
struct PassRecord {
  std::string pass;
  int nodes_before = 0;
  int nodes_after = 0;
  double micros = 0;
  std::vector<std::string> changes;  // short lines, capped by each pass
};

struct CompiledPartition {
  std::string device;
  // Set when the step runs on one device: the whole graph, never serialized.
  std::unique_ptr<Graph> graph;
  // Otherwise the partition as the runtime's GraphDef (_Send/_Recv inside).
  GraphDef def;
};

struct CompiledGraph {
  std::vector<FeedSpec> feeds;       // in signature order
  std::vector<std::string> fetches;  // in signature order
  std::vector<CompiledPartition> partitions;
  std::vector<PassRecord> passes;    // when record_passes
  PlacementExplanation placement;    // when explain_placement
};

// Compiles a copy of `graph` for `signature`; `graph` is not modified.
// Errors name the feed, fetch, node or constraint at fault.
StatusOr<CompiledGraph> CompileGraph(const Graph& graph, const StepSignature& signature,
                                     const CompileEnv& env, const CompileOptions& options);

// The passes as text: one line per pass with node counts, then its changes.
std::string DescribePasses(const std::vector<PassRecord>& passes);

}  // namespace weir
