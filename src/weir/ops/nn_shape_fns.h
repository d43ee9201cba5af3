// Shape functions of the nn family (convolution and pooling), on the
// window rules of framework/window_shape.h.
#pragma once

#include "weir/base/status.h"

namespace weir {

class InferenceContext;

// Shape functions.
Status Conv2DShape(InferenceContext* c);
// Conv2DShape, with the fused ops' arguments checked: a BiasAdd's bias is
// [out_channels].
Status FusedConv2DShape(InferenceContext* c);
Status Conv2DBackpropInputShape(InferenceContext* c);
Status Conv2DBackpropFilterShape(InferenceContext* c);
Status Pool2DShape(InferenceContext* c);
// DepthwiseConv2dNative and its backprops: filter [rows, cols, in_channels,
// channel_multiplier], output channels in_channels * channel_multiplier.
Status DepthwiseConv2DShape(InferenceContext* c);
Status DepthwiseConv2DBackpropInputShape(InferenceContext* c);
Status DepthwiseConv2DBackpropFilterShape(InferenceContext* c);
// Output 0 has the shape in the sizes vector at `input` (ShapeFromSizes),
// unknown dims of `rank` while its value is unknown.
Status ShapeFromSizesInput(InferenceContext* c, int input, int rank, const char* what);

}  // namespace weir
