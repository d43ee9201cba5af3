// How the inputs of an elementwise op broadcast, reduced to the fewest dims
// that describe it, so kernels pick a fast path (same shape, a scalar side,
// a bias-like row) or a general broadcast of small rank; and the loops that
// walk a general broadcast, shared by every elementwise kernel whatever its
// input and output types.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "weir/base/status.h"
#include "weir/base/threadpool.h"
#include "weir/framework/tensor_shape.h"

namespace weir {

// Elementwise work estimated below this many cycles runs inline on the
// calling thread. Eigen's cost model (behind ThreadPool::ParallelFor) starts
// a second thread only above about 100K cycles, so inline work never gives
// up parallelism; it only skips the pool's dispatch.
inline constexpr double kInlineCycles = 100000;

// Runs fn(begin, end) over [0, n): inline when n * cycles_per_unit is below
// kInlineCycles, else sharded on `pool`.
template <typename Fn>
void ShardOrInline(ThreadPool* pool, int64_t n, double cycles_per_unit, const Fn& fn) {
  if (n <= 0) return;
  if (static_cast<double>(n) * cycles_per_unit < kInlineCycles) {
    fn(int64_t{0}, n);
    return;
  }
  pool->ParallelFor(n, static_cast<int64_t>(cycles_per_unit) + 1, fn);
}

// The dims of several inputs broadcast to one output, collapsed: dims of 1
// in the output are dropped and neighbours that every input treats alike
// (full or repeated) are merged. out_dims has at least one dim, and each
// in_dims[k][i] is out_dims[i] (input k is full there) or 1 (repeated).
struct CollapsedBroadcast {
  std::vector<int64_t> out_dims;
  std::vector<std::vector<int64_t>> in_dims;
};

// REQUIRES: every input broadcasts to `output`.
CollapsedBroadcast CollapseBroadcast(const TensorShape& output,
                                     std::initializer_list<const TensorShape*> inputs);

struct BroadcastPlan {
  enum class Kind {
    kSameShape,  // x and y hold the output's elements in order
    kScalarX,    // x has one element
    kScalarY,    // y has one element
    kGeneral,    // x_dims/y_dims broadcast to out_dims
  };
  Kind kind = Kind::kSameShape;
  TensorShape output_shape;
  // For kGeneral: CollapseBroadcast of x and y, of rank 2 or more; each
  // x_dims[i] and y_dims[i] is either out_dims[i] or 1, and neighbours
  // differ in which side is 1.
  std::vector<int64_t> x_dims;
  std::vector<int64_t> y_dims;
  std::vector<int64_t> out_dims;
};

// NumPy broadcasting of `x` and `y`. "Incompatible shapes: [2,3] vs. [4]"
// when a pair of dims differs and neither is 1.
StatusOr<BroadcastPlan> MakeBroadcastPlan(const TensorShape& x, const TensorShape& y);

// Calls row_fn(row, offsets) for every row of a collapsed broadcast (a row
// is the last of out_dims), where offsets[k] is the element offset in input
// k of that row's start. Rows run in parallel on `pool` when there is
// enough work (`cycles_per_element` as for ShardOrInline).
template <size_t N, typename RowFn>
void ForEachBroadcastRow(ThreadPool* pool, const std::vector<int64_t>& out_dims,
                         const std::array<const std::vector<int64_t>*, N>& in_dims,
                         double cycles_per_element, const RowFn& row_fn) {
  const int rank = static_cast<int>(out_dims.size());
  const int64_t inner = out_dims.back();
  int64_t rows = 1;
  for (int i = 0; i + 1 < rank; ++i) rows *= out_dims[i];
  // Element strides of each input per output dim; 0 where it repeats.
  std::array<std::vector<int64_t>, N> strides;
  for (size_t k = 0; k < N; ++k) {
    const std::vector<int64_t>& dims = *in_dims[k];
    strides[k].resize(rank);
    int64_t stride = 1;
    for (int i = rank - 1; i >= 0; --i) {
      strides[k][i] = dims[i] == 1 ? 0 : stride;
      stride *= dims[i];
    }
  }
  ShardOrInline(pool, rows, static_cast<double>(inner) * cycles_per_element + 8,
                [&](int64_t begin, int64_t end) {
                  // The row's index over the outer dims, advanced like an odometer.
                  std::vector<int64_t> index(rank - 1);
                  std::array<int64_t, N> offsets{};
                  int64_t rest = begin;
                  for (int i = rank - 2; i >= 0; --i) {
                    index[i] = rest % out_dims[i];
                    rest /= out_dims[i];
                    for (size_t k = 0; k < N; ++k) offsets[k] += index[i] * strides[k][i];
                  }
                  for (int64_t row = begin; row < end; ++row) {
                    row_fn(row, offsets);
                    for (int i = rank - 2; i >= 0; --i) {
                      for (size_t k = 0; k < N; ++k) offsets[k] += strides[k][i];
                      if (++index[i] < out_dims[i]) break;
                      for (size_t k = 0; k < N; ++k) offsets[k] -= index[i] * strides[k][i];
                      index[i] = 0;
                    }
                  }
                });
}

// z = fn(x, y) for a kGeneral plan of any rank: walks the output row by
// row with a contiguous or repeated inner loop, which the compiler
// vectorizes. `z` may alias `x` or `y` when that input has the output's
// shape and type.
template <typename X, typename Y, typename Z, typename Fn>
void BroadcastByRows(ThreadPool* pool, const BroadcastPlan& plan, const X* x, const Y* y, Z* z,
                     Fn fn, double cycles_per_element) {
  const int64_t inner = plan.out_dims.back();
  const bool x_repeats = plan.x_dims.back() == 1;
  const bool y_repeats = plan.y_dims.back() == 1;
  ForEachBroadcastRow<2>(pool, plan.out_dims, {&plan.x_dims, &plan.y_dims}, cycles_per_element,
                         [&](int64_t row, const std::array<int64_t, 2>& offsets) {
                           const X* xr = x + offsets[0];
                           const Y* yr = y + offsets[1];
                           Z* zr = z + row * inner;
                           if (x_repeats) {
                             const X xv = *xr;
                             for (int64_t j = 0; j < inner; ++j) zr[j] = fn(xv, yr[j]);
                           } else if (y_repeats) {
                             const Y yv = *yr;
                             for (int64_t j = 0; j < inner; ++j) zr[j] = fn(xr[j], yv);
                           } else {
                             for (int64_t j = 0; j < inner; ++j) zr[j] = fn(xr[j], yr[j]);
                           }
                         });
}

}  // namespace weir
