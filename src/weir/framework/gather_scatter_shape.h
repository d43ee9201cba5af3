// Output shapes of the ops that index by a tensor of indices (GatherV2,
// GatherNd, ScatterNd, OneHot), shared by the shape functions and the
// kernels so that a graph-time error and a run-time error say the same
// thing. Shapes may be partial (shape functions) or full (kernels).
#pragma once

#include <cstdint>
#include <vector>

#include "weir/base/status.h"
#include "weir/framework/tensor_shape.h"

namespace weir {

// dims[begin, end) of a shape of known rank.
std::vector<int64_t> DimsBetween(const PartialShape& s, int begin, int end);
void AppendDims(std::vector<int64_t>* dims, const std::vector<int64_t>& more);

// Normalizes GatherV2's axis and batch_dims against the ranks.
Status NormalizeGatherAxes(int64_t axis, int64_t batch_dims, const PartialShape& params,
                           const PartialShape& indices, int* norm_axis, int* norm_batch_dims);

// GatherV2: params[:axis] + indices[batch_dims:] + params[axis + 1:], where
// the first batch_dims dims of params and indices agree. `axis` and
// `batch_dims` are already normalized (0 <= batch_dims <= axis).
StatusOr<PartialShape> GatherOutputShape(const PartialShape& params, const PartialShape& indices,
                                         int axis, int batch_dims);

// GatherNd: indices[:-1] + params[indices.dim(-1):].
StatusOr<PartialShape> GatherNdOutputShape(const PartialShape& params, const PartialShape& indices);

// ScatterNd: updates must be indices[:-1] + shape[indices.dim(-1):].
Status CheckScatterNdShapes(const PartialShape& indices, const PartialShape& updates,
                            const PartialShape& shape);

// OneHot: `depth` (>= 0, or -1 when unknown) inserted into the indices'
// shape at `axis` (-1 for last).
StatusOr<PartialShape> OneHotOutputShape(const PartialShape& indices, int64_t depth, int64_t axis);

}  // namespace weir
