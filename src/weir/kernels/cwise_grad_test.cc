// Gradient kernels of the activations against central finite differences
// of the forward functions, computed here in double:
//   f'(x) ~ (f(x + h) - f(x - h)) / 2h,  h = 1e-6 * max(0.01, |x|).
// The difference's own error is ~1e-10 relative, so double kernels are
// held to 1e-7 relative (plus 1e-9 absolute where the derivative
// vanishes); float kernels to 1e-5 relative plus 5e-7 absolute: they are fed
// the forward output rounded to float, whose error (up to 6e-8) times the
// upstream gradient dominates where y is near 1 (Sigmoid, Tanh far out).
// Points sit away from the kinks of Relu, Relu6, Elu and Selu.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "weir/kernels/cwise_test_util.h"
#include "weir/kernels/kernel_test_util.h"

namespace weir {
namespace {

constexpr double kSeluScale = 1.0507009873554804934193349852946;
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;

// How a gradient op is called: (gradients, features) with the forward
// op's input, (gradients, outputs) or (y, dy) with its output.
enum class Form { kGradientsFeatures, kGradientsOutputs, kYDy };

struct GradSpec {
  const char* op;
  Form form;
  std::function<double(double)> forward;
  std::vector<double> points;  // where the forward function is smooth
};

double Sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

const std::vector<GradSpec>& GradOps() {
  const std::vector<double> real = {-30, -7.5, -3, -1.25, -0.5, -0.01, 0.01, 0.3, 1, 2.5, 5.5,
                                    6.5, 9, 30};
  const std::vector<double> positive = {1e-3, 0.01, 0.3, 1, 2.5, 9, 100, 1e4};
  const std::vector<double> nonzero = {-50, -3, -0.7, -0.01, 0.02, 0.5, 1, 4, 1e3};
  static const std::vector<GradSpec> ops = {
      {"ReluGrad", Form::kGradientsFeatures, [](double x) { return std::max(x, 0.0); }, real},
      {"Relu6Grad", Form::kGradientsFeatures,
       [](double x) { return std::min(std::max(x, 0.0), 6.0); }, real},
      {"SoftplusGrad", Form::kGradientsFeatures, [](double x) { return std::log1p(std::exp(x)); },
       real},
      {"EluGrad", Form::kGradientsOutputs, [](double x) { return x < 0 ? std::expm1(x) : x; },
       real},
      {"SeluGrad", Form::kGradientsOutputs,
       [](double x) { return kSeluScale * (x < 0 ? kSeluAlpha * std::expm1(x) : x); }, real},
      {"SigmoidGrad", Form::kYDy, Sigmoid, real},
      {"TanhGrad", Form::kYDy, [](double x) { return std::tanh(x); }, real},
      {"RsqrtGrad", Form::kYDy, [](double x) { return 1 / std::sqrt(x); }, positive},
      {"SqrtGrad", Form::kYDy, [](double x) { return std::sqrt(x); }, positive},
      {"ReciprocalGrad", Form::kYDy, [](double x) { return 1 / x; }, nonzero},
  };
  return ops;
}

double CentralDifference(const std::function<double(double)>& f, double x) {
  const double h = 1e-6 * std::max(1e-2, std::abs(x));
  return (f(x + h) - f(x - h)) / (2 * h);
}

template <typename T>
void CheckGradients() {
  const double rtol = std::is_same_v<T, float> ? 1e-5 : 1e-7;
  const double atol = std::is_same_v<T, float> ? 5e-7 : 1e-9;
  for (const GradSpec& spec : GradOps()) {
    // Each point with a few upstream gradients, including 0 and negative.
    std::vector<T> first, second;
    std::vector<double> expected;
    for (double x : spec.points) {
      for (double upstream : {1.0, -2.5, 0.0, 0.375}) {
        const T y = static_cast<T>(spec.forward(x));
        switch (spec.form) {
          case Form::kGradientsFeatures:
            first.push_back(static_cast<T>(upstream));
            second.push_back(static_cast<T>(x));
            break;
          case Form::kGradientsOutputs:
            first.push_back(static_cast<T>(upstream));
            second.push_back(y);
            break;
          case Form::kYDy:
            first.push_back(y);
            second.push_back(static_cast<T>(upstream));
            break;
        }
        expected.push_back(upstream * CentralDifference(spec.forward, x));
      }
    }
    // Repeated past the thread pool's threshold, then checked in full.
    const size_t base = first.size();
    while (first.size() < 70000) {
      first.push_back(first[first.size() % base]);
      second.push_back(second[second.size() % base]);
      expected.push_back(expected[expected.size() % base]);
    }
    auto out = RunKernel(spec.op, {{"T", kDTypeOf<T>}},
                         {Tensor::FromVector(first), Tensor::FromVector(second)});
    ASSERT_TRUE(out.ok()) << spec.op << ": " << out.status();
    ASSERT_EQ((*out)[0].shape(), TensorShape({static_cast<int64_t>(first.size())}));
    std::vector<double> actual = ToDoubles((*out)[0]);
    for (size_t i = 0; i < expected.size(); ++i) {
      ASSERT_TRUE(IsClose(actual[i], expected[i], rtol, atol))
          << spec.op << "<" << kDTypeOf<T> << "> at x = " << spec.points[(i % base) / 4]
          << ": " << actual[i] << " vs. finite difference " << expected[i];
    }
  }
}

TEST(GradOpTest, MatchFiniteDifferencesFloat) { CheckGradients<float>(); }
TEST(GradOpTest, MatchFiniteDifferencesDouble) { CheckGradients<double>(); }

TEST(GradOpTest, ShapesMustMatch) {
  for (const GradSpec& spec : GradOps()) {
    auto out = RunKernel(spec.op, {{"T", DT_FLOAT}},
                         {Tensor(DT_FLOAT, TensorShape({2, 3})), Tensor(DT_FLOAT, TensorShape({3}))});
    ASSERT_FALSE(out.ok()) << spec.op;
    EXPECT_TRUE(errors::IsInvalidArgument(out.status()));
    EXPECT_EQ(out.status().message(),
              StrCat(spec.op, ": inputs must have the same shape, not [2,3] and [3] (dtype "
                              "float)"));
    // Not even a scalar broadcasts.
    out = RunKernel(spec.op, {{"T", DT_DOUBLE}},
                    {Tensor::Scalar<double>(1), Tensor(DT_DOUBLE, TensorShape({2}))});
    EXPECT_FALSE(out.ok()) << spec.op;
  }
}

TEST(GradOpTest, EmptyAndScalarInputs) {
  for (const GradSpec& spec : GradOps()) {
    auto empty = RunKernel(spec.op, {{"T", DT_FLOAT}},
                           {Tensor(DT_FLOAT, TensorShape({0, 4})),
                            Tensor(DT_FLOAT, TensorShape({0, 4}))});
    ASSERT_TRUE(empty.ok()) << spec.op << ": " << empty.status();
    EXPECT_EQ((*empty)[0].shape(), TensorShape({0, 4}));
    auto scalar = RunKernel(spec.op, {{"T", DT_DOUBLE}},
                            {Tensor::Scalar<double>(0.5), Tensor::Scalar<double>(0.5)});
    ASSERT_TRUE(scalar.ok()) << spec.op << ": " << scalar.status();
    EXPECT_EQ((*scalar)[0].shape(), TensorShape());
  }
}

TEST(GradOpTest, NanPropagatesThroughTheUpstreamGradient) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto relu = RunKernel("ReluGrad", {{"T", DT_FLOAT}},
                        {Tensor::FromVector<float>({nan, nan, 1}),
                         Tensor::FromVector<float>({1, -1, nan})});
  ASSERT_TRUE(relu.ok());
  std::vector<double> r = ToDoubles((*relu)[0]);
  EXPECT_TRUE(std::isnan(r[0]));
  EXPECT_EQ(r[1], 0);  // a zero derivative stops it, as in TensorFlow
  EXPECT_EQ(r[2], 0);  // NaN features are not > 0
  auto sigmoid = RunKernel("SigmoidGrad", {{"T", DT_FLOAT}},
                           {Tensor::FromVector<float>({0.5f}), Tensor::FromVector<float>({nan})});
  ASSERT_TRUE(sigmoid.ok());
  EXPECT_TRUE(std::isnan(ToDoubles((*sigmoid)[0])[0]));
}

}  // namespace
}  // namespace weir
