#include "weir/framework/strided_slice_spec.h"

#include <algorithm>

namespace weir {
namespace {

bool Bit(int64_t mask, int i) { return i < 63 && ((mask >> i) & 1) != 0; }

// Count of a range with ends clamped to [-1, dim], in the stride's
// direction. The distance fits int64; the stride may be anything but 0, so
// no `+ stride - 1` (overflows near 2^63) and no `-stride` (INT64_MIN).
int64_t RangeCount(int64_t first, int64_t last, int64_t stride) {
  if (stride > 0) return last > first ? (last - first - 1) / stride + 1 : 0;
  if (first <= last) return 0;
  const uint64_t step = uint64_t{0} - static_cast<uint64_t>(stride);
  return static_cast<int64_t>(static_cast<uint64_t>(first - last - 1) / step) + 1;
}

}  // namespace

StatusOr<StridedSlicePlan> MakeStridedSlicePlan(const PartialShape& input, int num_entries,
                                                const std::optional<std::vector<int64_t>>& begin,
                                                const std::optional<std::vector<int64_t>>& end,
                                                const std::optional<std::vector<int64_t>>& strides,
                                                const StridedSliceMasks& masks) {
  if (num_entries < 0 || num_entries > kMaxStridedSliceEntries) {
    return errors::InvalidArgument("begin, end and strides have ", num_entries,
                                   " entries; a slice has at most ", kMaxStridedSliceEntries);
  }
  int ellipsis = -1;
  int consumed = 0;  // entries that take an input dim
  for (int i = 0; i < num_entries; ++i) {
    if (Bit(masks.ellipsis, i)) {
      if (ellipsis >= 0) {
        return errors::InvalidArgument("ellipsis_mask ", masks.ellipsis,
                                       " has more than one ellipsis (entries ", ellipsis, " and ",
                                       i, ")");
      }
      ellipsis = i;
    } else if (!Bit(masks.new_axis, i)) {
      ++consumed;
    }
  }
  StridedSlicePlan plan;
  if (!input.known_rank()) {
    plan.output = PartialShape::UnknownRank();
    return plan;
  }
  const int rank = input.rank();
  if (consumed > rank) {
    return errors::InvalidArgument("the slice indexes ", consumed, " dims of an input of shape ",
                                   input, " (rank ", rank, ")");
  }
  std::vector<int64_t> out;
  int dim_index = 0;
  auto take_full_dim = [&] {
    const int64_t dim = input.dim(dim_index++);
    plan.begin.push_back(0);
    plan.stride.push_back(1);
    plan.size.push_back(dim);
    out.push_back(dim);
  };
  // Entry num_entries is the implied ellipsis when there is none.
  for (int i = 0; i <= num_entries; ++i) {
    if (i == ellipsis || (i == num_entries && ellipsis < 0)) {
      for (int k = 0; k < rank - consumed; ++k) take_full_dim();
      continue;
    }
    if (i == num_entries) break;
    if (Bit(masks.new_axis, i)) {
      out.push_back(1);
      continue;
    }
    const int d = dim_index++;
    const int64_t dim = input.dim(d);
    std::optional<int64_t> stride;
    if (strides) {
      stride = (*strides)[i];
      if (*stride == 0) {
        return errors::InvalidArgument("strides[", i, "] is 0 (input shape ", input, ")");
      }
    }
    if (Bit(masks.shrink_axis, i)) {
      int64_t index = -1;
      if (begin && dim >= 0) {
        const int64_t b = (*begin)[i];
        index = b < 0 ? b + dim : b;
        if (index < 0 || index >= dim) {
          return errors::InvalidArgument("slice index ", b, " of dimension ", d,
                                         " out of bounds (input shape ", input, ")");
        }
      } else if (begin && (*begin)[i] >= 0) {
        index = (*begin)[i];
      }
      plan.begin.push_back(index);
      plan.stride.push_back(1);
      plan.size.push_back(1);
      continue;
    }
    const bool begin_known = Bit(masks.begin, i) || begin.has_value();
    const bool end_known = Bit(masks.end, i) || end.has_value();
    if (dim < 0 || !stride || !begin_known || !end_known) {
      plan.begin.push_back(-1);
      plan.stride.push_back(stride.value_or(-1));
      plan.size.push_back(-1);
      out.push_back(PartialShape::kUnknown);
      continue;
    }
    const int64_t s = *stride;
    // The valid positions in the stride's direction: [0, dim] going up,
    // [-1, dim - 1] going down (-1 is "before the first element").
    const int64_t lo = s > 0 ? 0 : -1;
    const int64_t hi = s > 0 ? dim : dim - 1;
    auto resolve = [&](int64_t x) { return std::clamp(x < 0 ? x + dim : x, lo, hi); };
    const int64_t first = Bit(masks.begin, i) ? (s > 0 ? 0 : dim - 1) : resolve((*begin)[i]);
    const int64_t last = Bit(masks.end, i) ? (s > 0 ? dim : -1) : resolve((*end)[i]);
    const int64_t count = RangeCount(first, last, s);
    plan.begin.push_back(first);
    // A dim that takes at most one element never steps, and a stride kept
    // near 2^63 would overflow the kernel's byte strides; every other stride
    // is below the dim, so stride * the dim's element stride fits.
    plan.stride.push_back(count <= 1 ? 1 : s);
    plan.size.push_back(count);
    out.push_back(count);
  }
  plan.output = PartialShape(std::move(out));
  return plan;
}

}  // namespace weir
