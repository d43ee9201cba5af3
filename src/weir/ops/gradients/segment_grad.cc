// Gradients of the segment reductions and the scans. A segment reduction's
// input row gets the gradient of the segment it went into (a gather of
// the output gradient by its id; rows with a negative id were dropped and
// get zeros), scaled by the row's share of that segment's value: 1 for a
// sum, the product of the others for a product, and for max/min the
// gradient split evenly among the rows equal to the result (TensorFlow's
// rules). A scan's gradient is the scan of the gradient run the other way.
#include "weir/ops/gradients/gradient_registry.h"
#include "weir/ops/gradients/gradient_util.h"
#include "weir/ops/standard_ops.h"

namespace weir {
namespace {

using Grads = std::vector<Output>;

// The gathers of the unsorted segment gradients: ids clipped to >= 0 (so
// that the gather is valid), and where the ids are >= 0 as a bool tensor
// shaped [ids shape, 1, ...] that broadcasts against a gathered tensor.
struct SegmentGather {
  Output clipped_ids;
  Output kept;

  SegmentGather(const Scope& scope, Output ids, const Output& data) {
    if (ids.dtype() != DT_INT32 && ids.dtype() != DT_INT64) ids = ops::Cast(scope, ids, DT_INT32);
    Output zero = ops::ZerosLike(scope, ids);
    clipped_ids = ops::Maximum(scope, ids, zero);
    Output rest_rank = ops::Sub(scope, ops::Rank(scope, data), ops::Rank(scope, ids));
    Output mask_shape = ops::ConcatV2(
        scope, {ops::Shape(scope, ids), ops::Fill(scope, ops::Reshape(scope, rest_rank, {1}), 1)},
        0);
    kept = ops::Reshape(scope, ops::GreaterEqual(scope, ids, zero), mask_shape);
  }

  // The rows of `t` ([segments, rest...]) each data row's id names.
  Output Rows(const Scope& scope, const Output& t) const {
    return ops::GatherV2(scope, t, clipped_ids, 0);
  }
  // The same, zero for the dropped rows.
  Output KeptRows(const Scope& scope, const Output& t) const {
    Output rows = Rows(scope, t);
    return ops::SelectV2(scope, kept, rows, ops::ZerosLike(scope, rows));
  }
};

Status UnsortedSegmentSumGrad(const Scope& scope, const Operation& op, const Grads& g,
                              Grads* grads) {
  SegmentGather gather(scope, ForwardInput(op, 1), ForwardInput(op, 0));
  *grads = {gather.KeptRows(scope, g[0]), Output(), Output()};
  return scope.status();
}

Status UnsortedSegmentMaxMinGrad(const Scope& scope, const Operation& op, const Grads& g,
                                 Grads* grads) {
  Output data = ForwardInput(op, 0), ids = ForwardInput(op, 1);
  SegmentGather gather(scope, ids, data);
  Output selected = ops::LogicalAnd(
      scope, ops::Equal(scope, data, gather.Rows(scope, op.output(0))), gather.kept);
  Output count = ops::UnsortedSegmentSum(scope, ops::Cast(scope, selected, g[0].dtype()), ids,
                                         ForwardInput(op, 2));
  // A segment with no selected row has count 0, but no row gathers it.
  Output rows = gather.Rows(scope, ops::RealDiv(scope, g[0], count));
  *grads = {ops::SelectV2(scope, selected, rows, ops::ZerosLike(scope, rows)), Output(), Output()};
  return scope.status();
}

// d(prod)/d(x_i) is the product of the segment's other rows: prod / x_i
// when x_i != 0; with one zero in the segment, the product of its non-zero
// rows for that zero (and 0 for the rest); with more zeros, 0 for all.
Status UnsortedSegmentProdGrad(const Scope& scope, const Operation& op, const Grads& g,
                               Grads* grads) {
  Output data = ForwardInput(op, 0), ids = ForwardInput(op, 1), num = ForwardInput(op, 2);
  SegmentGather gather(scope, ids, data);
  Output is_zero = ops::Equal(scope, data, ops::ZerosLike(scope, data));
  Output zeros = ops::UnsortedSegmentSum(scope, ops::Cast(scope, is_zero, DT_INT32), ids, num);
  Output grad =
      ops::SelectV2(scope, ops::Greater(scope, zeros, 1), ops::ZerosLike(scope, g[0]), g[0]);
  Output non_zero = ops::SelectV2(scope, is_zero, ops::OnesLike(scope, data), data);
  Output non_zero_prod = ops::UnsortedSegmentProd(scope, non_zero, ids, num);
  Output others = ops::SelectV2(scope, is_zero, gather.Rows(scope, non_zero_prod),
                                ops::RealDiv(scope, gather.Rows(scope, op.output(0)), non_zero));
  *grads = {ops::Mul(scope, gather.KeptRows(scope, grad), others), Output(), Output()};
  return scope.status();
}

Status SegmentSumGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  *grads = {ops::GatherV2(scope, g[0], ForwardInput(op, 1), 0), Output()};
  return scope.status();
}

AttrMap ScanAttrs(const Operation& op, bool flip_reverse) {
  bool exclusive = false, reverse = false;
  (void)GetAttr(op.node()->def().attrs, "exclusive", &exclusive);
  (void)GetAttr(op.node()->def().attrs, "reverse", &reverse);
  return {{"exclusive", exclusive}, {"reverse", flip_reverse ? !reverse : reverse}};
}

Status CumsumGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  *grads = {ops::Cumsum(scope, g[0], ForwardInput(op, 1), ScanAttrs(op, true)), Output()};
  return scope.status();
}

// sum over j at or after i (before, reversed) of g[j] * out[j], over x[i]:
// TensorFlow's formula, which needs x without zeros.
Status CumprodGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  Output weighted = ops::Mul(scope, op.output(0), g[0]);
  Output summed = ops::Cumsum(scope, weighted, ForwardInput(op, 1), ScanAttrs(op, true));
  *grads = {ops::RealDiv(scope, summed, ForwardInput(op, 0)), Output()};
  return scope.status();
}

}  // namespace

void RegisterSegmentGradients(GradientRegistry* registry) {
  registry->Register("UnsortedSegmentSum", UnsortedSegmentSumGrad);
  registry->Register("UnsortedSegmentMax", UnsortedSegmentMaxMinGrad);
  registry->Register("UnsortedSegmentMin", UnsortedSegmentMaxMinGrad);
  registry->Register("UnsortedSegmentProd", UnsortedSegmentProdGrad);
  registry->Register("SegmentSum", SegmentSumGrad);
  registry->Register("Cumsum", CumsumGrad);
  registry->Register("Cumprod", CumprodGrad);
}

}  // namespace weir
