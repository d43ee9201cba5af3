// NumPy broadcasting of shapes, shared by the shape functions (partial
// shapes) and the kernels (full shapes), so that a graph-time error and a
// run-time error say the same thing.
#pragma once

#include <cstdint>
#include <span>

#include "weir/base/status.h"
#include "weir/framework/tensor_shape.h"

namespace weir {

// NumPy broadcasting of two partial shapes: dims align from the right, a dim
// of 1 stretches. "Incompatible shapes: [2,3] vs. [4]" when two known dims
// differ and neither is 1.
StatusOr<PartialShape> BroadcastShapes(const PartialShape& a, const PartialShape& b);

// BroadcastTo: `target`, after checking that `input` broadcasts to it.
StatusOr<PartialShape> BroadcastToTarget(const PartialShape& input,
                                         std::span<const int64_t> target);

}  // namespace weir
