// RGBToHSV, HSVToRGB, AdjustContrastv2, AdjustHue and AdjustSaturation:
// per-pixel colour math along the last dimension (3 channels), computed in
// float (double for double images). Hue, saturation and value are in [0, 1].
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "weir/framework/kernel_registry.h"
#include "weir/kernels/type_list.h"

namespace weir {
namespace {

template <typename T>
using Compute = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <typename F>
void RgbToHsv(F r, F g, F b, F* h, F* s, F* v) {
  const F max = std::max(r, std::max(g, b));
  const F min = std::min(r, std::min(g, b));
  const F range = max - min;
  *v = max;
  *s = max > 0 ? range / max : F(0);
  F hue = 0;
  if (range > 0) {
    const F norm = F(1) / (F(6) * range);
    if (r == max) {
      hue = norm * (g - b);
    } else if (g == max) {
      hue = norm * (b - r) + F(2) / F(6);
    } else {
      hue = norm * (r - g) + F(4) / F(6);
    }
  }
  *h = hue < 0 ? hue + F(1) : hue;
}

template <typename F>
void HsvToRgb(F h, F s, F v, F* r, F* g, F* b) {
  const F dh = h * F(6);
  auto clamp01 = [](F x) { return std::min(F(1), std::max(F(0), x)); };
  const F dr = clamp01(std::abs(dh - F(3)) - F(1));
  const F dg = clamp01(F(2) - std::abs(dh - F(2)));
  const F db = clamp01(F(2) - std::abs(dh - F(4)));
  const F one_minus_s = F(1) - s;
  *r = (one_minus_s + s * dr) * v;
  *g = (one_minus_s + s * dg) * v;
  *b = (one_minus_s + s * db) * v;
}

// The images input (last dimension 3) and the scalar at `scalar_input`
// (-1: none), checked; the output allocated with the images' shape.
template <typename T>
bool PrepareColor(OpKernelContext* context, int min_rank, bool channels3, int scalar_input,
                  float* scalar, Tensor** output) {
  const std::string& op = context->op_kernel().type_string();
  const Tensor& images = context->input(0);
  if (images.dims() < min_rank || (channels3 && images.dim_size(images.dims() - 1) != 3)) {
    context->SetStatus(errors::InvalidArgument(
        op, ": images must have rank >= ", min_rank, channels3 ? " and 3 channels last" : "",
        ", got shape ", images.shape(), " of ", images.dtype()));
    return false;
  }
  if (scalar_input >= 0) {
    const Tensor& t = context->input(scalar_input);
    if (t.dims() != 0) {
      context->SetStatus(errors::InvalidArgument(op, ": input ", scalar_input,
                                                 " must be a scalar, got shape ", t.shape()));
      return false;
    }
    *scalar = t.data<float>()[0];
  }
  Status status = context->allocate_output(0, images.shape(), output);
  context->SetStatus(status);
  return status.ok();
}

// Applies fn(r, g, b) -> (r, g, b) (in Compute<T>) to every pixel.
template <typename T, typename Fn>
void ForEachPixel(const Tensor& in, Tensor* out, Fn fn) {
  using F = Compute<T>;
  const T* x = in.data<T>();
  T* y = out->data<T>();
  const int64_t pixels = in.NumElements() / 3;
  for (int64_t p = 0; p < pixels; ++p) {
    F a = static_cast<F>(x[3 * p]), b = static_cast<F>(x[3 * p + 1]),
      c = static_cast<F>(x[3 * p + 2]);
    fn(&a, &b, &c);
    y[3 * p] = static_cast<T>(a);
    y[3 * p + 1] = static_cast<T>(b);
    y[3 * p + 2] = static_cast<T>(c);
  }
}

template <typename T, bool kToHsv>
class ColorSpaceOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    Tensor* output;
    float unused;
    if (!PrepareColor<T>(context, 1, true, -1, &unused, &output)) return;
    using F = ::weir::Compute<T>;
    ForEachPixel<T>(context->input(0), output, [](F* a, F* b, F* c) {
      F p, q, r;
      if (kToHsv) {
        RgbToHsv(*a, *b, *c, &p, &q, &r);
      } else {
        HsvToRgb(*a, *b, *c, &p, &q, &r);
      }
      *a = p, *b = q, *c = r;
    });
  }
};

enum class Adjust { kHue, kSaturation };

template <typename T, Adjust kWhat>
class AdjustHsvOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    Tensor* output;
    float amount = 0;
    if (!PrepareColor<T>(context, 3, true, 1, &amount, &output)) return;
    ForEachPixel<T>(context->input(0), output, [amount](float* r, float* g, float* b) {
      float h, s, v;
      RgbToHsv(*r, *g, *b, &h, &s, &v);
      if (kWhat == Adjust::kHue) {
        h = std::fmod(h + amount, 1.0f);
        if (h < 0) h += 1.0f;
      } else {
        s = std::min(1.0f, std::max(0.0f, s * amount));
      }
      HsvToRgb(h, s, v, r, g, b);
    });
  }
};

// (x - mean) * factor + mean, the mean of each channel over the image's
// height and width (the two dimensions before the channels).
template <typename T>
class AdjustContrastOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    Tensor* output;
    float factor = 0;
    if (!PrepareColor<T>(context, 3, false, 1, &factor, &output)) return;
    const Tensor& images = context->input(0);
    const int rank = images.dims();
    const int64_t channels = images.dim_size(rank - 1);
    const int64_t pixels = images.dim_size(rank - 2) * images.dim_size(rank - 3);
    const int64_t plane = pixels * channels;
    const int64_t batch = plane == 0 ? 0 : images.NumElements() / plane;
    const T* x = images.data<T>();
    T* y = output->data<T>();
    std::vector<double> mean(channels);
    for (int64_t b = 0; b < batch; ++b) {
      std::fill(mean.begin(), mean.end(), 0.0);
      const T* xb = x + b * plane;
      T* yb = y + b * plane;
      for (int64_t p = 0; p < pixels; ++p) {
        for (int64_t c = 0; c < channels; ++c) mean[c] += static_cast<float>(xb[p * channels + c]);
      }
      for (int64_t c = 0; c < channels; ++c) mean[c] /= static_cast<double>(pixels);
      for (int64_t p = 0; p < pixels; ++p) {
        for (int64_t c = 0; c < channels; ++c) {
          const float m = static_cast<float>(mean[c]);
          yb[p * channels + c] =
              static_cast<T>((static_cast<float>(xb[p * channels + c]) - m) * factor + m);
        }
      }
    }
  }
};

}  // namespace

void RegisterImageColorKernels(KernelRegistry* registry) {
  ForEachType<Eigen::half, Eigen::bfloat16, float, double>([&]<typename T>() {
    registry->Register(KernelBuilder("RGBToHSV").TypeConstraint<T>("T"),
                       MakeKernel<ColorSpaceOp<T, true>>);
    registry->Register(KernelBuilder("HSVToRGB").TypeConstraint<T>("T"),
                       MakeKernel<ColorSpaceOp<T, false>>);
  });
  ForEachType<Eigen::half, float>([&]<typename T>() {
    registry->Register(KernelBuilder("AdjustContrastv2").TypeConstraint<T>("T"),
                       MakeKernel<AdjustContrastOp<T>>);
    registry->Register(KernelBuilder("AdjustHue").TypeConstraint<T>("T"),
                       MakeKernel<AdjustHsvOp<T, Adjust::kHue>>);
    registry->Register(KernelBuilder("AdjustSaturation").TypeConstraint<T>("T"),
                       MakeKernel<AdjustHsvOp<T, Adjust::kSaturation>>);
  });
}

}  // namespace weir
