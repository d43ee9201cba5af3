#include "weir/train/optimizers.h"

#include "weir/ops/standard_ops.h"

namespace weir {

// --- GradientDescent

GradientDescentOptimizer::GradientDescentOptimizer(Input learning_rate, OptimizerOptions options)
    : Optimizer("GradientDescent", options), learning_rate_(std::move(learning_rate)) {}

StatusOr<Optimizer::Step> GradientDescentOptimizer::ComposedStep(const Scope& scope,
                                                                 const Output& grad,
                                                                 const std::vector<Output>&,
                                                                 DType dtype) {
  return Step{{}, ops::Mul(scope, grad, Hyper(scope, learning_rate_, dtype))};
}

StatusOr<Operation> GradientDescentOptimizer::FusedDense(const Scope& scope, const Output& grad,
                                                         const Variable& var,
                                                         const std::vector<Variable>&) {
  return ops::ResourceApplyGradientDescent(
      scope, var.handle, Hyper(scope, learning_rate_, var.dtype), grad, FusedAttrs());
}

// --- Momentum

MomentumOptimizer::MomentumOptimizer(Input learning_rate, Input momentum, bool use_nesterov,
                                     OptimizerOptions options)
    : Optimizer("Momentum", options),
      learning_rate_(std::move(learning_rate)),
      momentum_(std::move(momentum)),
      use_nesterov_(use_nesterov) {}

StatusOr<Optimizer::Step> MomentumOptimizer::ComposedStep(const Scope& scope, const Output& grad,
                                                          const std::vector<Output>& slots,
                                                          DType dtype) {
  Output lr = Hyper(scope, learning_rate_, dtype);
  Output momentum = Hyper(scope, momentum_, dtype);
  Output accum = ops::AddV2(scope, ops::Mul(scope, slots[0], momentum), grad);
  Output delta = use_nesterov_ ? ops::AddV2(scope, ops::Mul(scope, grad, lr),
                                            ops::Mul(scope, accum, ops::Mul(scope, momentum, lr)))
                               : ops::Mul(scope, accum, lr);
  return Step{{accum}, delta};
}

StatusOr<Operation> MomentumOptimizer::FusedDense(const Scope& scope, const Output& grad,
                                                  const Variable& var,
                                                  const std::vector<Variable>& slots) {
  return ops::ResourceApplyMomentum(
      scope, var.handle, slots[0].handle, Hyper(scope, learning_rate_, var.dtype), grad,
      Hyper(scope, momentum_, var.dtype), FusedAttrs({{"use_nesterov", AttrValue(use_nesterov_)}}));
}

StatusOr<Operation> MomentumOptimizer::FusedSparse(const Scope& scope, const IndexedSlices& grad,
                                                   const Variable& var,
                                                   const std::vector<Variable>& slots) {
  return ops::ResourceSparseApplyMomentum(scope, var.handle, slots[0].handle,
                                          Hyper(scope, learning_rate_, var.dtype), grad.values,
                                          grad.indices, Hyper(scope, momentum_, var.dtype),
                                          FusedAttrs({{"use_nesterov", AttrValue(use_nesterov_)}}));
}

// --- Adagrad

AdagradOptimizer::AdagradOptimizer(Input learning_rate, double initial_accumulator_value,
                                   OptimizerOptions options)
    : Optimizer("Adagrad", options),
      learning_rate_(std::move(learning_rate)),
      initial_accumulator_value_(initial_accumulator_value) {}

StatusOr<Optimizer::Step> AdagradOptimizer::ComposedStep(const Scope& scope, const Output& grad,
                                                         const std::vector<Output>& slots,
                                                         DType dtype) {
  Output accum = ops::AddV2(scope, slots[0], ops::Square(scope, grad));
  Output delta = ops::Mul(scope, ops::Mul(scope, grad, Hyper(scope, learning_rate_, dtype)),
                          ops::Rsqrt(scope, accum));
  return Step{{accum}, delta};
}

StatusOr<Operation> AdagradOptimizer::FusedDense(const Scope& scope, const Output& grad,
                                                 const Variable& var,
                                                 const std::vector<Variable>& slots) {
  return ops::ResourceApplyAdagrad(scope, var.handle, slots[0].handle,
                                   Hyper(scope, learning_rate_, var.dtype), grad, FusedAttrs());
}

StatusOr<Operation> AdagradOptimizer::FusedSparse(const Scope& scope, const IndexedSlices& grad,
                                                  const Variable& var,
                                                  const std::vector<Variable>& slots) {
  return ops::ResourceSparseApplyAdagrad(scope, var.handle, slots[0].handle,
                                         Hyper(scope, learning_rate_, var.dtype), grad.values,
                                         grad.indices, FusedAttrs());
}

// --- RMSProp: slots are [ms, mom] or [ms, mom, mg]; the centered op takes
// them as (mg, ms, mom).

RMSPropOptimizer::RMSPropOptimizer(Input learning_rate, RMSPropOptions rmsprop,
                                   OptimizerOptions options)
    : Optimizer("RMSProp", options), learning_rate_(std::move(learning_rate)), rmsprop_(rmsprop) {}

StatusOr<Optimizer::Step> RMSPropOptimizer::ComposedStep(const Scope& scope, const Output& grad,
                                                         const std::vector<Output>& slots,
                                                         DType dtype) {
  Output one_minus_rho = Hyper(scope, 1.0 - rmsprop_.decay, dtype);
  Output ms = ops::AddV2(
      scope, slots[0],
      ops::Mul(scope, ops::Sub(scope, ops::Square(scope, grad), slots[0]), one_minus_rho));
  Output denominator = ops::AddV2(scope, ms, Hyper(scope, rmsprop_.epsilon, dtype));
  std::vector<Output> next = {ms, Output()};
  if (rmsprop_.centered) {
    Output mg = ops::AddV2(scope, slots[2],
                           ops::Mul(scope, ops::Sub(scope, grad, slots[2]), one_minus_rho));
    denominator = ops::AddV2(scope, ops::Sub(scope, ms, ops::Square(scope, mg)),
                             Hyper(scope, rmsprop_.epsilon, dtype));
    next.push_back(mg);
  }
  Output mom =
      ops::AddV2(scope, ops::Mul(scope, slots[1], Hyper(scope, rmsprop_.momentum, dtype)),
                 ops::Mul(scope, ops::Mul(scope, grad, Hyper(scope, learning_rate_, dtype)),
                          ops::Rsqrt(scope, denominator)));
  next[1] = mom;
  return Step{next, mom};
}

StatusOr<Operation> RMSPropOptimizer::FusedDense(const Scope& scope, const Output& grad,
                                                 const Variable& var,
                                                 const std::vector<Variable>& slots) {
  const DType dtype = var.dtype;
  Output lr = Hyper(scope, learning_rate_, dtype), rho = Hyper(scope, rmsprop_.decay, dtype),
         momentum = Hyper(scope, rmsprop_.momentum, dtype),
         epsilon = Hyper(scope, rmsprop_.epsilon, dtype);
  if (rmsprop_.centered) {
    return ops::ResourceApplyCenteredRMSProp(scope, var.handle, slots[2].handle, slots[0].handle,
                                             slots[1].handle, lr, rho, momentum, epsilon, grad,
                                             FusedAttrs());
  }
  return ops::ResourceApplyRMSProp(scope, var.handle, slots[0].handle, slots[1].handle, lr, rho,
                                   momentum, epsilon, grad, FusedAttrs());
}

StatusOr<Operation> RMSPropOptimizer::FusedSparse(const Scope& scope, const IndexedSlices& grad,
                                                  const Variable& var,
                                                  const std::vector<Variable>& slots) {
  const DType dtype = var.dtype;
  Output lr = Hyper(scope, learning_rate_, dtype), rho = Hyper(scope, rmsprop_.decay, dtype),
         momentum = Hyper(scope, rmsprop_.momentum, dtype),
         epsilon = Hyper(scope, rmsprop_.epsilon, dtype);
  if (rmsprop_.centered) {
    return ops::ResourceSparseApplyCenteredRMSProp(
        scope, var.handle, slots[2].handle, slots[0].handle, slots[1].handle, lr, rho, momentum,
        epsilon, grad.values, grad.indices, FusedAttrs());
  }
  return ops::ResourceSparseApplyRMSProp(scope, var.handle, slots[0].handle, slots[1].handle, lr,
                                         rho, momentum, epsilon, grad.values, grad.indices,
                                         FusedAttrs());
}

// --- Adam

AdamOptimizer::AdamOptimizer(Input learning_rate, AdamOptions adam, OptimizerOptions options)
    : Optimizer("Adam", options), learning_rate_(std::move(learning_rate)), adam_(adam) {}

Status AdamOptimizer::Prepare(const Scope& scope, DType dtype) {
  if (adam_.amsgrad && adam_.use_nesterov) {
    // TensorFlow's AMSGrad kernel has no Nesterov form either.
    return errors::InvalidArgument("AdamOptimizer: use_nesterov and amsgrad cannot be combined");
  }
  if (!beta1_power_.handle.valid()) {
    WEIR_ASSIGN_OR_RETURN(beta1_power_,
                          CreateNonSlot(scope, "beta1_power", Hyper(scope, adam_.beta1, dtype)));
    WEIR_ASSIGN_OR_RETURN(beta2_power_,
                          CreateNonSlot(scope, "beta2_power", Hyper(scope, adam_.beta2, dtype)));
  }
  beta1_power_value_ = ops::ReadVariableOp(scope, beta1_power_.handle, beta1_power_.dtype);
  beta2_power_value_ = ops::ReadVariableOp(scope, beta2_power_.handle, beta2_power_.dtype);
  return scope.status();
}

StatusOr<Operation> AdamOptimizer::Finish(const Scope& scope,
                                          const std::vector<Operation>& updates) {
  Scope after = scope.WithControlDependencies(updates);
  const DType dtype = beta1_power_.dtype;
  Operation advance1 =
      ops::AssignVariableOp(after, beta1_power_.handle,
                            ops::Mul(after, beta1_power_value_, Hyper(after, adam_.beta1, dtype)));
  Operation advance2 =
      ops::AssignVariableOp(after, beta2_power_.handle,
                            ops::Mul(after, beta2_power_value_, Hyper(after, adam_.beta2, dtype)));
  return ops::NoOp(scope.WithOpName("updates").WithControlDependencies({advance1, advance2}));
}

StatusOr<Optimizer::Step> AdamOptimizer::ComposedStep(const Scope& scope, const Output& grad,
                                                      const std::vector<Output>& slots,
                                                      DType dtype) {
  auto hyper = [&](double v) { return Hyper(scope, v, dtype); };
  Output one = hyper(1.0);
  Output beta1_power = Hyper(scope, beta1_power_value_, dtype);
  Output beta2_power = Hyper(scope, beta2_power_value_, dtype);
  // alpha = lr * sqrt(1 - beta2^t) / (1 - beta1^t)
  Output alpha = ops::RealDiv(scope,
                              ops::Mul(scope, Hyper(scope, learning_rate_, dtype),
                                       ops::Sqrt(scope, ops::Sub(scope, one, beta2_power))),
                              ops::Sub(scope, one, beta1_power));
  Output m = ops::AddV2(scope, slots[0],
                        ops::Mul(scope, ops::Sub(scope, grad, slots[0]), hyper(1.0 - adam_.beta1)));
  Output v = ops::AddV2(scope, slots[1],
                        ops::Mul(scope, ops::Sub(scope, ops::Square(scope, grad), slots[1]),
                                 hyper(1.0 - adam_.beta2)));
  std::vector<Output> next = {m, v};
  Output second = v;
  if (adam_.amsgrad) {
    second = ops::Maximum(scope, slots[2], v);
    next.push_back(second);
  }
  Output first = adam_.use_nesterov && !adam_.amsgrad
                     ? ops::AddV2(scope, ops::Mul(scope, grad, hyper(1.0 - adam_.beta1)),
                                  ops::Mul(scope, m, hyper(adam_.beta1)))
                     : m;
  Output delta = ops::RealDiv(scope, ops::Mul(scope, first, alpha),
                              ops::AddV2(scope, ops::Sqrt(scope, second), hyper(adam_.epsilon)));
  return Step{next, delta};
}

StatusOr<Operation> AdamOptimizer::FusedDense(const Scope& scope, const Output& grad,
                                              const Variable& var,
                                              const std::vector<Variable>& slots) {
  const DType dtype = var.dtype;
  Output beta1_power = Hyper(scope, beta1_power_value_, dtype);
  Output beta2_power = Hyper(scope, beta2_power_value_, dtype);
  Output lr = Hyper(scope, learning_rate_, dtype), beta1 = Hyper(scope, adam_.beta1, dtype),
         beta2 = Hyper(scope, adam_.beta2, dtype), epsilon = Hyper(scope, adam_.epsilon, dtype);
  if (adam_.amsgrad) {
    return ops::ResourceApplyAdamWithAmsgrad(scope, var.handle, slots[0].handle, slots[1].handle,
                                             slots[2].handle, beta1_power, beta2_power, lr, beta1,
                                             beta2, epsilon, grad, FusedAttrs());
  }
  return ops::ResourceApplyAdam(scope, var.handle, slots[0].handle, slots[1].handle, beta1_power,
                                beta2_power, lr, beta1, beta2, epsilon, grad,
                                FusedAttrs({{"use_nesterov", AttrValue(adam_.use_nesterov)}}));
}

}  // namespace weir
