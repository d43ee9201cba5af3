// Gradients of the complex ops (ops/complex_ops.cc), with TensorFlow's
// convention for a real loss L of complex z: the gradient is dL/dRe(z) +
// i dL/dIm(z).
#include "weir/ops/gradients/gradient_registry.h"
#include "weir/ops/gradients/gradient_util.h"
#include "weir/ops/standard_ops.h"

namespace weir {
namespace {

using Grads = std::vector<Output>;

DType PartType(DType complex) { return complex == DT_COMPLEX128 ? DT_DOUBLE : DT_FLOAT; }
DType ComplexType(DType part) { return part == DT_DOUBLE ? DT_COMPLEX128 : DT_COMPLEX64; }

Output MakeComplex(const Scope& s, const Output& re, const Output& im) {
  return ops::Complex(s, re, im, {{"Tout", ComplexType(re.dtype())}});
}
Output RealPart(const Scope& s, const Output& z) {
  return ops::Real(s, z, {{"Tout", PartType(z.dtype())}});
}
Output ImagPart(const Scope& s, const Output& z) {
  return ops::Imag(s, z, {{"Tout", PartType(z.dtype())}});
}

}  // namespace

void RegisterComplexGradients(GradientRegistry* registry) {
  registry->Register("Complex",
                     [](const Scope& s, const Operation& op, const Grads& g, Grads* grads) {
                       Output re = ForwardInput(op, 0), im = ForwardInput(op, 1);
                       *grads = ReduceForBroadcast(s, re, im, RealPart(s, g[0]), ImagPart(s, g[0]));
                       return s.status();
                     });
  registry->Register("Real", [](const Scope& s, const Operation&, const Grads& g, Grads* grads) {
    *grads = {MakeComplex(s, g[0], ops::ZerosLike(s, g[0]))};
    return s.status();
  });
  registry->Register("Imag", [](const Scope& s, const Operation&, const Grads& g, Grads* grads) {
    *grads = {MakeComplex(s, ops::ZerosLike(s, g[0]), g[0])};
    return s.status();
  });
  registry->Register("Conj", [](const Scope& s, const Operation&, const Grads& g, Grads* grads) {
    *grads = {ops::Conj(s, g[0])};
    return s.status();
  });
  // d|z| = z / |z| (0 at z = 0).
  registry->Register(
      "ComplexAbs", [](const Scope& s, const Operation& op, const Grads& g, Grads* grads) {
        Output z = ForwardInput(op, 0), y = op.output(0);
        Output zero = ops::ZerosLike(s, y);
        Output safe = ops::SelectV2(s, ops::Equal(s, y, zero), ops::OnesLike(s, y), y);
        Output scale = ops::SelectV2(s, ops::Equal(s, y, zero), zero, ops::RealDiv(s, g[0], safe));
        *grads = {ops::Mul(s, MakeComplex(s, scale, ops::ZerosLike(s, scale)), z)};
        return s.status();
      });
  // d angle(z) = -g / (im + i re), as TensorFlow.
  registry->Register(
      "Angle", [](const Scope& s, const Operation& op, const Grads& g, Grads* grads) {
        Output z = ForwardInput(op, 0);
        Output inverse = ops::Reciprocal(s, MakeComplex(s, ImagPart(s, z), RealPart(s, z)));
        *grads = {ops::Neg(s, ops::Mul(s, MakeComplex(s, g[0], ops::ZerosLike(s, g[0])), inverse))};
        return s.status();
      });
}

}  // namespace weir
