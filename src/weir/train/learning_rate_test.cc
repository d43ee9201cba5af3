// Learning-rate schedules against their formulas, evaluated at fed steps.
#include "weir/train/learning_rate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"

namespace weir {
namespace {

// The schedule built by `build` from an int64 step placeholder, at `step`.
float At(const std::function<Output(const Scope&, const Output&)>& build, int64_t step) {
  Scope root = Scope::NewRootScope();
  Output global_step = ops::Placeholder(root.WithOpName("step"), DT_INT64);
  Output rate = build(root, global_step);
  EXPECT_TRUE(root.ok()) << root.status();
  auto session = Session::New(SessionOptions());
  EXPECT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  std::vector<Tensor> out;
  Status s =
      (*session)->Run({{"step", Tensor::FromVector<int64_t>({step}, {})}}, {rate.name()}, {}, &out);
  EXPECT_TRUE(s.ok()) << s;
  return s.ok() ? out[0].scalar<float>() : NAN;
}

TEST(LearningRateTest, ExponentialDecaySmoothAndStaircase) {
  for (int64_t step : {0, 1, 150, 1000, 2500}) {
    EXPECT_NEAR(
        At([](const Scope& s, const Output& t) { return ExponentialDecay(s, 0.1f, t, 1000, 0.5f); },
           step),
        0.1 * std::pow(0.5, step / 1000.0), 1e-6);
    EXPECT_NEAR(At(
                    [](const Scope& s, const Output& t) {
                      return ExponentialDecay(s, 0.1f, t, 1000, 0.5f, {.staircase = true});
                    },
                    step),
                0.1 * std::pow(0.5, std::floor(step / 1000.0)), 1e-6);
  }
}

TEST(LearningRateTest, PiecewiseConstantBoundariesBelongToTheEarlierInterval) {
  auto schedule = [](const Scope& s, const Output& t) {
    return PiecewiseConstant(s, t, {100, 200}, {1.0f, 0.5f, 0.1f});
  };
  EXPECT_FLOAT_EQ(At(schedule, 0), 1.0f);
  EXPECT_FLOAT_EQ(At(schedule, 100), 1.0f);
  EXPECT_FLOAT_EQ(At(schedule, 101), 0.5f);
  EXPECT_FLOAT_EQ(At(schedule, 200), 0.5f);
  EXPECT_FLOAT_EQ(At(schedule, 201), 0.1f);
}

TEST(LearningRateTest, PolynomialAndCosineDecayHoldAfterDecaySteps) {
  for (int64_t step : {0, 25, 50, 100, 400}) {
    const double progress = std::min<double>(step, 100) / 100;
    EXPECT_NEAR(At([](const Scope& s,
                      const Output& t) { return PolynomialDecay(s, 0.1f, t, 100, 0.01f, 2.0f); },
                   step),
                (0.1 - 0.01) * std::pow(1 - progress, 2.0) + 0.01, 1e-6);
    EXPECT_NEAR(
        At([](const Scope& s, const Output& t) { return CosineDecay(s, 0.1f, t, 100, 0.1f); },
           step),
        0.1 * (0.9 * 0.5 * (1 + std::cos(std::numbers::pi * progress)) + 0.1), 1e-6);
  }
}

TEST(LearningRateTest, BadArgumentsAreErrorsInTheScope) {
  Scope root = Scope::NewRootScope();
  Output step = ops::Placeholder(root.WithOpName("step"), DT_INT64);
  PiecewiseConstant(root, step, {10, 5}, {1.f, 2.f, 3.f});
  EXPECT_EQ(root.status().code(), Code::kInvalidArgument);
  Scope other = Scope::NewRootScope();
  ExponentialDecay(other, 0.1f, ops::Placeholder(other, DT_INT64), 0, 0.5f);
  EXPECT_EQ(other.status().code(), Code::kInvalidArgument);
}

TEST(LearningRateTest, GlobalStepIsAnInt64ScalarStartingAtZero) {
  Scope root = Scope::NewRootScope();
  StatusOr<Variable> step = CreateGlobalStep(root);
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(step->name, "global_step");
  EXPECT_EQ(step->dtype, DT_INT64);
  auto session = Session::New(SessionOptions());
  ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE((*session)->Run({}, {}, {step->initializer.name()}, &out).ok());
  ASSERT_TRUE((*session)->Run({}, {step->value.name()}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<int64_t>(), 0);
}

}  // namespace
}  // namespace weir
