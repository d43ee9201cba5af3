// DepthwiseConv2dNative and its two backprops on CPU, as direct loops over
// NHWC images with the channels (and their multipliers) innermost, so the
// inner loop runs over contiguous memory; NCHW nodes transpose around them
// (image_layout.h). Half and bfloat16 accumulate in float, float in float,
// double in double; each result is rounded once.
//
// Work split: the forward pass and the input gradient by (image, row) of
// the image they write, the filter gradient by fixed blocks of output rows
// whose partial sums are added in order; results do not depend on the
// thread count. The float gradients run as oneDNN grouped convolutions
// (groups = in_channels, conv_dnnl.h) instead: the loops were 1.5-12x
// slower than TensorFlow's kernels there. Like Conv2D's, their filter
// gradient sums one partial gradient per batch slice, and the slices
// follow the intra-op thread count, so its rounding may differ between
// thread counts. The forward loops are as fast as TensorFlow's and stay.
#include <Eigen/Core>
#include <algorithm>
#include <type_traits>
#include <vector>

#include "weir/base/denormal.h"
#include "weir/base/threadpool.h"
#include "weir/framework/depthwise_conv_dims.h"
#include "weir/framework/kernel_registry.h"
#include "weir/framework/window_shape.h"
#include "weir/kernels/channel_sums.h"
#include "weir/kernels/conv_dnnl.h"
#include "weir/kernels/image_layout.h"
#include "weir/kernels/nn_kernels.h"
#include "weir/kernels/type_list.h"

namespace weir {
namespace {

template <typename T>
using AccumulatorOf = std::conditional_t<std::is_same_v<T, double>, double, float>;

// acc[c * mult + m] += v[c] * w[c * mult + m]: the inner loop of the
// forward pass and the filter gradient. Multiplier 1 (MobileNet's case)
// gets its own loop, which the compiler vectorizes.
template <typename T, typename Acc>
inline void MultiplyAccumulate(const T* v, const T* w, int64_t channels, int64_t mult, Acc* acc) {
  if (mult == 1) {
    for (int64_t c = 0; c < channels; ++c) acc[c] += static_cast<Acc>(v[c]) * static_cast<Acc>(w[c]);
    return;
  }
  for (int64_t c = 0; c < channels; ++c) {
    const Acc a = static_cast<Acc>(v[c]);
    for (int64_t m = 0; m < mult; ++m) acc[c * mult + m] += a * static_cast<Acc>(w[c * mult + m]);
  }
}

template <typename T>
class DepthwiseConvOpBase : public OpKernel {
 public:
  explicit DepthwiseConvOpBase(OpKernelConstruction* context) : OpKernel(context) {
    StatusOr<Window2DAttrs> attrs = GetConv2DAttrs(context->node().attrs);
    if (!attrs.ok()) {
      context->SetStatus(attrs.status().WithContext(context->node().op));
      return;
    }
    attrs_ = *attrs;
    nchw_ = !attrs_.layout.channels_last;
    attrs_.layout.channels_last = true;
  }

  bool IsExpensive() const override { return true; }

 protected:
  using Acc = AccumulatorOf<T>;

  StatusOr<Tensor> ImageIn(OpKernelContext* context, int index) const {
    StatusOr<Tensor> nhwc = ImageAsNhwc(context, nchw_, context->input(index));
    if (!nhwc.ok()) return nhwc.status().WithContext(Context("data_format NCHW"));
    return nhwc;
  }

  // The problem for NHWC `input` and `filter` shapes, `out_backprop`
  // (when given) checked against the output.
  StatusOr<DepthwiseConv2DDims> Dims(const TensorShape& input, const TensorShape& filter,
                                     const TensorShape* out_backprop) const {
    auto node = [&](const TensorShape& s) { return nchw_ ? NhwcToNchwShape(s) : s; };
    const std::string context =
        StrCat("input ", node(input), ", filter ", filter,
               out_backprop ? StrCat(", out_backprop ", node(*out_backprop)) : "");
    StatusOr<DepthwiseConv2DDims> dims = ComputeDepthwiseConv2DDims(attrs_, input, filter);
    if (!dims.ok()) return dims.status().WithContext(Context(context));
    if (out_backprop && *out_backprop != dims->dims.output_shape()) {
      return errors::InvalidArgument(Context(context), ": out_backprop must have shape ",
                                     node(dims->dims.output_shape()),
                                     ", the output of the convolution");
    }
    return dims;
  }

  std::string Context(const std::string& what) const {
    return StrCat(type_string(), " (", what, ", dtype ", kDTypeOf<T>,
                  nchw_ ? ", data_format NCHW" : "", ")");
  }

  // The first and one-past-last filter taps k whose input position
  // out * stride - pad + k * dilation lies in [0, dim.input).
  static std::pair<int64_t, int64_t> ValidTaps(const WindowDim& dim, int64_t out) {
    const int64_t start = out * dim.stride - dim.pad_before;
    int64_t first = 0, last = dim.window;
    if (start < 0) first = (-start + dim.dilation - 1) / dim.dilation;
    const int64_t beyond = dim.input - start;  // taps k with k * dilation < beyond
    if (beyond <= 0) return {0, 0};
    last = std::min(last, (beyond + dim.dilation - 1) / dim.dilation);
    return {std::min(first, last), last};
  }

  // Whether the float gradient pass of `d` goes to oneDNN: every dim
  // non-empty (the loops write the zeros of a sum over nothing).
  static bool UseDnnl(const Window2DDims& d) {
    return std::is_same_v<T, float> && d.batch > 0 && d.in_depth > 0 && d.out_depth > 0 &&
           d.rows.output > 0 && d.cols.output > 0;
  }

  Window2DAttrs attrs_;  // layout NHWC: what the loops see
  bool nchw_ = false;
  DnnlConv2D dnnl_;  // float gradients
};

template <typename T>
class DepthwiseConv2dNativeOp : public DepthwiseConvOpBase<T> {
  using Acc = typename DepthwiseConvOpBase<T>::Acc;

 public:
  using DepthwiseConvOpBase<T>::DepthwiseConvOpBase;

  void Compute(OpKernelContext* context) override {
    ScopedFlushDenormals flush_denormals;
    StatusOr<Tensor> input = this->ImageIn(context, 0);
    OP_REQUIRES_OK(context, input.status());
    const Tensor& filter = context->input(1);
    StatusOr<DepthwiseConv2DDims> dims = this->Dims(input->shape(), filter.shape(), nullptr);
    OP_REQUIRES_OK(context, dims.status());
    NhwcImageOutput image_out(this->nchw_, 0);
    Tensor* out;
    OP_REQUIRES_OK(context,
                   image_out.Allocate(context, kDTypeOf<T>, dims->dims.output_shape(), &out));
    if (out->NumElements() > 0) Forward(context, *dims, input->data<T>(), filter.data<T>(), out);
    OP_REQUIRES_OK(context, image_out.Finish(context));
  }

 private:
  void Forward(OpKernelContext* context, const DepthwiseConv2DDims& dd, const T* x, const T* f,
               Tensor* out) {
    const Window2DDims& d = dd.dims;
    const int64_t channels = d.in_depth, mult = dd.multiplier, depth = d.out_depth;
    T* y = out->data<T>();
    const int64_t cost = d.cols.output * d.rows.window * d.cols.window * depth * 2;
    context->device()->intra_op_pool()->ParallelFor(
        d.batch * d.rows.output, cost, [&](int64_t first, int64_t last) {
          std::vector<Acc> acc(depth);
          for (int64_t row = first; row < last; ++row) {
            const int64_t n = row / d.rows.output, oh = row % d.rows.output;
            const auto [kh0, kh1] = this->ValidTaps(d.rows, oh);
            for (int64_t ow = 0; ow < d.cols.output; ++ow) {
              const auto [kw0, kw1] = this->ValidTaps(d.cols, ow);
              std::fill(acc.begin(), acc.end(), Acc(0));
              for (int64_t kh = kh0; kh < kh1; ++kh) {
                const int64_t ih = oh * d.rows.stride - d.rows.pad_before + kh * d.rows.dilation;
                for (int64_t kw = kw0; kw < kw1; ++kw) {
                  const int64_t iw =
                      ow * d.cols.stride - d.cols.pad_before + kw * d.cols.dilation;
                  const T* v = x + ((n * d.rows.input + ih) * d.cols.input + iw) * channels;
                  const T* w = f + (kh * d.cols.window + kw) * depth;
                  MultiplyAccumulate(v, w, channels, mult, acc.data());
                }
              }
              T* o = y + (row * d.cols.output + ow) * depth;
              for (int64_t k = 0; k < depth; ++k) o[k] = static_cast<T>(acc[k]);
            }
          }
        });
  }
};

template <typename T>
class DepthwiseConv2dNativeBackpropInputOp : public DepthwiseConvOpBase<T> {
  using Acc = typename DepthwiseConvOpBase<T>::Acc;

 public:
  using DepthwiseConvOpBase<T>::DepthwiseConvOpBase;

  void Compute(OpKernelContext* context) override {
    ScopedFlushDenormals flush_denormals;
    StatusOr<TensorShape> input_shape = ShapeFromSizes(context->input(0), 4, "input_sizes");
    OP_REQUIRES_OK(context, input_shape.status().WithContext(this->type_string()));
    const TensorShape nhwc_input = this->nchw_ ? NchwToNhwcShape(*input_shape) : *input_shape;
    StatusOr<Tensor> out_backprop = this->ImageIn(context, 2);
    OP_REQUIRES_OK(context, out_backprop.status());
    const Tensor& filter = context->input(1);
    StatusOr<DepthwiseConv2DDims> dims =
        this->Dims(nhwc_input, filter.shape(), &out_backprop->shape());
    OP_REQUIRES_OK(context, dims.status());
    NhwcImageOutput image_out(this->nchw_, 0);
    Tensor* out;
    OP_REQUIRES_OK(context, image_out.Allocate(context, kDTypeOf<T>, nhwc_input, &out));
    if (out->NumElements() > 0) {
      if constexpr (std::is_same_v<T, float>) {
        if (this->UseDnnl(dims->dims)) {
          OP_REQUIRES_OK(
              context, this->dnnl_
                           .RunDepthwise(context, DnnlConv2D::Pass::kBackwardInput, dims->dims,
                                         out_backprop->data<T>(), filter.data<T>(), out->data<T>())
                           .WithContext(this->Context("oneDNN")));
          OP_REQUIRES_OK(context, image_out.Finish(context));
          return;
        }
      }
      Backward(context, *dims, out_backprop->data<T>(), filter.data<T>(), out->data<T>());
    }
    OP_REQUIRES_OK(context, image_out.Finish(context));
  }

 private:
  // Each input pixel gathers from the outputs whose windows cover it:
  // tap k of output o reads input o * stride - pad + k * dilation.
  void Backward(OpKernelContext* context, const DepthwiseConv2DDims& dd, const T* g, const T* f,
                T* dx) {
    const Window2DDims& d = dd.dims;
    const int64_t channels = d.in_depth, mult = dd.multiplier, depth = d.out_depth;
    const int64_t cost = d.cols.input * d.rows.window * d.cols.window * depth * 2;
    context->device()->intra_op_pool()->ParallelFor(
        d.batch * d.rows.input, cost, [&](int64_t first, int64_t last) {
          std::vector<Acc> acc(channels);
          for (int64_t row = first; row < last; ++row) {
            const int64_t n = row / d.rows.input, ih = row % d.rows.input;
            for (int64_t iw = 0; iw < d.cols.input; ++iw) {
              std::fill(acc.begin(), acc.end(), Acc(0));
              for (int64_t kh = 0; kh < d.rows.window; ++kh) {
                const int64_t sh = ih + d.rows.pad_before - kh * d.rows.dilation;
                if (sh < 0 || sh % d.rows.stride != 0) continue;
                const int64_t oh = sh / d.rows.stride;
                if (oh >= d.rows.output) continue;
                for (int64_t kw = 0; kw < d.cols.window; ++kw) {
                  const int64_t sw = iw + d.cols.pad_before - kw * d.cols.dilation;
                  if (sw < 0 || sw % d.cols.stride != 0) continue;
                  const int64_t ow = sw / d.cols.stride;
                  if (ow >= d.cols.output) continue;
                  const T* go = g + ((n * d.rows.output + oh) * d.cols.output + ow) * depth;
                  const T* w = f + (kh * d.cols.window + kw) * depth;
                  if (mult == 1) {
                    MultiplyAccumulate(go, w, channels, 1, acc.data());
                    continue;
                  }
                  for (int64_t c = 0; c < channels; ++c) {
                    Acc sum = 0;
                    for (int64_t m = 0; m < mult; ++m) {
                      sum += static_cast<Acc>(go[c * mult + m]) * static_cast<Acc>(w[c * mult + m]);
                    }
                    acc[c] += sum;
                  }
                }
              }
              T* o = dx + ((n * d.rows.input + ih) * d.cols.input + iw) * channels;
              for (int64_t c = 0; c < channels; ++c) o[c] = static_cast<T>(acc[c]);
            }
          }
        });
  }
};

template <typename T>
class DepthwiseConv2dNativeBackpropFilterOp : public DepthwiseConvOpBase<T> {
  using Acc = typename DepthwiseConvOpBase<T>::Acc;

 public:
  using DepthwiseConvOpBase<T>::DepthwiseConvOpBase;

  void Compute(OpKernelContext* context) override {
    ScopedFlushDenormals flush_denormals;
    StatusOr<TensorShape> filter_shape = ShapeFromSizes(context->input(1), 4, "filter_sizes");
    OP_REQUIRES_OK(context, filter_shape.status().WithContext(this->type_string()));
    StatusOr<Tensor> input = this->ImageIn(context, 0);
    OP_REQUIRES_OK(context, input.status());
    StatusOr<Tensor> out_backprop = this->ImageIn(context, 2);
    OP_REQUIRES_OK(context, out_backprop.status());
    StatusOr<DepthwiseConv2DDims> dims =
        this->Dims(input->shape(), *filter_shape, &out_backprop->shape());
    OP_REQUIRES_OK(context, dims.status());
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, *filter_shape, &out));
    if (out->NumElements() > 0) {
      if constexpr (std::is_same_v<T, float>) {
        if (this->UseDnnl(dims->dims)) {
          OP_REQUIRES_OK(
              context, this->dnnl_
                           .RunDepthwise(context, DnnlConv2D::Pass::kBackwardFilter, dims->dims,
                                         input->data<T>(), out_backprop->data<T>(), out->data<T>())
                           .WithContext(this->Context("oneDNN")));
          return;
        }
      }
      Backward(context, *dims, input->data<T>(), out_backprop->data<T>(), out->data<T>());
    }
  }

 private:
  // Blocks of output rows (fixed by the shape, channel_sums.h), each
  // adding every tap's terms into its own [taps, depth] sums, which are
  // then added in block order: one pass over the images, and the same
  // result for any thread count.
  void Backward(OpKernelContext* context, const DepthwiseConv2DDims& dd, const T* x, const T* g,
                T* df) {
    const Window2DDims& d = dd.dims;
    const int64_t channels = d.in_depth, mult = dd.multiplier, depth = d.out_depth;
    const int64_t taps = d.rows.window * d.cols.window;
    std::vector<Acc> sums(taps * depth);
    SumRowBlocks<Acc>(
        context->device()->intra_op_pool(), d.batch * d.rows.output, taps * depth, 1,
        [&](int64_t begin, int64_t end, Acc* acc) {
          for (int64_t row = begin; row < end; ++row) {
            const int64_t n = row / d.rows.output, oh = row % d.rows.output;
            const auto [kh0, kh1] = this->ValidTaps(d.rows, oh);
            for (int64_t ow = 0; ow < d.cols.output; ++ow) {
              const auto [kw0, kw1] = this->ValidTaps(d.cols, ow);
              const T* go = g + ((n * d.rows.output + oh) * d.cols.output + ow) * depth;
              for (int64_t kh = kh0; kh < kh1; ++kh) {
                const int64_t ih = oh * d.rows.stride - d.rows.pad_before + kh * d.rows.dilation;
                for (int64_t kw = kw0; kw < kw1; ++kw) {
                  const int64_t iw =
                      ow * d.cols.stride - d.cols.pad_before + kw * d.cols.dilation;
                  const T* v = x + ((n * d.rows.input + ih) * d.cols.input + iw) * channels;
                  MultiplyAccumulate(v, go, channels, mult,
                                     acc + (kh * d.cols.window + kw) * depth);
                }
              }
            }
          }
        },
        sums.data());
    for (int64_t k = 0; k < taps * depth; ++k) df[k] = static_cast<T>(sums[k]);
  }
};

}  // namespace

void RegisterDepthwiseConvKernels(KernelRegistry* registry) {
  ForEachType<float, double, Eigen::half, Eigen::bfloat16>([&]<typename T>() {
    registry->Register(KernelBuilder("DepthwiseConv2dNative").TypeConstraint<T>("T"),
                       MakeKernel<DepthwiseConv2dNativeOp<T>>);
    registry->Register(KernelBuilder("DepthwiseConv2dNativeBackpropInput").TypeConstraint<T>("T"),
                       MakeKernel<DepthwiseConv2dNativeBackpropInputOp<T>>);
    registry->Register(KernelBuilder("DepthwiseConv2dNativeBackpropFilter").TypeConstraint<T>("T"),
                       MakeKernel<DepthwiseConv2dNativeBackpropFilterOp<T>>);
  });
}

}  // namespace weir
