// Kernels of the reader family (being written).
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/all_kernels.h"

namespace weir {

void RegisterReaderKernels(KernelRegistry* registry) { (void)registry; }

}  // namespace weir
