// Shape functions of the array ops driven by index values: GatherV2, GatherNd,
// ScatterNd, OneHot, Range, DynamicPartition, DynamicStitch, Unique, Where.
#include <algorithm>
#include <cmath>
#include <limits>

#include "weir/framework/array_shape_rules.h"
#include "weir/framework/gather_scatter_shape.h"
#include "weir/framework/int_tensor_values.h"
#include "weir/framework/shape_inference.h"
#include "weir/framework/tensor.h"
#include "weir/ops/array_shape_fns.h"

namespace weir {
namespace {

Status RequireScalar(const InferenceContext* c, int i, std::string_view what) {
  const PartialShape& s = c->input(i);
  if (s.known_rank() && s.rank() != 0) {
    return errors::InvalidArgument(what, " must be a scalar but has shape ", s);
  }
  return Status::OK();
}

}  // namespace

// ---- GatherV2

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
                                     std::min(indices.rank(), params.rank() - 1), "] for params ",
                                     params, " and indices ", indices);
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

Status GatherNdShape(InferenceContext* c) {
  WEIR_ASSIGN_OR_RETURN(PartialShape out, GatherNdOutputShape(c->input(0), c->input(1)));
  c->set_output(0, std::move(out));
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
      size =
          RangeSize(start->scalar<int64_t>(), limit->scalar<int64_t>(), delta->scalar<int64_t>());
      break;
    case DT_FLOAT:
      size = RangeSize(double{start->scalar<float>()}, double{limit->scalar<float>()},
                       double{delta->scalar<float>()});
      break;
    case DT_DOUBLE:
      size = RangeSize(start->scalar<double>(), limit->scalar<double>(), delta->scalar<double>());
      break;
    default: break;  // other dtypes: the size is left unknown
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
    if (p > data.rank() || !PartialShape(DimsBetween(data, 0, p)).IsCompatibleWith(partitions)) {
      return errors::InvalidArgument("the partitions' shape ", partitions,
                                     " must be a prefix of the data's shape ", data);
    }
    std::vector<int64_t> dims = {PartialShape::kUnknown};
    AppendDims(&dims, DimsBetween(data, p, data.rank()));
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
        !PartialShape(DimsBetween(data, 0, indices.rank())).IsCompatibleWith(indices)) {
      return errors::InvalidArgument("data[", i, "] has shape ", data, " which does not start ",
                                     "with the shape of indices[", i, "] ", indices);
    }
    StatusOr<PartialShape> merged =
        suffix.Merge(PartialShape(DimsBetween(data, indices.rank(), data.rank())));
    if (!merged.ok()) {
      return errors::InvalidArgument("data[", i, "] has shape ", data,
                                     " whose trailing dims differ from the other data's ", suffix);
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
  AppendDims(&dims, suffix.dim_sizes());
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
