// Axis arguments checked against a rank: one axis, a set of reduction axes,
// a permutation. Negative axes count from the end. Shared by the shape
// functions and the kernels so both report the same error.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "weir/base/status.h"
#include "weir/framework/tensor_shape.h"

namespace weir {

// `axis` in [-rank, rank) as an index in [0, rank). `what` names it in the
// error ("axis", "split_dim"); `shape` is the input it indexes.
StatusOr<int> NormalizeAxis(int64_t axis, int rank, std::string_view what,
                            const PartialShape& shape);

// Reduction axes for an input of `rank`, each in [-rank, rank) and none
// named twice, normalized to [0, rank) and sorted.
StatusOr<std::vector<int>> NormalizeReductionAxes(std::span<const int64_t> axes, int rank,
                                                  const PartialShape& input_shape);

// Transpose: `perm` must be a permutation of [0, rank).
StatusOr<std::vector<int>> TransposePermutation(std::span<const int64_t> perm,
                                                const PartialShape& input);

}  // namespace weir
