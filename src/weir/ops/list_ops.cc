// TensorList and Optional ops: the DT_VARIANT values of TensorFlow 2's
// graphs (a TensorArray in a tf.function; the forward values a v2 while
// loop's gradient saves; the intermediates a v2 cond's gradient reads). Names,
// inputs, outputs and attrs are TensorFlow's. A list handle is a scalar
// variant; its element dtype is an attr of each op that reads or writes
// elements, checked against the list at run time (kernels/list_kernel.h), and
// at graph construction against the list's handle data where it is known.
#include <optional>

#include "weir/framework/int_tensor_values.h"
#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/framework/tensor.h"
#include "weir/ops/all_ops.h"

namespace weir {
namespace {

// The element shape a shape input gives (TensorFlow's encoding: scalar -1
// for an unknown rank, -1 entries for unknown dims) when it is a known
// constant; a vector of known length but unknown values gives that many
// unknown dims; unknown rank otherwise. Bad values are the kernel's error.
PartialShape ElementShapeOf(InferenceContext* c, int input) {
  const Tensor* t = c->input_tensor(input);
  if (t == nullptr) {
    const PartialShape& s = c->input(input);
    if (s.known_rank() && s.rank() == 1 && s.dim(0) != PartialShape::kUnknown &&
        s.dim(0) <= TensorShape::kMaxRank) {
      return PartialShape::UnknownDims(static_cast<int>(s.dim(0)));
    }
    return PartialShape::UnknownRank();
  }
  if (t->dims() > 1) return PartialShape::UnknownRank();
  StatusOr<std::vector<int64_t>> dims = IntTensorValues(*t, "element_shape");
  if (!dims.ok() || t->dims() == 0) return PartialShape::UnknownRank();
  for (int64_t& d : *dims) {
    if (d < -1) return PartialShape::UnknownRank();
    if (d == -1) d = PartialShape::kUnknown;
  }
  StatusOr<PartialShape> shape = PartialShape::FromDims(*std::move(dims));
  return shape.ok() ? *shape : PartialShape::UnknownRank();
}

// `leading` prepended to `element` (unknown rank stays unknown).
PartialShape Prepend(int64_t leading, const PartialShape& element) {
  if (!element.known_rank()) return PartialShape::UnknownRank();
  std::vector<int64_t> dims = {leading};
  dims.insert(dims.end(), element.dim_sizes().begin(), element.dim_sizes().end());
  return PartialShape(std::move(dims));
}

// The handle data of a list (InferenceContext::input_handle_data): its
// element shape and dtype as the op that made it said, passed on by the ops
// that change it. As in TensorFlow, the makers set it from their
// element_shape input (not from the rows of a tensor), writers keep it as
// it is (an item pushed or set does not refine it), and readers merge it
// with their own element_shape input, so a list reserved with a known
// element shape reads back with that static shape.

// Input `input`'s list data; null when nothing is known.
const ShapeAndType* ListData(InferenceContext* c, int input) {
  const HandleData* data = c->input_handle_data(input);
  return data != nullptr && data->size() == 1 ? &data->front() : nullptr;
}

// Output `output` is a list of element_dtype elements fitting `shape`.
Status SetListData(InferenceContext* c, int output, PartialShape shape) {
  DType dtype = DT_INVALID;
  WEIR_RETURN_IF_ERROR(c->GetAttr("element_dtype", &dtype));
  c->set_output_handle_data(output, {ShapeAndType{std::move(shape), dtype}});
  return Status::OK();
}

// The list at `input` must hold element_dtype elements, when known.
Status CheckListDType(InferenceContext* c, int input) {
  const ShapeAndType* list = ListData(c, input);
  if (list == nullptr || list->dtype == DT_INVALID) return Status::OK();
  DType dtype = DT_INVALID;
  WEIR_RETURN_IF_ERROR(c->GetAttr("element_dtype", &dtype));
  if (list->dtype != dtype) {
    return errors::InvalidArgument("the list holds ", list->dtype,
                                   " elements but element_dtype is ", dtype);
  }
  return Status::OK();
}

// Output 0 is the list of input 0, changed: the same element shape and
// dtype (the op's element_dtype when nothing is known of the list).
Status PassOnList(InferenceContext* c) {
  const ShapeAndType* list = ListData(c, 0);
  if (list == nullptr) return SetListData(c, 0, PartialShape::UnknownRank());
  c->set_output_handle_data(0, {*list});
  return Status::OK();
}

// The shape of the elements a reader gets: its element_shape input
// (`shape_input`) merged with the list's; they must agree.
StatusOr<PartialShape> ReadShape(InferenceContext* c, int shape_input) {
  PartialShape requested = ElementShapeOf(c, shape_input);
  const ShapeAndType* list = ListData(c, 0);
  if (list == nullptr) return requested;
  WEIR_RETURN_IF_ERROR(CheckListDType(c, 0));
  StatusOr<PartialShape> merged = requested.Merge(list->shape);
  if (!merged.ok()) {
    return errors::InvalidArgument("element_shape ", requested,
                                   " is incompatible with the list's element shape ", list->shape);
  }
  return merged;
}

Status ScalarOutputs(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, PartialShape({}));
  return Status::OK();
}

// A new list whose element shape is input `shape_input`.
template <int shape_input>
Status NewListShape(InferenceContext* c) {
  c->set_output(0, PartialShape({}));
  return SetListData(c, 0, ElementShapeOf(c, shape_input));
}

Status PushBackShape(InferenceContext* c) {
  c->set_output(0, PartialShape({}));
  WEIR_RETURN_IF_ERROR(CheckListDType(c, 0));
  return PassOnList(c);
}

Status SetItemShape(InferenceContext* c) {
  c->set_output(0, PartialShape({}));
  const ShapeAndType* list = ListData(c, 0);
  if (list != nullptr && !list->shape.Merge(c->input(2)).ok()) {
    return errors::InvalidArgument("item of shape ", c->input(2),
                                   " does not fit the list's element shape ", list->shape);
  }
  return PassOnList(c);
}

// TensorListResize has no element_dtype: its list data is its input's.
Status ResizeShape(InferenceContext* c) {
  c->set_output(0, PartialShape({}));
  if (const HandleData* data = c->input_handle_data(0)) c->set_output_handle_data(0, *data);
  return Status::OK();
}

Status ScatterIntoShape(InferenceContext* c) {
  c->set_output(0, PartialShape({}));
  return PassOnList(c);
}

// The popped element has the list's element shape; TensorFlow leaves it
// unknown without list data (element_shape gives only an unset element's).
Status PopBackShape(InferenceContext* c) {
  c->set_output(0, PartialShape({}));
  WEIR_RETURN_IF_ERROR(CheckListDType(c, 0));
  const ShapeAndType* list = ListData(c, 0);
  c->set_output(1, list != nullptr ? list->shape : PartialShape::UnknownRank());
  return PassOnList(c);
}

Status GetItemShape(InferenceContext* c) {
  WEIR_ASSIGN_OR_RETURN(PartialShape element, ReadShape(c, 2));
  c->set_output(0, std::move(element));
  return Status::OK();
}

Status StackShape(InferenceContext* c) {
  int64_t count = -1;
  WEIR_RETURN_IF_ERROR(c->GetAttr("num_elements", &count));
  WEIR_ASSIGN_OR_RETURN(PartialShape element, ReadShape(c, 1));
  c->set_output(0, Prepend(count >= 0 ? count : PartialShape::kUnknown, element));
  return Status::OK();
}

Status GatherShape(InferenceContext* c) {
  const PartialShape& indices = c->input(1);
  const int64_t n =
      indices.known_rank() && indices.rank() == 1 ? indices.dim(0) : PartialShape::kUnknown;
  WEIR_ASSIGN_OR_RETURN(PartialShape element, ReadShape(c, 2));
  c->set_output(0, Prepend(n, element));
  return Status::OK();
}

Status ConcatShape(InferenceContext* c) {
  WEIR_ASSIGN_OR_RETURN(PartialShape element, ReadShape(c, 1));
  if (element.known_rank() && element.rank() >= 1) {
    std::vector<int64_t> dims = element.dim_sizes();
    dims[0] = PartialShape::kUnknown;
    c->set_output(0, PartialShape(std::move(dims)));
  } else {
    c->set_output(0, PartialShape::UnknownRank());
  }
  c->set_output(1, PartialShape({PartialShape::kUnknown}));
  return Status::OK();
}

// A scalar -1 or a vector: a vector of the rank when the list data knows it.
Status ElementShapeShape(InferenceContext* c) {
  const ShapeAndType* list = ListData(c, 0);
  if (list != nullptr && list->shape.known_rank()) {
    c->set_output(0, PartialShape({list->shape.rank()}));
  } else {
    c->set_output(0, PartialShape::UnknownRank());
  }
  return Status::OK();
}

Status OptionalGetValueShape(InferenceContext* c) {
  std::vector<PartialShape> shapes;
  WEIR_RETURN_IF_ERROR(c->GetAttr("output_shapes", &shapes));
  if (static_cast<int>(shapes.size()) != c->num_outputs()) {
    return errors::InvalidArgument("output_shapes has ", shapes.size(),
                                   " shapes but output_types has ", c->num_outputs(), " types");
  }
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, shapes[i]);
  return Status::OK();
}

}  // namespace

void RegisterListOps(OpRegistry* registry) {
  registry->Register(OpDefBuilder("EmptyTensorList")
                         .Input("element_shape: shape_type")
                         .Input("max_num_elements: int32")
                         .Output("handle: variant")
                         .Attr("element_dtype: type")
                         .Attr("shape_type: {int32, int64}")
                         .SetShapeFn(NewListShape<0>)
                         .Doc("An empty list of element_dtype tensors that fit element_shape "
                              "(-1: unknown rank; -1 dims: unknown), holding at most "
                              "max_num_elements (-1: no limit)."));
  registry->Register(OpDefBuilder("TensorListReserve")
                         .Input("element_shape: shape_type")
                         .Input("num_elements: int32")
                         .Output("handle: variant")
                         .Attr("element_dtype: type")
                         .Attr("shape_type: {int32, int64}")
                         .SetShapeFn(NewListShape<0>)
                         .Doc("A list of num_elements unset elements (read as zeros of the "
                              "element shape until set)."));
  registry->Register(OpDefBuilder("TensorListPushBack")
                         .Input("input_handle: variant")
                         .Input("tensor: element_dtype")
                         .Output("output_handle: variant")
                         .Attr("element_dtype: type")
                         .SetShapeFn(PushBackShape)
                         .Doc("The list with `tensor` appended."));
  registry->Register(OpDefBuilder("TensorListPopBack")
                         .Input("input_handle: variant")
                         .Input("element_shape: int32")
                         .Output("output_handle: variant")
                         .Output("tensor: element_dtype")
                         .Attr("element_dtype: type")
                         .SetShapeFn(PopBackShape)
                         .Doc("The list without its last element, and that element (zeros of "
                              "element_shape if it was never set). An empty list is an error."));
  registry->Register(OpDefBuilder("TensorListGetItem")
                         .Input("input_handle: variant")
                         .Input("index: int32")
                         .Input("element_shape: Tshape")
                         .Output("item: element_dtype")
                         .Attr("element_dtype: type")
                         .Attr("Tshape: {int32, int64} = int32")
                         .SetShapeFn(GetItemShape)
                         .Doc("Element `index` (zeros of element_shape if never set)."));
  registry->Register(OpDefBuilder("TensorListSetItem")
                         .Input("input_handle: variant")
                         .Input("index: int32")
                         .Input("item: element_dtype")
                         .Output("output_handle: variant")
                         .Attr("element_dtype: type")
                         .Attr("resize_if_index_out_of_bounds: bool = false")
                         .SetShapeFn(SetItemShape)
                         .Doc("The list with element `index` set to `item`; an index past the "
                              "end grows the list only with resize_if_index_out_of_bounds."));
  registry->Register(OpDefBuilder("TensorListStack")
                         .Input("input_handle: variant")
                         .Input("element_shape: int32")
                         .Output("tensor: element_dtype")
                         .Attr("element_dtype: type")
                         .Attr("num_elements: int = -1")
                         .SetShapeFn(StackShape)
                         .Doc("The elements stacked along a new dim 0; they must share one "
                              "shape. num_elements, when not -1, must be the list's length."));
  registry->Register(OpDefBuilder("TensorListGather")
                         .Input("input_handle: variant")
                         .Input("indices: int32")
                         .Input("element_shape: int32")
                         .Output("values: element_dtype")
                         .Attr("element_dtype: type")
                         .SetShapeFn(GatherShape)
                         .Doc("The elements at `indices`, stacked along a new dim 0."));
  registry->Register(OpDefBuilder("TensorListFromTensor")
                         .Input("tensor: element_dtype")
                         .Input("element_shape: shape_type")
                         .Output("output_handle: variant")
                         .Attr("element_dtype: type")
                         .Attr("shape_type: {int32, int64}")
                         .SetShapeFn(NewListShape<1>)
                         .Doc("A list of the rows (dim 0 slices) of `tensor`."));
  registry->Register(OpDefBuilder("TensorListLength")
                         .Input("input_handle: variant")
                         .Output("length: int32")
                         .SetShapeFn(ScalarOutputs)
                         .Doc("The number of elements in the list."));
  registry->Register(OpDefBuilder("TensorListElementShape")
                         .Input("input_handle: variant")
                         .Output("element_shape: shape_type")
                         .Attr("shape_type: {int32, int64}")
                         .SetShapeFn(ElementShapeShape)
                         .Doc("The list's element shape: -1 for an unknown rank, else a vector "
                              "with -1 for unknown dims."));
  registry->Register(OpDefBuilder("TensorListResize")
                         .Input("input_handle: variant")
                         .Input("size: int32")
                         .Output("output_handle: variant")
                         .SetShapeFn(ResizeShape)
                         .Doc("The list truncated, or grown with unset elements, to `size`."));
  registry->Register(OpDefBuilder("TensorListScatterIntoExistingList")
                         .Input("input_handle: variant")
                         .Input("tensor: element_dtype")
                         .Input("indices: int32")
                         .Output("output_handle: variant")
                         .Attr("element_dtype: type")
                         .SetShapeFn(ScatterIntoShape)
                         .Doc("The list with element indices[i] set to row i of `tensor`, "
                              "grown to hold the largest index."));
  registry->Register(OpDefBuilder("TensorListScatterV2")
                         .Input("tensor: element_dtype")
                         .Input("indices: int32")
                         .Input("element_shape: shape_type")
                         .Input("num_elements: int32")
                         .Output("output_handle: variant")
                         .Attr("element_dtype: type")
                         .Attr("shape_type: {int32, int64}")
                         .SetShapeFn(NewListShape<2>)
                         .Doc("A new list of max(num_elements, largest index + 1) elements "
                              "with element indices[i] set to row i of `tensor`."));
  registry->Register(OpDefBuilder("TensorListConcatV2")
                         .Input("input_handle: variant")
                         .Input("element_shape: shape_type")
                         .Input("leading_dims: int64")
                         .Output("tensor: element_dtype")
                         .Output("lengths: int64")
                         .Attr("element_dtype: type")
                         .Attr("shape_type: {int32, int64}")
                         .SetShapeFn(ConcatShape)
                         .Doc("The elements concatenated along dim 0, and each one's dim 0 "
                              "(leading_dims gives it for elements never set)."));
  registry->Register(OpDefBuilder("TensorListSplit")
                         .Input("tensor: element_dtype")
                         .Input("element_shape: shape_type")
                         .Input("lengths: int64")
                         .Output("output_handle: variant")
                         .Attr("element_dtype: type")
                         .Attr("shape_type: {int32, int64}")
                         .SetShapeFn(NewListShape<1>)
                         .Doc("A list of the consecutive dim 0 pieces of `tensor` of the given "
                              "lengths (which must sum to its dim 0)."));
}

void RegisterOptionalOps(OpRegistry* registry) {
  registry->Register(OpDefBuilder("OptionalFromValue")
                         .Input("components: Toutput_types")
                         .Output("optional: variant")
                         .Attr("Toutput_types: list(type) >= 1")
                         .SetShapeFn(ScalarOutputs)
                         .Doc("An optional holding `components`."));
  registry->Register(OpDefBuilder("OptionalNone")
                         .Output("optional: variant")
                         .SetShapeFn(ScalarOutputs)
                         .Doc("An optional with no value."));
  registry->Register(OpDefBuilder("OptionalHasValue")
                         .Input("optional: variant")
                         .Output("has_value: bool")
                         .SetShapeFn(ScalarOutputs)
                         .Doc("Whether the optional holds a value."));
  registry->Register(OpDefBuilder("OptionalGetValue")
                         .Input("optional: variant")
                         .Output("components: output_types")
                         .Attr("output_types: list(type) >= 1")
                         .Attr("output_shapes: list(shape) >= 1")
                         .SetShapeFn(OptionalGetValueShape)
                         .Doc("The optional's components; an error if it has none."));
}

}  // namespace weir
