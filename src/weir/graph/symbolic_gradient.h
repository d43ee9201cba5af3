// Gradients of library functions inside a graph: TensorFlow's
// SymbolicGradient op (the gradient of function `f`, made when a step is
// compiled) and the gradient functions a library registers for its
// functions (GradientDef, what TensorFlow's Defun(grad_func=...) exports).
//
// Building a gradient graph is train/'s work, a layer above this one and
// above the step compiler. train/ installs it here as a
// GraphGradientBuilder (RegisterFunctionGradients() in
// train/function_gradient_builder.h, which the Python package, the weir
// tool, the SavedModel loader and AddSymbolicGradients call), and the
// expansion of SymbolicGradient calls it.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "weir/base/status.h"
#include "weir/graph/graph.h"

namespace weir {

using TensorRef = std::pair<Node*, int>;

// Adds to `graph` the gradients of `ys` with respect to `xs` (floating or
// complex tensors), seeded with `dys` (one per y), naming new nodes under
// `prefix`. Sets `dxs`, one per x: {nullptr, 0} where no gradient reaches
// that x (not an error). Nodes between xs and ys may be calls and
// functional control flow. An op on a path that has no gradient function is
// an error naming the op and node.
using GraphGradientBuilder =
    std::function<Status(Graph* graph, const std::string& prefix, const std::vector<TensorRef>& ys,
                         const std::vector<TensorRef>& xs, const std::vector<TensorRef>& dys,
                         std::vector<TensorRef>* dxs)>;

// Installs the builder the expansion of SymbolicGradient uses (the last one
// installed wins). Thread-safe.
void SetGraphGradientBuilder(GraphGradientBuilder builder);
bool HasGraphGradientBuilder();

// The gradient function the library registers for `func` (its GradientDef),
// with the attrs of `func` that it declares; nullopt when none is
// registered. InvalidArgument naming both functions when the gradient
// function's signature does not fit: it must take f's inputs (`input_types`)
// and one gradient per f output (`output_types`), and return one gradient
// per f input.
StatusOr<std::optional<NameAttrList>> RegisteredGradient(const Graph& graph,
                                                         const NameAttrList& func,
                                                         const std::vector<DType>& input_types,
                                                         const std::vector<DType>& output_types);
// The same for what call node `node` calls (nullopt for any other node).
StatusOr<std::optional<NameAttrList>> RegisteredGradientOfCall(const Graph& graph,
                                                               const Node& node);

// Replaces SymbolicGradient node `node` (inputs: f's inputs, then one dy per
// f output; outputs: the gradient of each f input) by its gradient graph: a
// call of f's registered gradient function where the library has one, else
// f's body inlined and differentiated by the installed builder (inputs that
// are not floating get zeros, as do inputs no gradient reaches). A node of
// `node`'s name (an IdentityN of the gradients) keeps its consumers, as a
// call's expansion does. Errors name the node and function: a function not
// in the library, inputs or outputs that do not match f's signature, an op
// in the body without a gradient, a function whose gradient needs itself,
// no builder installed. On error the graph may be partly rewritten (the
// compiler's copy is then dropped).
// REQUIRES: node->type_string() == "SymbolicGradient".
Status ExpandSymbolicGradient(Graph* graph, Node* node);

}  // namespace weir
