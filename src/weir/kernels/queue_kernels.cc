// Kernels of the queue family (being written).
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/all_kernels.h"

namespace weir {

void RegisterQueueKernels(KernelRegistry* registry) { (void)registry; }

}  // namespace weir
