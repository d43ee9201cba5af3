// Binary arithmetic with NumPy broadcasting: Add, AddV2, Sub, Mul, RealDiv,
// Div, DivNoNan (float and double), FloorDiv, FloorMod, Maximum, Minimum, Pow, SquaredDifference,
// for float, double, int32 and int64. Semantics are in cwise_functors.h.
#include "weir/kernels/cwise_functors.h"
#include "weir/kernels/cwise_ops.h"
#include "weir/kernels/math_kernels.h"

namespace weir {

void RegisterCwiseBinaryKernels(KernelRegistry* registry) {
  using namespace functor;  // NOLINT: the functor names are the op names
  RegisterBinary<Add, float, double, int32_t, int64_t>(registry, "Add");
  RegisterBinary<Add, float, double, int32_t, int64_t>(registry, "AddV2");
  RegisterBinary<Sub, float, double, int32_t, int64_t>(registry, "Sub");
  RegisterBinary<Mul, float, double, int32_t, int64_t>(registry, "Mul");
  // TensorFlow's RealDiv and Div differ only for types Weir has no kernel
  // for; both truncate integers toward zero.
  RegisterBinary<Div, float, double, int32_t, int64_t>(registry, "RealDiv");
  RegisterBinary<Div, float, double, int32_t, int64_t>(registry, "Div");
  RegisterBinary<DivNoNan, float, double>(registry, "DivNoNan");
  RegisterBinary<FloorDiv, float, double, int32_t, int64_t>(registry, "FloorDiv");
  RegisterBinary<FloorMod, float, double, int32_t, int64_t>(registry, "FloorMod");
  RegisterBinary<Maximum, float, double, int32_t, int64_t>(registry, "Maximum");
  RegisterBinary<Minimum, float, double, int32_t, int64_t>(registry, "Minimum");
  RegisterBinary<Pow, float, double, int32_t, int64_t>(registry, "Pow");
  RegisterBinary<SquaredDifference, float, double, int32_t, int64_t>(registry, "SquaredDifference");
}

}  // namespace weir
