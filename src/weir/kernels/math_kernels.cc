#include "weir/kernels/math_kernels.h"

#include "weir/kernels/all_kernels.h"

namespace weir {

void RegisterMathKernels(KernelRegistry* registry) {
  RegisterCwiseBinaryKernels(registry);
  RegisterCwiseUnaryKernels(registry);
  RegisterCwiseCompareKernels(registry);
  RegisterCwiseGradKernels(registry);
  RegisterCwiseSpecialKernels(registry);
  RegisterLeakyReluKernels(registry);
  RegisterSelectKernels(registry);
  RegisterAddNKernels(registry);
  RegisterMatMulKernels(registry);
  RegisterMatMulAccumulateKernels(registry);
  RegisterEinsumKernels(registry);
  RegisterReductionKernels(registry);
  RegisterSegmentKernels(registry);
  RegisterScanKernels(registry);
  RegisterCastKernels(registry);
}

}  // namespace weir
