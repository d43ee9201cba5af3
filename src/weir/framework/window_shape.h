// Window rules of convolution and pooling: how the strides, dilations,
// padding and data_format attrs turn input sizes into output sizes and
// paddings, following TensorFlow so imported graphs agree. The shape
// functions and the CPU kernels both use them, so a graph-time error and a
// run-time error say the same thing. Messages name the attrs and shapes at
// fault; callers add the op (kernels) or node (shape inference).
#pragma once

#include <array>
#include <cstdint>

#include "weir/base/status.h"
#include "weir/framework/attr_value.h"
#include "weir/framework/tensor_shape.h"

namespace weir {

class Tensor;

enum class Padding { kSame, kValid, kExplicit };

// Where each dim of a rank-4 image tensor lives.
struct ImageLayout {
  bool channels_last = true;  // NHWC; false: NCHW
  int batch() const { return 0; }
  int rows() const { return channels_last ? 1 : 2; }
  int cols() const { return channels_last ? 2 : 3; }
  int channels() const { return channels_last ? 3 : 1; }
  const char* name() const { return channels_last ? "NHWC" : "NCHW"; }
};

// One spatial dimension of a windowed op. `window` is the filter or pooling
// size before dilation; the effective size is (window - 1) * dilation + 1.
struct WindowDim {
  int64_t input = 0;
  int64_t window = 1;
  int64_t stride = 1;
  int64_t dilation = 1;
  int64_t output = 0;
  int64_t pad_before = 0;  // pad_before + input + pad_after covers every window
  int64_t pad_after = 0;

  int64_t effective_window() const { return (window - 1) * dilation + 1; }
};

// TensorFlow's rules: VALID gives ceil((input - effective + 1) / stride)
// and no padding; SAME gives ceil(input / stride) with the padding split
// evenly, the odd element after; EXPLICIT uses the given paddings. `what`
// names the dim in messages ("rows"). A window wider than its (padded)
// input is an error: TensorFlow lets some such VALID cases through with an
// empty output, which no real model wants.
StatusOr<WindowDim> ComputeWindowDim(const char* what, int64_t input, int64_t window,
                                     int64_t stride, int64_t dilation, Padding padding,
                                     int64_t explicit_before = 0, int64_t explicit_after = 0);

// The strides / ksize / dilations / padding attrs of a 2-D windowed op,
// checked: four entries each, 1 in the batch and channel dims (TensorFlow
// rejects others), positive, explicit paddings only with EXPLICIT.
struct Window2DAttrs {
  ImageLayout layout;
  std::array<int64_t, 2> window = {1, 1};  // pooling ksize; 1 for convolution
  std::array<int64_t, 2> strides = {1, 1};
  std::array<int64_t, 2> dilations = {1, 1};
  Padding padding = Padding::kValid;
  std::array<int64_t, 4> explicit_paddings = {0, 0, 0, 0};  // top, bottom, left, right
};

// Reads strides, padding, explicit_paddings (if declared), dilations (if
// declared), data_format and, for pooling, ksize.
StatusOr<Window2DAttrs> GetConv2DAttrs(const AttrMap& attrs);
StatusOr<Window2DAttrs> GetPool2DAttrs(const AttrMap& attrs);

// A 2-D convolution or pooling with every size known. Tensors are in the
// attrs' layout; filters are [rows, cols, in_depth, out_depth].
struct Window2DDims {
  ImageLayout layout;
  int64_t batch = 0;
  int64_t in_depth = 0;
  int64_t out_depth = 0;  // == in_depth for pooling
  WindowDim rows, cols;

  TensorShape input_shape() const;
  TensorShape output_shape() const;
  TensorShape filter_shape() const;  // convolution only
};

// For Conv2D's input and filter shapes: ranks 4, filter in_channels equal
// to the input's depth (grouped convolution is Unimplemented).
StatusOr<Window2DDims> ComputeConv2DDims(const Window2DAttrs& attrs, const TensorShape& input,
                                         const TensorShape& filter);
// For a pooling op's rank-4 input.
StatusOr<Window2DDims> ComputePool2DDims(const Window2DAttrs& attrs, const TensorShape& input);

// The input shape Conv2DBackpropInput computes the gradient of: its
// input_sizes input holds all four dims, or only rows and cols (TensorFlow
// accepts both; batch then comes from out_backprop, depth from the filter).
StatusOr<TensorShape> BackpropInputShape(const Tensor& input_sizes, const ImageLayout& layout,
                                         const TensorShape& filter,
                                         const TensorShape& out_backprop);

// A rank-`rank` shape from an int32/int64 vector input such as
// Conv2DBackpropFilter's filter_sizes or AvgPoolGrad's orig_input_shape.
// `what` names the input in messages.
StatusOr<TensorShape> ShapeFromSizes(const Tensor& sizes, int rank, const char* what);

// A rank-4 shape with the given sizes, in `layout`'s order.
PartialShape ImageShape(const ImageLayout& layout, int64_t batch, int64_t rows, int64_t cols,
                        int64_t depth);

// The spatial {rows, cols} output sizes of a windowed op over an image of
// partial shape `input` (rank 4); unknown where the input's are, or where
// `window` is (except for SAME padding, whose output ignores the window).
StatusOr<std::array<int64_t, 2>> PartialSpatialOutput(const Window2DAttrs& attrs,
                                                      const PartialShape& input,
                                                      std::array<int64_t, 2> window);

}  // namespace weir
