// The standard optimizers, each one Optimizer (optimizer.h) with a fused
// kernel path (ResourceApply*, the default) and a composed path, and
// TensorFlow's defaults and slot names. Hyperparameters taking an Input
// accept a number or a scalar Output (a learning-rate schedule).
#pragma once

#include "weir/train/optimizer.h"

namespace weir {

// var -= lr * grad. No slots.
class GradientDescentOptimizer final : public Optimizer {
 public:
  explicit GradientDescentOptimizer(Input learning_rate, OptimizerOptions options = {});

 protected:
  StatusOr<Step> ComposedStep(const Scope& scope, const Output& grad,
                              const std::vector<Output>& slots, DType dtype) override;
  StatusOr<Operation> FusedDense(const Scope& scope, const Output& grad, const Variable& var,
                                 const std::vector<Variable>& slots) override;

 private:
  Input learning_rate_;
};

// accum = momentum * accum + grad; var -= lr * accum (Nesterov:
// var -= lr * (grad + momentum * accum)). Slot "<var>/Momentum".
class MomentumOptimizer final : public Optimizer {
 public:
  MomentumOptimizer(Input learning_rate, Input momentum, bool use_nesterov = false,
                    OptimizerOptions options = {});

 protected:
  int num_slots() const override { return 1; }
  StatusOr<Step> ComposedStep(const Scope& scope, const Output& grad,
                              const std::vector<Output>& slots, DType dtype) override;
  StatusOr<Operation> FusedDense(const Scope& scope, const Output& grad, const Variable& var,
                                 const std::vector<Variable>& slots) override;
  StatusOr<Operation> FusedSparse(const Scope& scope, const IndexedSlices& grad,
                                  const Variable& var, const std::vector<Variable>& slots) override;

 private:
  Input learning_rate_, momentum_;
  bool use_nesterov_;
};

// accum += grad^2; var -= lr * grad / sqrt(accum). Slot "<var>/Adagrad",
// starting at initial_accumulator_value (TensorFlow's 0.1: a zero start
// divides by zero where a gradient is zero).
class AdagradOptimizer final : public Optimizer {
 public:
  explicit AdagradOptimizer(Input learning_rate, double initial_accumulator_value = 0.1,
                            OptimizerOptions options = {});

 protected:
  int num_slots() const override { return 1; }
  double slot_initial_value() const override { return initial_accumulator_value_; }
  StatusOr<Step> ComposedStep(const Scope& scope, const Output& grad,
                              const std::vector<Output>& slots, DType dtype) override;
  StatusOr<Operation> FusedDense(const Scope& scope, const Output& grad, const Variable& var,
                                 const std::vector<Variable>& slots) override;
  StatusOr<Operation> FusedSparse(const Scope& scope, const IndexedSlices& grad,
                                  const Variable& var, const std::vector<Variable>& slots) override;

 private:
  Input learning_rate_;
  double initial_accumulator_value_;
};

struct RMSPropOptions {
  double decay = 0.9;  // rho
  double momentum = 0.0;
  double epsilon = 1e-10;
  bool centered = false;  // normalize by the variance, not the second moment
};

// ms = rho * ms + (1 - rho) * grad^2; mom = momentum * mom + lr * grad /
// sqrt(ms + epsilon) (centered: ms - mg^2 + epsilon, with mg the mean
// gradient); var -= mom. Slots "<var>/RMSProp" (ms), "_1" (mom), "_2" (mg).
class RMSPropOptimizer final : public Optimizer {
 public:
  explicit RMSPropOptimizer(Input learning_rate, RMSPropOptions rmsprop = {},
                            OptimizerOptions options = {});

 protected:
  int num_slots() const override { return rmsprop_.centered ? 3 : 2; }
  StatusOr<Step> ComposedStep(const Scope& scope, const Output& grad,
                              const std::vector<Output>& slots, DType dtype) override;
  StatusOr<Operation> FusedDense(const Scope& scope, const Output& grad, const Variable& var,
                                 const std::vector<Variable>& slots) override;
  StatusOr<Operation> FusedSparse(const Scope& scope, const IndexedSlices& grad,
                                  const Variable& var, const std::vector<Variable>& slots) override;

 private:
  Input learning_rate_;
  RMSPropOptions rmsprop_;
};

struct AdamOptions {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
  bool use_nesterov = false;  // NAdam's step
  bool amsgrad = false;       // step with the running maximum of v (not with Nesterov)
};

// Adam with bias correction through the beta powers (variables
// "Adam/beta1_power", "Adam/beta2_power", advanced after each update).
// Slots "<var>/Adam" (m), "_1" (v), "_2" (vhat, amsgrad). A sparse
// gradient updates lazily: only its rows' m, v and values change (rows
// without a gradient keep their moments), as TensorFlow's LazyAdam; there
// is no sparse kernel, so that is graph code on either path.
class AdamOptimizer final : public Optimizer {
 public:
  explicit AdamOptimizer(Input learning_rate = 0.001, AdamOptions adam = {},
                         OptimizerOptions options = {});

 protected:
  int num_slots() const override { return adam_.amsgrad ? 3 : 2; }
  Status Prepare(const Scope& scope, DType dtype) override;
  StatusOr<Operation> Finish(const Scope& scope, const std::vector<Operation>& updates) override;
  StatusOr<Step> ComposedStep(const Scope& scope, const Output& grad,
                              const std::vector<Output>& slots, DType dtype) override;
  StatusOr<Operation> FusedDense(const Scope& scope, const Output& grad, const Variable& var,
                                 const std::vector<Variable>& slots) override;

 private:
  Input learning_rate_;
  AdamOptions adam_;
  Variable beta1_power_, beta2_power_;
  Output beta1_power_value_, beta2_power_value_;  // read once per ApplyGradients
};

}  // namespace weir
