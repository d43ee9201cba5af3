#include "weir/kernels/all_kernels.h"

#include <mutex>

#include "weir/framework/kernel_registry.h"
#include "weir/kernels/regex_kernels.h"

namespace weir {

// Declared here rather than in the header, so that adding the family does not
// rebuild every file of the layer (the lead may move it to the header).
void RegisterAccumulatorKernels(KernelRegistry* registry);  // accumulator_kernels.cc
void RegisterLookupKernels(KernelRegistry* registry);       // lookup_kernels.cc
void RegisterStringConvertKernels(KernelRegistry* registry);  // string_convert_kernels.cc
void RegisterImageCodecKernels(KernelRegistry* registry);   // image_codecs.cc
void RegisterImageColorKernels(KernelRegistry* registry);   // image_color_ops.cc
void RegisterNonMaxSuppressionKernels(KernelRegistry* registry);  // non_max_suppression_ops.cc
void RegisterConv3DKernels(KernelRegistry* registry);       // conv3d_ops.cc
void RegisterPool3DKernels(KernelRegistry* registry);       // pool3d_ops.cc
void RegisterResizeAreaKernels(KernelRegistry* registry);   // resize_area_op.cc
void RegisterExtractImagePatchesKernels(KernelRegistry* registry);  // extract_patches_op.cc
void RegisterSparseDenseKernels(KernelRegistry* registry);    // sparse_dense_kernels.cc
void RegisterSparseReorderKernels(KernelRegistry* registry);  // sparse_reorder_kernels.cc
void RegisterSparseMathKernels(KernelRegistry* registry);     // sparse_math_kernels.cc
void RegisterLinalgSolveKernels(KernelRegistry* registry);      // linalg_solve_ops.cc
void RegisterLinalgDecomposeKernels(KernelRegistry* registry);  // linalg_decompose_ops.cc
void RegisterLinalgDiagKernels(KernelRegistry* registry);   // linalg_diag.cc
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
    RegisterLinalgSolveKernels(registry);
    RegisterLinalgDecomposeKernels(registry);
    RegisterLinalgDiagKernels(registry);
    RegisterRandomKernels(registry);
    RegisterNnKernels(registry);
    RegisterImageCodecKernels(registry);
    RegisterImageColorKernels(registry);
    RegisterNonMaxSuppressionKernels(registry);
    RegisterConv3DKernels(registry);
    RegisterPool3DKernels(registry);
    RegisterResizeAreaKernels(registry);
    RegisterExtractImagePatchesKernels(registry);
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
    RegisterLookupKernels(registry);
    RegisterStringConvertKernels(registry);
    RegisterSparseDenseKernels(registry);
    RegisterSparseReorderKernels(registry);
    RegisterSparseMathKernels(registry);
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
