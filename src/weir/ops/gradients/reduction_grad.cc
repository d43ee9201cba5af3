// Gradients of the reductions over axes: each output element's gradient
// goes back to the input elements it was computed from, so the gradient is
// the output gradient reshaped to the input's rank (reduced dims kept as 1)
// and broadcast to the input's shape.
#include "weir/ops/gradients/gradient_registry.h"
#include "weir/ops/gradients/gradient_util.h"
#include "weir/ops/shape_fns.h"
#include "weir/ops/standard_ops.h"

namespace weir {
namespace {

// The reduction's output shape with reduced dims kept as 1, as an int32
// vector: a constant when the input's shape and the axes are, else built
// at run time (negative axes wrapped, scalar or empty axes allowed).
Output KeptDimsShape(const Scope& scope, const Output& x, const Output& axes) {
  std::optional<std::vector<int64_t>> constant_axes = ConstantInts(axes);
  PartialShape shape = x.shape();
  if (constant_axes && shape.IsFullyDefined()) {
    StatusOr<std::vector<int>> normalized =
        NormalizeReductionAxes(*constant_axes, shape.rank(), shape);
    if (normalized.ok()) {  // else the forward op failed already
      std::vector<int64_t> dims = shape.dim_sizes();
      for (int axis : *normalized) dims[axis] = 1;
      return IntVector(scope, dims);
    }
  }
  Output input_shape = ops::Shape(scope, x);
  Output rank = ops::Size(scope, input_shape);
  Output flat_axes = ops::Reshape(scope, ops::Cast(scope, axes, DT_INT32), {-1});
  Output wrapped = ops::FloorMod(scope, ops::AddV2(scope, flat_axes, rank), rank);
  // Positions 0..rank-1 take the input's dims; the reduced ones then 1.
  return ops::DynamicStitch(scope, {ops::Range(scope, 0, rank, 1), wrapped},
                            {input_shape, ops::OnesLike(scope, wrapped)});
}

// The gradient of a reduction's output `g` spread over the input: each
// input element receives the gradient of the output element it went into.
Output BroadcastToInput(const Scope& scope, const Operation& op, const Output& g) {
  Output x = ForwardInput(op, 0);
  bool keep_dims = false;
  (void)GetAttr(op.node()->def().attrs, "keep_dims", &keep_dims);
  Output kept = keep_dims ? g : ops::Reshape(scope, g, KeptDimsShape(scope, x, ForwardInput(op, 1)));
  return ops::BroadcastTo(scope, kept, ShapeOf(scope, x));
}

Status SumGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
               std::vector<Output>* grads) {
  *grads = {BroadcastToInput(scope, op, g[0]), Output()};
  return scope.status();
}

Status MeanGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                std::vector<Output>* grads) {
  Output x = ForwardInput(op, 0), y = op.output(0);
  DType type = x.dtype();
  // Each input element counts 1 / (elements per output element).
  Output count;
  if (x.shape().IsFullyDefined() && y.shape().IsFullyDefined()) {
    int64_t out = y.shape().num_elements();
    double ratio = out == 0 ? 0.0 : static_cast<double>(x.shape().num_elements()) / out;
    count = ops::Cast(scope, ratio, type);
  } else {
    // In floating point: an empty output makes 0/0, which only ever
    // divides an empty gradient.
    count = ops::RealDiv(scope, ops::Cast(scope, ops::Size(scope, x), type),
                         ops::Cast(scope, ops::Size(scope, y), type));
  }
  *grads = {ops::RealDiv(scope, BroadcastToInput(scope, op, g[0]), count), Output()};
  return scope.status();
}

}  // namespace

void RegisterReductionGradients(GradientRegistry* registry) {
  registry->Register("Sum", SumGrad);
  registry->Register("Mean", MeanGrad);
  for (const char* op : {"ArgMax", "ArgMin", "All", "Any"}) registry->RegisterNoGradient(op);
}

}  // namespace weir
