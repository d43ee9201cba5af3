#include "weir/train/learning_rate.h"

#include <numbers>

#include "weir/ops/standard_ops.h"

namespace weir {
namespace {

// The step as a float scalar (schedules compute in float, as TensorFlow's).
Output StepAsFloat(const Scope& scope, const Output& global_step) {
  return global_step.dtype() == DT_FLOAT ? global_step : ops::Cast(scope, global_step, DT_FLOAT);
}

bool CheckDecaySteps(const Scope& scope, const char* schedule, int64_t decay_steps) {
  if (decay_steps > 0) return true;
  scope.UpdateStatus(
      errors::InvalidArgument(schedule, ": decay_steps must be positive, got ", decay_steps));
  return false;
}

// min(step, decay_steps) / decay_steps, in [0, 1].
Output DecayProgress(const Scope& scope, const Output& global_step, int64_t decay_steps) {
  const float steps = static_cast<float>(decay_steps);
  return ops::RealDiv(scope, ops::Minimum(scope, StepAsFloat(scope, global_step), steps), steps);
}

}  // namespace

StatusOr<Variable> CreateGlobalStep(const Scope& scope) {
  return Variable::Create(scope, "global_step", ops::Const(scope, int64_t{0}));
}

Output ExponentialDecay(const Scope& scope, float learning_rate, const Output& global_step,
                        int64_t decay_steps, float decay_rate, ExponentialDecayOptions options) {
  if (!CheckDecaySteps(scope, "ExponentialDecay", decay_steps)) return Output();
  Scope s = scope.NewSubScope("ExponentialDecay");
  Output exponent = ops::RealDiv(s, StepAsFloat(s, global_step), static_cast<float>(decay_steps));
  if (options.staircase) exponent = ops::Floor(s, exponent);
  return ops::Mul(s, learning_rate, ops::Pow(s, decay_rate, exponent));
}

Output PiecewiseConstant(const Scope& scope, const Output& global_step,
                         const std::vector<int64_t>& boundaries, const std::vector<float>& values) {
  if (values.size() != boundaries.size() + 1) {
    scope.UpdateStatus(errors::InvalidArgument("PiecewiseConstant: ", values.size(), " values for ",
                                               boundaries.size(),
                                               " boundaries; need one more value than boundaries"));
    return Output();
  }
  for (size_t i = 1; i < boundaries.size(); ++i) {
    if (boundaries[i] <= boundaries[i - 1]) {
      scope.UpdateStatus(errors::InvalidArgument("PiecewiseConstant: boundaries must increase"));
      return Output();
    }
  }
  Scope s = scope.NewSubScope("PiecewiseConstant");
  Output step = global_step.dtype() == DT_INT64 ? global_step : ops::Cast(s, global_step, DT_INT64);
  // From the last interval back: value i where step <= boundary i.
  Output rate = ops::Const(s, values.back());
  for (size_t i = boundaries.size(); i-- > 0;) {
    rate = ops::SelectV2(s, ops::LessEqual(s, step, boundaries[i]), values[i], rate);
  }
  return rate;
}

Output PolynomialDecay(const Scope& scope, float learning_rate, const Output& global_step,
                       int64_t decay_steps, float end_learning_rate, float power) {
  if (!CheckDecaySteps(scope, "PolynomialDecay", decay_steps)) return Output();
  Scope s = scope.NewSubScope("PolynomialDecay");
  Output remaining = ops::Sub(s, 1.0f, DecayProgress(s, global_step, decay_steps));
  return ops::Add(s, ops::Mul(s, learning_rate - end_learning_rate, ops::Pow(s, remaining, power)),
                  end_learning_rate);
}

Output CosineDecay(const Scope& scope, float learning_rate, const Output& global_step,
                   int64_t decay_steps, float alpha) {
  if (!CheckDecaySteps(scope, "CosineDecay", decay_steps)) return Output();
  Scope s = scope.NewSubScope("CosineDecay");
  Output cosine =
      ops::Mul(s, 0.5f,
               ops::Add(s, 1.0f,
                        ops::Cos(s, ops::Mul(s, std::numbers::pi_v<float>,
                                             DecayProgress(s, global_step, decay_steps)))));
  return ops::Mul(s, learning_rate, ops::Add(s, ops::Mul(s, 1.0f - alpha, cosine), alpha));
}

}  // namespace weir
