// StridedSlice's indexing rules (NumPy basic indexing as TensorFlow encodes
// it), shared by the shape function and the kernel.
//
// The op's begin/end/strides name a "sparse" spec of n entries. Entry i is
//   an ellipsis (ellipsis_mask bit i): as many full dims as the input has
//     beyond the other entries; at most one; implied at the end when absent;
//   a new axis (new_axis_mask bit i, unless it is the ellipsis): a dim of 1
//     in the output, consuming no input dim;
//   a single index (shrink_axis_mask bit i): begin[i] (negative counts from
//     the end, must be in range); the dim is dropped from the output;
//   else a range begin[i]:end[i]:strides[i]; negative begin/end count from
//     the end and are then clamped into the dim; begin_mask / end_mask bit i
//     make that end of the range the dim's first or last element in the
//     stride's direction.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "weir/base/status.h"
#include "weir/framework/tensor_shape.h"

namespace weir {

struct StridedSliceMasks {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t ellipsis = 0;
  int64_t new_axis = 0;
  int64_t shrink_axis = 0;
};

// Each entry takes an input dim or adds a new axis (a mask bit, so one of
// the first 64 entries): no valid slice has more entries than this.
inline constexpr int kMaxStridedSliceEntries = TensorShape::kMaxRank + 64;

// The slice in terms of the input's dims.
struct StridedSlicePlan {
  // Per input dim: the first index taken, the step and the number of
  // elements taken; -1 where unknown (unknown dims, unknown values). A dim
  // taking at most one element has step 1, so that step * (the dim's
  // element stride) never overflows.
  std::vector<int64_t> begin;
  std::vector<int64_t> stride;
  std::vector<int64_t> size;
  // The output: `size` with shrunk dims dropped and new axes added.
  PartialShape output;
};

// Values that are not known (shape inference without constant inputs) are
// nullopt; then only the structure given by the masks is used. REQUIRES:
// known values all have `num_entries` elements. More than
// kMaxStridedSliceEntries entries is InvalidArgument.
StatusOr<StridedSlicePlan> MakeStridedSlicePlan(const PartialShape& input, int num_entries,
                                                const std::optional<std::vector<int64_t>>& begin,
                                                const std::optional<std::vector<int64_t>>& end,
                                                const std::optional<std::vector<int64_t>>& strides,
                                                const StridedSliceMasks& masks);

}  // namespace weir
