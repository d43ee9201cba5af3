#include "weir/kernels/broadcast.h"

#include <algorithm>

#include "weir/ops/shape_fns.h"

namespace weir {

StatusOr<BroadcastPlan> MakeBroadcastPlan(const TensorShape& x, const TensorShape& y) {
  BroadcastPlan plan;
  WEIR_ASSIGN_OR_RETURN(PartialShape out, BroadcastShapes(x, y));
  plan.output_shape = out.ToTensorShape();
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
  const int rank = plan.output_shape.rank();
  bool previous_x_full = false, previous_y_full = false;
  for (int i = 0; i < rank; ++i) {
    const int64_t o = plan.output_shape.dim_size(i);
    if (o == 1) continue;  // both sides are 1 there
    const int ix = i - (rank - x.rank());
    const int iy = i - (rank - y.rank());
    const bool x_full = ix >= 0 && x.dim_size(ix) == o;
    const bool y_full = iy >= 0 && y.dim_size(iy) == o;
    if (!plan.out_dims.empty() && x_full == previous_x_full && y_full == previous_y_full) {
      plan.out_dims.back() *= o;
      if (x_full) plan.x_dims.back() *= o;
      if (y_full) plan.y_dims.back() *= o;
    } else {
      plan.out_dims.push_back(o);
      plan.x_dims.push_back(x_full ? o : 1);
      plan.y_dims.push_back(y_full ? o : 1);
    }
    previous_x_full = x_full;
    previous_y_full = y_full;
  }
  return plan;
}

}  // namespace weir
