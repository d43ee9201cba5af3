// weir._C: the extension module. Each binding file adds its part through
// one Define…() function, called here in order.
#include <nanobind/nanobind.h>

#include "bindings.h"
#include "common.h"
#include "weir/runtime/standard_registration.h"
#include "weir/train/function_gradient_builder.h"
#ifdef WEIR_WITH_DISTRIBUTED
#include "weir/distributed/grpc_session.h"
#endif

NB_MODULE(_C, m) {
  m.doc() = "Weir's C++ core, for the weir package (not a public API).";
  weir::python::InitTensorConversion();
  weir::RegisterStandardOpsAndKernels();
  weir::RegisterFunctionGradients();  // SymbolicGradient in imported graphs
#ifdef WEIR_WITH_DISTRIBUTED
  // wr.Session("grpc://host:port"); the wheel (WEIR_PYTHON_ONLY) has no
  // distributed layer, and such a target is an InvalidArgumentError there.
  weir::RegisterGrpcSessionFactory();
#endif
  weir::python::DefineAll(m);
}
