// The first steps of compiling a step: feeds become _Arg nodes, fetches
// _Retval nodes, and everything the fetches and targets don't need is pruned.
//
// A fed tensor's consumers read its _Arg instead, so the nodes that produced
// it are pruned unless something else needs them; fetching a fed tensor
// returns the fed value. _Arg/_Retval `index` attrs follow the order of
// `feeds` and `fetches`, which is the order of the step's CallFrame.
#pragma once

#include <string>
#include <unordered_set>
#include <vector>

#include "weir/framework/tensor_shape.h"
#include "weir/framework/types.h"
#include "weir/graph/graph.h"

namespace weir {

// What the caller names when it runs a step.
struct StepSignature {
  std::vector<std::string> feeds;    // "node" or "node:port"
  std::vector<std::string> fetches;  // "node" or "node:port"
  std::vector<std::string> targets;  // node names
};

// What a fed tensor must look like, in feed order.
struct FeedSpec {
  std::string name;
  DType dtype = DT_INVALID;
  PartialShape shape;
};

struct RewrittenStep {
  std::vector<FeedSpec> feeds;
  // The nodes a step must keep as they are: the _Arg and _Retval nodes, the
  // targets, and the nodes whose outputs are fetched. Passes that merge or
  // replace nodes (CSE, constant folding) leave these alone.
  std::unordered_set<std::string> protected_nodes;  // by name
  int pruned = 0;  // nodes removed because no fetch or target needs them
};

// A ReadVariableOp with this attr true is a TensorFlow 1 reference
// variable's value (the variable's own node, or an update's output):
// fetching it gives the variable's value at the end of the step, as
// fetching a TF1 reference does. The step fetches a new read ordered after
// every update of that variable the step runs (Assign*VariableOp,
// ResourceApply*, ResourceScatter*... on the same handle, outside loops);
// the read itself stays for its other consumers. Python's v1 variables and
// the import of VariableV2 set it.
inline constexpr char kFetchAtStepEndAttr[] = "_fetch_at_step_end";

// Rewrites `graph` in place for `signature`. NotFound / InvalidArgument name
// the feed, fetch or target that does not resolve.
StatusOr<RewrittenStep> RewriteForStep(Graph* graph, const StepSignature& signature);

}  // namespace weir
