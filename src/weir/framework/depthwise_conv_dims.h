// The problem of a depthwise convolution (DepthwiseConv2dNative and its
// backprops) for known input and filter shapes, shared by the shape
// functions and the kernels.
// The filter is [rows, cols, in_channels, channel_multiplier]; output
// channel c * channel_multiplier + m is input channel c convolved with
// filter[:, :, c, m].
#pragma once

#include <array>

#include "weir/base/checked_math.h"
#include "weir/framework/window_shape.h"

namespace weir {

struct DepthwiseConv2DDims {
  Window2DDims dims;  // in_depth: in_channels; out_depth: in_channels * multiplier
  int64_t multiplier = 1;
};

inline StatusOr<DepthwiseConv2DDims> ComputeDepthwiseConv2DDims(const Window2DAttrs& attrs,
                                                              const TensorShape& input,
                                                              const TensorShape& filter) {
  if (input.rank() != 4 || filter.rank() != 4) {
    return errors::InvalidArgument("input ", input, " and filter ", filter,
                                   " must both have rank 4 (input ", attrs.layout.name(),
                                   ", filter [rows, cols, in_channels, channel_multiplier])");
  }
  const int64_t in_depth = input.dim_size(attrs.layout.channels());
  if (filter.dim_size(2) != in_depth) {
    return errors::InvalidArgument("input ", input, " has depth ", in_depth, " but filter ", filter,
                                   " has in_channels ", filter.dim_size(2));
  }
  DepthwiseConv2DDims out;
  out.multiplier = filter.dim_size(3);
  int64_t out_depth;
  WEIR_RETURN_IF_ERROR(CheckedMultiply(in_depth, out.multiplier, &out_depth,
                                       "in_channels * channel_multiplier"));
  // As a dense convolution's problem with out_depth outputs; its checks
  // and window arithmetic are the same.
  WEIR_ASSIGN_OR_RETURN(const TensorShape dense_filter,
                        TensorShape::FromDims(std::array<int64_t, 4>{
                            filter.dim_size(0), filter.dim_size(1), in_depth, out_depth}));
  WEIR_ASSIGN_OR_RETURN(out.dims, ComputeConv2DDims(attrs, input, dense_filter));
  return out;
}

}  // namespace weir
