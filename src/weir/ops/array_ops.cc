// The array family: ops that make, forward, rearrange, select or describe
// tensors without arithmetic. Declarations and attr names follow
// TensorFlow's so imported graphs validate; shape functions live in
// array_shape_fns.cc, index_shape_fns.cc and strided_slice.cc.
#include "weir/framework/int_tensor_values.h"
#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/ops/all_ops.h"
#include "weir/ops/array_shape_fns.h"
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

// The `shape` attr, which the default value must be compatible with (the
// output may be fed any value of that shape, so it is the attr, not the
// default's shape).
Status PlaceholderWithDefaultShape(InferenceContext* c) {
  PartialShape shape;
  WEIR_RETURN_IF_ERROR(c->GetAttr("shape", &shape));
  if (!shape.IsCompatibleWith(c->input(0))) {
    return errors::InvalidArgument("PlaceholderWithDefault: the default value has shape ",
                                   c->input(0), ", not compatible with the shape attr ", shape);
  }
  c->set_output(0, std::move(shape));
  return Status::OK();
}

Status ShapeShape(InferenceContext* c) {
  const PartialShape& input = c->input(0);
  c->set_output(0, PartialShape({input.known_rank() ? input.rank() : PartialShape::kUnknown}));
  return Status::OK();
}

// Ops whose output is their input.
void RegisterIdentityLikeOps(OpRegistry* registry) {
  registry->Register(OpDefBuilder("IdentityN")
                         .Input("input: T")
                         .Output("output: T")
                         .Attr("T: list(type) >= 1")
                         .SetShapeFn(IdentityNShape)
                         .Doc("Returns its inputs, sharing their buffers."));
  registry->Register(OpDefBuilder("StopGradient")
                         .Input("input: T")
                         .Output("output: T")
                         .Attr("T: type")
                         .SetShapeFn(UnchangedShape)
                         .Doc("Returns its input; gradients do not flow through it."));
  registry->Register(OpDefBuilder("PreventGradient")
                         .Input("input: T")
                         .Output("output: T")
                         .Attr("T: type")
                         .Attr("message: string = ''")
                         .SetShapeFn(UnchangedShape)
                         .Doc("Returns its input; asking for its gradient is an error that "
                              "carries `message`."));
}

// Ops that describe or make tensors from shapes.
void RegisterShapeOps(OpRegistry* registry) {
  registry->Register(OpDefBuilder("ShapeN")
                         .Input("input: N * T")
                         .Output("output: N * out_type")
                         .Attr("N: int >= 1")
                         .Attr("T: type")
                         .Attr("out_type: {int32, int64} = int32")
                         .SetShapeFn(ShapeNShape)
                         .Doc("The dims of each input, as vectors."));
  registry->Register(OpDefBuilder("Size")
                         .Input("input: T")
                         .Output("output: out_type")
                         .Attr("T: type")
                         .Attr("out_type: {int32, int64} = int32")
                         .SetShapeFn(ScalarShape)
                         .Doc("The number of elements of `input`."));
  registry->Register(OpDefBuilder("Rank")
                         .Input("input: T")
                         .Output("output: int32")
                         .Attr("T: type")
                         .SetShapeFn(ScalarShape)
                         .Doc("The number of dims of `input`."));
  registry->Register(OpDefBuilder("Fill")
                         .Input("dims: index_type")
                         .Input("value: T")
                         .Output("output: T")
                         .Attr("T: type")
                         .Attr("index_type: {int32, int64} = int32")
                         .SetShapeFn(FillShape)
                         .Doc("A tensor of shape `dims` with every element `value` (a scalar)."));
  registry->Register(OpDefBuilder("ZerosLike")
                         .Input("x: T")
                         .Output("y: T")
                         .Attr("T: type")
                         .SetShapeFn(UnchangedShape)
                         .Doc("Zeros (false, empty strings) of the shape and dtype of `x`."));
  registry->Register(OpDefBuilder("OnesLike")
                         .Input("x: T")
                         .Output("y: T")
                         .Attr("T: {bfloat16, half, float, double, int8, uint8, int16, uint16, "
                               "int32, uint32, int64, uint64, complex64, complex128, bool}")
                         .SetShapeFn(UnchangedShape)
                         .Doc("Ones (true) of the shape and dtype of `x`."));
  registry->Register(OpDefBuilder("BroadcastTo")
                         .Input("input: T")
                         .Input("shape: Tidx")
                         .Output("output: T")
                         .Attr("T: type")
                         .Attr("Tidx: {int32, int64} = int32")
                         .SetShapeFn(BroadcastToShape)
                         .Doc("`input` broadcast to `shape` (NumPy rules, one direction)."));
  registry->Register(OpDefBuilder("BroadcastArgs")
                         .Input("s0: T")
                         .Input("s1: T")
                         .Output("r0: T")
                         .Attr("T: {int32, int64} = int32")
                         .SetShapeFn(BroadcastArgsShape)
                         .Doc("The broadcast of shapes `s0` and `s1`, as a vector."));
  registry->Register(OpDefBuilder("LinSpace")
                         .Input("start: T")
                         .Input("stop: T")
                         .Input("num: Tidx")
                         .Output("output: T")
                         .Attr("T: {bfloat16, half, float, double}")
                         .Attr("Tidx: {int32, int64} = int32")
                         .SetShapeFn([](InferenceContext* c) {
                           PartialShape scalar;
                           for (int i = 0; i < 3; ++i)
                             WEIR_RETURN_IF_ERROR(c->WithRank(i, 0, &scalar));
                           int64_t num = PartialShape::kUnknown;
                           if (const Tensor* t = c->input_tensor(2)) {
                             WEIR_ASSIGN_OR_RETURN(std::vector<int64_t> v,
                                                   IntTensorValues(*t, "num"));
                             if (v[0] <= 0) {
                               return errors::InvalidArgument("num ", v[0], " must be positive");
                             }
                             num = v[0];
                           }
                           c->set_output(0, PartialShape({num}));
                           return Status::OK();
                         })
                         .Doc("num evenly spaced values from start to stop, both included (num "
                              "= 1: start)."));
  registry->Register(OpDefBuilder("EnsureShape")
                         .Input("input: T")
                         .Output("output: T")
                         .Attr("shape: shape")
                         .Attr("T: type")
                         .SetShapeFn([](InferenceContext* c) {
                           PartialShape shape;
                           WEIR_RETURN_IF_ERROR(c->GetAttr("shape", &shape));
                           StatusOr<PartialShape> merged = c->input(0).Merge(shape);
                           if (!merged.ok()) {
                             return errors::InvalidArgument("input shape ", c->input(0),
                                                            " is not compatible with shape ",
                                                            shape);
                           }
                           c->set_output(0, *merged);
                           return Status::OK();
                         })
                         .Doc("`input`, checked when it runs to have a shape compatible with "
                              "`shape` (InvalidArgument otherwise)."));
  registry->Register(OpDefBuilder("Range")
                         .Input("start: Tidx")
                         .Input("limit: Tidx")
                         .Input("delta: Tidx")
                         .Output("output: Tidx")
                         .Attr("Tidx: {bfloat16, half, float, double, int8, int16, int32, int64, "
                               "uint16, uint32, uint64} = int32")
                         .SetShapeFn(RangeShape)
                         .Doc("[start, start + delta, ...) up to but excluding `limit`; delta 0 "
                              "or pointing away from `limit` is an error."));
}

// Ops that move every element to a computed place.
void RegisterRearrangingOps(OpRegistry* registry) {
  registry->Register(OpDefBuilder("Transpose")
                         .Input("x: T")
                         .Input("perm: Tperm")
                         .Output("y: T")
                         .Attr("T: type")
                         .Attr("Tperm: {int32, int64} = int32")
                         .SetShapeFn(TransposeShape)
                         .Doc("`x` with dim i of the output being dim perm[i] of `x`."));
  registry->Register(OpDefBuilder("ConcatV2")
                         .Input("values: N * T")
                         .Input("axis: Tidx")
                         .Output("output: T")
                         .Attr("N: int >= 2")
                         .Attr("T: type")
                         .Attr("Tidx: {int32, int64} = int32")
                         .SetShapeFn(ConcatV2Shape)
                         .Doc("`values` joined along `axis` (negative counts from the end)."));
  registry->Register(OpDefBuilder("Pack")
                         .Input("values: N * T")
                         .Output("output: T")
                         .Attr("N: int >= 1")
                         .Attr("T: type")
                         .Attr("axis: int = 0")
                         .SetShapeFn(PackShape)
                         .Doc("`values` (all of one shape) stacked along a new dim `axis`."));
  registry->Register(OpDefBuilder("Unpack")
                         .Input("value: T")
                         .Output("output: num * T")
                         .Attr("num: int >= 0")
                         .Attr("T: type")
                         .Attr("axis: int = 0")
                         .SetShapeFn(UnpackShape)
                         .Doc("The `num` slices of `value` along `axis`, that dim removed."));
  registry->Register(OpDefBuilder("Tile")
                         .Input("input: T")
                         .Input("multiples: Tmultiples")
                         .Output("output: T")
                         .Attr("T: type")
                         .Attr("Tmultiples: {int32, int64} = int32")
                         .SetShapeFn(TileShape)
                         .Doc("`input` repeated multiples[i] times along each dim i."));
  registry->Register(OpDefBuilder("Pad")
                         .Input("input: T")
                         .Input("paddings: Tpaddings")
                         .Output("output: T")
                         .Attr("T: type")
                         .Attr("Tpaddings: {int32, int64} = int32")
                         .SetShapeFn(PadShape)
                         .Doc("`input` with paddings[i] = [before, after] zeros around dim i."));
  registry->Register(OpDefBuilder("PadV2")
                         .Input("input: T")
                         .Input("paddings: Tpaddings")
                         .Input("constant_values: T")
                         .Output("output: T")
                         .Attr("T: type")
                         .Attr("Tpaddings: {int32, int64} = int32")
                         .SetShapeFn(PadShape)
                         .Doc("Pad with the scalar `constant_values` instead of zeros."));
  registry->Register(OpDefBuilder("MirrorPad")
                         .Input("input: T")
                         .Input("paddings: Tpaddings")
                         .Output("output: T")
                         .Attr("T: type")
                         .Attr("Tpaddings: {int32, int64} = int32")
                         .Attr("mode: {'REFLECT', 'SYMMETRIC'}")
                         .SetShapeFn(PadShape)
                         .Doc("Pad with mirrored copies of `input`: REFLECT leaves out the edge "
                              "element, SYMMETRIC repeats it."));
  registry->Register(OpDefBuilder("ReverseV2")
                         .Input("tensor: T")
                         .Input("axis: Tidx")
                         .Output("output: T")
                         .Attr("Tidx: {int32, int64} = int32")
                         .Attr("T: {uint8, int8, uint16, int16, int32, uint32, int64, uint64, bool, "
                               "bfloat16, half, float, double, complex64, complex128, string}")
                         .SetShapeFn(ReverseV2Shape)
                         .Doc("`tensor` with the dims in `axis` reversed."));
  registry->Register(OpDefBuilder("Reverse")
                         .Input("tensor: T")
                         .Input("dims: bool")
                         .Output("output: T")
                         .Attr("T: {uint8, int8, uint16, int16, int32, uint32, int64, uint64, bool, "
                               "bfloat16, half, float, double, complex64, complex128, string}")
                         .SetShapeFn(ReverseShape)
                         .Doc("`tensor` with dim i reversed where dims[i] is true."));
  registry->Register(OpDefBuilder("ReverseSequence")
                         .Input("input: T")
                         .Input("seq_lengths: Tlen")
                         .Output("output: T")
                         .Attr("seq_dim: int")
                         .Attr("batch_dim: int = 0")
                         .Attr("T: type")
                         .Attr("Tlen: {int32, int64} = int64")
                         .SetShapeFn(ReverseSequenceShape)
                         .Doc("`input` with, for each index b of dim `batch_dim`, the first "
                              "seq_lengths[b] entries along `seq_dim` reversed and the rest "
                              "kept; each length must be in [0, dim seq_dim]."));
  registry->Register(OpDefBuilder("MatrixBandPart")
                         .Input("input: T")
                         .Input("num_lower: Tindex")
                         .Input("num_upper: Tindex")
                         .Output("band: T")
                         .Attr("T: type")
                         .Attr("Tindex: {int32, int64} = int64")
                         .SetShapeFn([](InferenceContext* c) {
                           PartialShape input, bound;
                           WEIR_RETURN_IF_ERROR(c->WithRankAtLeast(0, 2, &input));
                           WEIR_RETURN_IF_ERROR(c->WithRank(1, 0, &bound));
                           WEIR_RETURN_IF_ERROR(c->WithRank(2, 0, &bound));
                           c->set_output(0, input);
                           return Status::OK();
                         })
                         .Doc("Each innermost matrix of `input` with the entries [i, j] outside "
                              "its band set to zero: kept where i - j <= num_lower and j - i <= "
                              "num_upper (a negative bound keeps that whole triangle)."));
  registry->Register(OpDefBuilder("SpaceToBatchND")
                         .Input("input: T")
                         .Input("block_shape: Tblock_shape")
                         .Input("paddings: Tpaddings")
                         .Output("output: T")
                         .Attr("T: type")
                         .Attr("Tblock_shape: {int32, int64} = int32")
                         .Attr("Tpaddings: {int32, int64} = int32")
                         .SetShapeFn(SpaceToBatchNDShape)
                         .Doc("Zero-pads the M spatial dims after the batch dim by `paddings` "
                              "([M, 2]), cuts each into blocks of `block_shape` and moves the "
                              "offsets within a block into the batch dim (outermost): "
                              "[batch, p1, ..., pM, rest] -> [batch * prod(block), p1 / b1, ..., "
                              "pM / bM, rest]. What dilated convolutions run on."));
  registry->Register(OpDefBuilder("BatchToSpaceND")
                         .Input("input: T")
                         .Input("block_shape: Tblock_shape")
                         .Input("crops: Tcrops")
                         .Output("output: T")
                         .Attr("T: type")
                         .Attr("Tblock_shape: {int32, int64} = int32")
                         .Attr("Tcrops: {int32, int64} = int32")
                         .SetShapeFn(BatchToSpaceNDShape)
                         .Doc("SpaceToBatchND's inverse: moves blocks of the batch dim back "
                              "into the M spatial dims and crops them by `crops` ([M, 2])."));
  registry->Register(OpDefBuilder("ExpandDims")
                         .Input("input: T")
                         .Input("dim: Tdim")
                         .Output("output: T")
                         .Attr("T: type")
                         .Attr("Tdim: {int32, int64} = int32")
                         .SetShapeFn(ExpandDimsShape)
                         .Doc("`input` with a dim of 1 inserted at `dim`, sharing the buffer."));
  registry->Register(OpDefBuilder("Squeeze")
                         .Input("input: T")
                         .Output("output: T")
                         .Attr("T: type")
                         .Attr("squeeze_dims: list(int) >= 0 = []")
                         .SetShapeFn(SqueezeShape)
                         .Doc("`input` without the listed dims of size 1 (all of them when none "
                              "are listed), sharing the buffer."));
}

// Ops that take contiguous or strided parts of a tensor.
void RegisterSlicingOps(OpRegistry* registry) {
  registry->Register(OpDefBuilder("Split")
                         .Input("split_dim: int32")
                         .Input("value: T")
                         .Output("output: num_split * T")
                         .Attr("num_split: int >= 1")
                         .Attr("T: type")
                         .SetShapeFn(SplitShape)
                         .Doc("`value` cut into `num_split` equal parts along `split_dim`."));
  registry->Register(OpDefBuilder("SplitV")
                         .Input("value: T")
                         .Input("size_splits: Tlen")
                         .Input("split_dim: int32")
                         .Output("output: num_split * T")
                         .Attr("num_split: int >= 1")
                         .Attr("T: type")
                         .Attr("Tlen: {int8, int32, int64} = int64")
                         .SetShapeFn(SplitVShape)
                         .Doc("`value` cut along `split_dim` into parts of the given sizes (one "
                              "may be -1: the rest)."));
  registry->Register(OpDefBuilder("Slice")
                         .Input("input: T")
                         .Input("begin: Index")
                         .Input("size: Index")
                         .Output("output: T")
                         .Attr("T: type")
                         .Attr("Index: {int32, int64}")
                         .SetShapeFn(SliceShape)
                         .Doc("size[i] elements of dim i from begin[i] (size -1: to the end)."));
  registry->Register(OpDefBuilder("StridedSlice")
                         .Input("input: T")
                         .Input("begin: Index")
                         .Input("end: Index")
                         .Input("strides: Index")
                         .Output("output: T")
                         .Attr("T: type")
                         .Attr("Index: {int16, int32, int64}")
                         .Attr("begin_mask: int = 0")
                         .Attr("end_mask: int = 0")
                         .Attr("ellipsis_mask: int = 0")
                         .Attr("new_axis_mask: int = 0")
                         .Attr("shrink_axis_mask: int = 0")
                         .SetShapeFn(StridedSliceShape)
                         .Doc("NumPy-style `input[begin:end:strides]` with ellipsis, new axes "
                              "and single indices given by the masks."));
}

// Ops that select or place elements by index values.
void RegisterIndexingOps(OpRegistry* registry) {
  registry->Register(OpDefBuilder("GatherV2")
                         .Input("params: Tparams")
                         .Input("indices: Tindices")
                         .Input("axis: Taxis")
                         .Output("output: Tparams")
                         .Attr("batch_dims: int = 0")
                         .Attr("Tparams: type")
                         .Attr("Tindices: {int16, int32, int64}")
                         .Attr("Taxis: {int32, int64}")
                         .SetShapeFn(GatherV2Shape)
                         .Doc("Slices of `params` along `axis` at `indices`; an index out of "
                              "range is an error."));
  registry->Register(OpDefBuilder("GatherNd")
                         .Input("params: Tparams")
                         .Input("indices: Tindices")
                         .Output("output: Tparams")
                         .Attr("Tparams: type")
                         .Attr("Tindices: {int16, int32, int64}")
                         .Attr("bad_indices_policy: string = ''")
                         .SetShapeFn(GatherNdShape)
                         .Doc("The slices of `params` at the index tuples in the last dim of "
                              "`indices`. Bad indices are errors, or give zeros when "
                              "bad_indices_policy is IGNORE."));
  registry->Register(OpDefBuilder("ScatterNd")
                         .Input("indices: Tindices")
                         .Input("updates: T")
                         .Input("shape: Tindices")
                         .Output("output: T")
                         .Attr("T: type")
                         .Attr("Tindices: {int16, int32, int64}")
                         .Attr("bad_indices_policy: string = ''")
                         .SetShapeFn(ScatterNdShape)
                         .Doc("Zeros of `shape` with `updates` added at `indices` (duplicates "
                              "sum). Bad indices are errors, or skipped when "
                              "bad_indices_policy is IGNORE."));
  registry->Register(OpDefBuilder("OneHot")
                         .Input("indices: TI")
                         .Input("depth: int32")
                         .Input("on_value: T")
                         .Input("off_value: T")
                         .Output("output: T")
                         .Attr("axis: int = -1")
                         .Attr("T: type")
                         .Attr("TI: {uint8, int8, int32, int64} = int64")
                         .SetShapeFn(OneHotShape)
                         .Doc("`on_value` where the new `depth`-sized dim equals the index, "
                              "`off_value` elsewhere (everywhere for indices outside [0, "
                              "depth))."));
  registry->Register(OpDefBuilder("DynamicPartition")
                         .Input("data: T")
                         .Input("partitions: int32")
                         .Output("outputs: num_partitions * T")
                         .Attr("num_partitions: int >= 1")
                         .Attr("T: type")
                         .SetShapeFn(DynamicPartitionShape)
                         .Doc("Output i holds the slices of `data` whose partition is i, in "
                              "order."));
  registry->Register(OpDefBuilder("DynamicStitch")
                         .Input("indices: N * int32")
                         .Input("data: N * T")
                         .Output("merged: T")
                         .Attr("N: int >= 1")
                         .Attr("T: type")
                         .SetShapeFn(DynamicStitchShape)
                         .Doc("merged[indices[m][i]] = data[m][i]; later values win; rows no "
                              "index names are zero."));
  registry->Register(OpDefBuilder("Unique")
                         .Input("x: T")
                         .Output("y: T")
                         .Output("idx: out_idx")
                         .Attr("T: type")
                         .Attr("out_idx: {int32, int64} = int32")
                         .SetShapeFn(UniqueShape)
                         .Doc("The distinct values of vector `x` in order of first occurrence, "
                              "and for each element of `x` its position in `y`."));
  registry->Register(OpDefBuilder("Where")
                         .Input("input: T")
                         .Output("index: int64")
                         .Attr("T: {numbertype, bool} = bool")
                         .SetShapeFn(WhereShape)
                         .Doc("The coordinates of the true (nonzero) elements of `input`, in "
                              "row-major order, as an [n, rank] matrix."));
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
  registry->Register(OpDefBuilder("PlaceholderWithDefault")
                         .Input("input: dtype")
                         .Output("output: dtype")
                         .Attr("dtype: type")
                         .Attr("shape: shape")
                         .SetShapeFn(PlaceholderWithDefaultShape)
                         .Doc("A value the client may feed; unfed, it is `input`."));
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
  RegisterIdentityLikeOps(registry);
  RegisterShapeOps(registry);
  RegisterRearrangingOps(registry);
  RegisterSlicingOps(registry);
  RegisterIndexingOps(registry);
}

}  // namespace weir
