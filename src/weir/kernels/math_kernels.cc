#include "weir/kernels/math_kernels.h"

#include "weir/kernels/all_kernels.h"

namespace weir {

void RegisterSegmentKernels(KernelRegistry* registry);  // segment_ops.cc
void RegisterScanKernels(KernelRegistry* registry);     // scan_ops.cc

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
  RegisterEinsumKernels(registry);
  RegisterReductionKernels(registry);
  RegisterSegmentKernels(registry);
  RegisterScanKernels(registry);
  RegisterCastKernels(registry);
}

}  // namespace weir
