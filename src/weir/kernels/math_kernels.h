// The files of the math kernel family, each registering its own kernels;
// RegisterMathKernels (all_kernels.h) calls them all.
#pragma once

namespace weir {

class KernelRegistry;

void RegisterCwiseBinaryKernels(KernelRegistry* registry);   // cwise_binary.cc
void RegisterCwiseUnaryKernels(KernelRegistry* registry);    // cwise_unary.cc
void RegisterCwiseCompareKernels(KernelRegistry* registry);  // cwise_compare.cc
void RegisterCwiseGradKernels(KernelRegistry* registry);     // cwise_grad.cc
void RegisterCwiseSpecialKernels(KernelRegistry* registry);  // cwise_special.cc
void RegisterLeakyReluKernels(KernelRegistry* registry);     // leaky_relu_op.cc
void RegisterSelectKernels(KernelRegistry* registry);        // select_op.cc
void RegisterAddNKernels(KernelRegistry* registry);          // add_n_op.cc
void RegisterMatMulKernels(KernelRegistry* registry);        // matmul_op.cc
void RegisterMatMulAccumulateKernels(KernelRegistry* registry);  // matmul_accumulate_op.cc
void RegisterEinsumKernels(KernelRegistry* registry);        // einsum_op.cc
void RegisterReductionKernels(KernelRegistry* registry);     // reduction_ops.cc
void RegisterCastKernels(KernelRegistry* registry);          // cast_op.cc
void RegisterSegmentKernels(KernelRegistry* registry);       // segment_ops.cc
void RegisterScanKernels(KernelRegistry* registry);          // scan_ops.cc

}  // namespace weir
