// ResizeArea: each output pixel is the mean of the input area it covers
// (scale = in / out per dim, (in - 1) / (out - 1) with align_corners), input
// pixels weighted by their overlap with it; float out, in float as
// TensorFlow computes it.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "weir/framework/image_resize_shape.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/type_list.h"

namespace weir {
namespace {

// The input cells one output cell covers along one dim, with their weights.
struct AreaSpan {
  int64_t start = 0;
  std::vector<float> weights;  // for start, start + 1, ...
};

std::vector<AreaSpan> AreaSpans(int64_t in, int64_t out, float scale) {
  std::vector<AreaSpan> spans(out);
  for (int64_t o = 0; o < out; ++o) {
    const float begin = o * scale, end = (o + 1) * scale;
    const int64_t first = static_cast<int64_t>(std::floor(begin));
    const int64_t last = static_cast<int64_t>(std::ceil(end));
    spans[o].start = first;
    for (int64_t i = first; i < last; ++i) {
      const float lo = std::max(static_cast<float>(i), begin);
      const float hi = std::min(static_cast<float>(i + 1), end);
      spans[o].weights.push_back(hi - lo);
    }
  }
  (void)in;
  return spans;
}

template <typename T>
class ResizeAreaOp : public OpKernel {
 public:
  explicit ResizeAreaOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("align_corners", &align_corners_));
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& images = context->input(0);
    auto where = [&] {
      return StrCat("ResizeArea (images ", images.shape(), ", dtype ", images.dtype(), ")");
    };
    Status status = CheckResizeImages(images.shape(), "images");
    OP_REQUIRES(context, status.ok(), status.WithContext(where()));
    StatusOr<std::array<int64_t, 2>> size = ResizeSizeValues(context->input(1), "size");
    OP_REQUIRES(context, size.ok(), size.status().WithContext(where()));
    StatusOr<TensorShape> shape = TensorShape::FromDims(
        std::array<int64_t, 4>{images.dim_size(0), (*size)[0], (*size)[1], images.dim_size(3)});
    OP_REQUIRES(context, shape.ok(), shape.status().WithContext(where()));
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, *shape, &out));
    if (out->NumElements() == 0) return;
    const int64_t batch = images.dim_size(0), in_rows = images.dim_size(1),
                  in_cols = images.dim_size(2), channels = images.dim_size(3);
    const int64_t out_rows = (*size)[0], out_cols = (*size)[1];
    auto scale = [&](int64_t in, int64_t o) {
      return align_corners_ && o > 1 ? static_cast<float>(in - 1) / static_cast<float>(o - 1)
                                     : static_cast<float>(in) / static_cast<float>(o);
    };
    const float row_scale = scale(in_rows, out_rows), col_scale = scale(in_cols, out_cols);
    const std::vector<AreaSpan> ys = AreaSpans(in_rows, out_rows, row_scale);
    const std::vector<AreaSpan> xs = AreaSpans(in_cols, out_cols, col_scale);
    const float norm = 1.0f / (row_scale * col_scale);
    const T* in = images.data<T>();
    float* o = out->data<float>();
    std::vector<float> sum(channels), row(channels);
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t y = 0; y < out_rows; ++y) {
        for (int64_t x = 0; x < out_cols; ++x) {
          std::fill(sum.begin(), sum.end(), 0.0f);
          for (size_t i = 0; i < ys[y].weights.size(); ++i) {
            // Cells past the edge repeat the last row or col.
            const int64_t iy = std::min<int64_t>(ys[y].start + i, in_rows - 1);
            std::fill(row.begin(), row.end(), 0.0f);
            for (size_t j = 0; j < xs[x].weights.size(); ++j) {
              const int64_t ix = std::min<int64_t>(xs[x].start + j, in_cols - 1);
              const T* pixel = in + ((b * in_rows + iy) * in_cols + ix) * channels;
              for (int64_t c = 0; c < channels; ++c) {
                row[c] += static_cast<float>(pixel[c]) * xs[x].weights[j];
              }
            }
            for (int64_t c = 0; c < channels; ++c) sum[c] += row[c] * ys[y].weights[i];
          }
          float* dst = o + ((b * out_rows + y) * out_cols + x) * channels;
          for (int64_t c = 0; c < channels; ++c) dst[c] = sum[c] * norm;
        }
      }
    }
  }

 private:
  bool align_corners_ = false;
};

}  // namespace

void RegisterResizeAreaKernels(KernelRegistry* registry) {
  ForEachType<int8_t, uint8_t, int16_t, uint16_t, int32_t, int64_t, Eigen::half, float, double,
              Eigen::bfloat16>([&]<typename T>() {
    registry->Register(KernelBuilder("ResizeArea").TypeConstraint<T>("T"),
                       MakeKernel<ResizeAreaOp<T>>);
  });
}

}  // namespace weir
