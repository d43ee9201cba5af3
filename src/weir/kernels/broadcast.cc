#include "weir/kernels/broadcast.h"

#include <algorithm>
#include <limits>

#include "weir/framework/broadcast_shape.h"

namespace weir {

CollapsedBroadcast CollapseBroadcast(const TensorShape& output,
                                     std::initializer_list<const TensorShape*> inputs) {
  CollapsedBroadcast result;
  result.in_dims.resize(inputs.size());
  const int rank = output.rank();
  std::vector<bool> full(inputs.size()), previous_full(inputs.size());
  for (int i = 0; i < rank; ++i) {
    const int64_t o = output.dim_size(i);
    if (o == 1) continue;  // every input is 1 there
    size_t k = 0;
    for (const TensorShape* in : inputs) {
      const int index = i - (rank - in->rank());
      full[k++] = index >= 0 && in->dim_size(index) == o;
    }
    if (!result.out_dims.empty() && full == previous_full) {
      // Saturating: only an empty output's dims can multiply past int64,
      // and an empty output is never walked.
      auto merge = [o](int64_t& d) {
        if (__builtin_mul_overflow(d, o, &d)) d = std::numeric_limits<int64_t>::max();
      };
      merge(result.out_dims.back());
      for (k = 0; k < inputs.size(); ++k) {
        if (full[k]) merge(result.in_dims[k].back());
      }
    } else {
      result.out_dims.push_back(o);
      for (k = 0; k < inputs.size(); ++k) result.in_dims[k].push_back(full[k] ? o : 1);
    }
    previous_full = full;
  }
  if (result.out_dims.empty()) {  // one element
    result.out_dims.push_back(1);
    for (std::vector<int64_t>& dims : result.in_dims) dims.push_back(1);
  }
  return result;
}

StatusOr<BroadcastPlan> MakeBroadcastPlan(const TensorShape& x, const TensorShape& y) {
  BroadcastPlan plan;
  // The common cases first, without building partial shapes: they decide
  // the cost of small elementwise ops.
  if (x == y) {
    plan.kind = BroadcastPlan::Kind::kSameShape;
    plan.output_shape = x;
    return plan;
  }
  if (x.num_elements() == 1 && x.rank() <= y.rank()) {
    plan.kind = BroadcastPlan::Kind::kScalarX;
    plan.output_shape = y;
    return plan;
  }
  if (y.num_elements() == 1 && y.rank() <= x.rank()) {
    plan.kind = BroadcastPlan::Kind::kScalarY;
    plan.output_shape = x;
    return plan;
  }
  WEIR_ASSIGN_OR_RETURN(PartialShape out, BroadcastShapes(x, y));
  // Two empty inputs can broadcast to dims whose product passes int64
  // ([2^40,1,0] and [1,2^40,0]).
  StatusOr<TensorShape> out_shape = TensorShape::FromDims(out.dim_sizes());
  if (!out_shape.ok()) {
    return errors::InvalidArgument("shapes ", x, " and ", y, " broadcast to ", out,
                                   ", which has more than 2^63 - 1 elements");
  }
  plan.output_shape = *std::move(out_shape);
  const int64_t count = plan.output_shape.num_elements();
  if (x.num_elements() == count && y.num_elements() == count) {
    plan.kind = BroadcastPlan::Kind::kSameShape;
    return plan;
  }
  if (x.num_elements() == 1) {
    plan.kind = BroadcastPlan::Kind::kScalarX;
    return plan;
  }
  if (y.num_elements() == 1) {
    plan.kind = BroadcastPlan::Kind::kScalarY;
    return plan;
  }
  plan.kind = BroadcastPlan::Kind::kGeneral;
  CollapsedBroadcast collapsed = CollapseBroadcast(plan.output_shape, {&x, &y});
  plan.out_dims = std::move(collapsed.out_dims);
  plan.x_dims = std::move(collapsed.in_dims[0]);
  plan.y_dims = std::move(collapsed.in_dims[1]);
  return plan;
}

}  // namespace weir
