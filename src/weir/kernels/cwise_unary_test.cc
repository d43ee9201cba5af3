// Unary kernels against <cmath> references computed in double (long double
// where the double formula would itself lose accuracy), on special values,
// a sweep of ordinary ones, and every shape kind: rank 0, empty, size-1
// dims, and large enough for the thread pool.
//
// Tolerances, relative to the reference rounded to the kernel's type, plus
// an absolute floor of the smallest normal number (denormals are flushed):
//   float: 1e-6 (a few ulp), except Eigen's fast polynomial Tanh, Erf, Sin
//          and Cos (4e-6);
//   double: 1e-12;
//   integers: exact.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "weir/framework/op_kernel.h"
#include "weir/kernels/cwise_test_util.h"
#include "weir/kernels/kernel_test_util.h"

namespace weir {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kSeluScale = 1.0507009873554804934193349852946;
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;

struct UnaryOpSpec {
  const char* op;
  std::function<double(double)> fn;
  double float_tolerance = 1e-6;
};

double Sign(double x) { return std::isnan(x) ? x : (x > 0) - (x < 0); }

const std::vector<UnaryOpSpec>& FloatOps() {
  static const std::vector<UnaryOpSpec> ops = {
      {"Neg", [](double x) { return -x; }},
      {"Abs", [](double x) { return std::abs(x); }},
      {"Sign", Sign},
      {"Square", [](double x) { return x * x; }},
      {"Reciprocal", [](double x) { return 1 / x; }},
      {"Exp", [](double x) { return std::exp(x); }},
      {"Expm1", [](double x) { return std::expm1(x); }},
      {"Log", [](double x) { return std::log(x); }},
      {"Log1p", [](double x) { return std::log1p(x); }},
      {"Sqrt", [](double x) { return std::sqrt(x); }},
      {"Rsqrt", [](double x) { return 1 / std::sqrt(x); }},
      {"Floor", [](double x) { return std::floor(x); }},
      {"Ceil", [](double x) { return std::ceil(x); }},
      {"Round", [](double x) { return std::nearbyint(x); }},  // half to even
      {"Sin", [](double x) { return std::sin(x); }, 4e-6},
      {"Cos", [](double x) { return std::cos(x); }, 4e-6},
      {"Tanh", [](double x) { return std::tanh(x); }, 4e-6},
      {"Sigmoid",
       [](double x) { return static_cast<double>(1 / (1 + std::exp(-static_cast<long double>(x)))); }},
      {"Erf", [](double x) { return std::erf(x); }, 4e-6},
      {"Relu", [](double x) { return std::isnan(x) ? x : std::max(x, 0.0); }},
      {"Relu6", [](double x) { return std::isnan(x) ? x : std::min(std::max(x, 0.0), 6.0); }},
      {"Elu", [](double x) { return x < 0 ? std::expm1(x) : x; }},
      {"Selu",
       [](double x) { return x < 0 ? kSeluScale * kSeluAlpha * std::expm1(x) : kSeluScale * x; }},
      // log(1 + e^x); past x = 700, e^-x < 2^-1000 and the answer is x in
      // double (e^x would overflow even a long double).
      {"Softplus",
       [](double x) {
         return x > 700 ? x : static_cast<double>(std::log1p(std::exp(static_cast<long double>(x))));
       }},
  };
  return ops;
}

// Special values, halves for rounding, tiny and large magnitudes, and a
// sweep of [-12, 12].
std::vector<double> FloatInputs() {
  std::vector<double> values = {0.0, -0.0, kInf, -kInf, kNan, 1e-30, -1e-30, 1e-8, -1e-8, 1e-3,
                                -1e-3, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, -3.5, 1, -1, 6,
                                -6, 6.5, 20, -20, 50, -50, 88, 100, -100, 200, -200, 709, 710,
                                -745, 1e10, -1e10};
  for (int i = 0; i <= 480; ++i) values.push_back(-12 + i * 0.05 + 0.0007);
  return values;
}

template <typename T>
void CheckUnaryOp(const UnaryOpSpec& spec, const std::vector<double>& inputs,
                  const TensorShape& shape) {
  std::vector<T> xs(shape.num_elements());
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<T>(inputs[i % inputs.size()]);
  Tensor x = Tensor::FromVector(xs, shape);
  auto out = RunKernel(spec.op, {{"T", kDTypeOf<T>}}, {x});
  ASSERT_TRUE(out.ok()) << spec.op << ": " << out.status();
  const Tensor& y = (*out)[0];
  ASSERT_EQ(y.shape(), shape) << spec.op;
  ASSERT_EQ(y.dtype(), kDTypeOf<T>) << spec.op;
  std::vector<double> actual = ToDoubles(y);
  const double rtol = std::is_same_v<T, float> ? spec.float_tolerance : 1e-12;
  const double atol = std::numeric_limits<T>::min();
  for (size_t i = 0; i < xs.size(); ++i) {
    const double x_value = static_cast<double>(xs[i]);
    // The exact result rounded to T: overflow gives inf, as it must.
    const double expected = static_cast<double>(static_cast<T>(spec.fn(x_value)));
    ASSERT_TRUE(IsClose(actual[i], expected, rtol, atol))
        << spec.op << "<" << kDTypeOf<T> << ">(" << x_value << ") = " << actual[i]
        << ", expected " << expected;
  }
}

template <typename T>
void CheckFloatOps() {
  const std::vector<double> inputs = FloatInputs();
  const int64_t count = static_cast<int64_t>(inputs.size());
  for (const UnaryOpSpec& spec : FloatOps()) {
    for (const TensorShape& shape :
         {TensorShape({count}), TensorShape({}), TensorShape({0}), TensorShape({3, 0, 2}),
          TensorShape({1, 1}), TensorShape({1, count, 1}), TensorShape({1000, 101})}) {
      // The first wrong element of an op ends its check, not the others'.
      CheckUnaryOp<T>(spec, inputs, shape);
      if (::testing::Test::HasFatalFailure()) break;
    }
  }
}

TEST(UnaryOpTest, Float) { CheckFloatOps<float>(); }
TEST(UnaryOpTest, Double) { CheckFloatOps<double>(); }

// Abs, Neg, Sign, Square, Relu and Relu6 also take integers, which wrap.
template <typename T>
void CheckIntegerOps() {
  const T min = std::numeric_limits<T>::min(), max = std::numeric_limits<T>::max();
  std::vector<T> xs = {0, 1, -1, 5, -5, 6, 7, -7, 100, -100, max, min, min + 1};
  for (int i = 0; i < 50; ++i) xs.push_back(static_cast<T>(i * 7919 % 201 - 100));
  using U = std::make_unsigned_t<T>;
  auto wrap = [](U u) { return static_cast<T>(u); };
  const std::vector<std::pair<const char*, std::function<T(T)>>> ops = {
      {"Abs", [&](T v) { return v < 0 ? wrap(U(0) - U(v)) : v; }},
      {"Neg", [&](T v) { return wrap(U(0) - U(v)); }},
      {"Sign", [](T v) { return static_cast<T>((v > 0) - (v < 0)); }},
      {"Square", [&](T v) { return wrap(U(v) * U(v)); }},
      {"Relu", [](T v) { return std::max<T>(v, 0); }},
      {"Relu6", [](T v) { return std::min<T>(std::max<T>(v, 0), 6); }},
  };
  for (const auto& [op, fn] : ops) {
    for (const TensorShape& shape : {TensorShape({static_cast<int64_t>(xs.size())}),
                                     TensorShape({}), TensorShape({0, 4})}) {
      std::vector<T> values(shape.num_elements());
      for (size_t i = 0; i < values.size(); ++i) values[i] = xs[i];
      auto out = RunKernel(op, {{"T", kDTypeOf<T>}}, {Tensor::FromVector(values, shape)});
      ASSERT_TRUE(out.ok()) << op << ": " << out.status();
      ASSERT_EQ((*out)[0].shape(), shape);
      for (size_t i = 0; i < values.size(); ++i) {
        EXPECT_EQ((*out)[0].template data<T>()[i], fn(values[i])) << op << "(" << values[i] << ")";
      }
    }
  }
  // The most negative value has no positive counterpart: Abs wraps to it.
  auto abs = RunKernel("Abs", {{"T", kDTypeOf<T>}}, {Tensor::Scalar<T>(min)});
  ASSERT_TRUE(abs.ok());
  EXPECT_EQ((*abs)[0].template scalar<T>(), min);
}

TEST(UnaryOpTest, Int32) { CheckIntegerOps<int32_t>(); }
TEST(UnaryOpTest, Int64) { CheckIntegerOps<int64_t>(); }

// The values the issue names, checked exactly where the answer is exact.
template <typename T>
void CheckSpecialValues() {
  auto run = [](const char* op, std::vector<double> xs) {
    std::vector<T> values(xs.begin(), xs.end());
    auto out = RunKernel(op, {{"T", kDTypeOf<T>}}, {Tensor::FromVector(values)});
    EXPECT_TRUE(out.ok()) << op << ": " << out.status();
    return out.ok() ? ToDoubles((*out)[0]) : std::vector<double>(xs.size());
  };
  std::vector<double> v = run("Softplus", {100, -100, 1000, -1000, 0});
  EXPECT_EQ(v[0], 100);
  EXPECT_TRUE(IsClose(v[1], static_cast<T>(std::exp(-100.0)), 1e-12,
                      std::numeric_limits<T>::min()));  // float: flushed denormal 0
  EXPECT_EQ(v[2], 1000);
  EXPECT_EQ(v[3], 0);
  EXPECT_TRUE(IsClose(v[4], std::log(2.0), 1e-7, 0));
  v = run("Sigmoid", {100, -100, 1000, -1000, 0, kInf, -kInf});
  EXPECT_EQ(v[0], 1);
  EXPECT_TRUE(IsClose(v[1], static_cast<T>(std::exp(-100.0)), 1e-12,
                      std::numeric_limits<T>::min()));
  EXPECT_EQ(v[2], 1);
  EXPECT_EQ(v[3], 0);
  EXPECT_EQ(v[4], 0.5);
  EXPECT_EQ(v[5], 1);
  EXPECT_EQ(v[6], 0);
  v = run("Exp", {1000, -1000, kInf, -kInf, 0});
  EXPECT_EQ(v[0], kInf);
  EXPECT_EQ(v[1], 0);
  EXPECT_EQ(v[2], kInf);
  EXPECT_EQ(v[3], 0);
  EXPECT_EQ(v[4], 1);
  v = run("Log", {0, -0.0, -1, kInf, 1, kNan});
  EXPECT_EQ(v[0], -kInf);
  EXPECT_EQ(v[1], -kInf);
  EXPECT_TRUE(std::isnan(v[2]));
  EXPECT_EQ(v[3], kInf);
  EXPECT_EQ(v[4], 0);
  EXPECT_TRUE(std::isnan(v[5]));
  v = run("Log1p", {-1, -2, 0});
  EXPECT_EQ(v[0], -kInf);
  EXPECT_TRUE(std::isnan(v[1]));
  EXPECT_EQ(v[2], 0);
  v = run("Sqrt", {-1, 0, kInf, 4});
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_EQ(v[1], 0);
  EXPECT_EQ(v[2], kInf);
  EXPECT_EQ(v[3], 2);
  v = run("Rsqrt", {0, kInf, 4, -1});
  EXPECT_EQ(v[0], kInf);
  EXPECT_EQ(v[1], 0);
  EXPECT_EQ(v[2], 0.5);
  EXPECT_TRUE(std::isnan(v[3]));
  v = run("Reciprocal", {0, -0.0, kInf, 4});
  EXPECT_EQ(v[0], kInf);
  EXPECT_EQ(v[1], -kInf);
  EXPECT_EQ(v[2], 0);
  EXPECT_EQ(v[3], 0.25);
  v = run("Round", {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4, 2.6, -2.6, 3.5, 1e10 + 0.5, kInf});
  // 1e10 + 0.5 is exact in double (and 1e10 in float): even wins.
  EXPECT_EQ(v, (std::vector<double>{0, 2, 2, 0, -2, -2, 2, 3, -3, 4, 1e10, kInf}));
  v = run("Tanh", {100, -100, 1e-10, 0});
  EXPECT_EQ(v[0], 1);
  EXPECT_EQ(v[1], -1);
  EXPECT_TRUE(IsClose(v[2], static_cast<T>(1e-10), 1e-6, 0));
  EXPECT_EQ(v[3], 0);
  v = run("Erf", {100, -100, 0});
  EXPECT_EQ(v, (std::vector<double>{1, -1, 0}));
  v = run("Expm1", {1e-10, -kInf, 1000});
  EXPECT_TRUE(IsClose(v[0], static_cast<T>(1e-10), 1e-6, 0));
  EXPECT_EQ(v[1], -1);
  EXPECT_EQ(v[2], kInf);
  v = run("Elu", {-kInf, kInf, -100});
  EXPECT_EQ(v, (std::vector<double>{-1, kInf, -1}));
  v = run("Relu6", {kNan, kInf, -kInf, 6, 7});
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_EQ(v[1], 6);
  EXPECT_EQ(v[2], 0);
  EXPECT_EQ(v[3], 6);
  EXPECT_EQ(v[4], 6);
  v = run("Sign", {kNan, -0.0, -kInf, 1e-30});
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_EQ(v[1], 0);
  EXPECT_EQ(v[2], -1);
  EXPECT_EQ(v[3], 1);
}

TEST(UnaryOpTest, SpecialValuesFloat) { CheckSpecialValues<float>(); }
TEST(UnaryOpTest, SpecialValuesDouble) { CheckSpecialValues<double>(); }

template <typename T>
void CheckPredicates() {
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  std::vector<T> xs = {0, -1, inf, -inf, nan, -nan, std::numeric_limits<T>::max(),
                       std::numeric_limits<T>::lowest()};
  for (int i = 0; i < 40; ++i) xs.push_back(i % 7 == 0 ? nan : (i % 5 == 0 ? -inf : T(i)));
  for (const char* op : {"IsNan", "IsInf", "IsFinite"}) {
    for (const TensorShape& shape :
         {TensorShape({static_cast<int64_t>(xs.size())}), TensorShape({}), TensorShape({0})}) {
      std::vector<T> values(xs.begin(), xs.begin() + shape.num_elements());
      auto out = RunKernel(op, {{"T", kDTypeOf<T>}}, {Tensor::FromVector(values, shape)});
      ASSERT_TRUE(out.ok()) << out.status();
      const Tensor& y = (*out)[0];
      ASSERT_EQ(y.dtype(), DT_BOOL);
      ASSERT_EQ(y.shape(), shape);
      for (size_t i = 0; i < values.size(); ++i) {
        const std::string name = op;
        const bool expected = name == "IsNan"   ? std::isnan(values[i])
                              : name == "IsInf" ? std::isinf(values[i])
                                                : std::isfinite(values[i]);
        EXPECT_EQ(y.data<bool>()[i], expected) << op << "(" << values[i] << ")";
      }
    }
  }
}

TEST(UnaryOpTest, PredicatesFloat) { CheckPredicates<float>(); }
TEST(UnaryOpTest, PredicatesDouble) { CheckPredicates<double>(); }

// Sqrt is correctly rounded, as IEEE 754 requires: bit-identical to
// std::sqrt, on the vector path and its scalar tail.
template <typename T>
void CheckSqrtIsExact() {
  std::vector<T> xs;
  for (int i = 0; i < 20011; ++i) xs.push_back(static_cast<T>(std::exp(-30 + i * 0.003)));
  auto out = RunKernel("Sqrt", {{"T", kDTypeOf<T>}}, {Tensor::FromVector(xs)});
  ASSERT_TRUE(out.ok());
  for (size_t i = 0; i < xs.size(); ++i) {
    ASSERT_EQ((*out)[0].template data<T>()[i], std::sqrt(xs[i])) << "Sqrt(" << xs[i] << ")";
  }
}

TEST(UnaryOpTest, SqrtIsCorrectlyRoundedFloat) { CheckSqrtIsExact<float>(); }
TEST(UnaryOpTest, SqrtIsCorrectlyRoundedDouble) { CheckSqrtIsExact<double>(); }

TEST(UnaryOpTest, RunsInPlaceOnABufferItOwns) {
  std::vector<Tensor> inputs;
  inputs.push_back(Tensor::FromVector<float>({1, 4, 9}));
  const void* data = inputs[0].raw_data();
  auto out = RunKernel("Sqrt", {{"T", DT_FLOAT}}, std::move(inputs));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].raw_data(), data);
  EXPECT_EQ(ToDoubles((*out)[0]), (std::vector<double>{1, 2, 3}));
}

TEST(UnaryOpTest, IntegerKernelsExistOnlyWhereMeaningful) {
  EXPECT_TRUE(CreateTestKernel("Abs", {{"T", DT_INT32}}, 1).ok());
  for (const char* op : {"Exp", "Log", "Sqrt", "Sigmoid", "Round", "IsNan"}) {
    auto kernel = CreateTestKernel(op, {{"T", DT_FLOAT}}, 1);
    EXPECT_TRUE(kernel.ok()) << op;
  }
}

}  // namespace
}  // namespace weir
