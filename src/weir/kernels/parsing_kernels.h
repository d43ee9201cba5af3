// The parsing family's kernels live in three files; RegisterParsingKernels
// (all_kernels.h) registers them all through these.
#pragma once

namespace weir {

class KernelRegistry;

// DecodeRaw, DecodeCSV, StringToNumber (decode_kernels.cc).
void RegisterDecodeKernels(KernelRegistry* registry);
// SerializeTensor, ParseTensor (tensor_serialization_kernels.cc).
void RegisterTensorSerializationKernels(KernelRegistry* registry);

}  // namespace weir
