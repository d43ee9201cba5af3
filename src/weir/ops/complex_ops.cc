// Complex numbers: Complex builds them from real and imaginary parts
// (NumPy broadcasting); Real, Imag, Angle and ComplexAbs take them apart;
// Conj conjugates. TensorFlow's declarations (Conj's variant form has no
// kernel here).
#include <initializer_list>

#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/ops/shape_fns.h"

namespace weir {

void RegisterComplexOps(OpRegistry* registry) {
  registry->Register(OpDefBuilder("Complex")
                         .Input("real: T")
                         .Input("imag: T")
                         .Output("out: Tout")
                         .Attr("T: {float, double} = float")
                         .Attr("Tout: {complex64, complex128} = complex64")
                         .SetShapeFn(BroadcastBinaryOpShape)
                         .Doc("real + i * imag, with NumPy broadcasting; Tout matches T's width."));
  for (const auto& [name, doc] : std::initializer_list<std::pair<const char*, const char*>>{
           {"Real", "The real part of each element."},
           {"Imag", "The imaginary part of each element."},
           {"Angle", "The argument atan2(imag, real) of each element, in [-pi, pi]."},
       }) {
    registry->Register(OpDefBuilder(name)
                           .Input("input: T")
                           .Output("output: Tout")
                           .Attr("T: {complex64, complex128} = complex64")
                           .Attr("Tout: {float, double} = float")
                           .SetShapeFn(UnchangedShape)
                           .Doc(doc));
  }
  registry->Register(OpDefBuilder("ComplexAbs")
                         .Input("x: T")
                         .Output("y: Tout")
                         .Attr("T: {complex64, complex128} = complex64")
                         .Attr("Tout: {float, double} = float")
                         .SetShapeFn(UnchangedShape)
                         .Doc("|x| = sqrt(real^2 + imag^2), without overflow."));
  registry->Register(OpDefBuilder("Conj")
                         .Input("input: T")
                         .Output("output: T")
                         .Attr("T: {complex64, complex128, variant} = complex64")
                         .SetShapeFn(UnchangedShape)
                         .Doc("The complex conjugate real - i * imag of each element."));
}

}  // namespace weir
