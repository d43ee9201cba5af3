// Learning-rate schedules as graph code: each returns a float scalar
// Output computed from the global step in every run, to pass as an
// optimizer's learning rate. Formulas follow TensorFlow's
// tf.compat.v1.train schedules of the same names.
//
//   Variable step = *CreateGlobalStep(root);
//   Output lr = ExponentialDecay(root, 0.1f, step.value, 1000, 0.96f, {.staircase = true});
//   GradientDescentOptimizer sgd(lr);
//   sgd.Minimize(root, loss, vars, &step);   // increments step
#pragma once

#include <cstdint>
#include <vector>

#include "weir/graph/scope.h"
#include "weir/train/variables.h"

namespace weir {

// An int64 scalar variable "global_step", initialized to 0. ApplyGradients
// adds 1 to it after each update when it is given.
StatusOr<Variable> CreateGlobalStep(const Scope& scope);

struct ExponentialDecayOptions {
  bool staircase = false;  // decay in whole steps of decay_steps
};
// lr * decay_rate ^ (step / decay_steps); the exponent floored if staircase.
// REQUIRES: decay_steps > 0 (else the scope records InvalidArgument).
Output ExponentialDecay(const Scope& scope, float learning_rate, const Output& global_step,
                        int64_t decay_steps, float decay_rate,
                        ExponentialDecayOptions options = {});

// values[0] while step <= boundaries[0], values[i] while
// boundaries[i-1] < step <= boundaries[i], values.back() after the last.
// REQUIRES: values.size() == boundaries.size() + 1, boundaries increasing.
Output PiecewiseConstant(const Scope& scope, const Output& global_step,
                         const std::vector<int64_t>& boundaries, const std::vector<float>& values);

// (lr - end_lr) * (1 - min(step, decay_steps) / decay_steps) ^ power + end_lr.
Output PolynomialDecay(const Scope& scope, float learning_rate, const Output& global_step,
                       int64_t decay_steps, float end_learning_rate = 0.0001f, float power = 1.0f);

// lr * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) / decay_steps)) + alpha).
Output CosineDecay(const Scope& scope, float learning_rate, const Output& global_step,
                   int64_t decay_steps, float alpha = 0.0f);

}  // namespace weir
