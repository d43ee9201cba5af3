#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <Eigen/Core>

#include "weir/kernels/kernel_test_util.h"

namespace weir {
namespace {

constexpr DType kCastTypes[] = {DT_FLOAT, DT_DOUBLE, DT_HALF,  DT_BFLOAT16, DT_INT8,
                                DT_INT16, DT_INT32,  DT_INT64, DT_UINT8,    DT_BOOL};

StatusOr<Tensor> Cast(const Tensor& x, DType dst, bool truncate = false) {
  WEIR_ASSIGN_OR_RETURN(
      std::vector<Tensor> out,
      RunKernel("Cast", {{"SrcT", x.dtype()}, {"DstT", dst}, {"Truncate", truncate}}, {x}));
  return out[0];
}

// A tensor of `dtype` holding `values` (each exactly representable there).
Tensor Make(DType dtype, const std::vector<double>& values) {
  Tensor t(dtype, TensorShape({static_cast<int64_t>(values.size())}));
  auto fill = [&]<typename T>() {
    for (size_t i = 0; i < values.size(); ++i) {
      t.data<T>()[i] = static_cast<T>(static_cast<float>(values[i]));
    }
  };
  switch (dtype) {
    case DT_HALF: fill.operator()<Eigen::half>(); break;
    case DT_BFLOAT16: fill.operator()<Eigen::bfloat16>(); break;
    case DT_BOOL:
      for (size_t i = 0; i < values.size(); ++i) t.data<bool>()[i] = values[i] != 0;
      break;
    default:
      DispatchNumericDType(dtype, [&]<typename T>() {
        if constexpr (std::is_arithmetic_v<T>) {
          for (size_t i = 0; i < values.size(); ++i) t.data<T>()[i] = static_cast<T>(values[i]);
        }
      });
  }
  return t;
}

TEST(CastOpTest, EveryPairOnValuesAllTypesHold) {
  const std::vector<double> values = {0, 1, 2, 100, 0, 64, 1, 3};
  for (DType src : kCastTypes) {
    for (DType dst : kCastTypes) {
      std::vector<double> in = values;
      if (src == DT_BOOL || dst == DT_BOOL) {
        for (double& v : in) v = v != 0;
      }
      StatusOr<Tensor> out = Cast(Make(src, in), dst);
      ASSERT_TRUE(out.ok()) << src << " -> " << dst << ": " << out.status();
      EXPECT_EQ(out->dtype(), dst);
      EXPECT_EQ(ToDoubles(*out), in) << src << " -> " << dst;
    }
  }
}

TEST(CastOpTest, SameTypeSharesTheBuffer) {
  Tensor x = Tensor::FromVector<int32_t>({1, 2, 3});
  StatusOr<Tensor> out = Cast(x, DT_INT32);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->SharesBufferWith(x));
}

TEST(CastOpTest, FloatToIntRoundsTowardZeroAndSaturates) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  Tensor x = Tensor::FromVector<float>({1.7f, -1.7f, 2.5f, -2.5f, 0.99f, -0.99f, nan, 1e10f,
                                        -1e10f, inf, -inf, 2147483520.0f});
  StatusOr<Tensor> out = Cast(x, DT_INT32);
  ASSERT_TRUE(out.ok()) << out.status();
  const int32_t max = std::numeric_limits<int32_t>::max();
  const int32_t min = std::numeric_limits<int32_t>::min();
  EXPECT_EQ(ToDoubles(*out), (std::vector<double>{1, -1, 2, -2, 0, 0, 0, max, min, max, min,
                                                  2147483520.0}));
  out = Cast(x, DT_UINT8);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToDoubles(*out), (std::vector<double>{1, 0, 2, 0, 0, 0, 0, 255, 0, 255, 0, 255}));
  out = Cast(Tensor::FromVector<double>({9.3e18, -9.3e18, -7.9}), DT_INT64);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->data<int64_t>()[0], std::numeric_limits<int64_t>::max());
  EXPECT_EQ(out->data<int64_t>()[1], std::numeric_limits<int64_t>::min());
  EXPECT_EQ(out->data<int64_t>()[2], -7);
}

TEST(CastOpTest, IntegerNarrowingWraps) {
  StatusOr<Tensor> out = Cast(Tensor::FromVector<int32_t>({200, -129, 65537, -1}), DT_INT8);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToDoubles(*out), (std::vector<double>{-56, 127, 1, -1}));
  out = Cast(Tensor::FromVector<int64_t>({-1, 256, 4294967296 + 7}), DT_UINT8);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToDoubles(*out), (std::vector<double>{255, 0, 7}));
  out = Cast(Tensor::FromVector<int64_t>({int64_t{1} << 40, -(int64_t{1} << 33) - 5}),
             DT_INT32);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToDoubles(*out), (std::vector<double>{0, -5}));
}

TEST(CastOpTest, Bool) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  StatusOr<Tensor> out = Cast(Tensor::FromVector<float>({0.0f, -0.0f, 0.5f, -3, nan}), DT_BOOL);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToDoubles(*out), (std::vector<double>{0, 0, 1, 1, 1}));
  out = Cast(Tensor::FromVector<int64_t>({0, int64_t{1} << 40, -1}), DT_BOOL);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToDoubles(*out), (std::vector<double>{0, 1, 1}));
  out = Cast(Tensor::FromVector<bool>({true, false}), DT_DOUBLE);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToDoubles(*out), (std::vector<double>{1, 0}));
}

TEST(CastOpTest, NarrowingFloatsRoundToNearestEven) {
  // Half has 10 fraction bits: 1 + 2^-11 is halfway between 1 and 1 + 2^-10.
  const float h = std::ldexp(1.0f, -11);
  Tensor x = Tensor::FromVector<float>({1 + h, 1 + 3 * h, -(1 + 3 * h), 70000.0f, 65504.0f});
  StatusOr<Tensor> out = Cast(x, DT_HALF);
  ASSERT_TRUE(out.ok()) << out.status();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(ToDoubles(*out), (std::vector<double>{1, 1 + 4 * h, -(1 + 4 * h), inf, 65504}));

  // Bfloat16 has 7: 1 + 2^-8 is halfway between 1 and 1 + 2^-7.
  const float b = std::ldexp(1.0f, -8);
  out = Cast(Tensor::FromVector<float>({1 + b, 1 + 3 * b}), DT_BFLOAT16);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToDoubles(*out), (std::vector<double>{1, 1 + 4 * b}));

  out = Cast(Tensor::FromVector<double>({0.1, -0.1}), DT_FLOAT);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->data<float>()[0], 0.1f);
  EXPECT_EQ(out->data<float>()[1], -0.1f);
}

TEST(CastOpTest, TruncateRoundsTowardZero) {
  const float h = std::ldexp(1.0f, -11);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x = Tensor::FromVector<float>({1 + 3 * h, -(1 + 3 * h), 70000.0f, -70000.0f, 1.0f});
  StatusOr<Tensor> out = Cast(x, DT_HALF, /*truncate=*/true);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToDoubles(*out), (std::vector<double>{1 + 2 * h, -(1 + 2 * h), 65504, -65504, 1}));

  const float b = std::ldexp(1.0f, -8);
  out = Cast(Tensor::FromVector<float>({1 + 3 * b, nan}), DT_BFLOAT16, true);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToDoubles(*out)[0], 1 + 2 * b);
  EXPECT_TRUE(std::isnan(ToDoubles(*out)[1]));

  // 0.1 rounds up to the nearest float; truncation takes the one below.
  out = Cast(Tensor::FromVector<double>({0.1, -0.1, 0.5}), DT_FLOAT, true);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->data<float>()[0], std::nextafter(0.1f, 0.0f));
  EXPECT_EQ(out->data<float>()[1], -std::nextafter(0.1f, 0.0f));
  EXPECT_EQ(out->data<float>()[2], 0.5f);
}

TEST(CastOpTest, IntToFloatRounds) {
  StatusOr<Tensor> out =
      Cast(Tensor::FromVector<int64_t>({(int64_t{1} << 53) + 1, 16777217}), DT_FLOAT);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->data<float>()[0], 9007199254740992.0f);
  EXPECT_EQ(out->data<float>()[1], 16777216.0f);
  out = Cast(Tensor::FromVector<int32_t>({2049, 100000}), DT_HALF);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToDoubles(*out), (std::vector<double>{2048, std::numeric_limits<double>::infinity()}));
}

TEST(CastOpTest, ShapesAndEmpty) {
  Tensor x(DT_FLOAT, TensorShape({0, 4}));
  StatusOr<Tensor> out = Cast(x, DT_INT64);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({0, 4}));
  std::vector<float> big(100000);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i) - 0.5f;
  out = Cast(Tensor::FromVector(big, TensorShape({1000, 100})), DT_INT32);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({1000, 100}));
  for (int64_t i = 0; i < 100000; ++i) {
    ASSERT_EQ(out->data<int32_t>()[i], i == 0 ? 0 : i - 1) << i;
  }
}

TEST(CastOpTest, UnsupportedTypeHasNoKernel) {
  auto out = RunKernel("Cast", {{"SrcT", DT_FLOAT}, {"DstT", DT_STRING}},
                       {Tensor::FromVector<float>({1})});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(errors::IsNotFound(out.status())) << out.status();
}

}  // namespace
}  // namespace weir
