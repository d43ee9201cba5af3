// Shape functions of the array family. The rules they share with the
// kernels live in framework/ (array_shape_rules.h, axes.h,
// broadcast_shape.h, gather_scatter_shape.h, strided_slice_spec.h,
// int_tensor_values.h), so a graph-time error and a run-time error say the
// same thing.
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
// concat_split_shape_fns.cc, index_shape_fns.cc).
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
Status ReverseSequenceShape(InferenceContext* c);
Status SpaceToBatchNDShape(InferenceContext* c);
Status BatchToSpaceNDShape(InferenceContext* c);
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

// The values of input `i` when it is a known constant (scalar or vector of
// int32/int64), else nullopt.
StatusOr<std::optional<std::vector<int64_t>>> ConstantInts(const InferenceContext* c, int i,
                                                           std::string_view what);

}  // namespace weir
