// Gradients of the sparse family, TensorFlow's rules: a SparseTensor's
// values get the dense gradient at their indices (gathers), the ops that
// only move entries give back the moved gradient, and the index and shape
// inputs get none. Ops whose outputs are only indices or shapes are not
// differentiable.
#include "weir/ops/gradients/gradient_registry.h"
#include "weir/ops/gradients/gradient_util.h"
#include "weir/ops/standard_ops.h"

namespace weir {
namespace {

using Grads = std::vector<Output>;

bool BoolAttr(const Operation& op, const char* name) {
  bool value = false;
  (void)GetAttr(op.node()->def().attrs, name, &value);
  return value;
}

Output Int64(const Scope& scope, const Output& x) { return ops::Cast(scope, x, DT_INT64); }

// sparse_values gets grad at sparse_indices; default_value the rest.
Status SparseToDenseGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  Output indices = ForwardInput(op, 0), shape = ForwardInput(op, 1);
  Output values = ForwardInput(op, 2);
  // Vector and scalar indices (a 1-D output) as the [N, rank] matrix GatherNd takes.
  Output matrix = ops::Reshape(
      scope, indices,
      ops::ConcatV2(
          scope, {IntVector(scope, {-1}), ops::Reshape(scope, ops::Size(scope, shape), {1})}, 0));
  Output gathered = ops::GatherNd(scope, g[0], matrix);
  Output values_grad = SumToShapeOf(scope, gathered, values);
  Output default_grad =
      ops::Sub(scope, ops::Sum(scope, g[0], ops::Range(scope, 0, ops::Rank(scope, g[0]), 1)),
               ops::Sum(scope, gathered, ops::Range(scope, 0, ops::Rank(scope, gathered), 1)));
  *grads = {Output(), Output(), values_grad, default_grad};
  return scope.status();
}

// product = op(A) op(B): A's value at (r, c) gets sum_k g[r', k] opB[c', k]
// for its place (r', c') in op(A); b gets op(A)^T g, transposed back when
// adjoint_b. (Real types; complex values would need conjugates.)
Status SparseTensorDenseMatMulGrad(const Scope& scope, const Operation& op, const Grads& g,
                                   Grads* grads) {
  Output indices = ForwardInput(op, 0), values = ForwardInput(op, 1);
  Output shape = ForwardInput(op, 2), b = ForwardInput(op, 3);
  const bool adjoint_a = BoolAttr(op, "adjoint_a"), adjoint_b = BoolAttr(op, "adjoint_b");
  Output b_grad = ops::SparseTensorDenseMatMul(scope, indices, values, shape, g[0],
                                               {{"adjoint_a", !adjoint_a}});
  if (adjoint_b) b_grad = ops::Transpose(scope, b_grad, {1, 0});
  Output rows = ops::Reshape(scope, ops::Slice(scope, indices, {0, 0}, {-1, 1}), {-1});
  Output cols = ops::Reshape(scope, ops::Slice(scope, indices, {0, 1}, {-1, 1}), {-1});
  if (adjoint_a) std::swap(rows, cols);
  Output b_op = adjoint_b ? ops::Transpose(scope, b, {1, 0}) : b;  // [inner, cols]
  Output parts_g = ops::GatherV2(scope, g[0], rows, 0);
  Output parts_b = ops::GatherV2(scope, b_op, cols, 0);
  Output values_grad = ops::Sum(scope, ops::Mul(scope, parts_g, parts_b), 1);
  *grads = {Output(), values_grad, Output(), b_grad};
  return scope.status();
}

Status SparseAddGradFn(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  if (!g[1].valid()) {
    *grads = Grads(7);
    return Status::OK();
  }
  Operation add_grad =
      ops::SparseAddGrad(scope, g[1], ForwardInput(op, 0), ForwardInput(op, 3), op.output(0));
  *grads = {Output(),           add_grad.output(0), Output(), Output(),
            add_grad.output(1), Output(),           Output()};
  return scope.status();
}

Status SparseFillEmptyRowsGradFn(const Scope& scope, const Operation& op, const Grads& g,
                                 Grads* grads) {
  if (!g[1].valid()) {
    *grads = Grads(4);
    return Status::OK();
  }
  Operation fill_grad = ops::SparseFillEmptyRowsGrad(scope, op.output(3), g[1]);
  *grads = {Output(), fill_grad.output(0), Output(), fill_grad.output(1)};
  return scope.status();
}

// Each value gets the gradient of the output element it was summed into:
// the indices with the reduced dims set to 0 address the kept-dims output.
Status SparseReduceSumGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  Output indices = ForwardInput(op, 0), shape = ForwardInput(op, 2);
  Output axes = ForwardInput(op, 3);
  Output rank = ops::Cast(scope, ops::Size(scope, shape), DT_INT32);
  Output normalized = ops::FloorMod(scope, ops::Add(scope, axes, rank), rank);
  Output hits = ops::UnsortedSegmentSum(scope, ops::OnesLike(scope, normalized), normalized, rank);
  // No axes: every dim is reduced.
  Output reduced = ops::LogicalOr(scope, ops::Greater(scope, hits, 0),
                                  ops::Equal(scope, ops::Size(scope, axes), 0));
  Output kept_shape = ops::SelectV2(scope, reduced, ops::OnesLike(scope, shape), shape);
  Output dense = ops::Reshape(scope, g[0], kept_shape);
  Output keep = Int64(scope, ops::LogicalNot(scope, reduced));
  Output at = ops::Mul(scope, indices, keep);
  *grads = {Output(), ops::GatherNd(scope, dense, at), Output(), Output()};
  return scope.status();
}

// TensorFlow's rule: (g - sum over the row of g * y) * y.
Status SparseSoftmaxGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  Output indices = ForwardInput(op, 0), shape = ForwardInput(op, 2);
  Output y = op.output(0);
  Output row_sums = ops::SparseReduceSum(scope, indices, ops::Mul(scope, y, g[0]), shape, {-1},
                                         {{"keep_dims", true}});
  Output shifted = ops::SparseDenseCwiseAdd(scope, indices, g[0], shape, ops::Neg(scope, row_sums));
  *grads = {Output(), ops::Mul(scope, shifted, y), Output()};
  return scope.status();
}

template <Output (*GradOp)(const Scope&, Input, Input, Input, Input, AttrMap, std::source_location)>
Status SparseSegmentGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  Output data = ForwardInput(op, 0);
  Output dim0 = ops::StridedSlice(scope, ops::Shape(scope, data), {0}, {1}, {1},
                                  {{"shrink_axis_mask", int64_t{1}}});
  Output grad = GradOp(scope, g[0], ForwardInput(op, 1), ForwardInput(op, 2), dim0, {},
                       std::source_location::current());
  grads->assign(op.node()->num_inputs(), Output());
  (*grads)[0] = grad;
  return scope.status();
}

Status SparseSliceGradFn(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  if (!g[1].valid()) {
    *grads = Grads(5);
    return Status::OK();
  }
  Output val_grad =
      ops::SparseSliceGrad(scope, g[1], ForwardInput(op, 0), ForwardInput(op, 3), op.output(0));
  *grads = {Output(), val_grad, Output(), Output(), Output()};
  return scope.status();
}

Status SparseTensorDenseAddGrad(const Scope& scope, const Operation& op, const Grads& g,
                                Grads* grads) {
  *grads = {Output(), ops::GatherNd(scope, g[0], ForwardInput(op, 0)), Output(), g[0]};
  return scope.status();
}

Status SparseReorderGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  if (!g[1].valid()) {
    *grads = Grads(3);
    return Status::OK();
  }
  Output indices = ForwardInput(op, 0);
  Output entries =
      ops::Range(scope, int64_t{0},
                 ops::Cast(scope, ops::Size(scope, ForwardInput(op, 1)), DT_INT64), int64_t{1});
  Operation reordered = ops::SparseReorder(scope, indices, entries, ForwardInput(op, 2));
  Output inverse = ops::InvertPermutation(scope, reordered.output(1));
  *grads = {Output(), ops::GatherV2(scope, g[1], inverse, 0), Output()};
  return scope.status();
}

// The dense operand broadcast to the sparse shape: each value meets
// dense[index // scale] (scale 1 on a matching dim, the whole dim on a
// stretched one); its gradient scatters back there.
enum class CwiseKind { kMul, kDiv, kAdd };
template <CwiseKind kind>
Status SparseDenseCwiseGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  Output indices = ForwardInput(op, 0), x = ForwardInput(op, 1);
  Output x_shape = ForwardInput(op, 2), y = ForwardInput(op, 3);
  Output y_shape = Int64(scope, ops::Shape(scope, y));
  Output added = ops::Sub(scope, ops::Size(scope, x_shape), ops::Size(scope, y_shape));
  Output ones = ops::Fill(scope, ops::Reshape(scope, added, {1}), int64_t{1});
  Output full_y_shape = ops::ConcatV2(scope, {ones, y_shape}, 0);
  Output scale = ops::FloorDiv(scope, x_shape, ops::Maximum(scope, full_y_shape, int64_t{1}));
  Output scaled = ops::FloorDiv(scope, indices, ops::Maximum(scope, scale, int64_t{1}));
  Output begin = ops::ConcatV2(scope, {IntVector(scope, {0}), ops::Reshape(scope, added, {1})}, 0);
  Output y_indices = ops::Slice(scope, scaled, begin, {-1, -1});
  Output dx, dy_values;
  if constexpr (kind == CwiseKind::kAdd) {
    dx = g[0];
    dy_values = g[0];
  } else {
    Output dense = ops::GatherNd(scope, y, y_indices);
    if constexpr (kind == CwiseKind::kMul) {
      dx = ops::Mul(scope, g[0], dense);
      dy_values = ops::Mul(scope, g[0], x);
    } else {
      dx = ops::Div(scope, g[0], dense);
      dy_values =
          ops::Mul(scope, g[0], ops::Div(scope, ops::Neg(scope, x), ops::Square(scope, dense)));
    }
  }
  *grads = {Output(), dx, Output(), ops::ScatterNd(scope, y_indices, dy_values, y_shape)};
  return scope.status();
}

}  // namespace

void RegisterSparseGradients(GradientRegistry* registry) {
  registry->Register("SparseToDense", SparseToDenseGrad);
  registry->Register("SparseTensorDenseMatMul", SparseTensorDenseMatMulGrad);
  registry->Register("SparseAdd", SparseAddGradFn);
  registry->Register("SparseFillEmptyRows", SparseFillEmptyRowsGradFn);
  registry->Register("SparseReduceSum", SparseReduceSumGrad);
  registry->Register("SparseSoftmax", SparseSoftmaxGrad);
  registry->Register("SparseSlice", SparseSliceGradFn);
  registry->Register("SparseTensorDenseAdd", SparseTensorDenseAddGrad);
  registry->Register("SparseReorder", SparseReorderGrad);
  registry->Register("SparseDenseCwiseMul", SparseDenseCwiseGrad<CwiseKind::kMul>);
  registry->Register("SparseDenseCwiseDiv", SparseDenseCwiseGrad<CwiseKind::kDiv>);
  registry->Register("SparseDenseCwiseAdd", SparseDenseCwiseGrad<CwiseKind::kAdd>);
  for (const char* base : {"SparseSegmentSum", "SparseSegmentSumWithNumSegments"}) {
    registry->Register(base, SparseSegmentGrad<ops::SparseSegmentSumGrad>);
  }
  for (const char* base : {"SparseSegmentMean", "SparseSegmentMeanWithNumSegments"}) {
    registry->Register(base, SparseSegmentGrad<ops::SparseSegmentMeanGrad>);
  }
  for (const char* base : {"SparseSegmentSqrtN", "SparseSegmentSqrtNWithNumSegments"}) {
    registry->Register(base, SparseSegmentGrad<ops::SparseSegmentSqrtNGrad>);
  }
  for (const char* op :
       {"SparseReshape", "SparseAddGrad", "SparseFillEmptyRowsGrad", "SparseReduceSumSparse",
        "SparseConcat", "SparseSliceGrad", "SparseSegmentSumGrad", "SparseSegmentMeanGrad",
        "SparseSegmentSqrtNGrad", "SparseSegmentSumGradV2", "SparseSegmentMeanGradV2",
        "SparseSegmentSqrtNGradV2"}) {
    registry->RegisterNoGradient(op);
  }
}

}  // namespace weir
