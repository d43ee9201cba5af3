// Window rules of the 3-D convolution and pooling ops (Conv3D, MaxPool3D,
// AvgPool3D and their gradients) and of ExtractImagePatches: attrs to
// per-dimension windows with TensorFlow's SAME / VALID rules
// (window_shape.h's ComputeWindowDim), shared by the shape functions and the
// kernels so both report the same errors.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "weir/base/status.h"
#include "weir/framework/attr_value.h"
#include "weir/framework/tensor_shape.h"
#include "weir/framework/window_shape.h"

namespace weir {

// strides, dilations and window (ksize for pooling) of the three spatial
// dims (planes, rows, cols), from NDHWC or NCDHW attrs of 5 values whose
// batch and channel entries must be 1.
struct Window3DAttrs {
  std::array<int64_t, 3> window{1, 1, 1};
  std::array<int64_t, 3> strides{1, 1, 1};
  std::array<int64_t, 3> dilations{1, 1, 1};
  Padding padding = Padding::kValid;
  bool channels_first = false;  // NCDHW
};

// Conv3D's attrs (strides, padding, data_format, dilations; the window
// comes from the filter) or the pools' (ksize, strides, padding,
// data_format).
StatusOr<Window3DAttrs> GetConv3DAttrs(const AttrMap& attrs);
StatusOr<Window3DAttrs> GetPool3DAttrs(const AttrMap& attrs);

struct Window3DDims {
  int64_t batch = 0;
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  std::array<WindowDim, 3> spatial;
  // NDHWC (or NCDHW) [batch, out planes, rows, cols, out_channels].
  std::vector<int64_t> OutputDims(bool channels_first) const;
};

// input NDHWC/NCDHW [batch, planes, rows, cols, channels]; filter [planes,
// rows, cols, in_channels, out_channels] with in_channels = the input's.
StatusOr<Window3DDims> ComputeConv3DDims(const Window3DAttrs& attrs, const TensorShape& input,
                                         const TensorShape& filter);
// out_channels = in_channels.
StatusOr<Window3DDims> ComputePool3DDims(const Window3DAttrs& attrs, const TensorShape& input);

// ExtractImagePatches: ksizes, strides and rates [1, r, c, 1]; input NHWC.
// spatial[0] is unused (depth 1); the output is [batch, rows, cols,
// ksize_rows * ksize_cols * channels].
StatusOr<Window3DDims> ComputePatchDims(const AttrMap& attrs, const TensorShape& input);

}  // namespace weir
