#include "weir/framework/array_shape_rules.h"

#include <cmath>
#include <limits>
#include <string>

#include "weir/base/checked_math.h"
#include "weir/base/str_util.h"
#include "weir/framework/axes.h"
#include "weir/framework/shape_inference.h"

namespace weir {
namespace {

std::string Ints(std::span<const int64_t> values) { return StrCat("[", StrJoin(values, ","), "]"); }

}  // namespace

StatusOr<PartialShape> ReshapeTarget(const PartialShape& input, std::span<const int64_t> dims) {
  auto requested = [&] { return StrCat("[", StrJoin(dims, ","), "]"); };
  int inferred = -1;
  int64_t known_product = 1;
  bool overflow = false;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == -1) {
      if (inferred >= 0) {
        return errors::InvalidArgument("only one dimension may be -1, not both ", inferred, " and ",
                                       i, " in requested shape ", requested());
      }
      inferred = static_cast<int>(i);
    } else if (dims[i] < 0) {
      return errors::InvalidArgument("dimension ", i, " of requested shape ", requested(),
                                     " is negative");
    } else if (dims[i] != 0 && known_product > std::numeric_limits<int64_t>::max() / dims[i]) {
      overflow = true;
    } else {
      known_product *= dims[i];
    }
  }
  if (overflow) {
    return errors::InvalidArgument("requested shape ", requested(), " has more than 2^63 ",
                                   "elements");
  }
  PartialShape target(std::vector<int64_t>(dims.begin(), dims.end()));
  const int64_t count = input.num_elements();
  if (count < 0) {
    if (inferred >= 0) {
      std::vector<int64_t> out(dims.begin(), dims.end());
      out[inferred] = PartialShape::kUnknown;
      return PartialShape(std::move(out));
    }
    return target;
  }
  if (inferred >= 0) {
    if (known_product == 0) {
      return errors::InvalidArgument("cannot infer the -1 dimension of requested shape ",
                                     requested(), " for a tensor of shape ", input,
                                     ": another requested dimension is 0");
    }
    if (count % known_product != 0) {
      return errors::InvalidArgument("cannot reshape a tensor of shape ", input, " (", count,
                                     " elements) into shape ", requested(), ": ", count,
                                     " is not a multiple of ", known_product);
    }
    std::vector<int64_t> out(dims.begin(), dims.end());
    out[inferred] = count / known_product;
    return PartialShape(std::move(out));
  }
  if (known_product != count) {
    return errors::InvalidArgument("cannot reshape a tensor of shape ", input, " (", count,
                                   " elements) into shape ", requested(), " (", known_product,
                                   " elements)");
  }
  return target;
}

StatusOr<PartialShape> TiledShape(const PartialShape& input, std::span<const int64_t> multiples) {
  if (static_cast<int>(multiples.size()) != input.rank()) {
    return errors::InvalidArgument("multiples ", Ints(multiples),
                                   " must have one entry per dim of the input shape ", input);
  }
  std::vector<int64_t> dims(input.rank());
  const std::string what = StrCat("Tile of shape ", input, " by multiples ", Ints(multiples));
  for (int i = 0; i < input.rank(); ++i) {
    if (multiples[i] < 0) {
      return errors::InvalidArgument("multiples ", Ints(multiples), " has negative entry ",
                                     multiples[i], " (input shape ", input, ")");
    }
    WEIR_RETURN_IF_ERROR(InferenceContext::MultiplyDims(input.dim(i), multiples[i],
                                                        StrCat(what, ", dim ", i), &dims[i]));
  }
  // Each dim fits, but the element count may not: a kernel sized by a
  // wrapped count would write past its output.
  StatusOr<PartialShape> out = PartialShape::FromDims(std::move(dims));
  if (!out.ok()) return out.status().WithContext(what);
  return out;
}

StatusOr<PartialShape> PaddedShape(const PartialShape& input, std::span<const int64_t> paddings,
                                   std::string_view mirror_mode) {
  const int rank = input.rank();
  if (static_cast<int>(paddings.size()) != 2 * rank) {
    return errors::InvalidArgument("paddings must be [", rank, ", 2] for input shape ", input,
                                   " but has ", paddings.size(), " values");
  }
  std::vector<int64_t> dims(rank);
  for (int i = 0; i < rank; ++i) {
    const int64_t before = paddings[2 * i], after = paddings[2 * i + 1];
    const int64_t dim = input.dim(i);
    if (before < 0 || after < 0) {
      return errors::InvalidArgument("paddings for dim ", i, " are [", before, ", ", after,
                                     "] but must not be negative (input shape ", input, ")");
    }
    if (!mirror_mode.empty() && dim >= 0) {
      const int64_t limit = mirror_mode == "REFLECT" ? dim - 1 : dim;
      if (before > limit || after > limit) {
        return errors::InvalidArgument("paddings for dim ", i, " are [", before, ", ", after,
                                       "] but ", mirror_mode, " mode allows at most ", limit,
                                       " (input shape ", input, ")");
      }
    }
    const std::string what =
        StrCat("padding dim ", i, " of shape ", input, " by [", before, ", ", after, "]");
    WEIR_RETURN_IF_ERROR(InferenceContext::AddDims(dim, before, what, &dims[i]));
    WEIR_RETURN_IF_ERROR(InferenceContext::AddDims(dims[i], after, what, &dims[i]));
  }
  StatusOr<PartialShape> out = PartialShape::FromDims(std::move(dims));
  if (!out.ok()) {
    return out.status().WithContext(StrCat("padding shape ", input, " by ", Ints(paddings)));
  }
  return out;
}

StatusOr<PartialShape> ExpandedShape(const PartialShape& input, int64_t dim) {
  const int rank = input.rank();
  if (dim < -rank - 1 || dim > rank) {
    return errors::InvalidArgument("dim ", dim, " is out of range [", -rank - 1, ", ", rank,
                                   "] for input shape ", input);
  }
  std::vector<int64_t> dims = input.dim_sizes();
  dims.insert(dims.begin() + (dim < 0 ? dim + rank + 1 : dim), 1);
  return PartialShape(std::move(dims));
}

StatusOr<PartialShape> SqueezedShape(const PartialShape& input,
                                     std::span<const int64_t> squeeze_dims) {
  const int rank = input.rank();
  std::vector<bool> remove(rank, false);
  for (int64_t d : squeeze_dims) {
    WEIR_ASSIGN_OR_RETURN(int axis, NormalizeAxis(d, rank, "squeeze dim", input));
    if (input.dim(axis) >= 0 && input.dim(axis) != 1) {
      return errors::InvalidArgument("cannot squeeze dim ", d, ": it has size ", input.dim(axis),
                                     " in input shape ", input);
    }
    remove[axis] = true;
  }
  std::vector<int64_t> dims;
  for (int i = 0; i < rank; ++i) {
    if (squeeze_dims.empty()) {
      if (input.dim(i) < 0) return PartialShape::UnknownRank();  // might be 1
      if (input.dim(i) == 1) continue;
    } else if (remove[i]) {
      continue;
    }
    dims.push_back(input.dim(i));
  }
  return PartialShape(std::move(dims));
}

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
        WEIR_RETURN_IF_ERROR(
            CheckedAdd(known_sum, s.dim(d), &known_sum,
                       StrCat("concatenating ", StrJoin(inputs, ", "), " along axis ", a)));
      } else if (!InferenceContext::MergeDim(dims[d], s.dim(d), &dims[d]).ok()) {
        return errors::InvalidArgument("inputs must match in every dim but axis ", a, "; dim ", d,
                                       " differs in shapes ", StrJoin(inputs, ", "));
      }
    }
  }
  dims[a] = axis_unknown ? PartialShape::kUnknown : known_sum;
  StatusOr<PartialShape> out = PartialShape::FromDims(std::move(dims));
  if (!out.ok()) {
    return out.status().WithContext(
        StrCat("concatenating ", StrJoin(inputs, ", "), " along axis ", a));
  }
  return out;
}

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
      return errors::InvalidArgument("size_splits ", Ints(sizes), " has negative entry ", sizes[i]);
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

StatusOr<PartialShape> SliceOutputShape(const PartialShape& input, std::span<const int64_t> begin,
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

StatusOr<int64_t> RangeSize(int64_t start, int64_t limit, int64_t delta) {
  if (delta == 0) {
    return errors::InvalidArgument("delta must not be 0 (start ", start, ", limit ", limit, ")");
  }
  if (delta > 0 ? start > limit : start < limit) {
    return errors::InvalidArgument("start ", start, " and limit ", limit, " run against delta ",
                                   delta,
                                   " (delta > 0 needs start <= limit, delta < 0 needs "
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
                                   delta,
                                   " (delta > 0 needs start <= limit, delta < 0 needs "
                                   "start >= limit)");
  }
  const double size = std::ceil(std::abs((limit - start) / delta));
  if (size >= static_cast<double>(std::numeric_limits<int64_t>::max())) {
    return errors::InvalidArgument("range from ", start, " to ", limit, " by ", delta,
                                   " has too many elements");
  }
  return static_cast<int64_t>(size);
}

}  // namespace weir
