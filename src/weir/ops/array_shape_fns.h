// Shape functions of the array family, and the shape rules they share with
// the kernels so that a graph-time error and a run-time error say the same
// thing. Each rule takes partial shapes: kernels pass full shapes and get
// full shapes back; shape functions pass what they know and get unknown dims
// where the answer depends on what they do not. Messages say what is wrong;
// shape-function callers add the node and input shapes, kernels the op name.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "weir/base/status.h"
#include "weir/framework/tensor_shape.h"

namespace weir {

class InferenceContext;
class Tensor;

// Shape functions, by the op they serve (array_shape_fns.cc,
// concat_split_shape_fns.cc, index_shape_fns.cc, strided_slice.cc).
Status TransposeShape(InferenceContext* c);
Status ConcatV2Shape(InferenceContext* c);
Status PackShape(InferenceContext* c);
Status UnpackShape(InferenceContext* c);
Status SplitShape(InferenceContext* c);
Status SplitVShape(InferenceContext* c);
Status SliceShape(InferenceContext* c);
Status StridedSliceShape(InferenceContext* c);
Status TileShape(InferenceContext* c);
Status PadShape(InferenceContext* c);  // Pad, PadV2 and MirrorPad
Status ExpandDimsShape(InferenceContext* c);
Status SqueezeShape(InferenceContext* c);
Status FillShape(InferenceContext* c);
Status BroadcastToShape(InferenceContext* c);
Status BroadcastArgsShape(InferenceContext* c);
Status ReverseV2Shape(InferenceContext* c);
Status ReverseShape(InferenceContext* c);
Status ShapeNShape(InferenceContext* c);
Status ScalarShape(InferenceContext* c);      // Size, Rank
Status IdentityNShape(InferenceContext* c);   // output i is input i
Status GatherV2Shape(InferenceContext* c);
Status GatherNdShape(InferenceContext* c);
Status ScatterNdShape(InferenceContext* c);
Status OneHotShape(InferenceContext* c);
Status RangeShape(InferenceContext* c);
Status DynamicPartitionShape(InferenceContext* c);
Status DynamicStitchShape(InferenceContext* c);
Status UniqueShape(InferenceContext* c);
Status WhereShape(InferenceContext* c);

// ---- Helpers for the family's shape functions.

// Input `i` must be a vector: its length, or -1 when unknown.
StatusOr<int64_t> VectorInputLength(const InferenceContext* c, int i, std::string_view what);

// The rank of input 0, else the length of vector input `i` that holds one
// value per dim; -1 when neither is known. Error if they disagree.
StatusOr<int> RankFromInputOrVector(const InferenceContext* c, int i, std::string_view what);

// Output `output` has `rank` unknown dims (unknown rank when rank < 0).
void SetUnknownDims(InferenceContext* c, int output, int rank);

// ---- Rules shared with the kernels.

// The values of an int32 or int64 tensor of any rank, flattened, as int64.
StatusOr<std::vector<int64_t>> IntTensorElements(const Tensor& t, std::string_view what);

// The values of input `i` when it is a known constant (scalar or vector of
// int32/int64), else nullopt.
StatusOr<std::optional<std::vector<int64_t>>> ConstantInts(const InferenceContext* c, int i,
                                                            std::string_view what);

// `axis` in [-rank, rank) as an index in [0, rank). `what` names it in the
// error ("axis", "split_dim"); `shape` is the input it indexes.
StatusOr<int> NormalizeAxis(int64_t axis, int rank, std::string_view what,
                            const PartialShape& shape);

// Transpose: `perm` must be a permutation of [0, rank).
StatusOr<std::vector<int>> TransposePermutation(std::span<const int64_t> perm,
                                                const PartialShape& input);

// ConcatV2: the inputs joined along `axis` (negative counts from the end).
// All must have one rank (at least 1) and equal dims off the axis.
StatusOr<PartialShape> ConcatOutputShape(std::span<const PartialShape> inputs, int64_t axis);

// SplitV: `sizes` with its one -1 resolved so they add up to `dim` (-1 when
// `dim` is unknown leaves that entry unknown).
StatusOr<std::vector<int64_t>> ResolveSplitSizes(std::span<const int64_t> sizes, int64_t dim);

// Slice: the output shape (the sizes with -1 resolved); begin[i] in
// [0, dim], size[i] in [0, dim - begin] or -1 for "the rest".
StatusOr<PartialShape> SliceOutputShape(const PartialShape& input,
                                        std::span<const int64_t> begin,
                                        std::span<const int64_t> size);

// Tile: each dim times its multiple (multiples non-negative, one per dim).
StatusOr<PartialShape> TiledShape(const PartialShape& input, std::span<const int64_t> multiples);

// Pad, PadV2 and MirrorPad: `paddings` is [rank, 2] flattened (before,
// after), non-negative. `mirror_mode` is "" for constant padding, else
// "REFLECT" (padding < dim) or "SYMMETRIC" (padding <= dim).
StatusOr<PartialShape> PaddedShape(const PartialShape& input, std::span<const int64_t> paddings,
                                   std::string_view mirror_mode);

// ExpandDims: a 1 inserted at `dim` in [-rank - 1, rank].
StatusOr<PartialShape> ExpandedShape(const PartialShape& input, int64_t dim);

// Squeeze: the listed dims (each in [-rank, rank), each of size 1) removed,
// or every dim of size 1 when `squeeze_dims` is empty.
StatusOr<PartialShape> SqueezedShape(const PartialShape& input,
                                     std::span<const int64_t> squeeze_dims);

// BroadcastTo: `target`, after checking that `input` broadcasts to it.
StatusOr<PartialShape> BroadcastToTarget(const PartialShape& input,
                                         std::span<const int64_t> target);

// GatherV2: params[:axis] + indices[batch_dims:] + params[axis + 1:], where
// the first batch_dims dims of params and indices agree. `axis` and
// `batch_dims` are already normalized (0 <= batch_dims <= axis).
StatusOr<PartialShape> GatherOutputShape(const PartialShape& params, const PartialShape& indices,
                                         int axis, int batch_dims);
// Normalizes GatherV2's axis and batch_dims against the ranks.
Status NormalizeGatherAxes(int64_t axis, int64_t batch_dims, const PartialShape& params,
                           const PartialShape& indices, int* norm_axis, int* norm_batch_dims);

// GatherNd: indices[:-1] + params[indices.dim(-1):].
StatusOr<PartialShape> GatherNdOutputShape(const PartialShape& params,
                                           const PartialShape& indices);

// ScatterNd: updates must be indices[:-1] + shape[indices.dim(-1):].
Status CheckScatterNdShapes(const PartialShape& indices, const PartialShape& updates,
                            const PartialShape& shape);

// OneHot: `depth` (>= 0, or -1 when unknown) inserted into the indices'
// shape at `axis` (-1 for last).
StatusOr<PartialShape> OneHotOutputShape(const PartialShape& indices, int64_t depth,
                                         int64_t axis);

// Range: the number of elements of [start, limit) by delta.
StatusOr<int64_t> RangeSize(int64_t start, int64_t limit, int64_t delta);
StatusOr<int64_t> RangeSize(double start, double limit, double delta);

}  // namespace weir
