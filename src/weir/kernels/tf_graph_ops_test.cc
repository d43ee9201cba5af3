// The small ops TensorFlow graphs hold that came with them: the inverse and
// hyperbolic trigonometry, DivNoNan, LinSpace, EnsureShape, and
// FusedBatchNorm / FusedBatchNormV2 (V3 without reserve_space_3), against
// the C library and direct references.
#include <gtest/gtest.h>

#include <cmath>

#include "weir/kernels/kernel_test_util.h"
#include "weir/kernels/nn_test_util.h"

namespace weir {
namespace {

TEST(TfGraphOpsTest, TrigonometryMatchesTheCLibrary) {
  const std::vector<double> unit = {-0.9, -0.3, 0.0, 0.4, 0.95};
  const std::vector<double> above_one = {1.0, 1.5, 3.0, 10.0, 50.0};  // cosh(50) fits float
  struct Case {
    const char* op;
    double (*reference)(double);
    const std::vector<double>* x;
  };
  const Case cases[] = {{"Tan", std::tan, &unit},     {"Asin", std::asin, &unit},
                        {"Acos", std::acos, &unit},   {"Atan", std::atan, &above_one},
                        {"Sinh", std::sinh, &unit},   {"Cosh", std::cosh, &above_one},
                        {"Asinh", std::asinh, &unit}, {"Acosh", std::acosh, &above_one},
                        {"Atanh", std::atanh, &unit}};
  for (const Case& c : cases) {
    for (DType dtype : {DT_DOUBLE, DT_FLOAT}) {
      SCOPED_TRACE(StrCat(c.op, " ", dtype));
      auto out = RunKernel(c.op, {{"T", dtype}}, {MakeTensor(dtype, TensorShape({5}), *c.x)});
      ASSERT_TRUE(out.ok()) << out.status();
      const std::vector<double> got = ToDoubles((*out)[0]);
      for (size_t i = 0; i < got.size(); ++i) {
        const double want = c.reference((*c.x)[i]);
        EXPECT_NEAR(got[i], want, (dtype == DT_FLOAT ? 1e-6 : 1e-15) * (std::abs(want) + 1));
      }
    }
  }
  // Outside the domain: NaN, and atanh(+-1) is +-inf.
  auto nan = RunKernel("Asin", {{"T", DT_DOUBLE}}, {MakeTensor(DT_DOUBLE, TensorShape({1}), {2})});
  ASSERT_TRUE(nan.ok());
  EXPECT_TRUE(std::isnan(ToDoubles((*nan)[0])[0]));
  auto inf = RunKernel("Atanh", {{"T", DT_DOUBLE}}, {MakeTensor(DT_DOUBLE, TensorShape({1}), {1})});
  ASSERT_TRUE(inf.ok());
  EXPECT_EQ(ToDoubles((*inf)[0])[0], INFINITY);
}

TEST(TfGraphOpsTest, DivNoNanIsZeroWhereYIsZero) {
  auto out = RunKernel("DivNoNan", {{"T", DT_FLOAT}},
                       {MakeTensor(DT_FLOAT, TensorShape({2, 3}), {1, 0, -3, INFINITY, 5, 0}),
                        MakeTensor(DT_FLOAT, TensorShape({3}), {2, 0, 0})});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<double> got = ToDoubles((*out)[0]);
  const std::vector<double> want = {0.5, 0, 0, INFINITY, 0, 0};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << i;
}

TEST(TfGraphOpsTest, LinSpace) {
  auto out = RunKernel(
      "LinSpace", {{"T", DT_DOUBLE}, {"Tidx", DT_INT32}},
      {Tensor::Scalar<double>(0.5), Tensor::Scalar<double>(3.0), Tensor::Scalar<int32_t>(6)});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<double> got = ToDoubles((*out)[0]);
  ASSERT_EQ(got.size(), 6u);
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(got[i], 0.5 + i * 0.5, 1e-15);
  EXPECT_EQ(got[5], 3.0);  // the last value is stop exactly
  auto one =
      RunKernel("LinSpace", {{"T", DT_FLOAT}, {"Tidx", DT_INT64}},
                {Tensor::Scalar<float>(2), Tensor::Scalar<float>(9), Tensor::Scalar<int64_t>(1)});
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(ToDoubles((*one)[0]), std::vector<double>({2}));
  auto bad =
      RunKernel("LinSpace", {{"T", DT_FLOAT}, {"Tidx", DT_INT32}},
                {Tensor::Scalar<float>(2), Tensor::Scalar<float>(9), Tensor::Scalar<int32_t>(0)});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("num 0 must be positive"), std::string::npos)
      << bad.status();
}

TEST(TfGraphOpsTest, EnsureShapePassesCompatibleShapesOnly) {
  const Tensor x = MakeTensor(DT_FLOAT, TensorShape({2, 3}), {1, 2, 3, 4, 5, 6});
  auto ok = RunKernel("EnsureShape", {{"T", DT_FLOAT}, {"shape", PartialShape({-1, 3})}}, {x});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_TRUE((*ok)[0].SharesBufferWith(x));
  auto bad = RunKernel("EnsureShape", {{"T", DT_FLOAT}, {"shape", PartialShape({3, -1})}}, {x});
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(bad.status())) << bad.status();
}

TEST(TfGraphOpsTest, FusedBatchNormV1AndV2MatchV3) {
  const TensorShape shape({2, 2, 2, 3});
  std::vector<double> xv(24);
  for (int i = 0; i < 24; ++i) xv[i] = std::sin(i * 0.7) * 3;
  const Tensor x = MakeTensor(DT_FLOAT, shape, xv);
  const Tensor scale = MakeTensor(DT_FLOAT, TensorShape({3}), {1.5, 0.5, -2});
  const Tensor offset = MakeTensor(DT_FLOAT, TensorShape({3}), {0.1, -0.2, 0.3});
  const Tensor mean = MakeTensor(DT_FLOAT, TensorShape({3}), {0.5, -0.5, 0});
  const Tensor variance = MakeTensor(DT_FLOAT, TensorShape({3}), {2, 0.5, 1});
  for (bool training : {false, true}) {
    SCOPED_TRACE(training);
    AttrMap v3_attrs{{"T", DT_FLOAT}, {"U", DT_FLOAT}, {"is_training", training}};
    auto v3 = RunKernel("FusedBatchNormV3", v3_attrs, {x, scale, offset, mean, variance});
    ASSERT_TRUE(v3.ok()) << v3.status();
    auto v2 = RunKernel("FusedBatchNormV2", v3_attrs, {x, scale, offset, mean, variance});
    ASSERT_TRUE(v2.ok()) << v2.status();
    auto v1 = RunKernel("FusedBatchNorm", {{"T", DT_FLOAT}, {"is_training", training}},
                        {x, scale, offset, mean, variance});
    ASSERT_TRUE(v1.ok()) << v1.status();
    ASSERT_EQ(v2->size(), 5u);
    ASSERT_EQ(v1->size(), 5u);
    for (int i = 0; i < 5; ++i) {
      EXPECT_TRUE((*v2)[i].ContentEquals((*v3)[i])) << i;
      EXPECT_TRUE((*v1)[i].ContentEquals((*v3)[i])) << i;
    }
  }
}

}  // namespace
}  // namespace weir
