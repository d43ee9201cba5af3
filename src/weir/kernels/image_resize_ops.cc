// ResizeBilinear, ResizeBicubic, ResizeNearestNeighbor and their gradients
// on NHWC images, with TensorFlow's sampling rules, in float as TensorFlow
// computes them:
//   scale = (in - 1) / (out - 1) with align_corners (and out > 1), else
//           in / out;
//   the source of output pixel i is i * scale, or (i + 0.5) * scale - 0.5
//   with half_pixel_centers (bilinear) / (i + 0.5) * scale (nearest);
//   bilinear blends pixels floor(src) and ceil(src), clamped to the image,
//   by src - floor(src); nearest takes round(src) with align_corners, else
//   floor(src), clamped.
// ResizeBicubic samples at the bilinear sources too and blends the 4 x 4
// pixels around each with Keys' cubic convolution weights, as TensorFlow
// does: the fractional position rounded to 1/1024 (TensorFlow reads the
// weights from a table of that step); a = -0.75 with the input indices
// clamped, or with half_pixel_centers a = -0.5 with pixels outside the image
// weighted 0 and the weights renormalized to sum to 1.
// The forward ops split over the pool by output row; the gradients, which
// scatter, by image, so no two tasks write one element.
#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "weir/base/threadpool.h"
#include "weir/framework/image_resize_shape.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/nn_kernels.h"
#include "weir/kernels/type_list.h"

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

// Where output pixel i samples the input, per dim, for bicubic
// interpolation: four input indices and their weights.
struct CubicSample {
  std::array<int64_t, 4> index;
  std::array<float, 4> weight;
};

// Keys' cubic convolution kernel with parameter a at distance |x| < 2.
float KeysCubic(float x, float a) {
  x = std::abs(x);
  if (x <= 1.0f) return ((a + 2.0f) * x - (a + 3.0f)) * x * x + 1.0f;
  return ((a * x - 5.0f * a) * x + 8.0f * a) * x - 4.0f * a;
}

std::vector<CubicSample> CubicSamples(int64_t in, int64_t out, bool align_corners,
                                      bool half_pixel_centers) {
  constexpr int kSteps = 1024;  // the fractional position's resolution
  const float scale = ResizeScale(in, out, align_corners);
  const float a = half_pixel_centers ? -0.5f : -0.75f;
  std::vector<CubicSample> samples(out);
  for (int64_t i = 0; i < out; ++i) {
    const float src = half_pixel_centers ? (static_cast<float>(i) + 0.5f) * scale - 0.5f
                                         : static_cast<float>(i) * scale;
    const int64_t base = static_cast<int64_t>(std::floor(src));
    const int64_t step = std::lrint((src - static_cast<float>(base)) * kSteps);
    const float t = static_cast<float>(step) / kSteps;
    CubicSample& s = samples[i];
    s.weight = {KeysCubic(1.0f + t, a), KeysCubic(t, a), KeysCubic(1.0f - t, a),
                KeysCubic(2.0f - t, a)};
    float sum = 0.0f;
    for (int k = 0; k < 4; ++k) {
      const int64_t at = base - 1 + k;
      s.index[k] = std::clamp<int64_t>(at, 0, in - 1);
      if (half_pixel_centers && s.index[k] != at) s.weight[k] = 0.0f;
      sum += s.weight[k];
    }
    if (half_pixel_centers && std::abs(sum) >= 1000.0f * std::numeric_limits<float>::min()) {
      for (float& w : s.weight) w /= sum;
    }
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

template <typename T>
class ResizeBicubicOp : public ResizeOpBase {
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
    const std::vector<CubicSample> ys =
        CubicSamples(in_rows, out_rows, align_corners_, half_pixel_centers_);
    const std::vector<CubicSample> xs =
        CubicSamples(in_cols, out_cols, align_corners_, half_pixel_centers_);
    const T* x = images.data<T>();
    float* y = out->data<float>();
    context->device()->intra_op_pool()->ParallelFor(
        batch * out_rows, out_cols * channels * 40, [&](int64_t first, int64_t last) {
          for (int64_t row = first; row < last; ++row) {
            const int64_t n = row / out_rows;
            const CubicSample& sy = ys[row % out_rows];
            float* o = y + row * out_cols * channels;
            for (int64_t j = 0; j < out_cols; ++j) {
              const CubicSample& sx = xs[j];
              for (int64_t c = 0; c < channels; ++c) {
                float value = 0.0f;
                for (int r = 0; r < 4; ++r) {
                  const T* line = x + ((n * in_rows + sy.index[r]) * in_cols) * channels + c;
                  float across = 0.0f;
                  for (int k = 0; k < 4; ++k) {
                    across += sx.weight[k] * static_cast<float>(line[sx.index[k] * channels]);
                  }
                  value += sy.weight[r] * across;
                }
                o[j * channels + c] = value;
              }
            }
          }
        });
  }
};

// The gradient for the images of ResizeBicubic: each resized pixel's
// gradient spread over the 16 input pixels it was blended from, by the same
// weights.
template <typename T>
class ResizeBicubicGradOp : public ResizeOpBase {
 public:
  using ResizeOpBase::ResizeOpBase;

  void Compute(OpKernelContext* context) override {
    const Tensor& grads = context->input(0);
    const Tensor& original = context->input(1);
    Status status = CheckResizeImages(grads.shape(), "grads");
    status.Update(CheckResizeImages(original.shape(), "original_image"));
    if (status.ok() &&
        (grads.dim_size(0) != original.dim_size(0) || grads.dim_size(3) != original.dim_size(3))) {
      status = errors::InvalidArgument(
          "grads and original_image must have the same batch and "
          "channels");
    }
    OP_REQUIRES_OK(context, status.WithContext(StrCat("ResizeBicubicGrad (grads ", grads.shape(),
                                                      ", original_image ", original.shape(),
                                                      ", dtype ", kDTypeOf<T>, ")")));
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, original.shape(), &out));
    if (out->NumElements() == 0) return;
    const int64_t batch = grads.dim_size(0), rows = grads.dim_size(1), cols = grads.dim_size(2),
                  channels = grads.dim_size(3);
    const int64_t in_rows = original.dim_size(1), in_cols = original.dim_size(2);
    const std::vector<CubicSample> ys =
        CubicSamples(in_rows, rows, align_corners_, half_pixel_centers_);
    const std::vector<CubicSample> xs =
        CubicSamples(in_cols, cols, align_corners_, half_pixel_centers_);
    const float* g = grads.data<float>();
    T* dx = out->data<T>();
    const int64_t image = in_rows * in_cols * channels;
    context->device()->intra_op_pool()->ParallelFor(
        batch, rows * cols * channels * 40, [&](int64_t first, int64_t last) {
          std::vector<float> acc(image);
          for (int64_t n = first; n < last; ++n) {
            std::fill(acc.begin(), acc.end(), 0.0f);
            for (int64_t i = 0; i < rows; ++i) {
              const CubicSample& sy = ys[i];
              for (int64_t j = 0; j < cols; ++j) {
                const CubicSample& sx = xs[j];
                const float* go = g + ((n * rows + i) * cols + j) * channels;
                for (int r = 0; r < 4; ++r) {
                  for (int k = 0; k < 4; ++k) {
                    const float w = sy.weight[r] * sx.weight[k];
                    float* target = acc.data() + (sy.index[r] * in_cols + sx.index[k]) * channels;
                    for (int64_t c = 0; c < channels; ++c) target[c] += w * go[c];
                  }
                }
              }
            }
            T* o = dx + n * image;
            for (int64_t k = 0; k < image; ++k) o[k] = static_cast<T>(acc[k]);
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
    registry->Register(KernelBuilder("ResizeBicubic").TypeConstraint<T>("T"),
                       MakeKernel<ResizeBicubicOp<T>>);
  });
  ForEachType<float, double>([&]<typename T>() {
    registry->Register(KernelBuilder("ResizeBicubicGrad").TypeConstraint<T>("T"),
                       MakeKernel<ResizeBicubicGradOp<T>>);
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
