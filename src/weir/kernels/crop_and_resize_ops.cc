// CropAndResize and its gradients (CropAndResizeGradImage,
// CropAndResizeGradBoxes) on NHWC images, with TensorFlow's sampling.
// Box b = [y1, x1, y2, x2] (normalized: 0 and 1 are the first and last
// pixel) of image box_ind[b] is sampled at crop row i at
//   in_y = y1 * (H - 1) + i * (y2 - y1) * (H - 1) / (crop_rows - 1)
// (the box's middle, 0.5 * (y1 + y2) * (H - 1), for one crop row), and
// alike for columns; a sample outside [0, H - 1] x [0, W - 1] is
// extrapolation_value. Bilinear blends the four pixels around the sample,
// nearest takes the rounded one. In float, as TensorFlow computes it.
#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "weir/base/threadpool.h"
#include "weir/framework/image_resize_shape.h"
#include "weir/framework/int_tensor_values.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/nn_kernels.h"
#include "weir/kernels/type_list.h"

namespace weir {
namespace {

// Where crop row (or column) i of a box samples the image, and d in / d y1
// and d in / d y2 there.
struct CropSample {
  float at;
  float d_start, d_end;
};

CropSample CropPosition(float start, float end, int64_t i, int64_t crop, int64_t size) {
  const float span = static_cast<float>(size - 1);
  if (crop > 1) {
    const float scale = (end - start) * span / static_cast<float>(crop - 1);
    const float step = static_cast<float>(i) * span / static_cast<float>(crop - 1);
    return {start * span + static_cast<float>(i) * scale, span - step, step};
  }
  return {0.5f * (start + end) * span, 0.5f * span, 0.5f * span};
}

// Whether a sample lies in [0, size - 1]; false for NaN (a NaN box), which
// then extrapolates instead of indexing with an undefined floor.
bool InsideImage(float at, int64_t size) { return at >= 0 && at <= static_cast<float>(size - 1); }

// The boxes and box_ind of the crop ops, checked against `batch` images.
Status CheckCropBoxes(const Tensor& boxes, const Tensor& box_ind, int64_t batch) {
  if (boxes.dims() != 2 || boxes.dim_size(1) != 4 || boxes.dtype() != DT_FLOAT) {
    return errors::InvalidArgument("boxes must be a float [num_boxes, 4] but is ", boxes.dtype(),
                                   " ", boxes.shape());
  }
  if (box_ind.dims() != 1 || box_ind.dim_size(0) != boxes.dim_size(0)) {
    return errors::InvalidArgument("box_ind ", box_ind.shape(), " must have one entry per box of ",
                                   boxes.shape());
  }
  const int32_t* index = box_ind.data<int32_t>();
  for (int64_t b = 0; b < box_ind.dim_size(0); ++b) {
    if (index[b] < 0 || index[b] >= batch) {
      return errors::InvalidArgument("box_ind[", b, "] = ", index[b], " is outside [0, ", batch,
                                     "), the images in the batch");
    }
  }
  return Status::OK();
}

Status CheckCropImage(const TensorShape& image, const char* what) {
  if (image.rank() != 4 || image.dim_size(1) <= 0 || image.dim_size(2) <= 0) {
    return errors::InvalidArgument(what,
                                   " must be [batch, rows, cols, depth] with rows and cols "
                                   "> 0 but has shape ",
                                   image);
  }
  return Status::OK();
}

class CropOpBase : public OpKernel {
 public:
  explicit CropOpBase(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("method", &method_));
    if (context->op_def().name == "CropAndResize") {
      context->SetStatus(context->GetAttr("extrapolation_value", &extrapolation_));
    }
  }

 protected:
  std::string Where(const Tensor& image_or_grads, const Tensor& boxes) const {
    return StrCat(type_string(), " (", image_or_grads.shape(), ", boxes ", boxes.shape(),
                  ", method ", method_, ")");
  }

  std::string method_ = "bilinear";
  float extrapolation_ = 0.0f;
};

template <typename T>
class CropAndResizeOp : public CropOpBase {
 public:
  using CropOpBase::CropOpBase;

  void Compute(OpKernelContext* context) override {
    const Tensor& image = context->input(0);
    const Tensor& boxes = context->input(1);
    const Tensor& box_ind = context->input(2);
    Status status = CheckCropImage(image.shape(), "image");
    if (status.ok()) status = CheckCropBoxes(boxes, box_ind, image.dim_size(0));
    StatusOr<std::array<int64_t, 2>> crop(errors::Internal("unset"));
    if (status.ok()) {
      crop = ResizeSizeValues(context->input(3), "crop_size");
      status = crop.status();
    }
    OP_REQUIRES_OK(context, status.WithContext(Where(image, boxes)));
    const int64_t num_boxes = boxes.dim_size(0), rows = (*crop)[0], cols = (*crop)[1];
    const int64_t height = image.dim_size(1), width = image.dim_size(2), depth = image.dim_size(3);
    StatusOr<TensorShape> shape =
        TensorShape::FromDims(std::array<int64_t, 4>{num_boxes, rows, cols, depth});
    OP_REQUIRES_OK(context, shape.status().WithContext(Where(image, boxes)));
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, *shape, &out));
    if (out->NumElements() == 0) return;
    const float* box = boxes.data<float>();
    const int32_t* index = box_ind.data<int32_t>();
    const T* x = image.data<T>();
    float* y = out->data<float>();
    const bool bilinear = method_ == "bilinear";
    context->device()->intra_op_pool()->ParallelFor(
        num_boxes * rows, cols * depth * 8, [&](int64_t first, int64_t last) {
          for (int64_t row = first; row < last; ++row) {
            const int64_t b = row / rows, i = row % rows;
            const float* bx = box + 4 * b;
            float* o = y + row * cols * depth;
            const float in_y = CropPosition(bx[0], bx[2], i, rows, height).at;
            if (!InsideImage(in_y, height)) {
              std::fill_n(o, cols * depth, extrapolation_);
              continue;
            }
            const T* img = x + index[b] * height * width * depth;
            for (int64_t j = 0; j < cols; ++j) {
              const float in_x = CropPosition(bx[1], bx[3], j, cols, width).at;
              float* oj = o + j * depth;
              if (!InsideImage(in_x, width)) {
                std::fill_n(oj, depth, extrapolation_);
                continue;
              }
              if (!bilinear) {
                const T* p = img + (static_cast<int64_t>(std::round(in_y)) * width +
                                    static_cast<int64_t>(std::round(in_x))) *
                                       depth;
                for (int64_t d = 0; d < depth; ++d) oj[d] = static_cast<float>(p[d]);
                continue;
              }
              const int64_t top = static_cast<int64_t>(std::floor(in_y));
              const int64_t bottom = static_cast<int64_t>(std::ceil(in_y));
              const int64_t left = static_cast<int64_t>(std::floor(in_x));
              const int64_t right = static_cast<int64_t>(std::ceil(in_x));
              const float y_lerp = in_y - static_cast<float>(top);
              const float x_lerp = in_x - static_cast<float>(left);
              const T* tl = img + (top * width + left) * depth;
              const T* tr = img + (top * width + right) * depth;
              const T* bl = img + (bottom * width + left) * depth;
              const T* br = img + (bottom * width + right) * depth;
              for (int64_t d = 0; d < depth; ++d) {
                const float t = static_cast<float>(tl[d]) +
                                (static_cast<float>(tr[d]) - static_cast<float>(tl[d])) * x_lerp;
                const float u = static_cast<float>(bl[d]) +
                                (static_cast<float>(br[d]) - static_cast<float>(bl[d])) * x_lerp;
                oj[d] = t + (u - t) * y_lerp;
              }
            }
          }
        });
  }
};

// The image gradient: each crop pixel's gradient added to the pixels it was
// sampled from, with the same weights. Boxes may share an image, so the
// boxes are summed one after another.
template <typename T>
class CropAndResizeGradImageOp : public CropOpBase {
 public:
  using CropOpBase::CropOpBase;

  void Compute(OpKernelContext* context) override {
    const Tensor& grads = context->input(0);
    const Tensor& boxes = context->input(1);
    const Tensor& box_ind = context->input(2);
    const Tensor& size_tensor = context->input(3);
    StatusOr<std::vector<int64_t>> size = IntTensorValues(size_tensor, "image_size");
    Status status = size.status();
    if (status.ok() && size->size() != 4) {
      status = errors::InvalidArgument("image_size must hold 4 values but has ", size->size());
    }
    StatusOr<TensorShape> image_shape(errors::Internal("unset"));
    if (status.ok()) {
      image_shape = TensorShape::FromDims(*size);
      status = image_shape.status();
    }
    if (status.ok()) status = CheckCropImage(*image_shape, "image_size");
    if (status.ok() && grads.dims() != 4) {
      status = errors::InvalidArgument("grads must have rank 4 but has shape ", grads.shape());
    }
    if (status.ok()) status = CheckCropBoxes(boxes, box_ind, image_shape->dim_size(0));
    if (status.ok() &&
        (grads.dim_size(0) != boxes.dim_size(0) || grads.dim_size(3) != image_shape->dim_size(3))) {
      status = errors::InvalidArgument("grads must have one crop per box and image_size's depth");
    }
    OP_REQUIRES_OK(context, status.WithContext(Where(grads, boxes)));
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, *image_shape, &out));
    const int64_t height = image_shape->dim_size(1), width = image_shape->dim_size(2),
                  depth = image_shape->dim_size(3);
    const int64_t rows = grads.dim_size(1), cols = grads.dim_size(2);
    // The sum in double, allocated as a tensor: too large is an error.
    Tensor sum;
    OP_REQUIRES_OK(context, context->allocate_temp(DT_DOUBLE, *image_shape, &sum));
    double* acc_data = sum.data<double>();
    std::fill_n(acc_data, sum.NumElements(), 0.0);
    const float* box = boxes.data<float>();
    const int32_t* index = box_ind.data<int32_t>();
    const float* g = grads.data<float>();
    const bool bilinear = method_ == "bilinear";
    for (int64_t b = 0; b < boxes.dim_size(0); ++b) {
      const float* bx = box + 4 * b;
      double* img = acc_data + index[b] * height * width * depth;
      for (int64_t i = 0; i < rows; ++i) {
        const float in_y = CropPosition(bx[0], bx[2], i, rows, height).at;
        if (!InsideImage(in_y, height)) continue;
        for (int64_t j = 0; j < cols; ++j) {
          const float in_x = CropPosition(bx[1], bx[3], j, cols, width).at;
          if (!InsideImage(in_x, width)) continue;
          const float* gij = g + ((b * rows + i) * cols + j) * depth;
          if (!bilinear) {
            double* p = img + (static_cast<int64_t>(std::round(in_y)) * width +
                               static_cast<int64_t>(std::round(in_x))) *
                                  depth;
            for (int64_t d = 0; d < depth; ++d) p[d] += gij[d];
            continue;
          }
          const int64_t top = static_cast<int64_t>(std::floor(in_y));
          const int64_t bottom = static_cast<int64_t>(std::ceil(in_y));
          const int64_t left = static_cast<int64_t>(std::floor(in_x));
          const int64_t right = static_cast<int64_t>(std::ceil(in_x));
          const float y_lerp = in_y - static_cast<float>(top);
          const float x_lerp = in_x - static_cast<float>(left);
          for (int64_t d = 0; d < depth; ++d) {
            const float top_g = (1 - y_lerp) * gij[d], bottom_g = y_lerp * gij[d];
            img[(top * width + left) * depth + d] += (1 - x_lerp) * top_g;
            img[(top * width + right) * depth + d] += x_lerp * top_g;
            img[(bottom * width + left) * depth + d] += (1 - x_lerp) * bottom_g;
            img[(bottom * width + right) * depth + d] += x_lerp * bottom_g;
          }
        }
      }
    }
    T* o = out->data<T>();
    for (int64_t k = 0; k < out->NumElements(); ++k) o[k] = static_cast<T>(acc_data[k]);
  }
};

// The boxes' gradient (bilinear): d crop / d in_y and d in_x from the four
// pixels around each sample, times d in / d box coordinate.
template <typename T>
class CropAndResizeGradBoxesOp : public CropOpBase {
 public:
  using CropOpBase::CropOpBase;

  void Compute(OpKernelContext* context) override {
    const Tensor& grads = context->input(0);
    const Tensor& image = context->input(1);
    const Tensor& boxes = context->input(2);
    const Tensor& box_ind = context->input(3);
    Status status = CheckCropImage(image.shape(), "image");
    if (status.ok()) status = CheckCropBoxes(boxes, box_ind, image.dim_size(0));
    if (status.ok() && (grads.dims() != 4 || grads.dim_size(0) != boxes.dim_size(0) ||
                        grads.dim_size(3) != image.dim_size(3))) {
      status = errors::InvalidArgument("grads ", grads.shape(),
                                       " must have one crop per box and the image's depth");
    }
    OP_REQUIRES_OK(context, status.WithContext(Where(image, boxes)));
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, boxes.shape(), &out));
    const int64_t height = image.dim_size(1), width = image.dim_size(2), depth = image.dim_size(3);
    const int64_t rows = grads.dim_size(1), cols = grads.dim_size(2);
    const float* box = boxes.data<float>();
    const int32_t* index = box_ind.data<int32_t>();
    const float* g = grads.data<float>();
    const T* x = image.data<T>();
    float* dbox = out->data<float>();
    context->device()->intra_op_pool()->ParallelFor(
        boxes.dim_size(0), rows * cols * depth * 16, [&](int64_t first, int64_t last) {
          for (int64_t b = first; b < last; ++b) {
            const float* bx = box + 4 * b;
            const T* img = x + index[b] * height * width * depth;
            double dy1 = 0, dx1 = 0, dy2 = 0, dx2 = 0;
            for (int64_t i = 0; i < rows; ++i) {
              const CropSample sy = CropPosition(bx[0], bx[2], i, rows, height);
              if (!InsideImage(sy.at, height)) continue;
              const int64_t top = static_cast<int64_t>(std::floor(sy.at));
              const int64_t bottom = static_cast<int64_t>(std::ceil(sy.at));
              const float y_lerp = sy.at - static_cast<float>(top);
              for (int64_t j = 0; j < cols; ++j) {
                const CropSample sx = CropPosition(bx[1], bx[3], j, cols, width);
                if (!InsideImage(sx.at, width)) continue;
                const int64_t left = static_cast<int64_t>(std::floor(sx.at));
                const int64_t right = static_cast<int64_t>(std::ceil(sx.at));
                const float x_lerp = sx.at - static_cast<float>(left);
                const float* gij = g + ((b * rows + i) * cols + j) * depth;
                for (int64_t d = 0; d < depth; ++d) {
                  const float tl = static_cast<float>(img[(top * width + left) * depth + d]);
                  const float tr = static_cast<float>(img[(top * width + right) * depth + d]);
                  const float bl = static_cast<float>(img[(bottom * width + left) * depth + d]);
                  const float br = static_cast<float>(img[(bottom * width + right) * depth + d]);
                  // d value / d in_y and d in_x of the bilinear blend.
                  const float along_y = (1 - x_lerp) * (bl - tl) + x_lerp * (br - tr);
                  const float along_x = (1 - y_lerp) * (tr - tl) + y_lerp * (br - bl);
                  const double gy = static_cast<double>(gij[d]) * along_y;
                  const double gx = static_cast<double>(gij[d]) * along_x;
                  dy1 += gy * sy.d_start;
                  dy2 += gy * sy.d_end;
                  dx1 += gx * sx.d_start;
                  dx2 += gx * sx.d_end;
                }
              }
            }
            float* o = dbox + 4 * b;
            o[0] = static_cast<float>(dy1);
            o[1] = static_cast<float>(dx1);
            o[2] = static_cast<float>(dy2);
            o[3] = static_cast<float>(dx2);
          }
        });
  }
};

}  // namespace

void RegisterCropAndResizeKernels(KernelRegistry* registry) {
  ForEachType<uint8_t, uint16_t, int8_t, int16_t, int32_t, int64_t, Eigen::half, float, double>(
      [&]<typename T>() {
        registry->Register(KernelBuilder("CropAndResize").TypeConstraint<T>("T"),
                           MakeKernel<CropAndResizeOp<T>>);
        registry->Register(KernelBuilder("CropAndResizeGradBoxes").TypeConstraint<T>("T"),
                           MakeKernel<CropAndResizeGradBoxesOp<T>>);
      });
  ForEachType<float, Eigen::half, double>([&]<typename T>() {
    registry->Register(KernelBuilder("CropAndResizeGradImage").TypeConstraint<T>("T"),
                       MakeKernel<CropAndResizeGradImageOp<T>>);
  });
}

}  // namespace weir
