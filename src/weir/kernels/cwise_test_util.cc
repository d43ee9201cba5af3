#include "weir/kernels/cwise_test_util.h"

#include <cmath>

#include "weir/kernels/kernel_test_util.h"

namespace weir {

bool Contains(const Status& s, const std::string& text) {
  return s.message().find(text) != std::string::npos;
}

int64_t BroadcastSource(const TensorShape& in, const std::vector<int64_t>& index) {
  const int out_rank = static_cast<int>(index.size());
  int64_t flat = 0;
  for (int i = 0; i < in.rank(); ++i) {
    const int64_t d = in.dim_size(i);
    flat = flat * d + (d == 1 ? 0 : index[out_rank - in.rank() + i]);
  }
  return flat;
}

std::vector<double> ReferenceBroadcast(const std::vector<Tensor>& inputs, const TensorShape& out,
                                       const std::function<double(std::span<const double>)>& fn) {
  std::vector<std::vector<double>> values;
  for (const Tensor& t : inputs) values.push_back(ToDoubles(t));
  std::vector<double> result(out.num_elements()), args(inputs.size());
  const int rank = out.rank();
  std::vector<int64_t> index(rank, 0);
  for (int64_t n = 0; n < out.num_elements(); ++n) {
    int64_t rest = n;
    for (int i = rank - 1; i >= 0; --i) {
      index[i] = rest % out.dim_size(i);
      rest /= out.dim_size(i);
    }
    for (size_t k = 0; k < inputs.size(); ++k) {
      args[k] = values[k][BroadcastSource(inputs[k].shape(), index)];
    }
    result[n] = fn(args);
  }
  return result;
}

std::vector<double> ReferenceBroadcast(const Tensor& x, const Tensor& y, const TensorShape& out,
                                       const std::function<double(double, double)>& fn) {
  return ReferenceBroadcast({x, y}, out,
                            [&](std::span<const double> a) { return fn(a[0], a[1]); });
}

const std::vector<BinaryCase>& BroadcastCases() {
  static const std::vector<BinaryCase> cases = {
      {{2, 3}, {2, 3}, {2, 3}},                    // same shape
      {{}, {}, {}},                                // both scalars
      {{}, {2, 3}, {2, 3}},                        // scalar x
      {{2, 3}, {}, {2, 3}},                        // scalar y
      {{1, 1}, {2, 3}, {2, 3}},                    // one-element x of rank 2
      {{3}, {1, 1}, {1, 3}},                       // one-element y of higher rank
      {{2, 3}, {3}, {2, 3}},                       // bias [N,C] + [C]
      {{3}, {2, 3}, {2, 3}},                       // bias on the left
      {{5, 1}, {5, 4}, {5, 4}},                    // column
      {{4, 1}, {1, 5}, {4, 5}},                    // outer product, size-1 both sides
      {{2, 1, 3}, {1, 4, 1}, {2, 4, 3}},           // rank 3
      {{4, 1, 2}, {3, 1, 1, 2}, {3, 4, 1, 2}},     // rank mismatch
      {{2, 3, 1, 4}, {3, 5, 1}, {2, 3, 5, 4}},     // rank 4 after collapsing
      {{5, 1, 3, 1, 2}, {1, 4, 1, 6, 1}, {5, 4, 3, 6, 2}},  // rank 5
      {{2, 1, 2, 1, 2, 1, 2, 1}, {1, 2, 1, 2, 1, 2, 1, 2}, {2, 2, 2, 2, 2, 2, 2, 2}},
      {{1, 2, 1, 2, 1, 2, 1, 2, 1, 2}, {2, 1, 2, 1, 2, 1, 2, 1, 2, 1},
       {2, 2, 2, 2, 2, 2, 2, 2, 2, 2}},            // rank 10 alternating
      {{2, 3, 1}, {2, 3, 1}, {2, 3, 1}},
      {{1}, {7}, {7}},
      {{0, 3}, {3}, {0, 3}},                       // empty
      {{0, 3}, {1, 3}, {0, 3}},
      {{2, 0}, {2, 1}, {2, 0}},
      {{0}, {}, {0}},
      {{1}, {0}, {0}},
      {{256, 1024}, {1024}, {256, 1024}},          // large enough to use threads
      {{300, 1}, {1, 400}, {300, 400}},
      {{4, 50, 1, 30}, {1, 50, 20, 1}, {4, 50, 20, 30}},
      {{100000}, {}, {100000}},
      {{70000}, {70000}, {70000}},
  };
  return cases;
}

bool IsClose(double actual, double expected, double rtol, double atol) {
  if (std::isnan(expected)) return std::isnan(actual);
  if (std::isinf(expected)) return actual == expected;
  return std::abs(actual - expected) <= rtol * std::abs(expected) + atol;
}

}  // namespace weir
