// Gradients of the elementwise math functions, as one table: for y = f(x)
// and the gradient g of y, the gradient of x. Where the math family has a
// fused backward op (TanhGrad, SigmoidGrad, SqrtGrad, RsqrtGrad,
// ReciprocalGrad) the rule uses it, as TensorFlow does, and those ops have
// gradients of their own below, so second derivatives pass through.
#include <cmath>
#include <numbers>

#include "weir/ops/gradients/gradient_registry.h"
#include "weir/ops/gradients/gradient_util.h"
#include "weir/ops/standard_ops.h"

namespace weir {
namespace {

// d f(x) given x, y = f(x) and the gradient g of y.
using UnaryRule =
    Output (*)(const Scope& scope, const Output& x, const Output& y, const Output& g);

struct UnaryGradient {
  const char* op;
  UnaryRule rule;
};

const UnaryGradient kUnaryGradients[] = {
    {"Abs", [](const Scope& s, const Output& x, const Output&, const Output& g) {
       return ops::Mul(s, g, ops::Sign(s, x));
     }},
    {"Exp", [](const Scope& s, const Output&, const Output& y, const Output& g) {
       return ops::Mul(s, g, y);
     }},
    {"Expm1", [](const Scope& s, const Output& x, const Output&, const Output& g) {
       return ops::Mul(s, g, ops::Exp(s, x));
     }},
    {"Log", [](const Scope& s, const Output& x, const Output&, const Output& g) {
       return ops::RealDiv(s, g, x);
     }},
    {"Log1p", [](const Scope& s, const Output& x, const Output&, const Output& g) {
       return ops::RealDiv(s, g, ops::AddV2(s, x, 1.0));
     }},
    {"Sqrt", [](const Scope& s, const Output&, const Output& y, const Output& g) {
       return ops::SqrtGrad(s, y, g);
     }},
    {"Rsqrt", [](const Scope& s, const Output&, const Output& y, const Output& g) {
       return ops::RsqrtGrad(s, y, g);
     }},
    {"Square", [](const Scope& s, const Output& x, const Output&, const Output& g) {
       return ops::Mul(s, g, ops::Mul(s, x, 2.0));
     }},
    {"Reciprocal", [](const Scope& s, const Output&, const Output& y, const Output& g) {
       return ops::ReciprocalGrad(s, y, g);
     }},
    {"Sin", [](const Scope& s, const Output& x, const Output&, const Output& g) {
       return ops::Mul(s, g, ops::Cos(s, x));
     }},
    {"Cos", [](const Scope& s, const Output& x, const Output&, const Output& g) {
       return ops::Neg(s, ops::Mul(s, g, ops::Sin(s, x)));
     }},
    {"Tanh", [](const Scope& s, const Output&, const Output& y, const Output& g) {
       return ops::TanhGrad(s, y, g);
     }},
    {"Sigmoid", [](const Scope& s, const Output&, const Output& y, const Output& g) {
       return ops::SigmoidGrad(s, y, g);
     }},
    {"Erf", [](const Scope& s, const Output& x, const Output&, const Output& g) {
       // 2 / sqrt(pi) * exp(-x^2).
       Output density = ops::Exp(s, ops::Neg(s, ops::Square(s, x)));
       return ops::Mul(s, g, ops::Mul(s, density, 2.0 / std::sqrt(std::numbers::pi)));
     }},
    {"Erfc", [](const Scope& s, const Output& x, const Output&, const Output& g) {
       // -2 / sqrt(pi) * exp(-x^2).
       Output density = ops::Exp(s, ops::Neg(s, ops::Square(s, x)));
       return ops::Mul(s, g, ops::Mul(s, density, -2.0 / std::sqrt(std::numbers::pi)));
     }},
    {"Tan", [](const Scope& s, const Output&, const Output& y, const Output& g) {
       // 1 + tan^2.
       return ops::Mul(s, g, ops::AddV2(s, ops::Square(s, y), ops::OnesLike(s, y)));
     }},
    {"Asin", [](const Scope& s, const Output& x, const Output&, const Output& g) {
       // 1 / sqrt(1 - x^2).
       return ops::Mul(s, g, ops::Rsqrt(s, ops::Sub(s, ops::OnesLike(s, x), ops::Square(s, x))));
     }},
    {"Acos", [](const Scope& s, const Output& x, const Output&, const Output& g) {
       Output slope = ops::Rsqrt(s, ops::Sub(s, ops::OnesLike(s, x), ops::Square(s, x)));
       return ops::Neg(s, ops::Mul(s, g, slope));
     }},
    {"Atan", [](const Scope& s, const Output& x, const Output&, const Output& g) {
       // 1 / (1 + x^2).
       return ops::RealDiv(s, g, ops::AddV2(s, ops::OnesLike(s, x), ops::Square(s, x)));
     }},
    {"Sinh", [](const Scope& s, const Output& x, const Output&, const Output& g) {
       return ops::Mul(s, g, ops::Cosh(s, x));
     }},
    {"Cosh", [](const Scope& s, const Output& x, const Output&, const Output& g) {
       return ops::Mul(s, g, ops::Sinh(s, x));
     }},
    {"Asinh", [](const Scope& s, const Output&, const Output& y, const Output& g) {
       // 1 / sqrt(1 + x^2) = 1 / cosh(y).
       return ops::RealDiv(s, g, ops::Cosh(s, y));
     }},
    {"Acosh", [](const Scope& s, const Output&, const Output& y, const Output& g) {
       // 1 / sqrt(x^2 - 1) = 1 / sinh(y).
       return ops::RealDiv(s, g, ops::Sinh(s, y));
     }},
    {"Atanh", [](const Scope& s, const Output& x, const Output&, const Output& g) {
       // 1 / (1 - x^2).
       return ops::RealDiv(s, g, ops::Sub(s, ops::OnesLike(s, x), ops::Square(s, x)));
     }},
    {"Lgamma", [](const Scope& s, const Output& x, const Output&, const Output& g) {
       return ops::Mul(s, g, ops::Digamma(s, x));
     }},
    {"Digamma", [](const Scope& s, const Output& x, const Output&, const Output& g) {
       return ops::Mul(s, g, ops::Polygamma(s, ops::OnesLike(s, x), x));
     }},
    // Piecewise constant: the derivative is zero wherever it exists. A zero
    // gradient (not "no gradient"), so a model through them still trains
    // its other paths and asking for it is not an error.
    {"Sign", [](const Scope& s, const Output& x, const Output&, const Output&) {
       return ops::ZerosLike(s, x);
     }},
    {"Floor", [](const Scope& s, const Output& x, const Output&, const Output&) {
       return ops::ZerosLike(s, x);
     }},
    {"Ceil", [](const Scope& s, const Output& x, const Output&, const Output&) {
       return ops::ZerosLike(s, x);
     }},
    {"Round", [](const Scope& s, const Output& x, const Output&, const Output&) {
       return ops::ZerosLike(s, x);
     }},
};

// The fused backward ops z = h(y, dy), linear in dy: the gradient for dy
// is the same op applied to g; `rule` gives the one for y.
struct FusedGradient {
  const char* op;
  UnaryRule rule;  // (y, dy, g) -> gradient for y
};

const FusedGradient kFusedGradients[] = {
    // z = dy * (1 - y^2): dz/dy = -2 y dy.
    {"TanhGrad", [](const Scope& s, const Output& y, const Output& dy, const Output& g) {
       return ops::Mul(s, ops::Mul(s, g, dy), ops::Mul(s, y, -2.0));
     }},
    // z = dy * y * (1 - y): dz/dy = dy (1 - 2y).
    {"SigmoidGrad", [](const Scope& s, const Output& y, const Output& dy, const Output& g) {
       return ops::Mul(s, ops::Mul(s, g, dy), ops::Sub(s, 1.0, ops::Mul(s, y, 2.0)));
     }},
    // z = dy / (2y): dz/dy = -dy / (2 y^2).
    {"SqrtGrad", [](const Scope& s, const Output& y, const Output& dy, const Output& g) {
       return ops::Neg(s, ops::RealDiv(s, ops::Mul(s, g, dy), ops::Mul(s, ops::Square(s, y), 2.0)));
     }},
    // z = -dy y^3 / 2: dz/dy = -1.5 dy y^2.
    {"RsqrtGrad", [](const Scope& s, const Output& y, const Output& dy, const Output& g) {
       return ops::Mul(s, ops::Mul(s, g, dy), ops::Mul(s, ops::Square(s, y), -1.5));
     }},
    // z = -dy y^2: dz/dy = -2 dy y.
    {"ReciprocalGrad", [](const Scope& s, const Output& y, const Output& dy, const Output& g) {
       return ops::Mul(s, ops::Mul(s, g, dy), ops::Mul(s, y, -2.0));
     }},
};

}  // namespace

void RegisterUnaryGradients(GradientRegistry* registry) {
  for (const UnaryGradient& entry : kUnaryGradients) {
    UnaryRule rule = entry.rule;
    registry->Register(entry.op, [rule](const Scope& scope, const Operation& op,
                                        const std::vector<Output>& g, std::vector<Output>* grads) {
      Output x = ForwardInput(op, 0), y = op.output(0);
      // Complex x: TensorFlow's convention, g * conj(f'(x)) = g * f'(conj x)
      // for these functions (real coefficients).
      if (IsComplexDType(x.dtype())) x = ops::Conj(scope, x), y = ops::Conj(scope, y);
      *grads = {rule(scope, x, y, g[0])};
      return scope.status();
    });
  }
  for (const FusedGradient& entry : kFusedGradients) {
    UnaryRule rule = entry.rule;
    std::string name = entry.op;
    registry->Register(name, [rule, name](const Scope& scope, const Operation& op,
                                          const std::vector<Output>& g, std::vector<Output>* grads) {
      Output y = ForwardInput(op, 0), dy = ForwardInput(op, 1);
      *grads = {rule(scope, y, dy, g[0]), AddOp(scope, name, {y, g[0]}).output(0)};
      return scope.status();
    });
  }
}

}  // namespace weir
