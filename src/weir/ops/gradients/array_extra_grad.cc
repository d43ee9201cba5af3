// Gradients of Roll and the TensorScatter ops (ops/array_extra_ops.cc), as
// TensorFlow: Roll rolls back; a scatter's tensor gets the gradient where
// updates did not overwrite it and the updates get theirs gathered at the
// indices; Min/Max split a tie evenly. Bitcast, UniqueWithCounts and the
// bin counts have none.
#include "weir/ops/gradients/gradient_registry.h"
#include "weir/ops/gradients/gradient_util.h"
#include "weir/ops/standard_ops.h"

namespace weir {
namespace {

using Grads = std::vector<Output>;

Status TensorScatterMinMaxGrad(const Scope& s, const Operation& op, const Grads& g, Grads* grads) {
  Output x = ForwardInput(op, 0), indices = ForwardInput(op, 1), y = ForwardInput(op, 2);
  Output z = op.output(0);
  Output x_hit = ops::Cast(s, ops::Equal(s, x, z), g[0].dtype());
  Output y_hit = ops::Cast(s, ops::Equal(s, y, ops::GatherNd(s, z, indices)), g[0].dtype());
  Output ties = ops::AddV2(
      s, x_hit,
      ops::ScatterNd(s, indices, y_hit, ops::Shape(s, x, {{"out_type", indices.dtype()}})));
  *grads = {ops::RealDiv(s, ops::Mul(s, g[0], x_hit), ties), Output(),
            ops::Mul(s, y_hit, ops::GatherNd(s, ops::RealDiv(s, g[0], ties), indices))};
  return s.status();
}

// nth_element: the gradient goes to the elements equal to the result,
// split evenly among ties (TensorFlow's rule).
Status NthElementGrad(const Scope& s, const Operation& op, const Grads& g, Grads* grads) {
  Output input = ForwardInput(op, 0), output = op.output(0);
  Output hits = ops::Cast(s, ops::Equal(s, ops::ExpandDims(s, output, -1), input), g[0].dtype());
  Output count = ops::ExpandDims(s, ops::Sum(s, hits, -1), -1);
  *grads = {ops::Mul(s, ops::RealDiv(s, hits, count), ops::ExpandDims(s, g[0], -1)), Output()};
  return s.status();
}

// RandomGamma: d/dalpha through the samples (implicit reparameterization),
// summed over the sample dims.
Status RandomGammaGrad(const Scope& s, const Operation& op, const Grads& g, Grads* grads) {
  Output shape = ForwardInput(op, 0), alpha = ForwardInput(op, 1), sample = op.output(0);
  const PartialShape shape_shape = shape.shape();
  if (!shape_shape.known_rank() || shape_shape.dim(0) == PartialShape::kUnknown) {
    return errors::Unimplemented("the gradient of RandomGamma (node ", op.node()->name(),
                                 ") needs the length of its shape input");
  }
  const int64_t k = shape_shape.dim(0);
  Output leading =
      ops::ConcatV2(s, {IntVector(s, std::vector<int64_t>(k, 1)), ShapeOf(s, alpha)}, 0);
  Output partial = ops::RandomGammaGrad(s, ops::Reshape(s, alpha, leading), sample);
  std::vector<int64_t> axes(k);
  for (int64_t i = 0; i < k; ++i) axes[i] = i;
  *grads = {Output(), ops::Sum(s, ops::Mul(s, g[0], partial), IntVector(s, axes))};
  return s.status();
}

}  // namespace

void RegisterArrayExtraGradients(GradientRegistry* registry) {
  registry->Register("Roll", [](const Scope& s, const Operation& op, const Grads& g, Grads* grads) {
    *grads = {ops::Roll(s, g[0], ops::Neg(s, ForwardInput(op, 1)), ForwardInput(op, 2)), Output(),
              Output()};
    return s.status();
  });
  registry->Register(
      "TensorScatterUpdate", [](const Scope& s, const Operation& op, const Grads& g, Grads* grads) {
        Output indices = ForwardInput(op, 1), updates = ForwardInput(op, 2);
        *grads = {ops::TensorScatterUpdate(s, g[0], indices, ops::ZerosLike(s, updates)), Output(),
                  ops::GatherNd(s, g[0], indices)};
        return s.status();
      });
  registry->Register("TensorScatterAdd",
                     [](const Scope& s, const Operation& op, const Grads& g, Grads* grads) {
                       *grads = {g[0], Output(), ops::GatherNd(s, g[0], ForwardInput(op, 1))};
                       return s.status();
                     });
  registry->Register(
      "TensorScatterSub", [](const Scope& s, const Operation& op, const Grads& g, Grads* grads) {
        *grads = {g[0], Output(), ops::Neg(s, ops::GatherNd(s, g[0], ForwardInput(op, 1)))};
        return s.status();
      });
  registry->Register("NthElement", NthElementGrad);
  registry->Register("RandomGamma", RandomGammaGrad);
  registry->Register("TensorScatterMin", TensorScatterMinMaxGrad);
  registry->Register("TensorScatterMax", TensorScatterMinMaxGrad);
  for (const char* op :
       {"Bitcast", "UniqueWithCounts", "Bincount", "DenseBincount", "StringLength", "Substr",
                         // The stateless random family (stateless_random_ops.cc).
        "StatelessRandomGetKeyCounter", "StatelessRandomGetKeyCounterAlg", "StatelessRandomGetAlg",
        "StatelessRandomUniformV2", "StatelessRandomNormalV2", "StatelessRandomUniformIntV2",
        "StatelessRandomUniformFullIntV2",
                         // Samplers without a reparameterized gradient.
        "RandomPoisson", "RandomPoissonV2", "RandomGammaGrad"}) {
    registry->RegisterNoGradient(op);
  }
}

}  // namespace weir
