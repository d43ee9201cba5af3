// TopKV2 against a stable sort of each row: ties by lower index, NaN
// first; every index_type, k of 0, 1, some and all; bad k and short rows.
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <numeric>

#include "weir/kernels/kernel_test_util.h"

namespace weir {
namespace {

template <typename T>
Tensor Make(const std::vector<double>& values, const TensorShape& shape) {
  std::vector<T> converted;
  for (double v : values) converted.push_back(static_cast<T>(v));
  return Tensor::FromVector<T>(converted, shape);
}

// The first k indices of each row of `x` ([rows, n]) by a stable sort,
// descending, NaN first.
std::vector<double> ReferenceIndices(const std::vector<double>& x, int64_t rows, int64_t n,
                                     int64_t k) {
  std::vector<double> out;
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<int64_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    auto key = [&](int64_t i) { return std::isnan(x[r * n + i]) ? INFINITY : x[r * n + i]; };
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return key(a) > key(b); });
    for (int64_t j = 0; j < k; ++j) out.push_back(static_cast<double>(order[j]));
  }
  return out;
}

template <typename T>
void CheckTopK(const std::vector<double>& x, int64_t rows, int64_t n) {
  for (int64_t k : {int64_t{0}, int64_t{1}, int64_t{3}, n}) {
    for (DType index_type : {DT_INT16, DT_INT32, DT_INT64}) {
      auto out =
          RunKernel("TopKV2", {{"T", kDTypeOf<T>}, {"Tk", DT_INT64}, {"index_type", index_type}},
                    {Make<T>(x, TensorShape({rows, n})), Tensor::Scalar<int64_t>(k)});
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ((*out)[0].shape(), TensorShape({rows, k}));
      EXPECT_EQ((*out)[1].dtype(), index_type);
      const std::vector<double> want = ReferenceIndices(x, rows, n, k);
      EXPECT_EQ(ToDoubles((*out)[1]), want) << kDTypeOf<T> << " k " << k;
      std::vector<double> values = ToDoubles((*out)[0]);
      for (size_t i = 0; i < want.size(); ++i) {
        const double expected = x[(i / k) * n + static_cast<int64_t>(want[i])];
        if (std::isnan(expected)) {
          EXPECT_TRUE(std::isnan(values[i]));
        } else {
          EXPECT_EQ(values[i], expected) << i;
        }
      }
    }
  }
}

TEST(TopKTest, StableDescendingWithTiesByIndex) {
  std::vector<double> x;
  for (int i = 0; i < 4 * 9; ++i) x.push_back((i * 7) % 5 - 2);  // many ties
  CheckTopK<float>(x, 4, 9);
  CheckTopK<double>(x, 4, 9);
  CheckTopK<int32_t>(x, 4, 9);
  CheckTopK<int64_t>(x, 4, 9);
  CheckTopK<Eigen::half>(x, 4, 9);
  CheckTopK<Eigen::bfloat16>(x, 4, 9);
  CheckTopK<int8_t>(x, 4, 9);
  x[3] = NAN;
  x[12] = NAN;
  x[13] = NAN;
  CheckTopK<float>(x, 4, 9);
}

TEST(TopKTest, HigherRankAndInt32K) {
  std::vector<double> x;
  for (int i = 0; i < 2 * 3 * 50; ++i) x.push_back(std::sin(i * 1.7));
  auto out = RunKernel("TopKV2", {{"T", DT_DOUBLE}},
                       {Make<double>(x, TensorShape({2, 3, 50})), Tensor::Scalar<int32_t>(5)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[1].shape(), TensorShape({2, 3, 5}));
  EXPECT_EQ((*out)[1].dtype(), DT_INT32);
  EXPECT_EQ(ToDoubles((*out)[1]), ReferenceIndices(x, 6, 50, 5));
}

TEST(TopKTest, BadInputsAreInvalidArgument) {
  const Tensor x = Tensor::FromVector<float>({1, 3, 3, 2});
  auto expect_error = [&](const Tensor& input, const Tensor& k, const std::string& part) {
    auto out = RunKernel("TopKV2", {{"T", DT_FLOAT}, {"Tk", k.dtype()}}, {input, k});
    ASSERT_FALSE(out.ok()) << part;
    EXPECT_EQ(out.status().code(), Code::kInvalidArgument) << out.status();
    EXPECT_NE(out.status().message().find(part), std::string::npos) << out.status();
  };
  expect_error(x, Tensor::Scalar<int32_t>(5), "fewer than k = 5");
  expect_error(x, Tensor::Scalar<int32_t>(-1), "k = -1 must not be negative");
  expect_error(x, Tensor::FromVector<int32_t>({1}), "k must be a scalar");
  expect_error(Tensor::Scalar<float>(1), Tensor::Scalar<int32_t>(0), "rank");
  expect_error(x, Tensor::Scalar<int16_t>(7), "fewer than k = 7");
}

}  // namespace
}  // namespace weir
