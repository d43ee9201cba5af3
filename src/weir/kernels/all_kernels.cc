#include "weir/kernels/all_kernels.h"

#include <mutex>

#include "weir/framework/kernel_registry.h"
#include "weir/kernels/regex_kernels.h"

namespace weir {

void RegisterAllKernels() {
  static std::once_flag once;
  std::call_once(once, [] {
    KernelRegistry* registry = KernelRegistry::Global();
    RegisterArrayKernels(registry);
    RegisterMathKernels(registry);
    RegisterRandomKernels(registry);
    RegisterNnKernels(registry);
    RegisterRnnKernels(registry);
    RegisterControlFlowKernels(registry);
    RegisterStackKernels(registry);
    RegisterTensorArrayKernels(registry);
    RegisterListKernels(registry);
    RegisterOptionalKernels(registry);
    RegisterFunctionKernels(registry);
    RegisterFunctionalKernels(registry);
    RegisterSendRecvKernels(registry);
    RegisterStateKernels(registry);
    RegisterTrainingKernels(registry);
    RegisterGradientSupportKernels(registry);
    RegisterIoKernels(registry);
    RegisterQueueKernels(registry);
    RegisterReaderKernels(registry);
    RegisterParsingKernels(registry);
    RegisterStringKernels(registry);
    RegisterSummaryKernels(registry);
    RegisterLoggingKernels(registry);
    RegisterFloat16Kernels(registry);
  });
}

}  // namespace weir
