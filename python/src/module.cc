// weir._C: the extension module. Each binding file adds its part through
// one Define…() function, called here in order.
#include <nanobind/nanobind.h>

#include "bindings.h"
#include "common.h"
#include "weir/runtime/standard_registration.h"
#include "weir/train/function_gradient_builder.h"

NB_MODULE(_C, m) {
  m.doc() = "Weir's C++ core, for the weir package (not a public API).";
  weir::python::InitTensorConversion();
  weir::RegisterStandardOpsAndKernels();
  weir::RegisterFunctionGradients();  // SymbolicGradient in imported graphs
  weir::python::DefineAll(m);
}
