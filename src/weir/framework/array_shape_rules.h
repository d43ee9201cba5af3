// Output shapes of the array ops that reshape, join, cut, tile or pad a
// tensor, shared by the shape functions and the kernels so that a
// graph-time error and a run-time error say the same thing. Each rule takes
// partial shapes: kernels pass full shapes and get full shapes back; shape
// functions pass what they know and get unknown dims where the answer
// depends on what they do not. Messages say what is wrong; callers add the
// node (shape functions) or the op (kernels).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "weir/base/status.h"
#include "weir/framework/tensor_shape.h"

namespace weir {

// Reshape: the shape for the requested `dims`, where one dim may be -1
// (inferred when the element count is known, else unknown).
StatusOr<PartialShape> ReshapeTarget(const PartialShape& input, std::span<const int64_t> dims);

// ExpandDims: a 1 inserted at `dim` in [-rank - 1, rank].
StatusOr<PartialShape> ExpandedShape(const PartialShape& input, int64_t dim);

// Squeeze: the listed dims (each in [-rank, rank), each of size 1) removed,
// or every dim of size 1 when `squeeze_dims` is empty.
StatusOr<PartialShape> SqueezedShape(const PartialShape& input,
                                     std::span<const int64_t> squeeze_dims);

// ConcatV2: the inputs joined along `axis` (negative counts from the end).
// All must have one rank (at least 1) and equal dims off the axis.
StatusOr<PartialShape> ConcatOutputShape(std::span<const PartialShape> inputs, int64_t axis);

// SplitV: `sizes` with its one -1 resolved so they add up to `dim` (-1 when
// `dim` is unknown leaves that entry unknown).
StatusOr<std::vector<int64_t>> ResolveSplitSizes(std::span<const int64_t> sizes, int64_t dim);

// Slice: the output shape (the sizes with -1 resolved); begin[i] in
// [0, dim], size[i] in [0, dim - begin] or -1 for "the rest".
StatusOr<PartialShape> SliceOutputShape(const PartialShape& input, std::span<const int64_t> begin,
                                        std::span<const int64_t> size);

// Tile: each dim times its multiple (multiples non-negative, one per dim).
StatusOr<PartialShape> TiledShape(const PartialShape& input, std::span<const int64_t> multiples);

// Pad, PadV2 and MirrorPad: `paddings` is [rank, 2] flattened (before,
// after), non-negative. `mirror_mode` is "" for constant padding, else
// "REFLECT" (padding < dim) or "SYMMETRIC" (padding <= dim).
StatusOr<PartialShape> PaddedShape(const PartialShape& input, std::span<const int64_t> paddings,
                                   std::string_view mirror_mode);

// Range: the number of elements of [start, limit) by delta.
StatusOr<int64_t> RangeSize(int64_t start, int64_t limit, int64_t delta);
StatusOr<int64_t> RangeSize(double start, double limit, double delta);

}  // namespace weir
