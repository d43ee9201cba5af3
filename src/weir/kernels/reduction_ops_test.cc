#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "weir/kernels/kernel_test_util.h"

namespace weir {
namespace {

bool Contains(const Status& s, const std::string& text) {
  return s.message().find(text) != std::string::npos;
}

template <typename T>
Tensor Values(const TensorShape& shape, int seed) {
  std::vector<T> values(shape.num_elements());
  uint32_t state = 2654435761u * (seed + 1);
  for (T& v : values) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<T>(static_cast<int>((state >> 16) % 21) - 10);
  }
  return Tensor::FromVector(values, shape);
}

// The sum over `axes` (normalized, distinct) by the definition, in double.
std::vector<double> ReferenceSum(const Tensor& x, const std::vector<int>& axes,
                                 TensorShape* out_shape, bool keep_dims) {
  const TensorShape& shape = x.shape();
  auto reduced = [&](int d) { return std::find(axes.begin(), axes.end(), d) != axes.end(); };
  *out_shape = TensorShape();
  for (int d = 0; d < shape.rank(); ++d) {
    if (!reduced(d)) out_shape->AddDim(shape.dim_size(d));
    else if (keep_dims) out_shape->AddDim(1);
  }
  std::vector<double> xv = ToDoubles(x), sums(out_shape->num_elements(), 0.0);
  for (int64_t n = 0; n < shape.num_elements(); ++n) {
    // Output index: the input index with reduced dims dropped.
    int64_t rest = n, out = 0, stride = 1;
    for (int d = shape.rank() - 1; d >= 0; --d) {
      const int64_t i = rest % shape.dim_size(d);
      rest /= shape.dim_size(d);
      if (!reduced(d)) {
        out += i * stride;
        stride *= shape.dim_size(d);
      }
    }
    sums[out] += xv[n];
  }
  return sums;
}

template <typename T, typename Index>
void CheckEveryAxisSubset(const TensorShape& shape) {
  Tensor x = Values<T>(shape, shape.rank());
  const int rank = shape.rank();
  for (int mask = 0; mask < (1 << rank); ++mask) {
    for (bool keep_dims : {false, true}) {
      std::vector<int> axes;
      std::vector<Index> given;
      for (int d = 0; d < rank; ++d) {
        if (!(mask & (1 << d))) continue;
        axes.push_back(d);
        // Alternate between positive and negative spellings of an axis.
        given.push_back(static_cast<Index>((mask + d) % 2 ? d - rank : d));
      }
      TensorShape expected_shape;
      std::vector<double> expected = ReferenceSum(x, axes, &expected_shape, keep_dims);
      auto out = RunKernel("Sum",
                           {{"T", kDTypeOf<T>}, {"Tidx", kDTypeOf<Index>},
                            {"keep_dims", keep_dims}},
                           {x, Tensor::FromVector(given)});
      ASSERT_TRUE(out.ok()) << shape << " mask " << mask << ": " << out.status();
      ASSERT_EQ((*out)[0].shape(), expected_shape) << shape << " mask " << mask;
      std::vector<double> actual = ToDoubles((*out)[0]);
      for (size_t i = 0; i < expected.size(); ++i) {
        // Small integers: every partial sum is exact, in any order.
        ASSERT_EQ(actual[i], expected[i]) << shape << " mask " << mask << " at " << i;
      }
    }
  }
}

TEST(SumOpTest, EveryAxisSubsetFloat) {
  CheckEveryAxisSubset<float, int32_t>(TensorShape({2, 3, 4}));
  CheckEveryAxisSubset<float, int64_t>(TensorShape({3, 1, 5, 2}));
  CheckEveryAxisSubset<float, int32_t>(TensorShape({2, 3, 2, 3, 2}));
}

TEST(SumOpTest, EveryAxisSubsetOtherTypes) {
  CheckEveryAxisSubset<double, int32_t>(TensorShape({2, 3, 4}));
  CheckEveryAxisSubset<int32_t, int64_t>(TensorShape({3, 1, 5, 2}));
  CheckEveryAxisSubset<int64_t, int32_t>(TensorShape({2, 3, 2, 3, 2}));
  CheckEveryAxisSubset<int32_t, int32_t>(TensorShape({7}));
}

TEST(SumOpTest, LargeReductions) {
  CheckEveryAxisSubset<float, int32_t>(TensorShape({64, 1000}));
  CheckEveryAxisSubset<double, int32_t>(TensorShape({8, 100, 16}));
  CheckEveryAxisSubset<int32_t, int32_t>(TensorShape({300, 7, 50}));
}

TEST(SumOpTest, ScalarAndEmptyAxes) {
  Tensor x = Values<float>(TensorShape({2, 3}), 0);
  auto out = RunKernel("Sum", {{"T", DT_FLOAT}}, {x, Tensor::Scalar<int32_t>(-1)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({2}));
  // No axes: the input itself, sharing its buffer.
  out = RunKernel("Sum", {{"T", DT_FLOAT}}, {x, Tensor::FromVector<int32_t>({})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE((*out)[0].SharesBufferWith(x));
  EXPECT_EQ((*out)[0].shape(), TensorShape({2, 3}));
  // A scalar input reduced over nothing.
  out = RunKernel("Sum", {{"T", DT_INT64}},
                  {Tensor::Scalar<int64_t>(5), Tensor::FromVector<int32_t>({})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<int64_t>(), 5);
}

TEST(SumOpTest, EmptyInputs) {
  Tensor x(DT_FLOAT, TensorShape({0, 3}));
  auto out = RunKernel("Sum", {{"T", DT_FLOAT}}, {x, Tensor::FromVector<int32_t>({0})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({3}));
  EXPECT_EQ(ToDoubles((*out)[0]), (std::vector<double>{0, 0, 0}));
  out = RunKernel("Sum", {{"T", DT_FLOAT}, {"keep_dims", true}},
                  {x, Tensor::FromVector<int32_t>({1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({0, 1}));
  out = RunKernel("Sum", {{"T", DT_INT32}},
                  {Tensor(DT_INT32, TensorShape({2, 0})), Tensor::FromVector<int32_t>({0, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<int32_t>(), 0);
}

TEST(SumOpTest, IntegerSumsWrap) {
  const int32_t max = std::numeric_limits<int32_t>::max();
  auto out = RunKernel("Sum", {{"T", DT_INT32}},
                       {Tensor::FromVector<int32_t>({max, 1, max, 1}),
                        Tensor::FromVector<int32_t>({0})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<int32_t>(), 0);  // 2 * 2^31 wraps to 0
}

TEST(SumOpTest, NanAndInfPropagate) {
  const float inf = std::numeric_limits<float>::infinity();
  auto out = RunKernel("Sum", {{"T", DT_FLOAT}},
                       {Tensor::FromVector<float>({1, inf, 2, std::nanf(""), inf, -inf},
                                                  TensorShape({3, 2})),
                        Tensor::FromVector<int32_t>({1})});
  ASSERT_TRUE(out.ok()) << out.status();
  const float* s = (*out)[0].data<float>();
  EXPECT_EQ(s[0], inf);
  EXPECT_TRUE(std::isnan(s[1]));
  EXPECT_TRUE(std::isnan(s[2]));
}

TEST(SumOpTest, FloatAccuracy) {
  // 10^6 copies of 0.1: a naive float loop drifts by ~1%.
  Tensor x = Tensor::FromVector(std::vector<float>(1000000, 0.1f));
  auto out = RunKernel("Sum", {{"T", DT_FLOAT}}, {x, Tensor::FromVector<int32_t>({0})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NEAR((*out)[0].scalar<float>(), 100000.0, 10.0);
}

TEST(SumOpTest, BadAxes) {
  Tensor x(DT_FLOAT, TensorShape({2, 3}));
  auto out = RunKernel("Sum", {{"T", DT_FLOAT}}, {x, Tensor::FromVector<int32_t>({2})});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(out.status()));
  EXPECT_TRUE(Contains(out.status(), "Sum")) << out.status();
  EXPECT_TRUE(Contains(out.status(), "[2,3]")) << out.status();
  EXPECT_TRUE(Contains(out.status(), "axis 2")) << out.status();

  out = RunKernel("Sum", {{"T", DT_FLOAT}}, {x, Tensor::FromVector<int32_t>({-3})});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(out.status()));

  out = RunKernel("Sum", {{"T", DT_FLOAT}}, {x, Tensor::FromVector<int32_t>({1, -1})});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(out.status()));
  EXPECT_TRUE(Contains(out.status(), "twice")) << out.status();

  out = RunKernel("Sum", {{"T", DT_FLOAT}},
                  {x, Tensor::FromVector<int32_t>({0, 1}, TensorShape({1, 2}))});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(out.status()));
  EXPECT_TRUE(Contains(out.status(), "[1,2]")) << out.status();
}

}  // namespace
}  // namespace weir
