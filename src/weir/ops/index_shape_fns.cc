// Shape rules of the array ops driven by index values: GatherV2, GatherNd,
// ScatterNd, OneHot, Range, DynamicPartition, DynamicStitch, Unique, Where.
#include <algorithm>
#include <cmath>
#include <limits>

#include "weir/framework/shape_inference.h"
#include "weir/framework/tensor.h"
#include "weir/ops/array_shape_fns.h"

namespace weir {
namespace {

// dims[begin, end) of a shape of known rank.
std::vector<int64_t> Dims(const PartialShape& s, int begin, int end) {
  return std::vector<int64_t>(s.dim_sizes().begin() + begin, s.dim_sizes().begin() + end);
}

void Append(std::vector<int64_t>* dims, const std::vector<int64_t>& more) {
  dims->insert(dims->end(), more.begin(), more.end());
}

// PartialShape::FromDims, the error saying what was being computed.
template <typename... Parts>
StatusOr<PartialShape> CheckedShape(std::vector<int64_t> dims, const Parts&... what) {
  StatusOr<PartialShape> out = PartialShape::FromDims(std::move(dims));
  if (!out.ok()) return out.status().WithContext(StrCat(what...));
  return out;
}

Status RequireScalar(const InferenceContext* c, int i, std::string_view what) {
  const PartialShape& s = c->input(i);
  if (s.known_rank() && s.rank() != 0) {
    return errors::InvalidArgument(what, " must be a scalar but has shape ", s);
  }
  return Status::OK();
}

}  // namespace

// ---- GatherV2

Status NormalizeGatherAxes(int64_t axis, int64_t batch_dims, const PartialShape& params,
                           const PartialShape& indices, int* norm_axis, int* norm_batch_dims) {
  WEIR_ASSIGN_OR_RETURN(*norm_axis, NormalizeAxis(axis, params.rank(), "axis", params));
  if (batch_dims < 0) batch_dims += indices.rank();
  if (batch_dims < 0 || batch_dims > indices.rank() || batch_dims > *norm_axis) {
    return errors::InvalidArgument("batch_dims ", batch_dims, " must be in [0, ",
                                   std::min(indices.rank(), *norm_axis),
                                   "] (at most the indices' rank and the axis) for params ",
                                   params, ", indices ", indices, " and axis ", axis);
  }
  *norm_batch_dims = static_cast<int>(batch_dims);
  return Status::OK();
}

StatusOr<PartialShape> GatherOutputShape(const PartialShape& params, const PartialShape& indices,
                                         int axis, int batch_dims) {
  std::vector<int64_t> dims = Dims(params, 0, axis);
  for (int i = 0; i < batch_dims; ++i) {
    if (!InferenceContext::MergeDim(dims[i], indices.dim(i), &dims[i]).ok()) {
      return errors::InvalidArgument("batch dim ", i, " differs between params ", params,
                                     " and indices ", indices);
    }
  }
  Append(&dims, Dims(indices, batch_dims, indices.rank()));
  Append(&dims, Dims(params, axis + 1, params.rank()));
  return CheckedShape(std::move(dims), "gathering from params ", params, " by indices ", indices);
}

Status GatherV2Shape(InferenceContext* c) {
  int64_t batch_dims;
  WEIR_RETURN_IF_ERROR(c->GetAttr("batch_dims", &batch_dims));
  WEIR_RETURN_IF_ERROR(RequireScalar(c, 2, "axis"));
  const PartialShape& params = c->input(0);
  const PartialShape& indices = c->input(1);
  WEIR_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axis, ConstantInts(c, 2, "axis"));
  if (!params.known_rank() || !indices.known_rank()) {
    c->set_output(0, PartialShape::UnknownRank());
    return Status::OK();
  }
  if (params.rank() == 0) {
    return errors::InvalidArgument("params must have rank at least 1 but has shape ", params);
  }
  if (!axis) {
    // The axis is at least batch_dims and below params' rank.
    if (batch_dims < 0) batch_dims += indices.rank();
    if (batch_dims < 0 || batch_dims > indices.rank() || batch_dims >= params.rank()) {
      return errors::InvalidArgument("batch_dims ", batch_dims, " must be in [0, ",
                                     std::min(indices.rank(), params.rank() - 1),
                                     "] for params ", params, " and indices ", indices);
    }
    c->set_output(0, PartialShape::UnknownDims(params.rank() + indices.rank() - 1 -
                                               static_cast<int>(batch_dims)));
    return Status::OK();
  }
  int a, b;
  WEIR_RETURN_IF_ERROR(NormalizeGatherAxes((*axis)[0], batch_dims, params, indices, &a, &b));
  WEIR_ASSIGN_OR_RETURN(PartialShape out, GatherOutputShape(params, indices, a, b));
  c->set_output(0, std::move(out));
  return Status::OK();
}

// ---- GatherNd and ScatterNd

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
  std::vector<int64_t> dims = Dims(indices, 0, indices.rank() - 1);
  Append(&dims, Dims(params, static_cast<int>(depth), params.rank()));
  return CheckedShape(std::move(dims), "gathering from params ", params, " by indices ", indices);
}

Status GatherNdShape(InferenceContext* c) {
  WEIR_ASSIGN_OR_RETURN(PartialShape out, GatherNdOutputShape(c->input(0), c->input(1)));
  c->set_output(0, std::move(out));
  return Status::OK();
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
  std::vector<int64_t> expected = Dims(indices, 0, indices.rank() - 1);
  Append(&expected, Dims(shape, static_cast<int>(depth), shape.rank()));
  if (!PartialShape(expected).IsCompatibleWith(updates)) {
    return errors::InvalidArgument("updates has shape ", updates, " but indices ", indices,
                                   " and output shape ", shape, " need ", PartialShape(expected));
  }
  return Status::OK();
}

Status ScatterNdShape(InferenceContext* c) {
  const PartialShape& shape_shape = c->input(2);
  if (shape_shape.known_rank() && shape_shape.rank() != 1) {
    return errors::InvalidArgument("shape must be a vector but has shape ", shape_shape);
  }
  WEIR_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> dims, ConstantInts(c, 2, "shape"));
  PartialShape out = PartialShape::UnknownRank();
  if (dims) {
    WEIR_ASSIGN_OR_RETURN(TensorShape full, TensorShape::FromDims(*dims));
    out = full;
  } else if (shape_shape.known_rank() && shape_shape.dim(0) >= 0) {
    WEIR_ASSIGN_OR_RETURN(int rank, InferenceContext::RankFromLength(shape_shape.dim(0), "shape"));
    out = PartialShape::UnknownDims(rank);
  }
  WEIR_RETURN_IF_ERROR(CheckScatterNdShapes(c->input(0), c->input(1), out));
  c->set_output(0, std::move(out));
  return Status::OK();
}

// ---- OneHot

StatusOr<PartialShape> OneHotOutputShape(const PartialShape& indices, int64_t depth,
                                         int64_t axis) {
  if (axis < -1 || axis > indices.rank()) {
    return errors::InvalidArgument("axis ", axis, " must be -1 or in [0, ", indices.rank(),
                                   "] for indices of shape ", indices);
  }
  std::vector<int64_t> dims = indices.dim_sizes();
  dims.insert(axis == -1 ? dims.end() : dims.begin() + axis, depth);
  return CheckedShape(std::move(dims), "one-hot of indices ", indices, " with depth ", depth);
}

Status OneHotShape(InferenceContext* c) {
  int64_t axis;
  WEIR_RETURN_IF_ERROR(c->GetAttr("axis", &axis));
  WEIR_RETURN_IF_ERROR(RequireScalar(c, 1, "depth"));
  WEIR_RETURN_IF_ERROR(RequireScalar(c, 2, "on_value"));
  WEIR_RETURN_IF_ERROR(RequireScalar(c, 3, "off_value"));
  WEIR_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> depth, ConstantInts(c, 1, "depth"));
  if (depth && (*depth)[0] < 0) {
    return errors::InvalidArgument("depth ", (*depth)[0], " must not be negative");
  }
  if (!c->input(0).known_rank()) {
    c->set_output(0, PartialShape::UnknownRank());
    return Status::OK();
  }
  WEIR_ASSIGN_OR_RETURN(PartialShape out,
                        OneHotOutputShape(c->input(0), depth ? (*depth)[0] : -1, axis));
  c->set_output(0, std::move(out));
  return Status::OK();
}

// ---- Range

StatusOr<int64_t> RangeSize(int64_t start, int64_t limit, int64_t delta) {
  if (delta == 0) {
    return errors::InvalidArgument("delta must not be 0 (start ", start, ", limit ", limit, ")");
  }
  if (delta > 0 ? start > limit : start < limit) {
    return errors::InvalidArgument("start ", start, " and limit ", limit, " run against delta ",
                                   delta, " (delta > 0 needs start <= limit, delta < 0 needs "
                                   "start >= limit)");
  }
  // |limit - start| may not fit in int64; unsigned arithmetic holds it.
  const uint64_t span = delta > 0 ? static_cast<uint64_t>(limit) - static_cast<uint64_t>(start)
                                  : static_cast<uint64_t>(start) - static_cast<uint64_t>(limit);
  const uint64_t step = delta > 0 ? static_cast<uint64_t>(delta)
                                  : static_cast<uint64_t>(0) - static_cast<uint64_t>(delta);
  const uint64_t count = span / step + (span % step != 0);
  if (count > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    // [INT64_MIN, INT64_MAX) by 1: the count would wrap to -1 (unknown).
    return errors::InvalidArgument("range from ", start, " to ", limit, " by ", delta, " has ",
                                   count, " elements, more than 2^63 - 1");
  }
  return static_cast<int64_t>(count);
}

StatusOr<int64_t> RangeSize(double start, double limit, double delta) {
  if (delta == 0) {
    return errors::InvalidArgument("delta must not be 0 (start ", start, ", limit ", limit, ")");
  }
  if (!std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta)) {
    return errors::InvalidArgument("start ", start, ", limit ", limit, " and delta ", delta,
                                   " must be finite");
  }
  if (delta > 0 ? start > limit : start < limit) {
    return errors::InvalidArgument("start ", start, " and limit ", limit, " run against delta ",
                                   delta, " (delta > 0 needs start <= limit, delta < 0 needs "
                                   "start >= limit)");
  }
  const double size = std::ceil(std::abs((limit - start) / delta));
  if (size >= static_cast<double>(std::numeric_limits<int64_t>::max())) {
    return errors::InvalidArgument("range from ", start, " to ", limit, " by ", delta,
                                   " has too many elements");
  }
  return static_cast<int64_t>(size);
}

Status RangeShape(InferenceContext* c) {
  const char* kNames[] = {"start", "limit", "delta"};
  for (int i = 0; i < 3; ++i) WEIR_RETURN_IF_ERROR(RequireScalar(c, i, kNames[i]));
  const Tensor* start = c->input_tensor(0);
  const Tensor* limit = c->input_tensor(1);
  const Tensor* delta = c->input_tensor(2);
  if (start == nullptr || limit == nullptr || delta == nullptr) {
    c->set_output(0, PartialShape({PartialShape::kUnknown}));
    return Status::OK();
  }
  StatusOr<int64_t> size = int64_t{PartialShape::kUnknown};
  switch (start->dtype()) {
    case DT_INT32:
      size = RangeSize(int64_t{start->scalar<int32_t>()}, int64_t{limit->scalar<int32_t>()},
                       int64_t{delta->scalar<int32_t>()});
      break;
    case DT_INT64:
      size = RangeSize(start->scalar<int64_t>(), limit->scalar<int64_t>(),
                       delta->scalar<int64_t>());
      break;
    case DT_FLOAT:
      size = RangeSize(double{start->scalar<float>()}, double{limit->scalar<float>()},
                       double{delta->scalar<float>()});
      break;
    case DT_DOUBLE:
      size = RangeSize(start->scalar<double>(), limit->scalar<double>(), delta->scalar<double>());
      break;
    default:
      break;  // other dtypes: the size is left unknown
  }
  WEIR_RETURN_IF_ERROR(size.status());
  c->set_output(0, PartialShape({*size}));
  return Status::OK();
}

// ---- DynamicPartition and DynamicStitch

Status DynamicPartitionShape(InferenceContext* c) {
  const PartialShape& data = c->input(0);
  const PartialShape& partitions = c->input(1);
  PartialShape out = PartialShape::UnknownRank();
  if (data.known_rank() && partitions.known_rank()) {
    const int p = partitions.rank();
    if (p > data.rank() ||
        !PartialShape(Dims(data, 0, p)).IsCompatibleWith(partitions)) {
      return errors::InvalidArgument("the partitions' shape ", partitions,
                                     " must be a prefix of the data's shape ", data);
    }
    std::vector<int64_t> dims = {PartialShape::kUnknown};
    Append(&dims, Dims(data, p, data.rank()));
    out = PartialShape(std::move(dims));
  }
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, out);
  return Status::OK();
}

Status DynamicStitchShape(InferenceContext* c) {
  const int n = c->num_inputs() / 2;
  // Every data[i] is indices[i].shape + one common suffix.
  PartialShape suffix = PartialShape::UnknownRank();
  for (int i = 0; i < n; ++i) {
    const PartialShape& indices = c->input(i);
    const PartialShape& data = c->input(n + i);
    if (!indices.known_rank() || !data.known_rank()) continue;
    if (indices.rank() > data.rank() ||
        !PartialShape(Dims(data, 0, indices.rank())).IsCompatibleWith(indices)) {
      return errors::InvalidArgument("data[", i, "] has shape ", data, " which does not start ",
                                     "with the shape of indices[", i, "] ", indices);
    }
    StatusOr<PartialShape> merged =
        suffix.Merge(PartialShape(Dims(data, indices.rank(), data.rank())));
    if (!merged.ok()) {
      return errors::InvalidArgument("data[", i, "] has shape ", data,
                                     " whose trailing dims differ from the other data's ",
                                     suffix);
    }
    suffix = *merged;
  }
  int64_t first_dim = 0;
  for (int i = 0; i < n && first_dim >= 0; ++i) {
    const Tensor* indices = c->input_tensor(i);
    if (indices == nullptr) {
      first_dim = PartialShape::kUnknown;
      break;
    }
    WEIR_ASSIGN_OR_RETURN(std::vector<int64_t> values, IntTensorElements(*indices, "indices"));
    for (int64_t v : values) first_dim = std::max(first_dim, v + 1);
  }
  if (!suffix.known_rank()) {
    c->set_output(0, PartialShape::UnknownRank());
    return Status::OK();
  }
  std::vector<int64_t> dims = {first_dim};
  Append(&dims, suffix.dim_sizes());
  c->set_output(0, PartialShape(std::move(dims)));
  return Status::OK();
}

// ---- Unique and Where

Status UniqueShape(InferenceContext* c) {
  const PartialShape& x = c->input(0);
  if (x.known_rank() && x.rank() != 1) {
    return errors::InvalidArgument("x must be a vector but has shape ", x);
  }
  c->set_output(0, PartialShape({PartialShape::kUnknown}));
  c->set_output(1, x.known_rank() ? x : PartialShape({PartialShape::kUnknown}));
  return Status::OK();
}

Status WhereShape(InferenceContext* c) {
  const PartialShape& input = c->input(0);
  c->set_output(0, PartialShape({PartialShape::kUnknown,
                                 input.known_rank() ? input.rank() : PartialShape::kUnknown}));
  return Status::OK();
}

}  // namespace weir
