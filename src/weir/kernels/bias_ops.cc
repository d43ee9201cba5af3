// BiasAdd and BiasAddGrad on channels-last data (NHWC); NCHW is
// Unimplemented on CPU. Both view the value as [rows, channels].
#include <algorithm>

#include "weir/base/denormal.h"
#include "weir/base/threadpool.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/channel_sums.h"
#include "weir/kernels/nn_kernels.h"
#include "weir/kernels/type_list.h"

namespace weir {
namespace {

// Reads data_format; only NHWC has CPU kernels.
Status CheckChannelsLast(OpKernelConstruction* context) {
  std::string format;
  WEIR_RETURN_IF_ERROR(context->GetAttr("data_format", &format));
  if (format != "NHWC") {
    return errors::Unimplemented(context->node().op, ": data_format ", format,
                                 " is not supported on CPU; use data_format NHWC");
  }
  return Status::OK();
}

template <typename T>
class BiasAddOp : public OpKernel {
 public:
  explicit BiasAddOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(CheckChannelsLast(context));
  }

  void Compute(OpKernelContext* context) override {
    ScopedFlushDenormals flush_denormals;
    const Tensor& value = context->input(0);
    const Tensor& bias = context->input(1);
    OP_REQUIRES(context, value.dims() >= 2 && bias.dims() == 1,
                errors::InvalidArgument("BiasAdd: value ", value.shape(),
                                        " must have rank at least 2 and bias ", bias.shape(),
                                        " rank 1 (dtype ", kDTypeOf<T>, ")"));
    const int64_t channels = value.dim_size(value.dims() - 1);
    OP_REQUIRES(context, bias.dim_size(0) == channels,
                errors::InvalidArgument("BiasAdd: bias ", bias.shape(),
                                        " must have one entry per channel of value ", value.shape(),
                                        " (", channels, ", data_format NHWC)"));
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
};

template <typename T>
class BiasAddGradOp : public OpKernel {
 public:
  explicit BiasAddGradOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(CheckChannelsLast(context));
  }

  void Compute(OpKernelContext* context) override {
    ScopedFlushDenormals flush_denormals;
    const Tensor& grad = context->input(0);
    OP_REQUIRES(context, grad.dims() >= 2,
                errors::InvalidArgument("BiasAddGrad: out_backprop ", grad.shape(),
                                        " must have rank at least 2 (dtype ", kDTypeOf<T>, ")"));
    const int64_t channels = grad.dim_size(grad.dims() - 1);
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape({channels}), &out));
    if (channels == 0) return;
    const int64_t rows = grad.NumElements() / channels;
    const T* g = grad.data<T>();
    std::vector<double> sums(channels);
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
