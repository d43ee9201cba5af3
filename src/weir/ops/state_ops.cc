// Resource variables: state reached through a DT_RESOURCE handle.
// VarHandleOp names (and creates, uninitialized) a variable; the other ops
// read and update it. All are stateful, and the placer colocates every op
// that takes a handle with the op that made it.
#include <string_view>

#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/ops/all_ops.h"

namespace weir {
namespace {

Status ScalarShape(InferenceContext* c) {
  c->set_output(0, PartialShape(std::vector<int64_t>{}));
  return Status::OK();
}

Status NoOutputs(InferenceContext*) { return Status::OK(); }

// The handle's data (InferenceContext::input_handle_data) is the variable's
// declared shape and dtype, so a read of it, also through Identity or
// Switch, has that static shape (TensorFlow's handle shapes and types).
Status VarHandleShape(InferenceContext* c) {
  ShapeAndType variable;
  WEIR_RETURN_IF_ERROR(c->GetAttr("shape", &variable.shape));
  WEIR_RETURN_IF_ERROR(c->GetAttr("dtype", &variable.dtype));
  c->set_output(0, PartialShape(std::vector<int64_t>{}));
  c->set_output_handle_data(0, {std::move(variable)});
  return Status::OK();
}

Status ReadVariableShape(InferenceContext* c) {
  const HandleData* data = c->input_handle_data(0);
  if (data == nullptr || data->size() != 1) return Status::OK();  // unknown
  DType dtype = DT_INVALID;
  WEIR_RETURN_IF_ERROR(c->GetAttr("dtype", &dtype));
  if (data->front().dtype != dtype) {
    return errors::InvalidArgument("the variable holds ", data->front().dtype, " but dtype is ",
                                   dtype);
  }
  c->set_output(0, data->front().shape);
  return Status::OK();
}

}  // namespace

void RegisterStateOps(OpRegistry* registry) {
  registry->Register(
      OpDefBuilder("VarHandleOp")
          .Output("resource: resource")
          .Attr("container: string = ''")
          .Attr("shared_name: string = ''")
          .Attr("debug_name: string = ''")  // the Python variable's name; no effect
          .Attr("dtype: type")
          .Attr("shape: shape")
          .Attr("allowed_devices: list(string) = []")
          .SetIsStateful()
          .SetShapeFn(VarHandleShape)
          .Doc("A handle to the variable `shared_name` (the node's name if empty) in "
               "`container` (the session's own if empty); creates it, uninitialized, if new."));
  registry->Register(OpDefBuilder("ReadVariableOp")
                         .Input("resource: resource")
                         .Output("value: dtype")
                         .Attr("dtype: type")
                         .SetIsStateful()
                         .SetShapeFn(ReadVariableShape)
                         .Doc("The variable's current value. FailedPrecondition if it is "
                              "uninitialized."));
  for (const char* op : {"AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp"}) {
    OpDefBuilder builder(op);
    builder.Input("resource: resource").Input("value: dtype").Attr("dtype: type").SetIsStateful().SetShapeFn(NoOutputs);
    if (std::string(op) == "AssignVariableOp") {
      builder.Attr("validate_shape: bool = false").Doc("Sets the variable to `value`.");
    } else {
      builder.Doc("Adds (or subtracts) `value` to the variable in place.");
    }
    registry->Register(builder);
  }
  registry->Register(OpDefBuilder("VarIsInitializedOp")
                         .Input("resource: resource")
                         .Output("is_initialized: bool")
                         .SetIsStateful()
                         .SetShapeFn(ScalarShape)
                         .Doc("Whether the variable has been assigned."));
  registry->Register(OpDefBuilder("ResourceCountUpTo")
                         .Input("resource: resource")
                         .Output("output: T")
                         .Attr("limit: int")
                         .Attr("T: {int32, int64}")
                         .SetIsStateful()
                         .SetShapeFn(ScalarShape)
                         .Doc("Increments the scalar variable and gives its value before; "
                              "OutOfRange once the value has reached `limit` (epoch limits)."));
  registry->Register(OpDefBuilder("DestroyResourceOp")
                         .Input("resource: resource")
                         .Attr("ignore_lookup_error: bool = true")
                         .SetIsStateful()
                         .SetShapeFn(NoOutputs)
                         .Doc("Deletes the resource the handle names."));
  registry->Register(OpDefBuilder("ResourceGather")
                         .Input("resource: resource")
                         .Input("indices: Tindices")
                         .Output("output: dtype")
                         .Attr("batch_dims: int = 0")
                         .Attr("validate_indices: bool = true")
                         .Attr("dtype: type")
                         .Attr("Tindices: {int32, int64}")
                         .SetIsStateful()
                         .Doc("Rows `indices` of the variable."));
  for (const char* op :
       {"ResourceScatterAdd", "ResourceScatterSub", "ResourceScatterMul", "ResourceScatterDiv",
        "ResourceScatterMin", "ResourceScatterMax", "ResourceScatterUpdate"}) {
    const bool arithmetic = std::string_view(op) != "ResourceScatterUpdate";
    registry->Register(OpDefBuilder(op)
                           .Input("resource: resource")
                           .Input("indices: Tindices")
                           .Input("updates: dtype")
                           .Attr(arithmetic ? "dtype: numbertype" : "dtype: type")
                           .Attr("Tindices: {int32, int64}")
                           .SetIsStateful()
                           .SetShapeFn(NoOutputs)
                           .Doc("Updates rows `indices` of the variable with `updates` "
                                "(add, subtract, multiply, divide, min, max or overwrite; a "
                                "repeated index applies each of its rows in turn)."));
  }
  for (const char* op : {"ResourceScatterNdUpdate", "ResourceScatterNdAdd", "ResourceScatterNdSub",
                         "ResourceScatterNdMin", "ResourceScatterNdMax"}) {
    registry->Register(
        OpDefBuilder(op)
            .Input("ref: resource")
            .Input("indices: Tindices")
            .Input("updates: T")
            .Attr("T: type")
            .Attr("Tindices: {int32, int64}")
            .Attr("use_locking: bool = true")
            .Attr("bad_indices_policy: string = ''")
            .SetIsStateful()
            .SetShapeFn(NoOutputs)
            .Doc("Updates the slices of the variable that the last axis of "
                 "`indices` names (each a prefix of the variable's index) with "
                 "`updates`, shaped indices.shape[:-1] + the slice's shape "
                 "(overwrite, add, subtract, min or max). An index out of range is an "
                 "error, or skipped with bad_indices_policy 'IGNORE'."));
  }
}

}  // namespace weir
