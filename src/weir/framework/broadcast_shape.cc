#include "weir/framework/broadcast_shape.h"

#include <algorithm>
#include <string>

#include "weir/base/str_util.h"

namespace weir {
namespace {

std::string Ints(std::span<const int64_t> values) { return StrCat("[", StrJoin(values, ","), "]"); }

}  // namespace

StatusOr<PartialShape> BroadcastShapes(const PartialShape& a, const PartialShape& b) {
  if (!a.known_rank() || !b.known_rank()) return PartialShape::UnknownRank();
  const int rank = std::max(a.rank(), b.rank());
  std::vector<int64_t> dims(rank);
  for (int i = 0; i < rank; ++i) {
    // Dims align from the right; a missing leading dim acts as 1.
    const int ia = i - (rank - a.rank());
    const int ib = i - (rank - b.rank());
    const int64_t da = ia >= 0 ? a.dim(ia) : 1;
    const int64_t db = ib >= 0 ? b.dim(ib) : 1;
    if (da == 1) {
      dims[i] = db;
    } else if (db == 1) {
      dims[i] = da;
    } else if (da < 0 || db < 0) {
      // An unknown dim is 1 or equal to the other one; either way a known
      // dim other than 1 decides the result.
      dims[i] = da < 0 ? db : da;
    } else if (da == db) {
      dims[i] = da;
    } else {
      return errors::InvalidArgument("Incompatible shapes: ", a, " vs. ", b);
    }
  }
  // Each dim is one of the inputs', but their product may still overflow
  // ([2^32, 1] vs. [1, 2^32]).
  StatusOr<PartialShape> out = PartialShape::FromDims(std::move(dims));
  if (!out.ok()) {
    return out.status().WithContext(StrCat("broadcasting ", a, " and ", b));
  }
  return out;
}

StatusOr<PartialShape> BroadcastToTarget(const PartialShape& input,
                                         std::span<const int64_t> target) {
  const int rank = static_cast<int>(target.size());
  if (input.rank() > rank) {
    return errors::InvalidArgument("cannot broadcast a tensor of shape ", input, " to shape ",
                                   Ints(target), ": the target has lower rank");
  }
  for (int i = 0; i < input.rank(); ++i) {
    const int64_t have = input.dim(i);
    const int64_t want = target[rank - input.rank() + i];
    if (have >= 0 && want >= 0 && have != want && have != 1) {
      return errors::InvalidArgument("cannot broadcast a tensor of shape ", input, " to shape ",
                                     Ints(target), ": dim ", i, " is ", have);
    }
  }
  StatusOr<PartialShape> out =
      PartialShape::FromDims(std::vector<int64_t>(target.begin(), target.end()));
  if (!out.ok()) return out.status().WithContext(StrCat("broadcast target ", Ints(target)));
  return out;
}

}  // namespace weir
