// Automatic differentiation as a graph-to-graph transformation.
//
//   std::vector<Output> grads;
//   WEIR_RETURN_IF_ERROR(AddSymbolicGradients(scope, {loss}, {w, b}, &grads));
//
// Walks back from `ys` to `xs` through the nodes on some path between them,
// calling each op's registered gradient function, and adds the gradient
// subgraph to the scope's graph. Partial gradients of a tensor used more
// than once are summed in a fixed order (deterministic). A requested x that
// no gradient reaches — no path, an integer dtype, or only paths through
// non-differentiable ops — is an error naming it, never a silent zero.
//
// Sparse gradients: a gather (GatherV2 on axis 0, ResourceGather) gives its
// params the gathered rows of the gradient, not a dense tensor. The
// Gradient-valued overload keeps that form for an x whose every partial
// gradient is sparse (the rows of several gathers concatenated, repeated
// indices meaning "add"), so an optimizer can apply it with a scatter
// update. A sparse partial is densified (ScatterNd, which adds repeats) when
// it meets a dense one, or must flow on through another op's gradient
// function. The Output-valued overloads densify every result.
//
// Control flow (TensorFlow v1's Switch/Merge/Enter/Exit structure, as
// ops::Cond and ops::WhileLoop build it or TensorFlow exports it): a cond's
// gradient runs only the taken branch's part; a while loop's runs a
// backward loop of as many iterations, reading the forward values it needs
// from stacks (train/while_gradients.h). ys and xs must be outside loops.
// A step that fetches only forward values runs none of the additions.
//
// Function calls (PartitionedCall, StatefulPartitionedCall, a node whose op
// is a library function) and functional control flow (If, Case, While and
// their stateless forms) on a path from xs to ys are expanded in place
// first, as the step compiler would expand them (graph/expand_node.h):
// bodies inlined, If/Case/While lowered to Switch/Merge and loop frames,
// so the gradients go through them like through any v1 cond or loop. The
// expanded node's name then belongs to an IdentityN of its outputs, so
// "node:i" still names the same values; ys, xs and grad_ys may name them.
// A call of a function for which the library registers a gradient function
// (GradientDef, TensorFlow's Defun(grad_func=...)) is not expanded: its
// gradient is a call of that function on the call's inputs and the
// gradients of its outputs, also where the call sits in another function's
// body or an If/While branch on the path. A SymbolicGradient node on the
// path is expanded into its gradient graph and differentiated in turn.
// Nodes off the path, and graphs with none on it, are left untouched. A
// session that already holds the graph (Create/Extend) keeps the node as
// it was: extending it with the rewritten part fails, so add gradients
// through calls before giving the graph to a session.
//
// An x may be a variable's handle (DT_RESOURCE): its gradient is that of
// the variable's value, through ReadVariableOp (dense) and ResourceGather
// (sparse) alike. To get a sparse gradient for a GatherV2 of a read value,
// pass the ReadVariableOp's output as x.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "weir/graph/scope.h"
#include "weir/train/indexed_slices.h"

namespace weir {

Status AddSymbolicGradients(const Scope& scope, const std::vector<Output>& ys,
                            const std::vector<Output>& xs, const std::vector<Output>& grad_ys,
                            std::vector<Gradient>* grad_xs);

struct SymbolicGradientsOptions {
  // An x that no gradient reaches gets an invalid gradient instead of the
  // error (TensorFlow 1's tf.gradients returns None there).
  bool unreachable_is_invalid = false;
  // When set, receives the name and former id of each node expanded in
  // place (below); the node of that name now has a new id.
  std::vector<std::pair<std::string, int>>* expanded_nodes = nullptr;
};
Status AddSymbolicGradients(const Scope& scope, const std::vector<Output>& ys,
                            const std::vector<Output>& xs, const std::vector<Output>& grad_ys,
                            const SymbolicGradientsOptions& options,
                            std::vector<Gradient>* grad_xs);

// `grad_ys[i]` seeds the gradient of `ys[i]`; with no `grad_ys`, each y is
// seeded with ones of its shape.
Status AddSymbolicGradients(const Scope& scope, const std::vector<Output>& ys,
                            const std::vector<Output>& xs, const std::vector<Output>& grad_ys,
                            std::vector<Output>* grad_xs);
Status AddSymbolicGradients(const Scope& scope, const std::vector<Output>& ys,
                            const std::vector<Output>& xs, std::vector<Output>* grad_xs);

}  // namespace weir
