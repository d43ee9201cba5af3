#include "weir/framework/gather_scatter_shape.h"

#include <algorithm>

#include "weir/base/str_util.h"
#include "weir/framework/axes.h"
#include "weir/framework/shape_inference.h"

namespace weir {
namespace {

// PartialShape::FromDims, the error saying what was being computed.
template <typename... Parts>
StatusOr<PartialShape> CheckedShape(std::vector<int64_t> dims, const Parts&... what) {
  StatusOr<PartialShape> out = PartialShape::FromDims(std::move(dims));
  if (!out.ok()) return out.status().WithContext(StrCat(what...));
  return out;
}

}  // namespace

std::vector<int64_t> DimsBetween(const PartialShape& s, int begin, int end) {
  return std::vector<int64_t>(s.dim_sizes().begin() + begin, s.dim_sizes().begin() + end);
}

void AppendDims(std::vector<int64_t>* dims, const std::vector<int64_t>& more) {
  dims->insert(dims->end(), more.begin(), more.end());
}

Status NormalizeGatherAxes(int64_t axis, int64_t batch_dims, const PartialShape& params,
                           const PartialShape& indices, int* norm_axis, int* norm_batch_dims) {
  WEIR_ASSIGN_OR_RETURN(*norm_axis, NormalizeAxis(axis, params.rank(), "axis", params));
  if (batch_dims < 0) batch_dims += indices.rank();
  if (batch_dims < 0 || batch_dims > indices.rank() || batch_dims > *norm_axis) {
    return errors::InvalidArgument("batch_dims ", batch_dims, " must be in [0, ",
                                   std::min(indices.rank(), *norm_axis),
                                   "] (at most the indices' rank and the axis) for params ", params,
                                   ", indices ", indices, " and axis ", axis);
  }
  *norm_batch_dims = static_cast<int>(batch_dims);
  return Status::OK();
}

StatusOr<PartialShape> GatherOutputShape(const PartialShape& params, const PartialShape& indices,
                                         int axis, int batch_dims) {
  std::vector<int64_t> dims = DimsBetween(params, 0, axis);
  for (int i = 0; i < batch_dims; ++i) {
    if (!InferenceContext::MergeDim(dims[i], indices.dim(i), &dims[i]).ok()) {
      return errors::InvalidArgument("batch dim ", i, " differs between params ", params,
                                     " and indices ", indices);
    }
  }
  AppendDims(&dims, DimsBetween(indices, batch_dims, indices.rank()));
  AppendDims(&dims, DimsBetween(params, axis + 1, params.rank()));
  return CheckedShape(std::move(dims), "gathering from params ", params, " by indices ", indices);
}

StatusOr<PartialShape> GatherNdOutputShape(const PartialShape& params,
                                           const PartialShape& indices) {
  if (!params.known_rank() || !indices.known_rank()) return PartialShape::UnknownRank();
  if (indices.rank() < 1) {
    return errors::InvalidArgument("indices must have rank at least 1 but has shape ", indices);
  }
  const int64_t depth = indices.dim(indices.rank() - 1);
  if (depth < 0) return PartialShape::UnknownRank();
  if (depth > params.rank()) {
    return errors::InvalidArgument("the last dim of indices ", indices, " is ", depth,
                                   " but params ", params, " has only ", params.rank(), " dims");
  }
  std::vector<int64_t> dims = DimsBetween(indices, 0, indices.rank() - 1);
  AppendDims(&dims, DimsBetween(params, static_cast<int>(depth), params.rank()));
  return CheckedShape(std::move(dims), "gathering from params ", params, " by indices ", indices);
}

Status CheckScatterNdShapes(const PartialShape& indices, const PartialShape& updates,
                            const PartialShape& shape) {
  if (indices.known_rank() && indices.rank() < 1) {
    return errors::InvalidArgument("indices must have rank at least 1 but has shape ", indices);
  }
  if (!indices.known_rank() || !updates.known_rank() || !shape.known_rank()) {
    return Status::OK();
  }
  const int64_t depth = indices.dim(indices.rank() - 1);
  if (depth < 0) return Status::OK();
  if (depth > shape.rank()) {
    return errors::InvalidArgument("the last dim of indices ", indices, " is ", depth,
                                   " but the output shape ", shape, " has only ", shape.rank(),
                                   " dims");
  }
  std::vector<int64_t> expected = DimsBetween(indices, 0, indices.rank() - 1);
  AppendDims(&expected, DimsBetween(shape, static_cast<int>(depth), shape.rank()));
  if (!PartialShape(expected).IsCompatibleWith(updates)) {
    return errors::InvalidArgument("updates has shape ", updates, " but indices ", indices,
                                   " and output shape ", shape, " need ", PartialShape(expected));
  }
  return Status::OK();
}

StatusOr<PartialShape> OneHotOutputShape(const PartialShape& indices, int64_t depth, int64_t axis) {
  if (axis < -1 || axis > indices.rank()) {
    return errors::InvalidArgument("axis ", axis, " must be -1 or in [0, ", indices.rank(),
                                   "] for indices of shape ", indices);
  }
  std::vector<int64_t> dims = indices.dim_sizes();
  dims.insert(axis == -1 ? dims.end() : dims.begin() + axis, depth);
  return CheckedShape(std::move(dims), "one-hot of indices ", indices, " with depth ", depth);
}

}  // namespace weir
