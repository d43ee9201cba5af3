// Lgamma, Digamma, Polygamma, Atan2, LeakyRelu and LeakyReluGrad against
// references computed here in double: std::lgamma and std::atan2, the
// digamma by recurrence and its asymptotic series, polygamma(n >= 1) by its
// series (-1)^(n+1) n! sum_k 1 / (x + k)^(n+1) with the integral of the
// tail. Float is held to 1e-5 relative, double to 1e-10.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

#include <Eigen/Core>

#include "weir/kernels/cwise_test_util.h"
#include "weir/kernels/kernel_test_util.h"

namespace weir {
namespace {

double DigammaReference(double x) {
  double shift = 0;
  for (; x < 12; x += 1) shift -= 1 / x;
  const double r = 1 / (x * x);
  return shift + std::log(x) - 0.5 / x -
         r * (1.0 / 12 - r * (1.0 / 120 - r * (1.0 / 252 - r * (1.0 / 240 - r / 132))));
}

double PolygammaReference(int n, double x) {
  if (n == 0) return DigammaReference(x);
  const int64_t terms = 20000;
  double sum = 0;
  for (int64_t k = terms - 1; k >= 0; --k) sum += std::pow(x + k, -(n + 1));
  // Euler-Maclaurin tail from x + terms on.
  const double tail_at = x + terms;
  sum += std::pow(tail_at, -n) / n + 0.5 * std::pow(tail_at, -(n + 1));
  return (n % 2 == 1 ? 1 : -1) * std::tgamma(n + 1.0) * sum;
}

template <typename T>
void ExpectAllClose(const Tensor& actual, const std::vector<double>& expected) {
  const double rtol = std::is_same_v<T, float> ? 1e-5 : 1e-10;
  const std::vector<double> got = ToDoubles(actual);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(IsClose(got[i], expected[i], rtol, rtol)) << i << ": " << got[i] << " vs " << expected[i];
  }
}

template <typename T>
Tensor Of(const std::vector<double>& values, const TensorShape& shape) {
  std::vector<T> cast;
  for (double v : values) cast.push_back(static_cast<T>(v));
  return Tensor::FromVector(cast, shape);
}

template <typename T>
void CheckSpecialFunctions() {
  const std::vector<double> xs = {0.05, 0.5, 1, 1.5, 2.75, 7, 30, 150, -0.5, -2.5};
  const TensorShape shape({2, 5});
  auto lgamma = RunKernel("Lgamma", {{"T", kDTypeOf<T>}}, {Of<T>(xs, shape)});
  ASSERT_TRUE(lgamma.ok()) << lgamma.status();
  std::vector<double> expected;
  for (double x : xs) expected.push_back(std::lgamma(static_cast<double>(static_cast<T>(x))));
  ExpectAllClose<T>((*lgamma)[0], expected);

  const std::vector<double> positive = {0.05, 0.5, 1, 1.5, 2.75, 7, 30, 150};
  auto digamma = RunKernel("Digamma", {{"T", kDTypeOf<T>}}, {Of<T>(positive, {8})});
  ASSERT_TRUE(digamma.ok()) << digamma.status();
  expected.clear();
  for (double x : positive) expected.push_back(DigammaReference(static_cast<T>(x)));
  ExpectAllClose<T>((*digamma)[0], expected);

  // Polygamma broadcasts the order [3,1] against x [4].
  const std::vector<double> orders = {0, 1, 3}, points = {0.5, 1, 2.5, 10};
  auto polygamma = RunKernel("Polygamma", {{"T", kDTypeOf<T>}},
                             {Of<T>(orders, {3, 1}), Of<T>(points, {4})});
  ASSERT_TRUE(polygamma.ok()) << polygamma.status();
  EXPECT_EQ((*polygamma)[0].shape(), TensorShape({3, 4}));
  expected.clear();
  for (double n : orders) for (double x : points) expected.push_back(PolygammaReference(static_cast<int>(n), x));
  ExpectAllClose<T>((*polygamma)[0], expected);
  // A fractional or negative order is NaN.
  auto bad_order = RunKernel("Polygamma", {{"T", kDTypeOf<T>}}, {Of<T>({0.5, -1}, {2}), Of<T>({1, 1}, {2})});
  ASSERT_TRUE(bad_order.ok()) << bad_order.status();
  for (double v : ToDoubles((*bad_order)[0])) EXPECT_TRUE(std::isnan(v));
  // An order past long's range (infinity included) is NaN too, at a pole of
  // x as elsewhere (Eigen's zeta would convert it to long: the run_op
  // fuzzer's UBSan report).
  const double huge = std::numeric_limits<double>::infinity();
  auto huge_order = RunKernel("Polygamma", {{"T", kDTypeOf<T>}},
                              {Of<T>({huge, -huge, 1e30, huge}, {4}), Of<T>({-2, 1, -3, 2.5}, {4})});
  ASSERT_TRUE(huge_order.ok()) << huge_order.status();
  for (double v : ToDoubles((*huge_order)[0])) EXPECT_TRUE(std::isnan(v));

  // Atan2 over the four quadrants, the axes and signed zeros, broadcast
  // [2,4] with [4].
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> ys = {1, -1, 1, -1, 0, -0.0, 3, inf}, x_row = {2, 2, -2, -0.0};
  auto atan2 = RunKernel("Atan2", {{"T", kDTypeOf<T>}}, {Of<T>(ys, {2, 4}), Of<T>(x_row, {4})});
  ASSERT_TRUE(atan2.ok()) << atan2.status();
  expected.clear();
  for (int i = 0; i < 8; ++i) expected.push_back(std::atan2(ys[i], x_row[i % 4]));
  ExpectAllClose<T>((*atan2)[0], expected);
  EXPECT_TRUE(std::signbit(ToDoubles((*atan2)[0])[5]));  // atan2(-0, 2) = -0
}

TEST(CwiseSpecialTest, Float) { CheckSpecialFunctions<float>(); }
TEST(CwiseSpecialTest, Double) { CheckSpecialFunctions<double>(); }

template <typename T>
void CheckLeakyRelu() {
  const std::vector<double> xs = {-3, -0.5, 0, 0.25, 2, -1e3, 7, -0.0};
  for (double alpha : {0.2, 0.01, 1.5}) {
    SCOPED_TRACE(alpha);
    AttrMap attrs = {{"T", kDTypeOf<T>}, {"alpha", static_cast<float>(alpha)}};
    auto out = RunKernel("LeakyRelu", attrs, {Of<T>(xs, {2, 4})});
    ASSERT_TRUE(out.ok()) << out.status();
    const T a = static_cast<T>(static_cast<float>(alpha));
    std::vector<double> expected;
    for (double x : xs) expected.push_back(x > 0 ? x : x * static_cast<double>(a));
    ExpectAllClose<T>((*out)[0], expected);

    const std::vector<double> gs = {1, 2, 3, 4, -5, 6, -7, 8};
    auto grad = RunKernel("LeakyReluGrad", attrs, {Of<T>(gs, {2, 4}), Of<T>(xs, {2, 4})});
    ASSERT_TRUE(grad.ok()) << grad.status();
    expected.clear();
    for (size_t i = 0; i < xs.size(); ++i) expected.push_back(xs[i] > 0 ? gs[i] : gs[i] * static_cast<double>(a));
    ExpectAllClose<T>((*grad)[0], expected);
  }
  // The default alpha is 0.2; NaN stays NaN.
  auto nan = RunKernel("LeakyRelu", {{"T", kDTypeOf<T>}},
                       {Of<T>({std::numeric_limits<double>::quiet_NaN(), -1}, {2})});
  ASSERT_TRUE(nan.ok()) << nan.status();
  EXPECT_TRUE(std::isnan(ToDoubles((*nan)[0])[0]));
  EXPECT_NEAR(ToDoubles((*nan)[0])[1], -0.2, 1e-7);
  // Large enough for the thread pool: the vectorized path agrees.
  std::vector<double> many(100000);
  for (size_t i = 0; i < many.size(); ++i) many[i] = std::sin(0.37 * i) * 10;
  auto big = RunKernel("LeakyRelu", {{"T", kDTypeOf<T>}}, {Of<T>(many, {100000})});
  ASSERT_TRUE(big.ok()) << big.status();
  std::vector<double> expected;
  for (double x : many) expected.push_back(static_cast<T>(x) > 0 ? static_cast<double>(static_cast<T>(x)) : static_cast<double>(static_cast<T>(x) * static_cast<T>(0.2f)));
  ExpectAllClose<T>((*big)[0], expected);
}

TEST(CwiseSpecialTest, LeakyReluFloat) { CheckLeakyRelu<float>(); }
TEST(CwiseSpecialTest, LeakyReluDouble) { CheckLeakyRelu<double>(); }

template <typename T>
void CheckHalfTypes() {
  // Computed in float and rounded once: within the type's half ulp.
  const double rtol = std::is_same_v<T, Eigen::half> ? 1e-3 : 8e-3;
  const std::vector<double> xs = {0.25, 0.5, 1.5, 3, 7.5, -0.5};
  std::vector<double> rounded, expected_lgamma, expected_digamma, expected_atan2, expected_leaky;
  for (double x : xs) rounded.push_back(static_cast<double>(static_cast<T>(x)));
  for (double x : rounded) {
    expected_lgamma.push_back(static_cast<double>(static_cast<T>(std::lgamma(x))));
    expected_digamma.push_back(static_cast<double>(static_cast<T>(x > 0 ? DigammaReference(x) : 0)));
    expected_atan2.push_back(static_cast<double>(static_cast<T>(std::atan2(x, 1.5))));
    expected_leaky.push_back(x > 0 ? x : static_cast<double>(static_cast<T>(x * static_cast<double>(static_cast<T>(0.2f)))));
  }
  auto check = [&](const StatusOr<std::vector<Tensor>>& out, const std::vector<double>& expected,
                   bool skip_last) {
    ASSERT_TRUE(out.ok()) << out.status();
    const std::vector<double> got = ToDoubles((*out)[0]);
    for (size_t i = 0; i + (skip_last ? 1 : 0) < got.size(); ++i) {
      EXPECT_TRUE(IsClose(got[i], expected[i], rtol, 1e-3)) << i << ": " << got[i] << " vs " << expected[i];
    }
  };
  const AttrMap attrs = {{"T", kDTypeOf<T>}};
  check(RunKernel("Lgamma", attrs, {Of<T>(xs, {6})}), expected_lgamma, false);
  check(RunKernel("Digamma", attrs, {Of<T>(xs, {6})}), expected_digamma, true);
  check(RunKernel("Atan2", attrs, {Of<T>(xs, {6}), Of<T>({1.5}, {})}), expected_atan2, false);
  check(RunKernel("LeakyRelu", attrs, {Of<T>(xs, {6})}), expected_leaky, false);
}

TEST(CwiseSpecialTest, Half) { CheckHalfTypes<Eigen::half>(); }
TEST(CwiseSpecialTest, BFloat16) { CheckHalfTypes<Eigen::bfloat16>(); }

TEST(CwiseSpecialTest, BadInputsAreInvalidArgument) {
  auto grad = RunKernel("LeakyReluGrad", {{"T", DT_FLOAT}},
                        {Of<float>({1, 2, 3}, {3}), Of<float>({1, 2}, {2})});
  ASSERT_FALSE(grad.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(grad.status())) << grad.status();
  EXPECT_TRUE(Contains(grad.status(), "[3]") && Contains(grad.status(), "[2]")) << grad.status();
  auto atan2 = RunKernel("Atan2", {{"T", DT_DOUBLE}}, {Of<double>({1, 2, 3}, {3}), Of<double>({1, 2}, {2})});
  ASSERT_FALSE(atan2.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(atan2.status())) << atan2.status();
  // Integer dtypes are not in these ops' type sets.
  auto int_lgamma = RunKernel("Lgamma", {{"T", DT_INT32}}, {Tensor::FromVector<int32_t>({1, 2})});
  EXPECT_FALSE(int_lgamma.ok());
}

}  // namespace
}  // namespace weir
