// MaxPool3D, AvgPool3D and their gradients on the CPU, NDHWC (NCDHW is
// refused, as TensorFlow's CPU kernels do). Padding never counts: a max
// ignores it and an average divides by the window's elements inside the
// input. MaxPool3DGrad gives each window's gradient to every input element
// within 1e-5 of the window's maximum, as TensorFlow's CPU kernel does.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "weir/framework/int_tensor_values.h"
#include "weir/framework/kernel_registry.h"
#include "weir/framework/window3d_shape.h"
#include "weir/kernels/type_list.h"

namespace weir {
namespace {

template <typename T>
using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;

enum class Pool3DKind { kMax, kAvg, kMaxGrad, kAvgGrad };

// fn(y_index, x_indices...) per output element: calls visit(out, begin) then
// each input element of its window through `each(x)`.
struct Window {
  int64_t d0, d1, h0, h1, w0, w1;
};

Window WindowAt(const Window3DDims& d, int64_t od, int64_t oh, int64_t ow) {
  auto range = [](const WindowDim& w, int64_t o, int64_t* b, int64_t* e) {
    const int64_t start = o * w.stride - w.pad_before;
    *b = std::max<int64_t>(start, 0);
    *e = std::min<int64_t>(start + w.window, w.input);
  };
  Window out;
  range(d.spatial[0], od, &out.d0, &out.d1);
  range(d.spatial[1], oh, &out.h0, &out.h1);
  range(d.spatial[2], ow, &out.w0, &out.w1);
  return out;
}

template <typename T, Pool3DKind kKind>
class Pool3DOp : public OpKernel {
 public:
  explicit Pool3DOp(OpKernelConstruction* context) : OpKernel(context) {
    StatusOr<Window3DAttrs> attrs = GetPool3DAttrs(context->node().attrs);
    if (!attrs.ok()) {
      context->SetStatus(attrs.status());
      return;
    }
    attrs_ = *attrs;
    if (attrs_.channels_first) {
      context->SetStatus(errors::Unimplemented(
          type_string(), ": data_format NCDHW is not supported on the CPU (use NDHWC)"));
    }
  }

  void Compute(OpKernelContext* context) override {
    const std::string& op = type_string();
    TensorShape input_shape;
    if (kKind == Pool3DKind::kAvgGrad) {
      const Tensor& sizes = context->input(0);
      OP_REQUIRES(context, sizes.dims() == 1 && sizes.NumElements() == 5,
                  errors::InvalidArgument(op,
                                          ": orig_input_shape must be a vector of 5 sizes, "
                                          "got shape ",
                                          sizes.shape()));
      StatusOr<std::vector<int64_t>> dims = IntTensorValues(sizes, "orig_input_shape");
      OP_REQUIRES_OK(context, dims.status());
      StatusOr<TensorShape> shape = TensorShape::FromDims(*dims);
      OP_REQUIRES_OK(context, shape.status());
      input_shape = *shape;
    } else {
      input_shape = context->input(0).shape();
    }
    StatusOr<Window3DDims> dims_or = ComputePool3DDims(attrs_, input_shape);
    OP_REQUIRES(context, dims_or.ok(),
                errors::InvalidArgument(op, " (", DTypeName(kDTypeOf<T>),
                                        "): ", dims_or.status().message()));
    const Window3DDims& d = *dims_or;
    const TensorShape out_shape(d.OutputDims(false));
    const bool grad = kKind == Pool3DKind::kMaxGrad || kKind == Pool3DKind::kAvgGrad;
    const Tensor* g = nullptr;
    if (grad) {
      g = &context->input(kKind == Pool3DKind::kMaxGrad ? 2 : 1);
      OP_REQUIRES(context, g->shape() == out_shape,
                  errors::InvalidArgument(op, ": grad ", g->shape(), " must be ", out_shape,
                                          " for input ", input_shape));
    }
    if (kKind == Pool3DKind::kMaxGrad) {
      OP_REQUIRES(context, context->input(1).shape() == out_shape,
                  errors::InvalidArgument(op, ": orig_output ", context->input(1).shape(),
                                          " must be ", out_shape, " for input ", input_shape));
    }
    Tensor* output;
    OP_REQUIRES_OK(context, context->allocate_output(0, grad ? input_shape : out_shape, &output));
    const int64_t c = d.in_channels;
    const WindowDim &pd = d.spatial[0], &pr = d.spatial[1], &pc = d.spatial[2];
    std::vector<Acc<T>> acc(grad ? output->NumElements() : 0, Acc<T>(0));
    T* out = output->data<T>();
    for (int64_t n = 0; n < d.batch; ++n) {
      for (int64_t od = 0; od < pd.output; ++od) {
        for (int64_t oh = 0; oh < pr.output; ++oh) {
          for (int64_t ow = 0; ow < pc.output; ++ow) {
            const Window w = WindowAt(d, od, oh, ow);
            const int64_t count = (w.d1 - w.d0) * (w.h1 - w.h0) * (w.w1 - w.w0);
            const int64_t y = (((n * pd.output + od) * pr.output + oh) * pc.output + ow) * c;
            for (int64_t ch = 0; ch < c; ++ch) {
              Acc<T> value =
                  kKind == Pool3DKind::kMax ? -std::numeric_limits<Acc<T>>::infinity() : Acc<T>(0);
              Acc<T> gy = grad ? static_cast<Acc<T>>(g->data<T>()[y + ch]) : Acc<T>(0);
              if (kKind == Pool3DKind::kAvgGrad && count > 0) gy /= static_cast<Acc<T>>(count);
              const Acc<T> max = kKind == Pool3DKind::kMaxGrad
                                     ? static_cast<Acc<T>>(context->input(1).data<T>()[y + ch])
                                     : Acc<T>(0);
              for (int64_t id = w.d0; id < w.d1; ++id) {
                for (int64_t ih = w.h0; ih < w.h1; ++ih) {
                  for (int64_t iw = w.w0; iw < w.w1; ++iw) {
                    const int64_t x =
                        (((n * pd.input + id) * pr.input + ih) * pc.input + iw) * c + ch;
                    if (kKind == Pool3DKind::kMax) {
                      value = std::max(value, static_cast<Acc<T>>(context->input(0).data<T>()[x]));
                    } else if (kKind == Pool3DKind::kAvg) {
                      value += static_cast<Acc<T>>(context->input(0).data<T>()[x]);
                    } else if (kKind == Pool3DKind::kAvgGrad) {
                      acc[x] += gy;
                    } else {
                      const Acc<T> xv = static_cast<Acc<T>>(context->input(0).data<T>()[x]);
                      if (std::abs(xv - max) < Acc<T>(1e-5)) acc[x] += gy;
                    }
                  }
                }
              }
              if (kKind == Pool3DKind::kMax) out[y + ch] = static_cast<T>(value);
              if (kKind == Pool3DKind::kAvg) {
                out[y + ch] = static_cast<T>(count > 0 ? value / static_cast<Acc<T>>(count) : 0);
              }
            }
          }
        }
      }
    }
    if (grad) {
      for (int64_t i = 0; i < output->NumElements(); ++i) out[i] = static_cast<T>(acc[i]);
    }
  }

 private:
  Window3DAttrs attrs_;
};

// MaxPool3DGradGrad: for each window, grad (shaped like orig_input) at the
// window's first element equal to its maximum (orig_output).
template <typename T>
class MaxPool3DGradGradOp : public OpKernel {
 public:
  explicit MaxPool3DGradGradOp(OpKernelConstruction* context) : OpKernel(context) {
    StatusOr<Window3DAttrs> attrs = GetPool3DAttrs(context->node().attrs);
    if (!attrs.ok()) {
      context->SetStatus(attrs.status());
      return;
    }
    attrs_ = *attrs;
    if (attrs_.channels_first) {
      context->SetStatus(errors::Unimplemented(
          "MaxPool3DGradGrad: data_format NCDHW is not supported on the CPU (use NDHWC)"));
    }
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    const Tensor& pooled = context->input(1);
    const Tensor& grad = context->input(2);
    StatusOr<Window3DDims> dims_or = ComputePool3DDims(attrs_, input.shape());
    OP_REQUIRES(context, dims_or.ok(),
                errors::InvalidArgument("MaxPool3DGradGrad (", DTypeName(kDTypeOf<T>),
                                        "): ", dims_or.status().message()));
    const Window3DDims& d = *dims_or;
    const TensorShape out_shape(d.OutputDims(false));
    OP_REQUIRES(context, pooled.shape() == out_shape && grad.shape() == input.shape(),
                errors::InvalidArgument("MaxPool3DGradGrad: orig_output ", pooled.shape(),
                                        " must be ", out_shape, " and grad ", grad.shape(),
                                        " must be orig_input's ", input.shape()));
    Tensor* output;
    OP_REQUIRES_OK(context, context->allocate_output(0, out_shape, &output));
    const int64_t c = d.in_channels;
    const WindowDim &pd = d.spatial[0], &pr = d.spatial[1], &pc = d.spatial[2];
    const T* x = input.data<T>();
    const T* y = pooled.data<T>();
    const T* g = grad.data<T>();
    T* out = output->data<T>();
    for (int64_t n = 0; n < d.batch; ++n) {
      for (int64_t od = 0; od < pd.output; ++od) {
        for (int64_t oh = 0; oh < pr.output; ++oh) {
          for (int64_t ow = 0; ow < pc.output; ++ow) {
            const Window w = WindowAt(d, od, oh, ow);
            const int64_t yo = (((n * pd.output + od) * pr.output + oh) * pc.output + ow) * c;
            for (int64_t ch = 0; ch < c; ++ch) {
              T value = T(0);
              bool found = false;
              for (int64_t id = w.d0; id < w.d1 && !found; ++id) {
                for (int64_t ih = w.h0; ih < w.h1 && !found; ++ih) {
                  for (int64_t iw = w.w0; iw < w.w1 && !found; ++iw) {
                    const int64_t xi =
                        (((n * pd.input + id) * pr.input + ih) * pc.input + iw) * c + ch;
                    if (x[xi] == y[yo + ch]) {
                      value = g[xi];
                      found = true;
                    }
                  }
                }
              }
              out[yo + ch] = value;
            }
          }
        }
      }
    }
  }

 private:
  Window3DAttrs attrs_;
};

}  // namespace

void RegisterPool3DKernels(KernelRegistry* registry) {
  ForEachType<float, double, int32_t, uint8_t, int16_t, int8_t, int64_t, Eigen::bfloat16, uint16_t,
              Eigen::half, uint32_t, uint64_t>([&]<typename T>() {
    registry->Register(KernelBuilder("MaxPool3DGradGrad").TypeConstraint<T>("T"),
                       MakeKernel<MaxPool3DGradGradOp<T>>);
  });
  ForEachType<Eigen::half, Eigen::bfloat16, float>([&]<typename T>() {
    registry->Register(KernelBuilder("MaxPool3D").TypeConstraint<T>("T"),
                       MakeKernel<Pool3DOp<T, Pool3DKind::kMax>>);
    // TInput = T: the gradient of a pool in the same type.
    registry->Register(KernelBuilder("MaxPool3DGrad")
                           .TypeConstraint("T", kDTypeOf<T>)
                           .TypeConstraint("TInput", kDTypeOf<T>),
                       MakeKernel<Pool3DOp<T, Pool3DKind::kMaxGrad>>);
  });
  ForEachType<Eigen::half, Eigen::bfloat16, float, double>([&]<typename T>() {
    registry->Register(KernelBuilder("AvgPool3D").TypeConstraint<T>("T"),
                       MakeKernel<Pool3DOp<T, Pool3DKind::kAvg>>);
    registry->Register(KernelBuilder("AvgPool3DGrad").TypeConstraint<T>("T"),
                       MakeKernel<Pool3DOp<T, Pool3DKind::kAvgGrad>>);
  });
}

}  // namespace weir
