// Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter on NHWC images and
// HWIO filters: float and bfloat16 through oneDNN (conv_dnnl.h), double by
// im2col and Eigen's GEMM (conv_im2col.h). Float forward passes of 5x5
// stride-1 windows with 16 or more channels in and out use Winograd's
// F(2x2, 5x5) instead (conv_winograd.h: 2.8x fewer multiplies; set
// WEIR_CONV_WINOGRAD=0 in the environment for the direct convolution).
// NCHW nodes transpose their images around the NHWC computation
// (image_layout.h): oneDNN's own kernels for plain NCHW images are
// GEMM-based and slower than the transposes plus NHWC (3x3 128->128 on
// [8, 56, 56, 128], CPU time: 84-85 ms in NCHW, 69-70 transposed, 64-65
// for an NHWC node; bench/depthwise_peers_bench.py). Shapes and attrs are
// checked by the rules the shape functions use (nn_shape_fns.h).
#include <Eigen/Core>
#include <algorithm>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

#include "weir/base/denormal.h"
#include "weir/framework/kernel_registry.h"
#include "weir/framework/window_shape.h"
#include "weir/kernels/conv_dnnl.h"
#include "weir/kernels/conv_im2col.h"
#include "weir/kernels/conv_winograd.h"
#include "weir/kernels/image_layout.h"
#include "weir/kernels/nn_kernels.h"
#include "weir/kernels/type_list.h"

namespace weir {
namespace {

using Pass = DnnlConv2D::Pass;

// Whether float forward passes may use Winograd's algorithm: unless the
// environment's WEIR_CONV_WINOGRAD is 0 (read once).
bool WinogradEnabled() {
  static const bool enabled = [] {
    const char* env = std::getenv("WEIR_CONV_WINOGRAD");
    return env == nullptr || std::string(env) != "0";
  }();
  return enabled;
}

template <typename T>
class ConvOpBase : public OpKernel {
 public:
  explicit ConvOpBase(OpKernelConstruction* context) : OpKernel(context) {
    StatusOr<Window2DAttrs> attrs = GetConv2DAttrs(context->node().attrs);
    if (!attrs.ok()) {
      context->SetStatus(attrs.status().WithContext(context->node().op));
      return;
    }
    attrs_ = *attrs;
    // The spatial attrs are per dim already; only the images' layout
    // differs, and NCHW images are transposed (ImageIn / SetImageOutput).
    nchw_ = !attrs_.layout.channels_last;
    attrs_.layout.channels_last = true;
  }

  // A convolution is worth a thread hop: independent ones overlap on the
  // inter-op pool.
  bool IsExpensive() const override { return true; }

 protected:
  // An image operand in NHWC: `image` itself, or an NHWC copy of it for
  // an NCHW node.
  StatusOr<Tensor> ImageIn(OpKernelContext* context, const Tensor& image) const {
    StatusOr<Tensor> nhwc = ImageAsNhwc(context, nchw_, image);
    if (!nhwc.ok()) return nhwc.status().WithContext(StrCat(type_string(), " (data_format NCHW)"));
    return nhwc;
  }

  // The problem for `input` and `filter` shapes, with `out_backprop` (when
  // given) checked against the output shape. Errors name the op, shapes
  // and dtype.
  StatusOr<Window2DDims> Dims(const TensorShape& input, const TensorShape& filter,
                              const TensorShape* out_backprop) const {
    auto context = [&] {
      auto image = [&](const TensorShape& s) { return nchw_ ? NhwcToNchwShape(s) : s; };
      return StrCat(type_string(), " (input ", image(input), ", filter ", filter,
                    out_backprop ? StrCat(", out_backprop ", image(*out_backprop)) : "",
                    ", dtype ", kDTypeOf<T>, nchw_ ? ", data_format NCHW" : "", ")");
    };
    StatusOr<Window2DDims> dims = ComputeConv2DDims(attrs_, input, filter);
    if (!dims.ok()) return dims.status().WithContext(context());
    if (out_backprop && *out_backprop != dims->output_shape()) {
      return errors::InvalidArgument(
          context(), ": out_backprop must have shape ",
          nchw_ ? NhwcToNchwShape(dims->output_shape()) : dims->output_shape(),
          ", the output of the convolution");
    }
    return dims;
  }

  // The forward pass of `d` with the epilogue by Winograd's algorithm,
  // when it applies (float, conv_winograd.h); false if it doesn't.
  bool RunWinograd(OpKernelContext* context, const Window2DDims& d, const T* input, const T* filter,
                   const T* bias, bool relu, Tensor* out) {
    if constexpr (!std::is_same_v<T, float>) {
      return false;
    } else {
      if (!WinogradEnabled() || !WinogradConv2D::Applies(d) || out->NumElements() == 0 ||
          d.batch == 0) {
        return false;
      }
      ThreadPool* pool = context->device()->intra_op_pool();
      Tensor scratch;
      StatusOr<int64_t> floats = WinogradConv2D::ScratchFloats(d, pool);
      Status status = floats.status();
      if (status.ok()) status = context->allocate_temp(DT_FLOAT, TensorShape({*floats}), &scratch);
      if (status.ok()) {
        status = winograd_.Run(pool, d, input, filter, bias, relu, out->data<float>(),
                               scratch.data<float>());
      }
      if (!status.ok()) context->SetStatus(status.WithContext(type_string()));
      return true;
    }
  }

  // Runs `pass`, writing the whole of `out`: zeros when the other operands
  // are empty (a sum over nothing).
  void Run(OpKernelContext* context, Pass pass, const Window2DDims& d, const T* a, const T* b,
           Tensor* out) {
    if (out->NumElements() == 0) return;
    const bool nothing_to_sum = d.batch == 0 || d.in_depth == 0 || d.out_depth == 0 ||
                                d.rows.output == 0 || d.cols.output == 0;
    T* o = out->data<T>();
    if (nothing_to_sum) {
      std::fill_n(o, out->NumElements(), T(0));
      return;
    }
    if constexpr (!std::is_same_v<T, double>) {
      OP_REQUIRES_OK(context, dnnl_.Run(context, pass, d, a, b, o).WithContext(type_string()));
    } else {
      ThreadPool* pool = context->device()->intra_op_pool();
      switch (pass) {
        case Pass::kForward:
          Im2ColConv2D(pool, d, a, b, o);
          break;
        case Pass::kBackwardInput:
          Im2ColConv2DBackpropInput(pool, d, b, a, o);
          break;
        case Pass::kBackwardFilter:
          Im2ColConv2DBackpropFilter(pool, d, a, b, o);
          break;
      }
    }
  }

  Window2DAttrs attrs_;  // layout NHWC: what the computation sees
  bool nchw_ = false;    // the node's images are NCHW
  DnnlConv2D dnnl_;  // float and bfloat16
  WinogradConv2D winograd_;  // float forward passes it applies to
};

template <typename T>
class Conv2DOp : public ConvOpBase<T> {
 public:
  using ConvOpBase<T>::ConvOpBase;

  void Compute(OpKernelContext* context) override {
    ScopedFlushDenormals flush_denormals;
    StatusOr<Tensor> input = this->ImageIn(context, context->input(0));
    OP_REQUIRES_OK(context, input.status());
    const Tensor& filter = context->input(1);
    if (input->dims() == 4 && filter.dims() == 4 && filter.dim_size(2) > 0 &&
        input->dim_size(3) > filter.dim_size(2) && input->dim_size(3) % filter.dim_size(2) == 0) {
      ComputeGrouped(context, *input, filter);
      return;
    }
    StatusOr<Window2DDims> dims = this->Dims(input->shape(), filter.shape(), nullptr);
    OP_REQUIRES_OK(context, dims.status());
    NhwcImageOutput image_out(this->nchw_, 0);
    Tensor* out;
    OP_REQUIRES_OK(context, image_out.Allocate(context, kDTypeOf<T>, dims->output_shape(), &out));
    if (!this->RunWinograd(context, *dims, input->data<T>(), filter.data<T>(), nullptr, false,
                           out)) {
      this->Run(context, Pass::kForward, *dims, input->data<T>(), filter.data<T>(), out);
    }
    if (!context->status().ok()) return;
    OP_REQUIRES_OK(context, image_out.Finish(context));
  }

 private:
  void ComputeGrouped(OpKernelContext* context, const Tensor& input, const Tensor& filter);
};

// A grouped convolution (input depth g times the filter's in_channels): each
// group of input channels is convolved with its out_channels / g filters
// through the same path as an ordinary convolution, one group at a time
// (channels copied out of and back into the NHWC images).
template <typename T>
void Conv2DOp<T>::ComputeGrouped(OpKernelContext* context, const Tensor& input,
                                 const Tensor& filter) {
  const int64_t depth = input.dim_size(3), group_depth = filter.dim_size(2);
  const int64_t groups = depth / group_depth, out_depth = filter.dim_size(3);
  OP_REQUIRES(context, out_depth % groups == 0,
              errors::InvalidArgument(this->type_string(), " (input ", input.shape(), ", filter ",
                                      filter.shape(), ", dtype ", kDTypeOf<T>,
                                      "): a grouped convolution of ", groups,
                                      " groups needs out_channels divisible by ", groups));
  const int64_t group_out = out_depth / groups;
  const TensorShape group_input(
      {input.dim_size(0), input.dim_size(1), input.dim_size(2), group_depth});
  const TensorShape group_filter({filter.dim_size(0), filter.dim_size(1), group_depth, group_out});
  StatusOr<Window2DDims> dims = this->Dims(group_input, group_filter, nullptr);
  OP_REQUIRES_OK(context, dims.status());
  const TensorShape group_output = dims->output_shape();
  TensorShape full_output = group_output;
  full_output.set_dim(3, out_depth);
  NhwcImageOutput image_out(this->nchw_, 0);
  Tensor* out;
  OP_REQUIRES_OK(context, image_out.Allocate(context, kDTypeOf<T>, full_output, &out));
  Tensor x, f, y;
  OP_REQUIRES_OK(context, context->allocate_temp(kDTypeOf<T>, group_input, &x));
  OP_REQUIRES_OK(context, context->allocate_temp(kDTypeOf<T>, group_filter, &f));
  OP_REQUIRES_OK(context, context->allocate_temp(kDTypeOf<T>, group_output, &y));
  const int64_t pixels = group_input.num_elements() / std::max<int64_t>(group_depth, 1);
  const int64_t taps = group_filter.num_elements() / std::max<int64_t>(group_depth * group_out, 1);
  const int64_t out_pixels = group_output.num_elements() / std::max<int64_t>(group_out, 1);
  for (int64_t g = 0; g < groups; ++g) {
    for (int64_t p = 0; p < pixels; ++p) {
      std::copy_n(input.data<T>() + p * depth + g * group_depth, group_depth,
                  x.data<T>() + p * group_depth);
    }
    for (int64_t t = 0; t < taps * group_depth; ++t) {
      std::copy_n(filter.data<T>() + t * out_depth + g * group_out, group_out,
                  f.data<T>() + t * group_out);
    }
    this->Run(context, Pass::kForward, *dims, x.data<T>(), f.data<T>(), &y);
    if (!context->status().ok()) return;
    for (int64_t p = 0; p < out_pixels; ++p) {
      std::copy_n(y.data<T>() + p * group_out, group_out,
                  out->data<T>() + p * out_depth + g * group_out);
    }
  }
  OP_REQUIRES_OK(context, image_out.Finish(context));
}

template <typename T>
class Conv2DBackpropInputOp : public ConvOpBase<T> {
 public:
  using ConvOpBase<T>::ConvOpBase;

  void Compute(OpKernelContext* context) override {
    ScopedFlushDenormals flush_denormals;
    const Tensor& filter = context->input(1);
    ImageLayout node_layout;
    node_layout.channels_last = !this->nchw_;
    StatusOr<TensorShape> input_shape = BackpropInputShape(
        context->input(0), node_layout, filter.shape(), context->input(2).shape());
    OP_REQUIRES_OK(context, input_shape.status().WithContext("Conv2DBackpropInput"));
    StatusOr<Tensor> out_backprop = this->ImageIn(context, context->input(2));
    OP_REQUIRES_OK(context, out_backprop.status());
    const TensorShape nhwc_input = this->nchw_ ? NchwToNhwcShape(*input_shape) : *input_shape;
    StatusOr<Window2DDims> dims = this->Dims(nhwc_input, filter.shape(), &out_backprop->shape());
    OP_REQUIRES_OK(context, dims.status());
    NhwcImageOutput image_out(this->nchw_, 0);
    Tensor* out;
    OP_REQUIRES_OK(context, image_out.Allocate(context, kDTypeOf<T>, nhwc_input, &out));
    this->Run(context, Pass::kBackwardInput, *dims, out_backprop->data<T>(), filter.data<T>(),
              out);
    OP_REQUIRES_OK(context, image_out.Finish(context));
  }
};

template <typename T>
class Conv2DBackpropFilterOp : public ConvOpBase<T> {
 public:
  using ConvOpBase<T>::ConvOpBase;

  void Compute(OpKernelContext* context) override {
    ScopedFlushDenormals flush_denormals;
    StatusOr<TensorShape> filter_shape = ShapeFromSizes(context->input(1), 4, "filter_sizes");
    OP_REQUIRES_OK(context, filter_shape.status().WithContext("Conv2DBackpropFilter"));
    StatusOr<Tensor> input = this->ImageIn(context, context->input(0));
    OP_REQUIRES_OK(context, input.status());
    StatusOr<Tensor> out_backprop = this->ImageIn(context, context->input(2));
    OP_REQUIRES_OK(context, out_backprop.status());
    StatusOr<Window2DDims> dims = this->Dims(input->shape(), *filter_shape, &out_backprop->shape());
    OP_REQUIRES_OK(context, dims.status());
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, *filter_shape, &out));
    this->Run(context, Pass::kBackwardFilter, *dims, input->data<T>(), out_backprop->data<T>(),
              out);
  }
};

// Conv2D with a bias, or a bias then Relu, applied as each output is
// written (oneDNN post-ops), instead of two more passes over the output.
// Double has no oneDNN primitive and runs the three steps one by one.
template <typename T>
class FusedConv2DOp : public ConvOpBase<T> {
 public:
  explicit FusedConv2DOp(OpKernelConstruction* context) : ConvOpBase<T>(context) {
    std::vector<std::string> fused_ops;
    Status status = context->GetAttr("fused_ops", &fused_ops);
    if (status.ok()) {
      if (fused_ops == std::vector<std::string>{"BiasAdd"}) {
        relu_ = false;
      } else if (fused_ops == std::vector<std::string>{"BiasAdd", "Relu"}) {
        relu_ = true;
      } else {
        status = errors::Unimplemented("_FusedConv2D: fused_ops [", StrJoin(fused_ops, ", "),
                                       "] is not supported on CPU; supported: [BiasAdd], "
                                       "[BiasAdd, Relu]");
      }
    }
    if (status.ok() && this->nchw_) {
      status = errors::Unimplemented("_FusedConv2D: data_format NCHW is not supported on CPU; "
                                     "use NHWC (the fusion pass makes only NHWC ones)");
    }
    int64_t num_args = 0;
    status.Update(context->GetAttr("num_args", &num_args));
    if (status.ok() && num_args != 1) {
      status = errors::InvalidArgument(
          "_FusedConv2D with BiasAdd takes one argument (the bias) but num_args is ", num_args);
    }
    if (!status.ok()) context->SetStatus(status);
  }

  void Compute(OpKernelContext* context) override {
    ScopedFlushDenormals flush_denormals;
    const Tensor& input = context->input(0);
    const Tensor& filter = context->input(1);
    const Tensor& bias = context->input(2);
    StatusOr<Window2DDims> dims = this->Dims(input.shape(), filter.shape(), nullptr);
    OP_REQUIRES_OK(context, dims.status());
    OP_REQUIRES(context, bias.dims() == 1 && bias.dim_size(0) == dims->out_depth,
                errors::InvalidArgument("_FusedConv2D: bias ", bias.shape(), " must be [",
                                        dims->out_depth, "], the filter's out_channels (filter ",
                                        filter.shape(), ", dtype ", kDTypeOf<T>, ")"));
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, dims->output_shape(), &out));
    if (this->RunWinograd(context, *dims, input.data<T>(), filter.data<T>(), bias.data<T>(), relu_,
                          out)) {
      return;
    }
    if constexpr (!std::is_same_v<T, double>) {
      if (out->NumElements() > 0 && dims->batch > 0 && dims->in_depth > 0) {
        OP_REQUIRES_OK(context, this->dnnl_
                                    .Run(context, Pass::kForward, *dims, input.data<T>(),
                                         filter.data<T>(), out->data<T>(), {bias.data<T>(), relu_})
                                    .WithContext(this->type_string()));
        return;
      }
    }
    this->Run(context, Pass::kForward, *dims, input.data<T>(), filter.data<T>(), out);
    // Double (or a sum over nothing): the epilogue as its own pass.
    T* o = out->data<T>();
    const T* b = bias.data<T>();
    const int64_t depth = dims->out_depth;
    for (int64_t i = 0; i < out->NumElements(); ++i) {
      const T v = o[i] + b[i % depth];
      o[i] = relu_ && v < T(0) ? T(0) : v;
    }
  }

 private:
  bool relu_ = false;
};

}  // namespace

void RegisterConvKernels(KernelRegistry* registry) {
  ForEachType<float, double, Eigen::bfloat16>([&]<typename T>() {
    registry->Register(KernelBuilder("Conv2D").TypeConstraint<T>("T"), MakeKernel<Conv2DOp<T>>);
    registry->Register(KernelBuilder("Conv2DBackpropInput").TypeConstraint<T>("T"),
                       MakeKernel<Conv2DBackpropInputOp<T>>);
    registry->Register(KernelBuilder("Conv2DBackpropFilter").TypeConstraint<T>("T"),
                       MakeKernel<Conv2DBackpropFilterOp<T>>);
    registry->Register(KernelBuilder("_FusedConv2D").TypeConstraint<T>("T"),
                       MakeKernel<FusedConv2DOp<T>>);
  });
}

}  // namespace weir
