// ResizeBilinear, ResizeNearestNeighbor and their gradients on NHWC images,
// with TensorFlow's sampling rules, in float as TensorFlow computes them:
//   scale = (in - 1) / (out - 1) with align_corners (and out > 1), else
//           in / out;
//   the source of output pixel i is i * scale, or (i + 0.5) * scale - 0.5
//   with half_pixel_centers (bilinear) / (i + 0.5) * scale (nearest);
//   bilinear blends pixels floor(src) and ceil(src), clamped to the image,
//   by src - floor(src); nearest takes round(src) with align_corners, else
//   floor(src), clamped.
// The forward ops split over the pool by output row; the gradients, which
// scatter, by image, so no two tasks write one element.
#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "weir/base/threadpool.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/nn_kernels.h"
#include "weir/kernels/type_list.h"
#include "weir/framework/image_resize_shape.h"

namespace weir {
namespace {

float ResizeScale(int64_t in, int64_t out, bool align_corners) {
  return align_corners && out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                  : static_cast<float>(in) / static_cast<float>(out);
}

// Where output pixel i samples the input, per dim, for bilinear
// interpolation: rows (or cols) lower and upper, blended by lerp.
struct LinearSample {
  int64_t lower, upper;
  float lerp;
};

std::vector<LinearSample> LinearSamples(int64_t in, int64_t out, bool align_corners,
                                        bool half_pixel_centers) {
  const float scale = ResizeScale(in, out, align_corners);
  std::vector<LinearSample> samples(out);
  for (int64_t i = 0; i < out; ++i) {
    const float src = half_pixel_centers ? (static_cast<float>(i) + 0.5f) * scale - 0.5f
                                         : static_cast<float>(i) * scale;
    const float floor = std::floor(src);
    // Clamped at both ends: in float, `in - 1` may round up to `in`.
    samples[i].lower = std::clamp<int64_t>(static_cast<int64_t>(floor), 0, in - 1);
    samples[i].upper = std::min<int64_t>(static_cast<int64_t>(std::ceil(src)), in - 1);
    samples[i].lerp = src - floor;
  }
  return samples;
}

// The input index output pixel i copies, per dim, for nearest neighbour.
std::vector<int64_t> NearestSamples(int64_t in, int64_t out, bool align_corners,
                                    bool half_pixel_centers) {
  const float scale = ResizeScale(in, out, align_corners);
  std::vector<int64_t> samples(out);
  for (int64_t i = 0; i < out; ++i) {
    const float src = half_pixel_centers ? (static_cast<float>(i) + 0.5f) * scale
                                         : static_cast<float>(i) * scale;
    int64_t at = static_cast<int64_t>(align_corners ? std::round(src) : std::floor(src));
    at = std::min(at, in - 1);
    if (half_pixel_centers) at = std::max<int64_t>(at, 0);
    samples[i] = at;
  }
  return samples;
}

class ResizeOpBase : public OpKernel {
 public:
  explicit ResizeOpBase(OpKernelConstruction* context) : OpKernel(context) {
    Status status = context->GetAttr("align_corners", &align_corners_);
    status.Update(context->GetAttr("half_pixel_centers", &half_pixel_centers_));
    status.Update(CheckResizeAttrs(align_corners_, half_pixel_centers_));
    if (!status.ok()) context->SetStatus(status.WithContext(context->node().op));
  }

 protected:
  // The images at input `index` and the size at `size_index`, checked:
  // the output shape [batch, size[0], size[1], channels].
  StatusOr<TensorShape> ResizedShape(OpKernelContext* context, int index, int size_index,
                                     const char* what) const {
    const Tensor& images = context->input(index);
    auto where = [&] {
      return StrCat(type_string(), " (", what, " ", images.shape(), ", dtype ", images.dtype(),
                    ")");
    };
    Status status = CheckResizeImages(images.shape(), what);
    if (!status.ok()) return status.WithContext(where());
    StatusOr<std::array<int64_t, 2>> size = ResizeSizeValues(context->input(size_index), "size");
    if (!size.ok()) return size.status().WithContext(where());
    StatusOr<TensorShape> shape = TensorShape::FromDims(std::array<int64_t, 4>{
        images.dim_size(0), (*size)[0], (*size)[1], images.dim_size(3)});
    if (!shape.ok()) return shape.status().WithContext(where());
    return shape;
  }

  bool align_corners_ = false;
  bool half_pixel_centers_ = false;
};

template <typename T>
class ResizeBilinearOp : public ResizeOpBase {
 public:
  using ResizeOpBase::ResizeOpBase;

  void Compute(OpKernelContext* context) override {
    StatusOr<TensorShape> shape = ResizedShape(context, 0, 1, "images");
    OP_REQUIRES_OK(context, shape.status());
    const Tensor& images = context->input(0);
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, *shape, &out));
    if (out->NumElements() == 0) return;
    const int64_t batch = images.dim_size(0), in_rows = images.dim_size(1),
                  in_cols = images.dim_size(2), channels = images.dim_size(3);
    const int64_t out_rows = shape->dim_size(1), out_cols = shape->dim_size(2);
    const std::vector<LinearSample> ys =
        LinearSamples(in_rows, out_rows, align_corners_, half_pixel_centers_);
    const std::vector<LinearSample> xs =
        LinearSamples(in_cols, out_cols, align_corners_, half_pixel_centers_);
    const T* x = images.data<T>();
    float* y = out->data<float>();
    context->device()->intra_op_pool()->ParallelFor(
        batch * out_rows, out_cols * channels * 8, [&](int64_t first, int64_t last) {
          for (int64_t row = first; row < last; ++row) {
            const int64_t n = row / out_rows;
            const LinearSample& sy = ys[row % out_rows];
            const T* top = x + (n * in_rows + sy.lower) * in_cols * channels;
            const T* bottom = x + (n * in_rows + sy.upper) * in_cols * channels;
            float* o = y + row * out_cols * channels;
            for (int64_t j = 0; j < out_cols; ++j) {
              const LinearSample& sx = xs[j];
              const T* tl = top + sx.lower * channels;
              const T* tr = top + sx.upper * channels;
              const T* bl = bottom + sx.lower * channels;
              const T* br = bottom + sx.upper * channels;
              for (int64_t c = 0; c < channels; ++c) {
                const float t = static_cast<float>(tl[c]) +
                                (static_cast<float>(tr[c]) - static_cast<float>(tl[c])) * sx.lerp;
                const float b = static_cast<float>(bl[c]) +
                                (static_cast<float>(br[c]) - static_cast<float>(bl[c])) * sx.lerp;
                o[j * channels + c] = t + (b - t) * sy.lerp;
              }
            }
          }
        });
  }
};

template <typename T>
class ResizeNearestNeighborOp : public ResizeOpBase {
 public:
  using ResizeOpBase::ResizeOpBase;

  void Compute(OpKernelContext* context) override {
    StatusOr<TensorShape> shape = ResizedShape(context, 0, 1, "images");
    OP_REQUIRES_OK(context, shape.status());
    const Tensor& images = context->input(0);
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, *shape, &out));
    if (out->NumElements() == 0) return;
    const int64_t batch = images.dim_size(0), in_rows = images.dim_size(1),
                  in_cols = images.dim_size(2), channels = images.dim_size(3);
    const int64_t out_rows = shape->dim_size(1), out_cols = shape->dim_size(2);
    const std::vector<int64_t> ys =
        NearestSamples(in_rows, out_rows, align_corners_, half_pixel_centers_);
    const std::vector<int64_t> xs =
        NearestSamples(in_cols, out_cols, align_corners_, half_pixel_centers_);
    const T* x = images.data<T>();
    T* y = out->data<T>();
    context->device()->intra_op_pool()->ParallelFor(
        batch * out_rows, out_cols * channels, [&](int64_t first, int64_t last) {
          for (int64_t row = first; row < last; ++row) {
            const int64_t n = row / out_rows;
            const T* source = x + (n * in_rows + ys[row % out_rows]) * in_cols * channels;
            T* o = y + row * out_cols * channels;
            for (int64_t j = 0; j < out_cols; ++j) {
              std::copy_n(source + xs[j] * channels, channels, o + j * channels);
            }
          }
        });
  }
};

// The gradient for the images: each resized pixel's gradient spread over
// the (up to four) input pixels it was blended from, by the same weights.
template <typename T>
class ResizeBilinearGradOp : public ResizeOpBase {
 public:
  using ResizeOpBase::ResizeOpBase;

  void Compute(OpKernelContext* context) override {
    const Tensor& grads = context->input(0);
    const Tensor& original = context->input(1);
    auto where = [&] {
      return StrCat("ResizeBilinearGrad (grads ", grads.shape(), ", original_image ",
                    original.shape(), ", dtype ", kDTypeOf<T>, ")");
    };
    Status status = CheckResizeImages(grads.shape(), "grads");
    status.Update(CheckResizeImages(original.shape(), "original_image"));
    if (status.ok() && (grads.dim_size(0) != original.dim_size(0) ||
                        grads.dim_size(3) != original.dim_size(3))) {
      status = errors::InvalidArgument("grads and original_image must have the same batch and "
                                       "channels");
    }
    OP_REQUIRES_OK(context, status.WithContext(where()));
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, original.shape(), &out));
    if (out->NumElements() == 0) return;
    const int64_t batch = grads.dim_size(0), rows = grads.dim_size(1), cols = grads.dim_size(2),
                  channels = grads.dim_size(3);
    const int64_t in_rows = original.dim_size(1), in_cols = original.dim_size(2);
    const std::vector<LinearSample> ys =
        LinearSamples(in_rows, rows, align_corners_, half_pixel_centers_);
    const std::vector<LinearSample> xs =
        LinearSamples(in_cols, cols, align_corners_, half_pixel_centers_);
    const float* g = grads.data<float>();
    T* dx = out->data<T>();
    const int64_t image = in_rows * in_cols * channels;
    context->device()->intra_op_pool()->ParallelFor(
        batch, rows * cols * channels * 8, [&](int64_t first, int64_t last) {
          std::vector<float> acc(image);
          for (int64_t n = first; n < last; ++n) {
            std::fill(acc.begin(), acc.end(), 0.0f);
            for (int64_t i = 0; i < rows; ++i) {
              const LinearSample& sy = ys[i];
              float* top = acc.data() + sy.lower * in_cols * channels;
              float* bottom = acc.data() + sy.upper * in_cols * channels;
              for (int64_t j = 0; j < cols; ++j) {
                const LinearSample& sx = xs[j];
                const float* go = g + ((n * rows + i) * cols + j) * channels;
                for (int64_t c = 0; c < channels; ++c) {
                  const float top_g = go[c] * (1 - sy.lerp), bottom_g = go[c] * sy.lerp;
                  top[sx.lower * channels + c] += top_g * (1 - sx.lerp);
                  top[sx.upper * channels + c] += top_g * sx.lerp;
                  bottom[sx.lower * channels + c] += bottom_g * (1 - sx.lerp);
                  bottom[sx.upper * channels + c] += bottom_g * sx.lerp;
                }
              }
            }
            T* o = dx + n * image;
            for (int64_t k = 0; k < image; ++k) o[k] = static_cast<T>(acc[k]);
          }
        });
  }
};

// The gradient for the images: each resized pixel's gradient added to the
// input pixel it copied. grads is the resized image; size the original's.
template <typename T>
class ResizeNearestNeighborGradOp : public ResizeOpBase {
 public:
  using ResizeOpBase::ResizeOpBase;

  void Compute(OpKernelContext* context) override {
    StatusOr<TensorShape> shape = ResizedShape(context, 0, 1, "grads");
    OP_REQUIRES_OK(context, shape.status());
    const Tensor& grads = context->input(0);
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, *shape, &out));
    if (out->NumElements() == 0) return;
    const int64_t batch = grads.dim_size(0), rows = grads.dim_size(1), cols = grads.dim_size(2),
                  channels = grads.dim_size(3);
    const int64_t out_rows = shape->dim_size(1), out_cols = shape->dim_size(2);
    const std::vector<int64_t> ys =
        NearestSamples(out_rows, rows, align_corners_, half_pixel_centers_);
    const std::vector<int64_t> xs =
        NearestSamples(out_cols, cols, align_corners_, half_pixel_centers_);
    const T* g = grads.data<T>();
    T* dx = out->data<T>();
    const int64_t image = out_rows * out_cols * channels;
    using Acc = std::conditional_t<std::is_integral_v<T>, T,
                                   std::conditional_t<std::is_same_v<T, double>, double, float>>;
    context->device()->intra_op_pool()->ParallelFor(
        batch, rows * cols * channels, [&](int64_t first, int64_t last) {
          std::vector<Acc> acc(image);
          for (int64_t n = first; n < last; ++n) {
            std::fill(acc.begin(), acc.end(), Acc(0));
            for (int64_t i = 0; i < rows; ++i) {
              Acc* target = acc.data() + ys[i] * out_cols * channels;
              for (int64_t j = 0; j < cols; ++j) {
                const T* go = g + ((n * rows + i) * cols + j) * channels;
                Acc* t = target + xs[j] * channels;
                for (int64_t c = 0; c < channels; ++c) t[c] += static_cast<Acc>(go[c]);
              }
            }
            T* o = dx + n * image;
            for (int64_t k = 0; k < image; ++k) o[k] = static_cast<T>(acc[k]);
          }
        });
  }
};

}  // namespace

void RegisterImageResizeKernels(KernelRegistry* registry) {
  ForEachType<int8_t, uint8_t, int16_t, uint16_t, int32_t, int64_t, Eigen::bfloat16, Eigen::half,
              float, double>([&]<typename T>() {
    registry->Register(KernelBuilder("ResizeBilinear").TypeConstraint<T>("T"),
                       MakeKernel<ResizeBilinearOp<T>>);
    registry->Register(KernelBuilder("ResizeNearestNeighbor").TypeConstraint<T>("T"),
                       MakeKernel<ResizeNearestNeighborOp<T>>);
  });
  ForEachType<float, Eigen::bfloat16, Eigen::half, double>([&]<typename T>() {
    registry->Register(KernelBuilder("ResizeBilinearGrad").TypeConstraint<T>("T"),
                       MakeKernel<ResizeBilinearGradOp<T>>);
  });
  ForEachType<uint8_t, int8_t, int32_t, Eigen::half, float, double, Eigen::bfloat16>(
      [&]<typename T>() {
        registry->Register(KernelBuilder("ResizeNearestNeighborGrad").TypeConstraint<T>("T"),
                           MakeKernel<ResizeNearestNeighborGradOp<T>>);
      });
}

}  // namespace weir
