// The one list of kernel families. RegisterAllKernels() fills
// KernelRegistry::Global() (and registers all ops first); idempotent.
#pragma once

namespace weir {

class KernelRegistry;

void RegisterAllKernels();

// One function per family, each in kernels/<family>_kernels.cc or a file of
// that family.
void RegisterArrayKernels(KernelRegistry* registry);
void RegisterMathKernels(KernelRegistry* registry);
void RegisterRandomKernels(KernelRegistry* registry);
void RegisterNnKernels(KernelRegistry* registry);
void RegisterControlFlowKernels(KernelRegistry* registry);
void RegisterFunctionKernels(KernelRegistry* registry);
void RegisterSendRecvKernels(KernelRegistry* registry);
void RegisterStateKernels(KernelRegistry* registry);
void RegisterTrainingKernels(KernelRegistry* registry);
void RegisterGradientSupportKernels(KernelRegistry* registry);
void RegisterIoKernels(KernelRegistry* registry);

}  // namespace weir
