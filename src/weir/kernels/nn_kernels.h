// The files of the nn kernel family, each registering its own kernels;
// RegisterNnKernels (all_kernels.h) calls them all.
#pragma once

namespace weir {

class KernelRegistry;

void RegisterBiasKernels(KernelRegistry* registry);       // bias_ops.cc
void RegisterConvKernels(KernelRegistry* registry);       // conv_ops.cc
void RegisterDepthwiseConvKernels(KernelRegistry* registry);  // depthwise_conv_ops.cc
void RegisterImageResizeKernels(KernelRegistry* registry);    // image_resize_ops.cc
void RegisterCropAndResizeKernels(KernelRegistry* registry);   // crop_and_resize_ops.cc
void RegisterPoolingKernels(KernelRegistry* registry);    // pooling_ops.cc
void RegisterSoftmaxKernels(KernelRegistry* registry);    // softmax_ops.cc
void RegisterLossKernels(KernelRegistry* registry);       // loss_ops.cc
void RegisterBatchNormKernels(KernelRegistry* registry);  // batch_norm_ops.cc
void RegisterTopKKernels(KernelRegistry* registry);       // topk_op.cc

}  // namespace weir
