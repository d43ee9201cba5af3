// Ops that exist for gradient functions: the reduction axes that undo a
// NumPy broadcast, the inverse of a permutation (Transpose's gradient) and
// the offsets of a concatenation's pieces (ConcatV2's gradient).
#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/ops/all_ops.h"

namespace weir {
namespace {

// N shape vectors in, N offset vectors of the same lengths out.
Status ConcatOffsetShape(InferenceContext* c) {
  PartialShape concat_dim;
  WEIR_RETURN_IF_ERROR(c->WithRank(0, 0, &concat_dim));
  for (int i = 1; i < c->num_inputs(); ++i) {
    PartialShape shape;
    WEIR_RETURN_IF_ERROR(c->WithRank(i, 1, &shape));
    c->set_output(i - 1, shape);
  }
  return Status::OK();
}

}  // namespace

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
  registry->Register(OpDefBuilder("InvertPermutation")
                         .Input("x: T")
                         .Output("y: T")
                         .Attr("T: {int32, int64} = int32")
                         .SetShapeFn([](InferenceContext* c) {
                           PartialShape x;
                           WEIR_RETURN_IF_ERROR(c->WithRank(0, 1, &x));
                           c->set_output(0, x);
                           return Status::OK();
                         })
                         .Doc("y[x[i]] = i for a vector x holding each of 0..n-1 once; anything "
                              "else is an error."));
  registry->Register(OpDefBuilder("ConcatOffset")
                         .Input("concat_dim: int32")
                         .Input("shape: N * shape_type")
                         .Output("offset: N * shape_type")
                         .Attr("N: int >= 2")
                         .Attr("shape_type: {int32, int64} = int32")
                         .SetShapeFn(ConcatOffsetShape)
                         .Doc("Where each of N concatenated pieces of the given shapes starts "
                              "in the result: 0 except along concat_dim, where it is the sum "
                              "of the earlier pieces' extents. The shapes must agree off "
                              "concat_dim."));
}

}  // namespace weir
