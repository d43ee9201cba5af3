// Constant folding: parts of the graph that compute the same values on every
// step are computed once, at compile time, with the real CPU kernels, and
// replaced by Const nodes.
//
// A node folds when it is stateless, has a CPU kernel, is not protected, and
// every input (data and control) comes from a Const or a node that folds.
// Shape, Size, Rank and ShapeN fold whenever their inputs' static shapes are
// fully known, whatever computes those inputs. Never folded: stateful and
// random ops, placeholders, control-flow ops, NoOp, _Arg/_Recv and the other
// runtime plumbing, DT_RESOURCE values, and nodes whose output is statically
// known to exceed max_constant_bytes (nor, then, what reads them).
//
// Only the frontier is evaluated: folding nodes read by a node that does not
// fold. Each becomes a Const on the same requested (and assigned) device:
//   a single-output node 'x'  ->  a Const named 'x'
//   output p of a multi-output node 'x'  ->  a Const named 'x/output_p'
//     (made unique with Graph::NewName)
// and takes over its control out-edges. Nodes that only folded nodes read
// are then removed (stateless ones only: a stateful node keeps running).
// A frontier result larger than max_constant_bytes, or one whose evaluation
// fails (a Reshape to a wrong constant shape), leaves that node unfolded, so
// the step reports the error as it would have without folding.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "weir/base/status.h"
#include "weir/framework/device.h"
#include "weir/framework/kernel_registry.h"
#include "weir/graph/graph.h"

namespace weir {

struct ConstantFoldingOptions {
  // The largest Const (in bytes of element data) folding may create.
  int64_t max_constant_bytes = int64_t{10} << 20;
  // Nodes left exactly as they are, by name (fed, fetched and target
  // nodes): never folded, never read as constants, never removed. Null:
  // none.
  const std::unordered_set<std::string>* protected_nodes = nullptr;
};

// Folds the constant parts of `graph`, running kernels from `kernels` on
// `cpu`. Returns the number of nodes replaced by Consts or removed. Appends
// one line per change to `changes` when it is not null (the first 50, then
// a count). Errors only for a malformed graph (a cycle); evaluation errors
// leave nodes unfolded instead.
StatusOr<int> FoldConstants(Graph* graph, Device* cpu, const KernelRegistry& kernels,
                            const ConstantFoldingOptions& options = {},
                            std::vector<std::string>* changes = nullptr);

}  // namespace weir
