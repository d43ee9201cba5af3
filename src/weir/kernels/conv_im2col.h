// Conv2D and its backprops by im2col and Eigen's matrix product, for
// element types oneDNN has no convolution for (double). NHWC activations,
// HWIO filters. Work is split over the intra-op pool by image and block of
// output pixels; each product is single-threaded inside its task. (Float
// through this path measured 1.0-5x slower than oneDNN on the Fashion-MNIST
// and ResNet shapes, so float stays on oneDNN.)
#pragma once

#include "weir/framework/window_shape.h"

namespace weir {

class ThreadPool;

// output = conv(input, filter). REQUIRES: dims.layout is NHWC.
template <typename T>
void Im2ColConv2D(ThreadPool* pool, const Window2DDims& dims, const T* input, const T* filter,
                  T* output);

// in_backprop = d(sum(conv(input, filter) * out_backprop)) / d input.
template <typename T>
void Im2ColConv2DBackpropInput(ThreadPool* pool, const Window2DDims& dims, const T* filter,
                               const T* out_backprop, T* in_backprop);

// filter_backprop = d(sum(conv(input, filter) * out_backprop)) / d filter.
template <typename T>
void Im2ColConv2DBackpropFilter(ThreadPool* pool, const Window2DDims& dims, const T* input,
                                const T* out_backprop, T* filter_backprop);

}  // namespace weir
