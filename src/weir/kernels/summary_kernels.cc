// Kernels of the summary family (being written).
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/all_kernels.h"

namespace weir {

void RegisterSummaryKernels(KernelRegistry* registry) { (void)registry; }

}  // namespace weir
