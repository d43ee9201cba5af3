// The io family: saving and restoring tensors in checkpoints (TensorFlow's
// V2 layout, framework/tensor_bundle.h), with TensorFlow's op signatures so
// imported save/restore graphs run unchanged.
#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/framework/tensor_slice.h"
#include "weir/ops/all_ops.h"

namespace weir {
namespace {

// prefix is a scalar; tensor_names and shape_and_slices are vectors of one
// entry per saved or restored tensor.
Status CheckNamesAndSlices(InferenceContext* c, int64_t num_tensors) {
  PartialShape unused;
  WEIR_RETURN_IF_ERROR(c->WithRank(0, 0, &unused));
  for (int input : {1, 2}) {
    PartialShape names;
    WEIR_RETURN_IF_ERROR(c->WithRank(input, 1, &names));
    int64_t merged;
    Status status = InferenceContext::MergeDim(names.dim(0), num_tensors, &merged);
    if (!status.ok()) {
      return errors::InvalidArgument("input ", input, " has shape ", names, " but there are ",
                                     num_tensors, " tensors");
    }
  }
  return Status::OK();
}

Status SaveV2Shape(InferenceContext* c) { return CheckNamesAndSlices(c, c->num_inputs() - 3); }

// Outputs have the shape their slice spec gives when shape_and_slices is a
// known constant; whole tensors (empty specs) have shapes known only to the
// checkpoint.
Status RestoreV2Shape(InferenceContext* c) {
  WEIR_RETURN_IF_ERROR(CheckNamesAndSlices(c, c->num_outputs()));
  const Tensor* specs = c->input_tensor(2);
  for (int i = 0; i < c->num_outputs(); ++i) {
    c->set_output(i, PartialShape::UnknownRank());
    if (specs == nullptr || specs->dtype() != DT_STRING || specs->NumElements() <= i) continue;
    const std::string& spec = specs->data<std::string>()[i];
    if (spec.empty()) continue;
    WEIR_ASSIGN_OR_RETURN(ShapeAndSlice slice, ParseShapeAndSlice(spec));
    c->set_output(i, PartialShape(slice.slice_shape()));
  }
  return Status::OK();
}

}  // namespace

void RegisterIoOps(OpRegistry* registry) {
  registry->Register(
      OpDefBuilder("SaveV2")
          .Input("prefix: string")
          .Input("tensor_names: string")
          .Input("shape_and_slices: string")
          .Input("tensors: dtypes")
          .Attr("dtypes: list(type) >= 1")
          .SetIsStateful()
          .SetShapeFn(SaveV2Shape)
          .Doc("Saves `tensors` under `tensor_names` in the checkpoint `prefix` (files "
               "<prefix>.index and <prefix>.data-00000-of-00001), replacing it atomically. "
               "An empty `shape_and_slices` entry saves its tensor whole; a spec saves it as "
               "that slice of a larger tensor (several entries may name one tensor)."));
  registry->Register(
      OpDefBuilder("RestoreV2")
          .Input("prefix: string")
          .Input("tensor_names: string")
          .Input("shape_and_slices: string")
          .Output("tensors: dtypes")
          .Attr("dtypes: list(type) >= 1")
          .SetIsStateful()
          .SetShapeFn(RestoreV2Shape)
          .Doc("Reads `tensor_names` from the checkpoint `prefix`, checking their `dtypes`. "
               "An empty `shape_and_slices` entry restores the whole tensor; a spec such as "
               "\"4 5 0,2:-\" (full shape, then start,length or - per dim) restores that "
               "part of it."));
}

}  // namespace weir
