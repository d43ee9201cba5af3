// Kernel fusion: chains of ops rewritten into one op whose kernel does the
// work in a single pass over memory (TensorFlow's remapper does the same).
//
//   Conv2D -> BiasAdd [-> Relu]   becomes   _FusedConv2D(fused_ops = [BiasAdd(, Relu)])
//   Conv2D -> Add/AddV2 [-> Relu] too, when the other addend's inferred
//                                 shape is [out_channels] (a bias added with +)
//   MaxPoolGrad -> ReluGrad       becomes   _FusedMaxPoolGrad(fused_ops = [ReluGrad])
//                                 when ReluGrad's features are the pool's input
//   MatMul(x, dy, transpose_a) -> AddV2(acc, .)   becomes   _MatMulAccumulate(acc, x, dy)
//                                 (float; acc broadcasts as in AddV2, but the product
//                                 goes into acc's own buffer when acc is the
//                                 product's shape); a ConcatV2 along axis 1 that only the
//                                 product reads is folded in: its inputs become
//                                 x's pieces. That is a while loop's gradient
//                                 summing a weight's x^T * dy each iteration: the
//                                 product goes into the running sum, in its buffer.
//
// Runs on a placed graph, after gradients were built (the fused op has no
// gradient of its own). A chain is fused only when it computes the same
// values: every intermediate output feeds only the next op of the chain
// (nothing else reads or fetches it), all nodes share a device and a dtype,
// images are NHWC, and the device has a kernel for the fused op. The fused
// node takes the name of the chain's last node, so fetches, traces and
// errors still name what the user built.
#pragma once

#include "weir/base/status.h"
#include "weir/graph/graph.h"

namespace weir {

// Each returns the number of chains fused. FuseKernels runs them all.
StatusOr<int> FuseKernels(Graph* graph);
StatusOr<int> FuseConvBiasRelu(Graph* graph);
StatusOr<int> FuseMaxPoolGradReluGrad(Graph* graph);
StatusOr<int> FuseMatMulAccumulate(Graph* graph);

}  // namespace weir
