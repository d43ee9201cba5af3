// The data-flow family: stacks (what a loop's gradient pushes forward values
// onto) and TensorArrays (a list of tensors written and read by index, the
// state of dynamic_rnn-style loops). OpDefs are TensorFlow's (V2 stacks, V3
// TensorArrays), so imported graphs run unchanged. Both live for one step
// (kernels/tensor_array.h). The flow inputs and outputs are float scalars
// that carry no data: they order the ops on one array and carry gradients.
//
// One departure from TensorFlow: handles are scalars (TensorFlow's shape
// functions say [2], a remnant of the string handles of the V1 ops, while
// its kernels output scalars too).
#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/ops/all_ops.h"
#include "weir/ops/shape_fns.h"

namespace weir {
namespace {

const PartialShape kScalar = PartialShape(std::vector<int64_t>{});

// `prefix` followed by `shape`'s dims, or unknown rank when `shape`'s is.
PartialShape Prepend(int64_t prefix, const PartialShape& shape) {
  if (!shape.known_rank()) return PartialShape::UnknownRank();
  std::vector<int64_t> dims = {prefix};
  dims.insert(dims.end(), shape.dim_sizes().begin(), shape.dim_sizes().end());
  return PartialShape(std::move(dims));
}

Status StackShape(InferenceContext* c) {
  WEIR_RETURN_IF_ERROR(ScalarInputs(c, {0}));
  c->set_output(0, kScalar);
  return Status::OK();
}

Status StackPushShape(InferenceContext* c) {
  WEIR_RETURN_IF_ERROR(ScalarInputs(c, {0}));
  c->set_output(0, c->input(1));
  return Status::OK();
}

Status HandleOnlyShape(InferenceContext* c) { return ScalarInputs(c, {0}); }

// (handle) -> an element, whose shape only the stack knows.
Status StackPopShape(InferenceContext* c) {
  WEIR_RETURN_IF_ERROR(ScalarInputs(c, {0}));
  c->set_output(0, PartialShape::UnknownRank());
  return Status::OK();
}

Status TensorArrayShape(InferenceContext* c) {
  WEIR_RETURN_IF_ERROR(ScalarInputs(c, {0}));
  c->set_output(0, kScalar);
  c->set_output(1, kScalar);
  return Status::OK();
}

// (handle, index, value, flow_in) -> flow_out
Status WriteShape(InferenceContext* c) {
  WEIR_RETURN_IF_ERROR(ScalarInputs(c, {0, 1, 3}));
  c->set_output(0, kScalar);
  return Status::OK();
}

// (handle, index, flow_in) -> value, whose shape only the array knows.
Status ReadShape(InferenceContext* c) {
  WEIR_RETURN_IF_ERROR(ScalarInputs(c, {0, 1, 2}));
  c->set_output(0, PartialShape::UnknownRank());
  return Status::OK();
}

// (handle, indices, flow_in) -> [len(indices)] + element_shape
Status GatherShape(InferenceContext* c) {
  WEIR_RETURN_IF_ERROR(ScalarInputs(c, {0, 2}));
  PartialShape indices;
  WEIR_RETURN_IF_ERROR(c->WithRank(1, 1, &indices));
  PartialShape element_shape;
  WEIR_RETURN_IF_ERROR(c->GetAttr("element_shape", &element_shape));
  c->set_output(0, Prepend(indices.dim(0), element_shape));
  return Status::OK();
}

// (handle, indices, value, flow_in) -> flow_out; value has a row per index.
Status ScatterShape(InferenceContext* c) {
  WEIR_RETURN_IF_ERROR(ScalarInputs(c, {0, 3}));
  PartialShape indices, value;
  WEIR_RETURN_IF_ERROR(c->WithRank(1, 1, &indices));
  WEIR_RETURN_IF_ERROR(c->WithRankAtLeast(2, 1, &value));
  const int64_t value_rows = value.known_rank() ? value.dim(0) : PartialShape::kUnknown;
  int64_t rows;
  Status status = InferenceContext::MergeDim(indices.dim(0), value_rows, &rows);
  if (!status.ok()) {
    return errors::InvalidArgument("value has ", value_rows, " rows but there are ", indices.dim(0),
                                   " indices");
  }
  c->set_output(0, kScalar);
  return Status::OK();
}

// (handle, flow_in) -> (value [?] + element_shape_except0, lengths [?])
Status ConcatShape(InferenceContext* c) {
  WEIR_RETURN_IF_ERROR(ScalarInputs(c, {0, 1}));
  PartialShape except0;
  WEIR_RETURN_IF_ERROR(c->GetAttr("element_shape_except0", &except0));
  c->set_output(0, Prepend(PartialShape::kUnknown, except0));
  c->set_output(1, PartialShape({PartialShape::kUnknown}));
  return Status::OK();
}

// (handle, value, lengths, flow_in) -> flow_out
Status SplitShape(InferenceContext* c) {
  WEIR_RETURN_IF_ERROR(ScalarInputs(c, {0, 3}));
  PartialShape value, lengths;
  WEIR_RETURN_IF_ERROR(c->WithRankAtLeast(1, 1, &value));
  WEIR_RETURN_IF_ERROR(c->WithRank(2, 1, &lengths));
  c->set_output(0, kScalar);
  return Status::OK();
}

// (handle, flow_in) -> one scalar output (SizeV3) or two (GradV3).
Status HandleAndFlowShape(InferenceContext* c) {
  WEIR_RETURN_IF_ERROR(ScalarInputs(c, {0, 1}));
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, kScalar);
  return Status::OK();
}

void RegisterStackOps(OpRegistry* registry) {
  registry->Register(
      OpDefBuilder("StackV2")
          .Input("max_size: int32")
          .Output("handle: resource")
          .Attr("elem_type: type")
          .Attr("stack_name: string = ''")
          .SetIsStateful()
          .SetShapeFn(StackShape)
          .Doc("A new, empty stack of elem_type tensors that lives for this step. max_size < 0 "
               "means unbounded; pushing onto a full stack is an error."));
  registry->Register(OpDefBuilder("StackPushV2")
                         .Input("handle: resource")
                         .Input("elem: T")
                         .Output("output: T")
                         .Attr("T: type")
                         .Attr("swap_memory: bool = false")
                         .SetIsStateful()
                         .SetShapeFn(StackPushShape)
                         .Doc("Pushes elem onto the stack and outputs it. swap_memory is "
                              "accepted and ignored (the values stay in host memory)."));
  registry->Register(OpDefBuilder("StackPopV2")
                         .Input("handle: resource")
                         .Output("elem: elem_type")
                         .Attr("elem_type: type")
                         .SetIsStateful()
                         .SetShapeFn(StackPopShape)
                         .Doc("Pops the top of the stack; popping an empty stack is an error."));
  registry->Register(OpDefBuilder("StackCloseV2")
                         .Input("handle: resource")
                         .SetIsStateful()
                         .SetShapeFn(HandleOnlyShape)
                         .Doc("Deletes the stack and its elements."));
}

void RegisterTensorArrayOps(OpRegistry* registry) {
  registry->Register(
      OpDefBuilder("TensorArrayV3")
          .Input("size: int32")
          .Output("handle: resource")
          .Output("flow: float")
          .Attr("dtype: type")
          .Attr("element_shape: shape")
          .AttrDefault("element_shape", PartialShape::UnknownRank())
          .Attr("dynamic_size: bool = false")
          .Attr("clear_after_read: bool = true")
          .Attr("identical_element_shapes: bool = false")
          .Attr("tensor_array_name: string = ''")
          .SetIsStateful()
          .SetShapeFn(TensorArrayShape)
          .Doc("A new array of `size` dtype tensors that lives for this step. Each index is "
               "written once; with dynamic_size a write past the end grows the array; with "
               "clear_after_read an index can be read once. Every element must fit "
               "element_shape (and, with identical_element_shapes, the first one written). "
               "Reading an unwritten index gives zeros when element_shape is fully known."));
  registry->Register(OpDefBuilder("TensorArrayWriteV3")
                         .Input("handle: resource")
                         .Input("index: int32")
                         .Input("value: T")
                         .Input("flow_in: float")
                         .Output("flow_out: float")
                         .Attr("T: type")
                         .SetIsStateful()
                         .SetShapeFn(WriteShape)
                         .Doc("Writes value at index (a gradient array adds to what is there)."));
  registry->Register(OpDefBuilder("TensorArrayReadV3")
                         .Input("handle: resource")
                         .Input("index: int32")
                         .Input("flow_in: float")
                         .Output("value: dtype")
                         .Attr("dtype: type")
                         .SetIsStateful()
                         .SetShapeFn(ReadShape)
                         .Doc("The element at index."));
  registry->Register(OpDefBuilder("TensorArrayGatherV3")
                         .Input("handle: resource")
                         .Input("indices: int32")
                         .Input("flow_in: float")
                         .Output("value: dtype")
                         .Attr("dtype: type")
                         .Attr("element_shape: shape")
                         .AttrDefault("element_shape", PartialShape::UnknownRank())
                         .SetIsStateful()
                         .SetShapeFn(GatherShape)
                         .Doc("The elements at indices, stacked along a new first dim. The "
                              "elements must have one shape (element_shape when empty)."));
  registry->Register(OpDefBuilder("TensorArrayScatterV3")
                         .Input("handle: resource")
                         .Input("indices: int32")
                         .Input("value: T")
                         .Input("flow_in: float")
                         .Output("flow_out: float")
                         .Attr("T: type")
                         .SetIsStateful()
                         .SetShapeFn(ScatterShape)
                         .Doc("Writes row i of value at indices[i]."));
  registry->Register(
      OpDefBuilder("TensorArrayConcatV3")
          .Input("handle: resource")
          .Input("flow_in: float")
          .Output("value: dtype")
          .Output("lengths: int64")
          .Attr("dtype: type")
          .Attr("element_shape_except0: shape")
          .AttrDefault("element_shape_except0", PartialShape::UnknownRank())
          .SetIsStateful()
          .SetShapeFn(ConcatShape)
          .Doc("Every element, in order, concatenated along dim 0, and each one's dim 0. The "
               "elements must agree on every other dim."));
  registry->Register(OpDefBuilder("TensorArraySplitV3")
                         .Input("handle: resource")
                         .Input("value: T")
                         .Input("lengths: int64")
                         .Input("flow_in: float")
                         .Output("flow_out: float")
                         .Attr("T: type")
                         .SetIsStateful()
                         .SetShapeFn(SplitShape)
                         .Doc("Splits value along dim 0 into len(lengths) pieces of lengths[i] "
                              "rows and writes piece i at index i."));
  registry->Register(OpDefBuilder("TensorArraySizeV3")
                         .Input("handle: resource")
                         .Input("flow_in: float")
                         .Output("size: int32")
                         .SetIsStateful()
                         .SetShapeFn(HandleAndFlowShape)
                         .Doc("The number of elements (grown by writes when dynamic_size)."));
  registry->Register(OpDefBuilder("TensorArrayCloseV3")
                         .Input("handle: resource")
                         .SetIsStateful()
                         .SetShapeFn(HandleOnlyShape)
                         .Doc("Frees the array's elements; later uses of it are an error."));
  registry->Register(
      OpDefBuilder("TensorArrayGradV3")
          .Input("handle: resource")
          .Input("flow_in: float")
          .Output("grad_handle: resource")
          .Output("flow_out: float")
          .Attr("source: string")
          .SetIsStateful()
          .SetShapeFn(HandleAndFlowShape)
          .Doc("The gradient array of handle for the gradient computation `source`, made on "
               "first use (one per array and source): of the array's size and dtype, its "
               "writes add up, and an index never written reads as zeros of the forward "
               "element's shape. The forward array can no longer grow."));
}

}  // namespace

void RegisterDataFlowOps(OpRegistry* registry) {
  RegisterStackOps(registry);
  RegisterTensorArrayOps(registry);
}

}  // namespace weir
