// The one list of kernel families. RegisterAllKernels() fills
// KernelRegistry::Global() with kernels only (no op declarations: those are
// ops/, a layer kernels don't use; runtime/standard_registration.h registers
// both); idempotent and thread-safe.
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
void RegisterRnnKernels(KernelRegistry* registry);  // lstm_ops.cc
void RegisterControlFlowKernels(KernelRegistry* registry);
void RegisterStackKernels(KernelRegistry* registry);        // data flow
void RegisterTensorArrayKernels(KernelRegistry* registry);  // data flow
void RegisterListKernels(KernelRegistry* registry);         // TensorList variants
void RegisterOptionalKernels(KernelRegistry* registry);     // Optional; AddN of variants
void RegisterFunctionKernels(KernelRegistry* registry);
void RegisterFunctionalKernels(KernelRegistry* registry);  // ToBool
void RegisterSendRecvKernels(KernelRegistry* registry);
void RegisterStateKernels(KernelRegistry* registry);
void RegisterTrainingKernels(KernelRegistry* registry);
void RegisterGradientSupportKernels(KernelRegistry* registry);
void RegisterIoKernels(KernelRegistry* registry);
void RegisterQueueKernels(KernelRegistry* registry);   // data flow: queues
void RegisterReaderKernels(KernelRegistry* registry);  // io: readers and files
void RegisterParsingKernels(KernelRegistry* registry);
void RegisterSummaryKernels(KernelRegistry* registry);
void RegisterLoggingKernels(KernelRegistry* registry);
// float16/bfloat16 computed in float32; after the families whose float
// kernels it wraps.
void RegisterFloat16Kernels(KernelRegistry* registry);  // float16_kernels.cc

}  // namespace weir
