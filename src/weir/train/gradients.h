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
#pragma once

#include <vector>

#include "weir/graph/scope.h"

namespace weir {

// `grad_ys[i]` seeds the gradient of `ys[i]`; with no `grad_ys`, each y is
// seeded with ones of its shape.
Status AddSymbolicGradients(const Scope& scope, const std::vector<Output>& ys,
                            const std::vector<Output>& xs, const std::vector<Output>& grad_ys,
                            std::vector<Output>* grad_xs);
Status AddSymbolicGradients(const Scope& scope, const std::vector<Output>& ys,
                            const std::vector<Output>& xs, std::vector<Output>* grad_xs);

}  // namespace weir
