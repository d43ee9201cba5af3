// BiasAdd and BiasAddGrad. NHWC views the value as [rows, channels];
// NCHW (channels in dim 1) as [batch, channels, inner], each (image,
// channel) plane contiguous.
#include <algorithm>

#include "weir/base/denormal.h"
#include "weir/base/threadpool.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/channel_sums.h"
#include "weir/kernels/nn_kernels.h"
#include "weir/kernels/type_list.h"

namespace weir {
namespace {

// Reads data_format: whether channels are dim 1 (NCHW) rather than last.
Status GetChannelsFirst(OpKernelConstruction* context, bool* channels_first) {
  std::string format;
  WEIR_RETURN_IF_ERROR(context->GetAttr("data_format", &format));
  *channels_first = format == "NCHW";
  return Status::OK();
}

// The [batch, channels, inner] view of an NCHW value of rank >= 2.
struct ChannelsFirstView {
  int64_t batch, channels, inner;
  explicit ChannelsFirstView(const TensorShape& shape)
      : batch(shape.dim_size(0)), channels(shape.dim_size(1)) {
    inner = 1;
    for (int i = 2; i < shape.rank(); ++i) inner *= shape.dim_size(i);  // <= num_elements
  }
};

template <typename T>
class BiasAddOp : public OpKernel {
 public:
  explicit BiasAddOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(GetChannelsFirst(context, &channels_first_));
  }

  void Compute(OpKernelContext* context) override {
    ScopedFlushDenormals flush_denormals;
    const Tensor& value = context->input(0);
    const Tensor& bias = context->input(1);
    OP_REQUIRES(context, value.dims() >= 2 && bias.dims() == 1,
                errors::InvalidArgument("BiasAdd: value ", value.shape(),
                                        " must have rank at least 2 and bias ", bias.shape(),
                                        " rank 1 (dtype ", kDTypeOf<T>, ")"));
    const int64_t channels = value.dim_size(channels_first_ ? 1 : value.dims() - 1);
    OP_REQUIRES(context, bias.dim_size(0) == channels,
                errors::InvalidArgument("BiasAdd: bias ", bias.shape(),
                                        " must have one entry per channel of value ", value.shape(),
                                        " (", channels, ", data_format ",
                                        channels_first_ ? "NCHW" : "NHWC", ")"));
    const TensorShape shape = value.shape();
    // The value's buffer is reused when nothing else holds it; it then
    // lives in `out` (and `value` is empty), and each element is read
    // before it is overwritten.
    Tensor* out = context->forward_input_to_output(0, 0, shape);
    const bool forwarded = out != nullptr;
    if (!forwarded) OP_REQUIRES_OK(context, context->allocate_output(0, shape, &out));
    if (shape.num_elements() == 0) return;
    const T* in = forwarded ? out->data<T>() : value.data<T>();
    const T* b = bias.data<T>();
    T* o = out->data<T>();
    if (channels_first_) {
      const ChannelsFirstView v(shape);
      context->device()->intra_op_pool()->ParallelFor(
          v.batch * v.channels, v.inner, [&](int64_t first, int64_t last) {
            for (int64_t plane = first; plane < last; ++plane) {
              const T add = b[plane % v.channels];
              const T* x = in + plane * v.inner;
              T* y = o + plane * v.inner;
              for (int64_t i = 0; i < v.inner; ++i) y[i] = x[i] + add;
            }
          });
      return;
    }
    const int64_t rows = shape.num_elements() / channels;
    context->device()->intra_op_pool()->ParallelFor(rows, channels,
                                                    [&](int64_t first, int64_t last) {
                                                      for (int64_t r = first; r < last; ++r) {
                                                        const T* x = in + r * channels;
                                                        T* y = o + r * channels;
                                                        for (int64_t c = 0; c < channels; ++c)
                                                          y[c] = x[c] + b[c];
                                                      }
                                                    });
  }

 private:
  bool channels_first_ = false;
};

template <typename T>
class BiasAddGradOp : public OpKernel {
 public:
  explicit BiasAddGradOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(GetChannelsFirst(context, &channels_first_));
  }

  void Compute(OpKernelContext* context) override {
    ScopedFlushDenormals flush_denormals;
    const Tensor& grad = context->input(0);
    OP_REQUIRES(context, grad.dims() >= 2,
                errors::InvalidArgument("BiasAddGrad: out_backprop ", grad.shape(),
                                        " must have rank at least 2 (dtype ", kDTypeOf<T>, ")"));
    const int64_t channels = grad.dim_size(channels_first_ ? 1 : grad.dims() - 1);
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape({channels}), &out));
    if (channels == 0) return;
    const T* g = grad.data<T>();
    std::vector<double> sums(channels);
    if (channels_first_) {
      // Blocks of images; each adds its planes channel by channel.
      const ChannelsFirstView v(grad.shape());
      SumRowBlocks<double>(
          context->device()->intra_op_pool(), v.batch, channels, 1,
          [&](int64_t begin, int64_t end, double* acc) {
            for (int64_t n = begin; n < end; ++n) {
              for (int64_t c = 0; c < channels; ++c) {
                const T* plane = g + (n * channels + c) * v.inner;
                double sum = 0;
                for (int64_t i = 0; i < v.inner; ++i) sum += plane[i];
                acc[c] += sum;
              }
            }
          },
          sums.data());
      std::copy(sums.begin(), sums.end(), out->data<T>());
      return;
    }
    const int64_t rows = grad.NumElements() / channels;
    SumRowBlocks<double>(
        context->device()->intra_op_pool(), rows, channels, 1,
        [&](int64_t begin, int64_t end, double* acc) {
          for (int64_t r = begin; r < end; ++r) {
            const T* row = g + r * channels;
            for (int64_t c = 0; c < channels; ++c) acc[c] += row[c];
          }
        },
        sums.data());
    std::copy(sums.begin(), sums.end(), out->data<T>());
  }

 private:
  bool channels_first_ = false;
};

}  // namespace

void RegisterBiasKernels(KernelRegistry* registry) {
  ForEachType<float, double>([&]<typename T>() {
    registry->Register(KernelBuilder("BiasAdd").TypeConstraint<T>("T"), MakeKernel<BiasAddOp<T>>);
    registry->Register(KernelBuilder("BiasAddGrad").TypeConstraint<T>("T"),
                       MakeKernel<BiasAddGradOp<T>>);
  });
}

}  // namespace weir
