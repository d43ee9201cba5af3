// Gradients of the special functions (ops/special_ops.cc), TensorFlow's
// formulas: the x*log(y) family is 0 in x where x is 0; the incomplete gamma
// functions differentiate in a through IgammaGradA; Betainc and Zeta only
// in their last argument (none for a, b and the order x, as TensorFlow).
#include <cmath>
#include <numbers>

#include "weir/ops/gradients/gradient_registry.h"
#include "weir/ops/gradients/gradient_util.h"
#include "weir/ops/standard_ops.h"

namespace weir {
namespace {

using Grads = std::vector<Output>;

// 1 where x != 0, else 0, in x's dtype.
Output NonZero(const Scope& s, const Output& x) {
  return ops::Cast(s, ops::NotEqual(s, x, ops::ZerosLike(s, x)), x.dtype());
}

Status XlogyGrad(const Scope& s, const Operation& op, const Grads& g, Grads* grads) {
  Output x = ForwardInput(op, 0), y = ForwardInput(op, 1);
  *grads = ReduceForBroadcast(s, x, y, ops::Mul(s, g[0], ops::Xlogy(s, NonZero(s, x), y)),
                              ops::Mul(s, g[0], ops::Xdivy(s, x, y)));
  return s.status();
}

Status Xlog1pyGrad(const Scope& s, const Operation& op, const Grads& g, Grads* grads) {
  Output x = ForwardInput(op, 0), y = ForwardInput(op, 1);
  *grads = ReduceForBroadcast(
      s, x, y, ops::Mul(s, g[0], ops::Xlog1py(s, NonZero(s, x), y)),
      ops::Mul(s, g[0], ops::Xdivy(s, x, ops::AddV2(s, y, ops::OnesLike(s, y)))));
  return s.status();
}

Status XdivyGrad(const Scope& s, const Operation& op, const Grads& g, Grads* grads) {
  Output x = ForwardInput(op, 0), y = ForwardInput(op, 1);
  *grads = ReduceForBroadcast(s, x, y, ops::Mul(s, g[0], ops::Xdivy(s, NonZero(s, x), y)),
                              ops::Mul(s, g[0], ops::Xdivy(s, ops::Neg(s, x), ops::Square(s, y))));
  return s.status();
}

// d/dx P(a, x) = exp(-x + (a - 1) log x - lgamma(a)); d/da via IgammaGradA.
Grads IgammaPartials(const Scope& s, const Operation& op, const Output& g, bool upper) {
  Output a = ForwardInput(op, 0), x = ForwardInput(op, 1);
  Output log_density = ops::Sub(
      s, ops::Sub(s, ops::Xlogy(s, ops::Sub(s, a, ops::OnesLike(s, a)), x), x), ops::Lgamma(s, a));
  Output ga = ops::Mul(s, g, ops::IgammaGradA(s, a, x));
  Output gx = ops::Mul(s, g, ops::Exp(s, log_density));
  if (upper) {
    ga = ops::Neg(s, ga);
    gx = ops::Neg(s, gx);
  }
  return ReduceForBroadcast(s, a, x, ga, gx);
}

Status BetaincGrad(const Scope& s, const Operation& op, const Grads& g, Grads* grads) {
  Output a = ForwardInput(op, 0), b = ForwardInput(op, 1), x = ForwardInput(op, 2);
  // x^(a-1) (1-x)^(b-1) / B(a, b).
  Output log_beta = ops::Sub(s, ops::AddV2(s, ops::Lgamma(s, a), ops::Lgamma(s, b)),
                             ops::Lgamma(s, ops::AddV2(s, a, b)));
  Output one_b = ops::OnesLike(s, b), one_a = ops::OnesLike(s, a);
  Output log_density =
      ops::Sub(s,
               ops::AddV2(s, ops::Xlog1py(s, ops::Sub(s, b, one_b), ops::Neg(s, x)),
                          ops::Xlogy(s, ops::Sub(s, a, one_a), x)),
               log_beta);
  *grads = {Output(), Output(), SumToShapeOf(s, ops::Mul(s, g[0], ops::Exp(s, log_density)), x)};
  return s.status();
}

// d/dq zeta(x, q) = -x zeta(x + 1, q).
Status ZetaGrad(const Scope& s, const Operation& op, const Grads& g, Grads* grads) {
  Output x = ForwardInput(op, 0), q = ForwardInput(op, 1);
  Output gq = ops::Mul(
      s, g[0], ops::Neg(s, ops::Mul(s, x, ops::Zeta(s, ops::AddV2(s, x, ops::OnesLike(s, x)), q))));
  *grads = ReduceForBroadcast(s, x, q, Output(), gq);
  return s.status();
}

// d/dx i0e(x) = i1e(x) - sign(x) i0e(x).
Status BesselI0eGrad(const Scope& s, const Operation& op, const Grads& g, Grads* grads) {
  Output x = ForwardInput(op, 0), y = op.output(0);
  *grads = {ops::Mul(s, g[0], ops::Sub(s, ops::BesselI1e(s, x), ops::Mul(s, ops::Sign(s, x), y)))};
  return s.status();
}

// d/dx i1e(x) = i0e(x) - y (sign(x) + 1/x), 1/2 at 0.
Status BesselI1eGrad(const Scope& s, const Operation& op, const Grads& g, Grads* grads) {
  Output x = ForwardInput(op, 0), y = op.output(0);
  Output zero = ops::ZerosLike(s, x);
  Output is_zero = ops::Equal(s, x, zero);
  Output safe_x = ops::SelectV2(s, is_zero, ops::OnesLike(s, x), x);
  Output away =
      ops::Sub(s, ops::BesselI0e(s, x),
               ops::Mul(s, y, ops::AddV2(s, ops::Sign(s, x), ops::Reciprocal(s, safe_x))));
  Output half = ops::Mul(s, ops::OnesLike(s, x), 0.5);
  *grads = {ops::Mul(s, g[0], ops::SelectV2(s, is_zero, half, away))};
  return s.status();
}

// d/dx erfinv(x) = sqrt(pi)/2 exp(erfinv(x)^2).
Status ErfinvGrad(const Scope& s, const Operation& op, const Grads& g, Grads* grads) {
  Output y = op.output(0);
  *grads = {ops::Mul(s, ops::Mul(s, g[0], std::sqrt(std::numbers::pi) / 2),
                     ops::Exp(s, ops::Square(s, y)))};
  return s.status();
}

// d/dx ndtri(x) = sqrt(2 pi) exp(ndtri(x)^2 / 2).
Status NdtriGrad(const Scope& s, const Operation& op, const Grads& g, Grads* grads) {
  Output y = op.output(0);
  *grads = {ops::Mul(s, ops::Mul(s, g[0], std::sqrt(2 * std::numbers::pi)),
                     ops::Exp(s, ops::Mul(s, ops::Square(s, y), 0.5)))};
  return s.status();
}

}  // namespace

void RegisterSpecialGradients(GradientRegistry* registry) {
  registry->Register("Xlogy", XlogyGrad);
  registry->Register("Xlog1py", Xlog1pyGrad);
  registry->Register("Xdivy", XdivyGrad);
  registry->Register("Igamma",
                     [](const Scope& s, const Operation& op, const Grads& g, Grads* grads) {
                       *grads = IgammaPartials(s, op, g[0], false);
                       return s.status();
                     });
  registry->Register("Igammac",
                     [](const Scope& s, const Operation& op, const Grads& g, Grads* grads) {
                       *grads = IgammaPartials(s, op, g[0], true);
                       return s.status();
                     });
  registry->Register("Betainc", BetaincGrad);
  registry->Register("Zeta", ZetaGrad);
  registry->Register("BesselI0e", BesselI0eGrad);
  registry->Register("BesselI1e", BesselI1eGrad);
  registry->Register("Erfinv", ErfinvGrad);
  registry->Register("Ndtri", NdtriGrad);
  // TensorFlow defines none for these.
  registry->RegisterNoGradient("NextAfter");
  registry->RegisterNoGradient("IgammaGradA");
}

}  // namespace weir
