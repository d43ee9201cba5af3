#include "weir/kernels/all_kernels.h"

#include <mutex>

#include "weir/framework/kernel_registry.h"
#include "weir/kernels/regex_kernels.h"

namespace weir {

// Declared here rather than in the header, so that adding the family does not
// rebuild every file of the layer (the lead may move it to the header).
void RegisterAccumulatorKernels(KernelRegistry* registry);  // accumulator_kernels.cc
void RegisterSpecialKernels(KernelRegistry* registry);      // special_kernels.cc
void RegisterComplexKernels(KernelRegistry* registry);      // complex_kernels.cc
void RegisterArrayExtraKernels(KernelRegistry* registry);   // array_extra_kernels.cc
void RegisterFftKernels(KernelRegistry* registry);          // fft_kernels.cc
void RegisterStatelessRandomKernels(KernelRegistry* registry);  // stateless_random_kernels.cc
void RegisterRandomSamplingKernels(KernelRegistry* registry);  // random_sampling_kernels.cc

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
    RegisterAccumulatorKernels(registry);
    RegisterReaderKernels(registry);
    RegisterParsingKernels(registry);
    RegisterStringKernels(registry);
    RegisterSummaryKernels(registry);
    RegisterLoggingKernels(registry);
    RegisterSpecialKernels(registry);
    RegisterComplexKernels(registry);
    RegisterArrayExtraKernels(registry);
    RegisterFftKernels(registry);
    RegisterStatelessRandomKernels(registry);
    RegisterRandomSamplingKernels(registry);
    RegisterFloat16Kernels(registry);
  });
}

}  // namespace weir
