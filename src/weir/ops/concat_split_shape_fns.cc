// Shape rules of the array ops that permute, join or cut tensors:
// Transpose, ConcatV2, Pack/Unpack, Split/SplitV and Slice.
#include <algorithm>

#include "weir/base/checked_math.h"
#include "weir/framework/shape_inference.h"
#include "weir/framework/tensor.h"
#include "weir/ops/array_shape_fns.h"

namespace weir {
namespace {

std::string Ints(std::span<const int64_t> values) { return StrCat("[", StrJoin(values, ","), "]"); }

}  // namespace

// ---- Transpose

StatusOr<std::vector<int>> TransposePermutation(std::span<const int64_t> perm,
                                                const PartialShape& input) {
  const int rank = input.rank();
  if (static_cast<int>(perm.size()) != rank) {
    return errors::InvalidArgument("perm ", Ints(perm), " has ", perm.size(),
                                   " entries but the input has shape ", input);
  }
  std::vector<int> result(rank);
  std::vector<bool> seen(rank, false);
  for (int i = 0; i < rank; ++i) {
    if (perm[i] < 0 || perm[i] >= rank) {
      return errors::InvalidArgument("perm ", Ints(perm), ": entry ", i, " = ", perm[i],
                                     " is out of range [0, ", rank, ") for input shape ", input);
    }
    if (seen[perm[i]]) {
      return errors::InvalidArgument("perm ", Ints(perm), " names dim ", perm[i],
                                     " twice (input shape ", input, ")");
    }
    seen[perm[i]] = true;
    result[i] = static_cast<int>(perm[i]);
  }
  return result;
}

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

StatusOr<PartialShape> ConcatOutputShape(std::span<const PartialShape> inputs, int64_t axis) {
  int rank = -1;
  for (const PartialShape& s : inputs) {
    if (!s.known_rank()) continue;
    if (s.rank() == 0) {
      return errors::InvalidArgument("cannot concatenate scalars (use Pack): input shapes ",
                                     StrJoin(inputs, ", "));
    }
    if (rank >= 0 && s.rank() != rank) {
      return errors::InvalidArgument("inputs must have the same rank but have shapes ",
                                     StrJoin(inputs, ", "));
    }
    rank = s.rank();
  }
  if (rank < 0) return PartialShape::UnknownRank();
  WEIR_ASSIGN_OR_RETURN(int a, NormalizeAxis(axis, rank, "axis", inputs[0]));
  std::vector<int64_t> dims = PartialShape::UnknownDims(rank).dim_sizes();
  // The known sizes along the axis are summed (and checked) even when
  // another is unknown, so the error does not depend on the inputs' order.
  int64_t known_sum = 0;
  bool axis_unknown = false;
  for (const PartialShape& s : inputs) {
    if (!s.known_rank()) {
      axis_unknown = true;
      continue;
    }
    for (int d = 0; d < rank; ++d) {
      if (d == a) {
        if (s.dim(d) < 0) {
          axis_unknown = true;
          continue;
        }
        WEIR_RETURN_IF_ERROR(CheckedAdd(
            known_sum, s.dim(d), &known_sum,
            StrCat("concatenating ", StrJoin(inputs, ", "), " along axis ", a)));
      } else if (!InferenceContext::MergeDim(dims[d], s.dim(d), &dims[d]).ok()) {
        return errors::InvalidArgument("inputs must match in every dim but axis ", a,
                                       "; dim ", d, " differs in shapes ", StrJoin(inputs, ", "));
      }
    }
  }
  dims[a] = axis_unknown ? PartialShape::kUnknown : known_sum;
  StatusOr<PartialShape> out = PartialShape::FromDims(std::move(dims));
  if (!out.ok()) {
    return out.status().WithContext(StrCat("concatenating ", StrJoin(inputs, ", "),
                                           " along axis ", a));
  }
  return out;
}

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
    return out.status().WithContext(StrCat("packing ", c->num_inputs(), " inputs of shape ",
                                           merged));
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

StatusOr<std::vector<int64_t>> ResolveSplitSizes(std::span<const int64_t> sizes, int64_t dim) {
  int inferred = -1;
  int64_t total = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      if (inferred >= 0) {
        return errors::InvalidArgument("size_splits ", Ints(sizes), " has more than one -1");
      }
      inferred = static_cast<int>(i);
    } else if (sizes[i] < 0) {
      return errors::InvalidArgument("size_splits ", Ints(sizes), " has negative entry ",
                                     sizes[i]);
    } else if (__builtin_add_overflow(total, sizes[i], &total)) {
      // Before this check a wrapped total passed, and the split read past
      // its input.
      return errors::InvalidArgument("size_splits ", Ints(sizes), " add up to more than 2^63 - 1");
    }
  }
  std::vector<int64_t> resolved(sizes.begin(), sizes.end());
  if (dim < 0) return resolved;
  if (inferred >= 0) {
    if (total > dim) {
      return errors::InvalidArgument("size_splits ", Ints(sizes), " add up to ", total,
                                     ", more than the split dim's size ", dim);
    }
    resolved[inferred] = dim - total;
  } else if (total != dim) {
    return errors::InvalidArgument("size_splits ", Ints(sizes), " add up to ", total,
                                   " but the split dim has size ", dim);
  }
  return resolved;
}

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
  WEIR_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axis,
                        ConstantInts(c, 0, "split_dim"));
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
  WEIR_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axis,
                        ConstantInts(c, 2, "split_dim"));
  if (sizes && static_cast<int>(sizes->size()) != c->num_outputs()) {
    return errors::InvalidArgument("size_splits has ", sizes->size(),
                                   " entries but num_split is ", c->num_outputs());
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

StatusOr<PartialShape> SliceOutputShape(const PartialShape& input,
                                        std::span<const int64_t> begin,
                                        std::span<const int64_t> size) {
  const int rank = input.rank();
  if (static_cast<int>(begin.size()) != rank || static_cast<int>(size.size()) != rank) {
    return errors::InvalidArgument("begin ", Ints(begin), " and size ", Ints(size),
                                   " must have one entry per dim of the input shape ", input);
  }
  std::vector<int64_t> dims(rank);
  for (int i = 0; i < rank; ++i) {
    const int64_t dim = input.dim(i);
    if (begin[i] < 0 || (dim >= 0 && begin[i] > dim)) {
      return errors::InvalidArgument("begin[", i, "] = ", begin[i], " is not in [0, ", dim,
                                     "] (begin ", Ints(begin), ", input shape ", input, ")");
    }
    if (size[i] == -1) {
      dims[i] = dim < 0 ? PartialShape::kUnknown : dim - begin[i];
    } else if (size[i] < 0 || (dim >= 0 && size[i] > dim - begin[i])) {
      return errors::InvalidArgument("size[", i, "] = ", size[i], " is not in [0, ",
                                     dim < 0 ? dim : dim - begin[i], "] (begin ", Ints(begin),
                                     ", size ", Ints(size), ", input shape ", input, ")");
    } else {
      dims[i] = size[i];
    }
  }
  return PartialShape(std::move(dims));
}

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

}  // namespace weir
