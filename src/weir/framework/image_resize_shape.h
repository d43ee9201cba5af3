// The checks ResizeBilinear, ResizeNearestNeighbor and their gradients
// share between shape inference and the kernels, with TensorFlow's rules: NHWC images
// with non-empty rows and cols, a `size` of two positive int32 values, and
// align_corners and half_pixel_centers not both true.
#pragma once

#include <array>
#include <cstdint>
#include <limits>

#include "weir/base/status.h"
#include "weir/base/str_util.h"
#include "weir/framework/tensor.h"

namespace weir {

inline Status CheckResizeAttrs(bool align_corners, bool half_pixel_centers) {
  if (align_corners && half_pixel_centers) {
    return errors::InvalidArgument(
        "half_pixel_centers is true, so align_corners must be false (they pick different "
        "pixel centers)");
  }
  return Status::OK();
}

// {rows, cols} from the int32 `size` input (`what` names it).
inline StatusOr<std::array<int64_t, 2>> ResizeSizeValues(const Tensor& size, const char* what) {
  if (size.dtype() != DT_INT32 || size.dims() != 1 || size.dim_size(0) != 2) {
    return errors::InvalidArgument(what, " must be an int32 vector of 2 values (rows, cols) but is ",
                                   size.dtype(), " ", size.shape());
  }
  const int32_t* v = size.data<int32_t>();
  if (v[0] <= 0 || v[1] <= 0) {
    return errors::InvalidArgument(what, " [", v[0], ",", v[1], "] must be positive");
  }
  return std::array<int64_t, 2>{v[0], v[1]};
}

// An image batch [batch, rows, cols, channels] with rows and cols in
// [1, 2^31) (the pixel arithmetic is in float and int32, as TensorFlow's).
inline Status CheckResizeImages(const TensorShape& images, const char* what) {
  if (images.rank() != 4) {
    return errors::InvalidArgument(what, " ", images,
                                   " must have rank 4 [batch, rows, cols, channels]");
  }
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  if (images.dim_size(1) <= 0 || images.dim_size(2) <= 0 || images.dim_size(1) > kMax ||
      images.dim_size(2) > kMax) {
    return errors::InvalidArgument(what, " ", images,
                                   " must have between 1 and 2^31-1 rows and cols");
  }
  return Status::OK();
}

}  // namespace weir
