// Kernels of the parsing family (being written).
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/all_kernels.h"

namespace weir {

void RegisterParsingKernels(KernelRegistry* registry) { (void)registry; }

}  // namespace weir
