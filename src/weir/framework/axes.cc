#include "weir/framework/axes.h"

#include <algorithm>
#include <string>

#include "weir/base/str_util.h"

namespace weir {
namespace {

std::string Ints(std::span<const int64_t> values) { return StrCat("[", StrJoin(values, ","), "]"); }

}  // namespace

StatusOr<std::vector<int>> NormalizeReductionAxes(std::span<const int64_t> axes, int rank,
                                                  const PartialShape& input_shape) {
  std::vector<int> normalized;
  normalized.reserve(axes.size());
  for (int64_t axis : axes) {
    if (axis < -rank || axis >= rank) {
      return errors::InvalidArgument("reduction axis ", axis, " is out of range for input of ",
                                     "shape ", input_shape, " (rank ", rank, ")");
    }
    normalized.push_back(static_cast<int>(axis < 0 ? axis + rank : axis));
  }
  std::sort(normalized.begin(), normalized.end());
  auto duplicate = std::adjacent_find(normalized.begin(), normalized.end());
  if (duplicate != normalized.end()) {
    return errors::InvalidArgument("reduction axes [", StrJoin(axes, ","), "] name axis ",
                                   *duplicate, " twice (input of shape ", input_shape, ")");
  }
  return normalized;
}

StatusOr<int> NormalizeAxis(int64_t axis, int rank, std::string_view what,
                            const PartialShape& shape) {
  if (axis < -rank || axis >= rank) {
    return errors::InvalidArgument(what, " ", axis, " is out of range [", -rank, ", ", rank,
                                   ") for shape ", shape);
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

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

}  // namespace weir
