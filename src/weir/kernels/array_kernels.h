// The files of the array kernel family, each registering its own kernels;
// RegisterArrayKernels (all_kernels.h, in array_kernels.cc) calls them all.
#pragma once

namespace weir {

class KernelRegistry;

void RegisterTransposeKernels(KernelRegistry* registry);       // transpose_op.cc
void RegisterSliceKernels(KernelRegistry* registry);           // slice_ops.cc
void RegisterConcatSplitKernels(KernelRegistry* registry);     // concat_split_ops.cc
void RegisterTilePadKernels(KernelRegistry* registry);         // tile_pad_ops.cc
void RegisterGatherScatterKernels(KernelRegistry* registry);   // gather_scatter_ops.cc
void RegisterPartitionKernels(KernelRegistry* registry);       // partition_ops.cc
void RegisterFillKernels(KernelRegistry* registry);            // fill_ops.cc
void RegisterSequenceSpaceKernels(KernelRegistry* registry);   // sequence_space_ops.cc

}  // namespace weir
