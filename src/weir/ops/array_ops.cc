// The array family: ops that make, forward or reinterpret tensors without
// arithmetic.
#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/ops/all_ops.h"
#include "weir/ops/shape_fns.h"

namespace weir {
namespace {

Status ConstShape(InferenceContext* c) {
  Tensor value;
  DType dtype;
  WEIR_RETURN_IF_ERROR(c->GetAttr("value", &value));
  WEIR_RETURN_IF_ERROR(c->GetAttr("dtype", &dtype));
  if (value.dtype() != dtype) {
    return errors::InvalidArgument("Const: value has dtype ", value.dtype(),
                                   " but the dtype attr is ", dtype);
  }
  c->set_output(0, value.shape());
  return Status::OK();
}

Status PlaceholderShape(InferenceContext* c) {
  PartialShape shape;
  WEIR_RETURN_IF_ERROR(c->GetAttr("shape", &shape));
  c->set_output(0, std::move(shape));
  return Status::OK();
}

Status ShapeShape(InferenceContext* c) {
  const PartialShape& input = c->input(0);
  c->set_output(0, PartialShape({input.known_rank() ? input.rank() : PartialShape::kUnknown}));
  return Status::OK();
}

}  // namespace

void RegisterArrayOps(OpRegistry* registry) {
  registry->Register(OpDefBuilder("Const")
                         .Output("output: dtype")
                         .Attr("value: tensor")
                         .Attr("dtype: type")
                         .SetShapeFn(ConstShape)
                         .Doc("Produces the tensor held in the `value` attr."));
  registry->Register(OpDefBuilder("Placeholder")
                         .Output("output: dtype")
                         .Attr("dtype: type")
                         .Attr("shape: shape")
                         .AttrDefault("shape", PartialShape::UnknownRank())
                         .SetShapeFn(PlaceholderShape)
                         .Doc("A value the client must feed; running it unfed is an error."));
  registry->Register(OpDefBuilder("Identity")
                         .Input("input: T")
                         .Output("output: T")
                         .Attr("T: type")
                         .SetShapeFn(UnchangedShape)
                         .Doc("Returns its input, sharing the buffer."));
  registry->Register(OpDefBuilder("Shape")
                         .Input("input: T")
                         .Output("output: out_type")
                         .Attr("T: type")
                         .Attr("out_type: {int32, int64} = int32")
                         .SetShapeFn(ShapeShape)
                         .Doc("The dims of `input` as a vector."));
  registry->Register(OpDefBuilder("Reshape")
                         .Input("tensor: T")
                         .Input("shape: Tshape")
                         .Output("output: T")
                         .Attr("T: type")
                         .Attr("Tshape: {int32, int64} = int32")
                         .SetShapeFn(ReshapeShape)
                         .Doc("`tensor` with the dims in `shape` (one may be -1, inferred from "
                              "the element count), sharing the buffer."));
}

}  // namespace weir
