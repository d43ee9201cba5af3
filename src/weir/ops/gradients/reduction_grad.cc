// Gradients of the reductions over axes: each output element's gradient
// goes back to the input elements it was computed from, so the gradient is
// the output gradient reshaped to the input's rank (reduced dims kept as 1)
// and broadcast to the input's shape.
#include "weir/framework/axes.h"
#include "weir/ops/gradients/gradient_registry.h"
#include "weir/ops/gradients/gradient_util.h"
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

// `t` (the reduction's output, or its gradient) reshaped to the input's
// rank with the reduced dims as 1, so that it broadcasts against the input.
Output WithKeptDims(const Scope& scope, const Operation& op, const Output& t) {
  bool keep_dims = false;
  (void)GetAttr(op.node()->def().attrs, "keep_dims", &keep_dims);
  if (keep_dims) return t;
  return ops::Reshape(scope, t, KeptDimsShape(scope, ForwardInput(op, 0), ForwardInput(op, 1)));
}

// The gradient of a reduction's output `g` spread over the input: each
// input element receives the gradient of the output element it went into.
Output BroadcastToInput(const Scope& scope, const Operation& op, const Output& g) {
  return ops::BroadcastTo(scope, WithKeptDims(scope, op, g), ShapeOf(scope, ForwardInput(op, 0)));
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

// Max and Min: the gradient goes to the elements equal to the result,
// split evenly among ties (TensorFlow's choice: a subgradient).
Status MaxMinGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                  std::vector<Output>* grads) {
  Output x = ForwardInput(op, 0), axes = ForwardInput(op, 1);
  Output y = WithKeptDims(scope, op, op.output(0));
  Output chosen = ops::Cast(scope, ops::Equal(scope, x, y), x.dtype());
  Output ties = ops::Sum(scope, chosen, axes, {{"keep_dims", true}});
  Output share = ops::Mul(scope, ops::RealDiv(scope, chosen, ties), WithKeptDims(scope, op, g[0]));
  *grads = {share, Output()};
  return scope.status();
}

// Prod: each element's gradient is the product of the others in its
// group. Dividing the product by the element fails at zeros, so count
// them: with none, others = prod / x; with exactly one, only the zero
// element gets the product of the nonzeros; with more, all get 0.
Status ProdGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                std::vector<Output>* grads) {
  Output x = ForwardInput(op, 0), axes = ForwardInput(op, 1);
  AttrMap keep = {{"keep_dims", true}};
  Output zeros = ops::ZerosLike(scope, x);
  Output is_zero = ops::Equal(scope, x, zeros);
  Output nonzero_x = ops::SelectV2(scope, is_zero, ops::OnesLike(scope, x), x);
  Output nonzero_product = ops::Prod(scope, nonzero_x, axes, keep);
  Output zero_count = ops::Sum(scope, ops::Cast(scope, is_zero, x.dtype()), axes, keep);
  Output at_zero = ops::SelectV2(scope, ops::Equal(scope, zero_count, 1.0), nonzero_product, zeros);
  Output at_nonzero = ops::SelectV2(scope, ops::Equal(scope, zero_count, 0.0),
                                    ops::RealDiv(scope, nonzero_product, nonzero_x), zeros);
  Output others = ops::SelectV2(scope, is_zero, at_zero, at_nonzero);
  *grads = {ops::Mul(scope, others, WithKeptDims(scope, op, g[0])), Output()};
  return scope.status();
}

}  // namespace

void RegisterReductionGradients(GradientRegistry* registry) {
  registry->Register("Sum", SumGrad);
  registry->Register("Mean", MeanGrad);
  registry->Register("Max", MaxMinGrad);
  registry->Register("Min", MaxMinGrad);
  registry->Register("Prod", ProdGrad);
  for (const char* op : {"ArgMax", "ArgMin", "All", "Any"}) registry->RegisterNoGradient(op);
}

}  // namespace weir
