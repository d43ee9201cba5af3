#include "weir/train/function_gradient_builder.h"

#include <mutex>

#include "weir/graph/symbolic_gradient.h"
#include "weir/train/gradients.h"
#include "weir/train/while_gradients.h"

namespace weir {
namespace {

std::vector<Output> AsOutputs(const std::vector<TensorRef>& tensors) {
  std::vector<Output> outputs;
  outputs.reserve(tensors.size());
  for (const auto& [node, index] : tensors) outputs.emplace_back(node, index);
  return outputs;
}

// The builder: the graph's own gradients driver, with a scope on the graph
// being expanded. An x no gradient reaches gets none (the expansion gives it
// zeros).
Status BuildGradient(Graph* graph, const std::string& prefix, const std::vector<TensorRef>& ys,
                     const std::vector<TensorRef>& xs, const std::vector<TensorRef>& dys,
                     std::vector<TensorRef>* dxs) {
  const Scope scope = Scope::ForGraph(graph).NewSubScope(prefix);
  SymbolicGradientsOptions options;
  options.unreachable_is_invalid = true;
  std::vector<Gradient> grads;
  WEIR_RETURN_IF_ERROR(
      AddSymbolicGradients(scope, AsOutputs(ys), AsOutputs(xs), AsOutputs(dys), options, &grads));
  dxs->clear();
  for (const Gradient& g : grads) {
    if (!g.valid()) {
      dxs->push_back({nullptr, 0});
      continue;
    }
    const Output dense = Densify(scope, g);
    WEIR_RETURN_IF_ERROR(scope.status());
    dxs->push_back({dense.node(), dense.index()});
  }
  return scope.status();
}

}  // namespace

void RegisterFunctionGradients() {
  static std::once_flag once;
  std::call_once(once, [] { SetGraphGradientBuilder(BuildGradient); });
}

}  // namespace weir
