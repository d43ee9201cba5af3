// Test helpers for the elementwise kernels: deterministic inputs, NumPy
// broadcasting computed by definition, the broadcasting cases every binary
// op is checked on, and tolerant comparison against double references.
// Test-only: cwise_test_util.cc builds into weir_kernels_test.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "weir/framework/tensor.h"

namespace weir {

bool Contains(const Status& s, const std::string& text);

// Small integers in [-9, 9] (exact in every type), never 0 so they can
// divide; `seed` picks the sequence.
template <typename T>
Tensor Values(const TensorShape& shape, int seed) {
  std::vector<T> values(shape.num_elements());
  uint32_t state = 2654435761u * (seed + 1);
  for (T& v : values) {
    state = state * 1664525u + 1013904223u;
    int x = static_cast<int>((state >> 16) % 19) - 9;
    v = static_cast<T>(x == 0 ? 7 : x);
  }
  return Tensor::FromVector(values, shape);
}

// The flat offset of the element of `in` that the output element at
// `index` (one entry per output dim) reads under NumPy broadcasting.
int64_t BroadcastSource(const TensorShape& in, const std::vector<int64_t>& index);

// fn applied to the broadcast inputs, element by element of `out`, in double.
std::vector<double> ReferenceBroadcast(const std::vector<Tensor>& inputs, const TensorShape& out,
                                       const std::function<double(std::span<const double>)>& fn);
std::vector<double> ReferenceBroadcast(const Tensor& x, const Tensor& y, const TensorShape& out,
                                       const std::function<double(double, double)>& fn);

struct BinaryCase {
  TensorShape x, y, out;
};

// Same shape, scalar either side, size-1 dims, [N,C] with [C], [N,1] with
// [1,C], rank mismatch, ranks up to 10, empty tensors, and sizes large
// enough for the thread pool.
const std::vector<BinaryCase>& BroadcastCases();

// |actual - expected| <= rtol * |expected| + atol, where NaN matches only
// NaN and an infinity only itself.
bool IsClose(double actual, double expected, double rtol, double atol);

}  // namespace weir
