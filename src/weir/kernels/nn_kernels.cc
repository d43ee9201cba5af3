#include "weir/kernels/nn_kernels.h"

#include "weir/kernels/all_kernels.h"

namespace weir {

void RegisterNnKernels(KernelRegistry* registry) {
  RegisterBiasKernels(registry);
  RegisterConvKernels(registry);
  RegisterDepthwiseConvKernels(registry);
  RegisterImageResizeKernels(registry);
  RegisterCropAndResizeKernels(registry);
  RegisterPoolingKernels(registry);
  RegisterSoftmaxKernels(registry);
  RegisterLossKernels(registry);
  RegisterTopKKernels(registry);
  RegisterBatchNormKernels(registry);
}

}  // namespace weir
