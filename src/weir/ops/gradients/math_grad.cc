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

// Complex operands enter the products conjugated (TensorFlow's convention
// for the gradient of a real loss).
Output ConjIfComplex(const Scope& scope, const Output& x) {
  return IsComplexDType(x.dtype()) ? ops::Conj(scope, x) : x;
}

Status MulGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
               std::vector<Output>* grads) {
  Output x = ConjIfComplex(scope, ForwardInput(op, 0)),
         y = ConjIfComplex(scope, ForwardInput(op, 1));
  *grads = ReduceForBroadcast(scope, x, y, ops::Mul(scope, g[0], y), ops::Mul(scope, x, g[0]));
  return scope.status();
}

Status RealDivGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                   std::vector<Output>* grads) {
  Output x = ConjIfComplex(scope, ForwardInput(op, 0)),
         y = ConjIfComplex(scope, ForwardInput(op, 1));
  // d(x/y)/dy = -x / y^2.
  Output gy = ops::RealDiv(scope, ops::Neg(scope, ops::Mul(scope, g[0], x)), ops::Mul(scope, y, y));
  *grads = ReduceForBroadcast(scope, x, y, ops::RealDiv(scope, g[0], y), gy);
  return scope.status();
}

// x / y or 0 where y is 0: the same rule with DivNoNan, so no gradient
// flows where the output was pinned to 0.
Status DivNoNanGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                    std::vector<Output>* grads) {
  Output x = ForwardInput(op, 0), y = ForwardInput(op, 1);
  Output gy = ops::Mul(
      scope, g[0],
      AddOp(scope, "DivNoNan", {AddOp(scope, "DivNoNan", {ops::Neg(scope, x), y}).output(0), y})
          .output(0));
  *grads = ReduceForBroadcast(scope, x, y, AddOp(scope, "DivNoNan", {g[0], y}).output(0), gy);
  return scope.status();
}

Status FloorModGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                    std::vector<Output>* grads) {
  // x - floor(x / y) * y: floor is piecewise constant.
  Output x = ForwardInput(op, 0), y = ForwardInput(op, 1);
  Output gy = ops::Neg(scope, ops::Mul(scope, g[0], ops::FloorDiv(scope, x, y)));
  *grads = ReduceForBroadcast(scope, x, y, g[0], gy);
  return scope.status();
}

// Maximum and Minimum: the gradient goes to the selected operand; ties go
// to x, as in TensorFlow.
Status MaxMinGrad(bool maximum, const Scope& scope, const Operation& op,
                  const std::vector<Output>& g, std::vector<Output>* grads) {
  Output x = ForwardInput(op, 0), y = ForwardInput(op, 1);
  Output x_wins = maximum ? ops::GreaterEqual(scope, x, y) : ops::LessEqual(scope, x, y);
  // x_wins has the broadcast shape, as g does.
  Output zeros = ops::ZerosLike(scope, g[0]);
  *grads = ReduceForBroadcast(scope, x, y, ops::SelectV2(scope, x_wins, g[0], zeros),
                              ops::SelectV2(scope, x_wins, zeros, g[0]));
  return scope.status();
}

Status PowGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
               std::vector<Output>* grads) {
  Output x = ForwardInput(op, 0), y = ForwardInput(op, 1), z = op.output(0);
  // dz/dx = y x^(y-1); dz/dy = z log(x), taken as 0 where x <= 0 (where
  // the power is real only for integer y, and constant in y near it).
  Output gx = ops::Mul(scope, g[0], ops::Mul(scope, y, ops::Pow(scope, x, ops::Sub(scope, y, 1.0))));
  Output zeros = ops::ZerosLike(scope, x);
  Output log_x = ops::SelectV2(scope, ops::Greater(scope, x, zeros), ops::Log(scope, x), zeros);
  Output gy = ops::Mul(scope, ops::Mul(scope, g[0], z), log_x);
  *grads = ReduceForBroadcast(scope, x, y, gx, gy);
  return scope.status();
}

Status SquaredDifferenceGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                             std::vector<Output>* grads) {
  Output x = ForwardInput(op, 0), y = ForwardInput(op, 1);
  Output gx = ops::Mul(scope, ops::Mul(scope, g[0], 2.0), ops::Sub(scope, x, y));
  *grads = ReduceForBroadcast(scope, x, y, gx, ops::Neg(scope, gx));
  return scope.status();
}

Status SelectGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                  std::vector<Output>* grads) {
  // Select's condition picks elements or whole rows of t and e, which have
  // g's shape: the same Select routes g.
  Output condition = ForwardInput(op, 0);
  Output zeros = ops::ZerosLike(scope, g[0]);
  *grads = {Output(), ops::Select(scope, condition, g[0], zeros),
            ops::Select(scope, condition, zeros, g[0])};
  return scope.status();
}

Status SelectV2Grad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                    std::vector<Output>* grads) {
  // All three broadcast together, so each branch's gradient is summed back
  // from the output's shape (not only from the other branch's).
  Output condition = ForwardInput(op, 0);
  Output zeros = ops::ZerosLike(scope, g[0]);
  *grads = {Output(),
            SumToShapeOf(scope, ops::SelectV2(scope, condition, g[0], zeros), ForwardInput(op, 1)),
            SumToShapeOf(scope, ops::SelectV2(scope, condition, zeros, g[0]), ForwardInput(op, 2))};
  return scope.status();
}

Status AddNGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                std::vector<Output>* grads) {
  grads->assign(op.node()->num_inputs(), g[0]);
  return scope.status();
}

Status NegGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
               std::vector<Output>* grads) {
  *grads = {ops::Neg(scope, g[0])};
  return scope.status();
}

// Gradients of C = op(A)·op(B) given a builder `mm(l, r, tl, tr)` of
// op(l)·op(r); each case keeps the gradient in A's and B's layout.
template <typename Product>
std::vector<Output> ProductGrads(const Product& mm, const Output& a, const Output& b,
                                 const Output& dc, bool ta, bool tb) {
  if (!ta && !tb) return {mm(dc, b, false, true), mm(a, dc, true, false)};
  if (!ta && tb) return {mm(dc, b, false, false), mm(dc, a, true, false)};
  if (ta && !tb) return {mm(b, dc, false, true), mm(a, dc, false, false)};
  return {mm(b, dc, true, true), mm(dc, a, true, true)};
}

Status MatMulGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                  std::vector<Output>* grads) {
  bool ta = false, tb = false;
  WEIR_RETURN_IF_ERROR(GetAttr(op.node()->def().attrs, "transpose_a", &ta));
  WEIR_RETURN_IF_ERROR(GetAttr(op.node()->def().attrs, "transpose_b", &tb));
  auto mm = [&](const Output& l, const Output& r, bool tl, bool tr) {
    return ops::MatMul(scope, l, r, {{"transpose_a", tl}, {"transpose_b", tr}});
  };
  *grads = ProductGrads(mm, ForwardInput(op, 0), ForwardInput(op, 1), g[0], ta, tb);
  return scope.status();
}

Status BatchMatMulGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                       std::vector<Output>* grads) {
  bool adj_x = false, adj_y = false;
  WEIR_RETURN_IF_ERROR(GetAttr(op.node()->def().attrs, "adj_x", &adj_x));
  WEIR_RETURN_IF_ERROR(GetAttr(op.node()->def().attrs, "adj_y", &adj_y));
  if (IsComplexDType(op.output(0).dtype())) {
    return errors::Unimplemented("the gradient of a complex BatchMatMulV2");
  }
  auto mm = [&](const Output& l, const Output& r, bool tl, bool tr) {
    return ops::BatchMatMulV2(scope, l, r, {{"adj_x", tl}, {"adj_y", tr}});
  };
  Output x = ForwardInput(op, 0), y = ForwardInput(op, 1);
  std::vector<Output> full = ProductGrads(mm, x, y, g[0], adj_x, adj_y);
  // Batch dims broadcast: sum each gradient over the batch dims its
  // operand was stretched along.
  *grads = {SumToShapeOf(scope, full[0], x), SumToShapeOf(scope, full[1], y)};
  return scope.status();
}

// atan2(y, x): d/dy = x / (x^2 + y^2), d/dx = -y / (x^2 + y^2).
Status Atan2Grad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                 std::vector<Output>* grads) {
  Output y = ForwardInput(op, 0), x = ForwardInput(op, 1);
  Output scaled = ops::RealDiv(scope, g[0], ops::AddV2(scope, ops::Square(scope, x), ops::Square(scope, y)));
  *grads = ReduceForBroadcast(scope, y, x, ops::Mul(scope, scaled, x),
                              ops::Neg(scope, ops::Mul(scope, scaled, y)));
  return scope.status();
}

// polygamma(a, x): d/dx = polygamma(a + 1, x); none for the order a, as in
// TensorFlow.
Status PolygammaGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                     std::vector<Output>* grads) {
  Output a = ForwardInput(op, 0), x = ForwardInput(op, 1);
  Output gx = ops::Mul(scope, g[0], ops::Polygamma(scope, ops::AddV2(scope, a, 1.0), x));
  *grads = ReduceForBroadcast(scope, a, x, Output(), gx);
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
  registry->Register("DivNoNan", DivNoNanGrad);
  registry->Register("Div", RealDivGrad);  // differentiable only for floats, where it is RealDiv
  registry->Register("FloorMod", FloorModGrad);
  registry->Register("Maximum", [](const Scope& s, const Operation& op, const std::vector<Output>& g,
                                   std::vector<Output>* grads) { return MaxMinGrad(true, s, op, g, grads); });
  registry->Register("Minimum", [](const Scope& s, const Operation& op, const std::vector<Output>& g,
                                   std::vector<Output>* grads) { return MaxMinGrad(false, s, op, g, grads); });
  registry->Register("Pow", PowGrad);
  registry->Register("SquaredDifference", SquaredDifferenceGrad);
  registry->Register("Select", SelectGrad);
  registry->Register("SelectV2", SelectV2Grad);
  registry->Register("AddN", AddNGrad);
  registry->Register("BatchMatMulV2", BatchMatMulGrad);
  registry->Register("Neg", NegGrad);
  registry->Register("MatMul", MatMulGrad);
  // Made by the kernel fusion pass after gradients are built (graph/fuse_ops.h).
  registry->RegisterNoGradient("_MatMulAccumulate");
  registry->Register("Cast", CastGrad);
  registry->Register("Atan2", Atan2Grad);
  registry->Register("Polygamma", PolygammaGrad);
  // Integer-valued or boolean results: nothing to differentiate.
  for (const char* op : {"BroadcastGradientArgs", "FloorDiv", "Less", "LessEqual", "Greater",
                         "GreaterEqual", "Equal", "NotEqual", "LogicalAnd", "LogicalOr",
                         "LogicalNot", "IsNan", "IsInf", "IsFinite"}) {
    registry->RegisterNoGradient(op);
  }
}

}  // namespace weir
