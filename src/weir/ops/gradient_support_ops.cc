// Ops that exist for gradient functions: the reduction axes that undo a
// NumPy broadcast.
#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/ops/all_ops.h"

namespace weir {

void RegisterGradientSupportOps(OpRegistry* registry) {
  registry->Register(
      OpDefBuilder("BroadcastGradientArgs")
          .Input("s0: T")
          .Input("s1: T")
          .Output("r0: T")
          .Output("r1: T")
          .Attr("T: {int32, int64} = int32")
          .SetShapeFn([](InferenceContext* c) {
            c->set_output(0, PartialShape({-1}));
            c->set_output(1, PartialShape({-1}));
            return Status::OK();
          })
          .Doc("For shapes s0 and s1 broadcast together, the axes of the result each input's "
               "gradient must be summed over (r0, r1)."));
}

}  // namespace weir
