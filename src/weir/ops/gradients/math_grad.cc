// Gradients of the math family.
#include "weir/ops/gradients/gradient_registry.h"
#include "weir/ops/gradients/gradient_util.h"
#include "weir/ops/standard_ops.h"

namespace weir {
namespace {

Status AddGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
               std::vector<Output>* grads) {
  *grads = ReduceForBroadcast(scope, ForwardInput(op, 0), ForwardInput(op, 1), g[0], g[0]);
  return scope.status();
}

Status SubGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
               std::vector<Output>* grads) {
  *grads = ReduceForBroadcast(scope, ForwardInput(op, 0), ForwardInput(op, 1), g[0],
                              ops::Neg(scope, g[0]));
  return scope.status();
}

Status MulGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
               std::vector<Output>* grads) {
  Output x = ForwardInput(op, 0), y = ForwardInput(op, 1);
  *grads = ReduceForBroadcast(scope, x, y, ops::Mul(scope, g[0], y), ops::Mul(scope, x, g[0]));
  return scope.status();
}

Status RealDivGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                   std::vector<Output>* grads) {
  Output x = ForwardInput(op, 0), y = ForwardInput(op, 1);
  // d(x/y)/dy = -x / y^2.
  Output gy = ops::RealDiv(scope, ops::Neg(scope, ops::Mul(scope, g[0], x)), ops::Mul(scope, y, y));
  *grads = ReduceForBroadcast(scope, x, y, ops::RealDiv(scope, g[0], y), gy);
  return scope.status();
}

Status NegGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
               std::vector<Output>* grads) {
  *grads = {ops::Neg(scope, g[0])};
  return scope.status();
}

Status MatMulGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                  std::vector<Output>* grads) {
  bool ta = false, tb = false;
  WEIR_RETURN_IF_ERROR(GetAttr(op.node()->def().attrs, "transpose_a", &ta));
  WEIR_RETURN_IF_ERROR(GetAttr(op.node()->def().attrs, "transpose_b", &tb));
  Output a = ForwardInput(op, 0), b = ForwardInput(op, 1), dc = g[0];
  auto mm = [&](const Output& l, const Output& r, bool tl, bool tr) {
    return ops::MatMul(scope, l, r, {{"transpose_a", tl}, {"transpose_b", tr}});
  };
  // C = op(A)·op(B); each case keeps the gradient in A's and B's layout.
  if (!ta && !tb) *grads = {mm(dc, b, false, true), mm(a, dc, true, false)};
  if (!ta && tb) *grads = {mm(dc, b, false, false), mm(dc, a, true, false)};
  if (ta && !tb) *grads = {mm(b, dc, false, true), mm(a, dc, false, false)};
  if (ta && tb) *grads = {mm(b, dc, true, true), mm(dc, a, true, true)};
  return scope.status();
}

Status CastGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                std::vector<Output>* grads) {
  DType src = ForwardInput(op, 0).dtype(), dst = op.output(0).dtype();
  // Only a float-to-float cast passes a gradient; anything through an
  // integer is not differentiable.
  grads->assign(1, Output());
  if (IsFloatingDType(src) && IsFloatingDType(dst)) (*grads)[0] = ops::Cast(scope, g[0], src);
  return scope.status();
}

}  // namespace

void RegisterMathGradients(GradientRegistry* registry) {
  registry->Register("Add", AddGrad);
  registry->Register("AddV2", AddGrad);
  registry->Register("Sub", SubGrad);
  registry->Register("Mul", MulGrad);
  registry->Register("RealDiv", RealDivGrad);
  registry->Register("Neg", NegGrad);
  registry->Register("MatMul", MatMulGrad);
  registry->Register("Cast", CastGrad);
  registry->RegisterNoGradient("BroadcastGradientArgs");
}

}  // namespace weir
