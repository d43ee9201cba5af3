// How the two inputs of a binary op broadcast, reduced to the fewest dims
// that describe it, so kernels pick a fast path (same shape, a scalar side,
// a bias-like row) or a general broadcast of small rank.
#pragma once

#include <cstdint>
#include <vector>

#include "weir/base/status.h"
#include "weir/base/threadpool.h"
#include "weir/framework/tensor_shape.h"

namespace weir {

struct BroadcastPlan {
  enum class Kind {
    kSameShape,  // x and y hold the output's elements in order
    kScalarX,    // x has one element
    kScalarY,    // y has one element
    kGeneral,    // x_dims/y_dims broadcast to out_dims
  };
  Kind kind = Kind::kSameShape;
  TensorShape output_shape;
  // For kGeneral: collapsed dims of equal rank (2 or more). Adjacent dims
  // that broadcast the same way are merged and dims of 1 dropped, so each
  // x_dims[i] and y_dims[i] is either out_dims[i] or 1, and neighbours
  // differ in which side is 1.
  std::vector<int64_t> x_dims;
  std::vector<int64_t> y_dims;
  std::vector<int64_t> out_dims;
};

// NumPy broadcasting of `x` and `y`. "Incompatible shapes: [2,3] vs. [4]"
// when a pair of dims differs and neither is 1.
StatusOr<BroadcastPlan> MakeBroadcastPlan(const TensorShape& x, const TensorShape& y);

// z = fn(x, y) for a kGeneral plan of any rank: walks the output row by row
// (a row is the last collapsed dim) in parallel on `pool`; the inner loop
// reads contiguous or repeated elements, so the compiler vectorizes it.
// `z` may be `x` or `y` when that input has the output's shape.
template <typename T, typename Fn>
void BroadcastByRows(ThreadPool* pool, const BroadcastPlan& plan, const T* x, const T* y, T* z,
                     Fn fn) {
  const int rank = static_cast<int>(plan.out_dims.size());
  const int64_t inner = plan.out_dims.back();
  int64_t rows = 1;
  for (int i = 0; i + 1 < rank; ++i) rows *= plan.out_dims[i];
  // Element strides of x and y per output dim; 0 where that side repeats.
  std::vector<int64_t> x_strides(rank), y_strides(rank);
  int64_t xs = 1, ys = 1;
  for (int i = rank - 1; i >= 0; --i) {
    x_strides[i] = plan.x_dims[i] == 1 ? 0 : xs;
    y_strides[i] = plan.y_dims[i] == 1 ? 0 : ys;
    xs *= plan.x_dims[i];
    ys *= plan.y_dims[i];
  }
  const bool x_repeats = plan.x_dims.back() == 1;
  const bool y_repeats = plan.y_dims.back() == 1;
  pool->ParallelFor(rows, inner + 8, [&](int64_t begin, int64_t end) {
    // The row's index over the outer dims, advanced like an odometer.
    std::vector<int64_t> index(rank - 1);
    int64_t x_offset = 0, y_offset = 0;
    int64_t rest = begin;
    for (int i = rank - 2; i >= 0; --i) {
      index[i] = rest % plan.out_dims[i];
      rest /= plan.out_dims[i];
      x_offset += index[i] * x_strides[i];
      y_offset += index[i] * y_strides[i];
    }
    for (int64_t row = begin; row < end; ++row) {
      const T* xr = x + x_offset;
      const T* yr = y + y_offset;
      T* zr = z + row * inner;
      if (x_repeats) {
        const T xv = *xr;
        for (int64_t j = 0; j < inner; ++j) zr[j] = fn(xv, yr[j]);
      } else if (y_repeats) {
        const T yv = *yr;
        for (int64_t j = 0; j < inner; ++j) zr[j] = fn(xr[j], yv);
      } else {
        for (int64_t j = 0; j < inner; ++j) zr[j] = fn(xr[j], yr[j]);
      }
      for (int i = rank - 2; i >= 0; --i) {
        x_offset += x_strides[i];
        y_offset += y_strides[i];
        if (++index[i] < plan.out_dims[i]) break;
        x_offset -= index[i] * x_strides[i];
        y_offset -= index[i] * y_strides[i];
        index[i] = 0;
      }
    }
  });
}

}  // namespace weir
