// Shape functions of the array ops that permute, join or cut tensors:
// Transpose, ConcatV2, Pack/Unpack, Split/SplitV, Slice and StridedSlice.
#include <algorithm>

#include "weir/base/checked_math.h"
#include "weir/framework/array_shape_rules.h"
#include "weir/framework/axes.h"
#include "weir/framework/shape_inference.h"
#include "weir/framework/strided_slice_spec.h"
#include "weir/framework/tensor.h"
#include "weir/ops/array_shape_fns.h"

namespace weir {
namespace {

std::string Ints(std::span<const int64_t> values) { return StrCat("[", StrJoin(values, ","), "]"); }

}  // namespace

// ---- Transpose

Status TransposeShape(InferenceContext* c) {
  WEIR_ASSIGN_OR_RETURN(int rank, RankFromInputOrVector(c, 1, "perm"));
  WEIR_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> perm, ConstantInts(c, 1, "perm"));
  if (!perm || rank < 0) {
    SetUnknownDims(c, 0, rank);
    return Status::OK();
  }
  const PartialShape input =
      c->input(0).known_rank() ? c->input(0) : PartialShape::UnknownDims(rank);
  WEIR_ASSIGN_OR_RETURN(std::vector<int> order, TransposePermutation(*perm, input));
  std::vector<int64_t> dims(rank);
  for (int i = 0; i < rank; ++i) dims[i] = input.dim(order[i]);
  c->set_output(0, PartialShape(std::move(dims)));
  return Status::OK();
}

// ---- ConcatV2 and Pack

Status ConcatV2Shape(InferenceContext* c) {
  const int n = c->num_inputs() - 1;
  std::vector<PartialShape> inputs;
  for (int i = 0; i < n; ++i) inputs.push_back(c->input(i));
  const PartialShape& axis_shape = c->input(n);
  if (axis_shape.known_rank() && axis_shape.rank() != 0) {
    return errors::InvalidArgument("axis must be a scalar but has shape ", axis_shape);
  }
  WEIR_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axis, ConstantInts(c, n, "axis"));
  if (axis) {
    WEIR_ASSIGN_OR_RETURN(PartialShape out, ConcatOutputShape(inputs, (*axis)[0]));
    c->set_output(0, std::move(out));
    return Status::OK();
  }
  // The axis is unknown: only the rank is known, from any input.
  PartialShape merged = PartialShape::UnknownRank();
  for (const PartialShape& s : inputs) {
    if (merged.known_rank() && s.known_rank() && merged.rank() != s.rank()) {
      return errors::InvalidArgument("inputs must have the same rank but have shapes ",
                                     StrJoin(inputs, ", "));
    }
    if (s.known_rank()) merged = s;
  }
  SetUnknownDims(c, 0, merged.rank());
  return Status::OK();
}

Status PackShape(InferenceContext* c) {
  int64_t axis;
  WEIR_RETURN_IF_ERROR(c->GetAttr("axis", &axis));
  PartialShape merged = PartialShape::UnknownRank();
  for (int i = 0; i < c->num_inputs(); ++i) {
    StatusOr<PartialShape> m = merged.Merge(c->input(i));
    if (!m.ok()) {
      return errors::InvalidArgument("all inputs must have the same shape, but input ", i,
                                     " has shape ", c->input(i), " and the others ", merged);
    }
    merged = *m;
  }
  if (!merged.known_rank()) {
    c->set_output(0, PartialShape::UnknownRank());
    return Status::OK();
  }
  WEIR_ASSIGN_OR_RETURN(int a, NormalizeAxis(axis, merged.rank() + 1, "axis", merged));
  std::vector<int64_t> dims = merged.dim_sizes();
  dims.insert(dims.begin() + a, c->num_inputs());
  StatusOr<PartialShape> out = PartialShape::FromDims(std::move(dims));
  if (!out.ok()) {
    return out.status().WithContext(
        StrCat("packing ", c->num_inputs(), " inputs of shape ", merged));
  }
  c->set_output(0, std::move(out).value());
  return Status::OK();
}

Status UnpackShape(InferenceContext* c) {
  int64_t axis, num;
  WEIR_RETURN_IF_ERROR(c->GetAttr("axis", &axis));
  WEIR_RETURN_IF_ERROR(c->GetAttr("num", &num));
  const PartialShape& input = c->input(0);
  PartialShape out = PartialShape::UnknownRank();
  if (input.known_rank()) {
    WEIR_ASSIGN_OR_RETURN(int a, NormalizeAxis(axis, input.rank(), "axis", input));
    if (input.dim(a) >= 0 && input.dim(a) != num) {
      return errors::InvalidArgument("num is ", num, " but dim ", a, " of input shape ", input,
                                     " is ", input.dim(a));
    }
    std::vector<int64_t> dims = input.dim_sizes();
    dims.erase(dims.begin() + a);
    out = PartialShape(std::move(dims));
  }
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, out);
  return Status::OK();
}

// ---- Split and SplitV

namespace {
// split_dim is one value (a scalar), so that reading it never indexes an
// empty vector.
Status SplitDimIsScalar(InferenceContext* c, int i) {
  const PartialShape& shape = c->input(i);
  if (shape.known_rank() && shape.rank() != 0) {
    return errors::InvalidArgument("split_dim must be a scalar but has shape ", shape);
  }
  return Status::OK();
}
}  // namespace

Status SplitShape(InferenceContext* c) {
  int64_t num_split;
  WEIR_RETURN_IF_ERROR(c->GetAttr("num_split", &num_split));
  if (num_split < 1) {
    return errors::InvalidArgument("num_split is ", num_split, " but must be positive");
  }
  const PartialShape& input = c->input(1);
  WEIR_RETURN_IF_ERROR(SplitDimIsScalar(c, 0));
  WEIR_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axis, ConstantInts(c, 0, "split_dim"));
  PartialShape out = PartialShape::UnknownRank();
  if (input.known_rank() && !axis) {
    out = PartialShape::UnknownDims(input.rank());
  } else if (input.known_rank()) {
    WEIR_ASSIGN_OR_RETURN(int a, NormalizeAxis((*axis)[0], input.rank(), "split_dim", input));
    std::vector<int64_t> dims = input.dim_sizes();
    if (dims[a] >= 0 && dims[a] % num_split != 0) {
      return errors::InvalidArgument("num_split ", num_split, " does not divide dim ", a,
                                     " of input shape ", input);
    }
    if (dims[a] >= 0) dims[a] /= num_split;
    out = PartialShape(std::move(dims));
  }
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, out);
  return Status::OK();
}

Status SplitVShape(InferenceContext* c) {
  const PartialShape& input = c->input(0);
  WEIR_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> sizes,
                        ConstantInts(c, 1, "size_splits"));
  WEIR_RETURN_IF_ERROR(SplitDimIsScalar(c, 2));
  WEIR_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axis, ConstantInts(c, 2, "split_dim"));
  if (sizes && static_cast<int>(sizes->size()) != c->num_outputs()) {
    return errors::InvalidArgument("size_splits has ", sizes->size(), " entries but num_split is ",
                                   c->num_outputs());
  }
  if (!input.known_rank() || !axis) {
    for (int i = 0; i < c->num_outputs(); ++i) SetUnknownDims(c, i, input.rank());
    return Status::OK();
  }
  WEIR_ASSIGN_OR_RETURN(int a, NormalizeAxis((*axis)[0], input.rank(), "split_dim", input));
  std::vector<int64_t> resolved(c->num_outputs(), PartialShape::kUnknown);
  if (sizes) {
    WEIR_ASSIGN_OR_RETURN(resolved, ResolveSplitSizes(*sizes, input.dim(a)));
  }
  for (int i = 0; i < c->num_outputs(); ++i) {
    std::vector<int64_t> dims = input.dim_sizes();
    dims[a] = resolved[i];
    c->set_output(i, PartialShape(std::move(dims)));
  }
  return Status::OK();
}

// ---- Slice

Status SliceShape(InferenceContext* c) {
  WEIR_ASSIGN_OR_RETURN(int rank, RankFromInputOrVector(c, 1, "begin"));
  WEIR_ASSIGN_OR_RETURN(int size_rank, RankFromInputOrVector(c, 2, "size"));
  if (rank >= 0 && size_rank >= 0 && rank != size_rank) {
    return errors::InvalidArgument("begin and size must have the same length");
  }
  rank = std::max(rank, size_rank);
  WEIR_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> begin, ConstantInts(c, 1, "begin"));
  WEIR_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> size, ConstantInts(c, 2, "size"));
  if (rank < 0) {
    c->set_output(0, PartialShape::UnknownRank());
    return Status::OK();
  }
  const PartialShape input =
      c->input(0).known_rank() ? c->input(0) : PartialShape::UnknownDims(rank);
  if (begin && size) {
    WEIR_ASSIGN_OR_RETURN(PartialShape out, SliceOutputShape(input, *begin, *size));
    c->set_output(0, std::move(out));
    return Status::OK();
  }
  // Without begin, only sizes other than -1 are known.
  std::vector<int64_t> dims(rank, PartialShape::kUnknown);
  if (size) {
    for (int i = 0; i < rank; ++i) {
      if ((*size)[i] >= 0) dims[i] = (*size)[i];
    }
  }
  c->set_output(0, PartialShape(std::move(dims)));
  return Status::OK();
}

// ---- StridedSlice

Status StridedSliceShape(InferenceContext* c) {
  StridedSliceMasks masks;
  WEIR_RETURN_IF_ERROR(c->GetAttr("begin_mask", &masks.begin));
  WEIR_RETURN_IF_ERROR(c->GetAttr("end_mask", &masks.end));
  WEIR_RETURN_IF_ERROR(c->GetAttr("ellipsis_mask", &masks.ellipsis));
  WEIR_RETURN_IF_ERROR(c->GetAttr("new_axis_mask", &masks.new_axis));
  WEIR_RETURN_IF_ERROR(c->GetAttr("shrink_axis_mask", &masks.shrink_axis));
  int64_t entries = PartialShape::kUnknown;
  const char* kNames[] = {"begin", "end", "strides"};
  for (int i = 1; i <= 3; ++i) {
    const PartialShape& s = c->input(i);
    if (!s.known_rank()) continue;
    if (s.rank() != 1) {
      return errors::InvalidArgument(kNames[i - 1], " must be a vector but has shape ", s);
    }
    WEIR_RETURN_IF_ERROR(InferenceContext::MergeDim(entries, s.dim(0), &entries)
                             .WithContext("begin, end and strides must have the same length"));
  }
  std::optional<std::vector<int64_t>> values[3];
  for (int i = 1; i <= 3; ++i) {
    WEIR_ASSIGN_OR_RETURN(values[i - 1], ConstantInts(c, i, kNames[i - 1]));
    if (values[i - 1]) entries = static_cast<int64_t>(values[i - 1]->size());
  }
  if (entries < 0) {
    c->set_output(0, PartialShape::UnknownRank());
    return Status::OK();
  }
  if (entries > kMaxStridedSliceEntries) {
    return errors::InvalidArgument("begin, end and strides have ", entries,
                                   " entries; a slice has at most ", kMaxStridedSliceEntries);
  }
  WEIR_ASSIGN_OR_RETURN(StridedSlicePlan plan,
                        MakeStridedSlicePlan(c->input(0), static_cast<int>(entries), values[0],
                                             values[1], values[2], masks));
  c->set_output(0, std::move(plan.output));
  return Status::OK();
}

}  // namespace weir
