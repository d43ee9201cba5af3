// Special functions: x*log(y) and friends (Xlogy, Xlog1py, Xdivy: 0 where x
// is 0), the regularized incomplete gamma and beta functions (Igamma,
// Igammac, IgammaGradA, Betainc), Hurwitz zeta, the exponentially scaled
// modified Bessel functions of order 0 and 1, the inverses of erf and of
// the standard normal CDF, and NextAfter. TensorFlow's declarations; the
// kernels (kernels/special_kernels.cc) use Eigen's implementations.
#include <initializer_list>

#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/ops/shape_fns.h"

namespace weir {

void RegisterSpecialOps(OpRegistry* registry) {
  struct Spec {
    const char* name;
    const char* first;
    const char* second;
    const char* types;
    const char* doc;
  };
  constexpr char kXlogyTypes[] = "T: {half, bfloat16, float, double, complex64, complex128}";
  constexpr char kGammaTypes[] = "T: {bfloat16, half, float, double}";
  for (const Spec& op : std::initializer_list<Spec>{
           {"Xlogy", "x", "y", kXlogyTypes, "x * log(y), or 0 where x is 0; NumPy broadcasting."},
           {"Xlog1py", "x", "y", kXlogyTypes,
            "x * log1p(y), or 0 where x is 0; NumPy broadcasting."},
           {"Xdivy", "x", "y", kXlogyTypes, "x / y, or 0 where x is 0; NumPy broadcasting."},
           {"Igamma", "a", "x", kGammaTypes,
            "The regularized lower incomplete gamma function P(a, x); NumPy broadcasting."},
           {"Igammac", "a", "x", kGammaTypes,
            "The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."},
           {"IgammaGradA", "a", "x", "T: {float, double}",
            "The derivative of Igamma(a, x) with respect to a."},
           {"Zeta", "x", "q", "T: {float, double}",
            "The Hurwitz zeta function sum_n (n + q)^-x; NumPy broadcasting."},
       }) {
    registry->Register(OpDefBuilder(op.name)
                           .Input(std::string(op.first) + ": T")
                           .Input(std::string(op.second) + ": T")
                           .Output("z: T")
                           .Attr(op.types)
                           .SetShapeFn(BroadcastBinaryOpShape)
                           .Doc(op.doc));
  }
  registry->Register(OpDefBuilder("Betainc")
                         .Input("a: T")
                         .Input("b: T")
                         .Input("x: T")
                         .Output("z: T")
                         .Attr("T: {float, double}")
                         .SetShapeFn(BroadcastAllInputsShape)
                         .Doc("The regularized incomplete beta function I_x(a, b); a, b and x "
                              "have one shape, or are scalars."));
  registry->Register(OpDefBuilder("NextAfter")
                         .Input("x1: T")
                         .Input("x2: T")
                         .Output("output: T")
                         .Attr("T: {double, float} = float")
                         .SetShapeFn(BroadcastBinaryOpShape)
                         .Doc("The next representable value after x1 toward x2, elementwise."));
  for (const auto& [name, doc] : std::initializer_list<std::pair<const char*, const char*>>{
           {"BesselI0e", "exp(-|x|) * I0(x), the scaled modified Bessel function of order 0."},
           {"BesselI1e", "exp(-|x|) * I1(x), the scaled modified Bessel function of order 1."},
           {"Erfinv", "The inverse of erf on (-1, 1); +-inf at +-1, NaN outside."},
           {"Ndtri", "The inverse of the standard normal CDF on (0, 1); +-inf at 1 and 0."},
       }) {
    registry->Register(OpDefBuilder(name)
                           .Input("x: T")
                           .Output("y: T")
                           .Attr(kGammaTypes)
                           .SetShapeFn(UnchangedShape)
                           .Doc(doc));
  }
}

}  // namespace weir
