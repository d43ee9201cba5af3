// Conv3D, Conv3DBackpropInputV2 and Conv3DBackpropFilterV2 on the CPU:
// direct loops over NDHWC (NCDHW is refused, as TensorFlow's CPU kernels
// do), batch x output planes spread over the intra-op pool, sums in float
// (double for double).
#include <Eigen/Core>
#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "weir/base/threadpool.h"
#include "weir/framework/int_tensor_values.h"
#include "weir/framework/kernel_registry.h"
#include "weir/framework/window3d_shape.h"
#include "weir/kernels/type_list.h"

namespace weir {
namespace {

template <typename T>
using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;

enum class Conv3DKind { kForward, kInput, kFilter };

// Visits every (output position, filter tap) pair whose input position is
// inside the input: fn(x_offset, f_offset, y_offset) with the offsets of
// the channel vectors (x: in_channels values, f: the in x out matrix, y:
// out_channels values), for batch n and output plane od.
template <typename Fn>
void ForEachTap(const Window3DDims& d, int64_t n, int64_t od, Fn fn) {
  const WindowDim& pd = d.spatial[0];
  const WindowDim& pr = d.spatial[1];
  const WindowDim& pc = d.spatial[2];
  const int64_t ic = d.in_channels, oc = d.out_channels;
  for (int64_t oh = 0; oh < pr.output; ++oh) {
    for (int64_t ow = 0; ow < pc.output; ++ow) {
      const int64_t y = (((n * pd.output + od) * pr.output + oh) * pc.output + ow) * oc;
      for (int64_t kd = 0; kd < pd.window; ++kd) {
        const int64_t id = od * pd.stride - pd.pad_before + kd * pd.dilation;
        if (id < 0 || id >= pd.input) continue;
        for (int64_t kh = 0; kh < pr.window; ++kh) {
          const int64_t ih = oh * pr.stride - pr.pad_before + kh * pr.dilation;
          if (ih < 0 || ih >= pr.input) continue;
          for (int64_t kw = 0; kw < pc.window; ++kw) {
            const int64_t iw = ow * pc.stride - pc.pad_before + kw * pc.dilation;
            if (iw < 0 || iw >= pc.input) continue;
            const int64_t x = (((n * pd.input + id) * pr.input + ih) * pc.input + iw) * ic;
            const int64_t f = ((kd * pr.window + kh) * pc.window + kw) * ic * oc;
            fn(x, f, y);
          }
        }
      }
    }
  }
}

template <typename T, Conv3DKind kKind>
class Conv3DOp : public OpKernel {
 public:
  explicit Conv3DOp(OpKernelConstruction* context) : OpKernel(context) {
    StatusOr<Window3DAttrs> attrs = GetConv3DAttrs(context->node().attrs);
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
    TensorShape input_shape, filter_shape;
    const Tensor *input = nullptr, *filter = nullptr, *dy = nullptr;
    if (kKind == Conv3DKind::kForward) {
      input = &context->input(0), filter = &context->input(1);
      input_shape = input->shape(), filter_shape = filter->shape();
    } else if (kKind == Conv3DKind::kInput) {
      OP_REQUIRES_OK(context, SizesInput(context, 0, &input_shape));
      filter = &context->input(1), dy = &context->input(2);
      filter_shape = filter->shape();
    } else {
      input = &context->input(0), dy = &context->input(2);
      OP_REQUIRES_OK(context, SizesInput(context, 1, &filter_shape));
      input_shape = input->shape();
    }
    StatusOr<Window3DDims> dims_or = ComputeConv3DDims(attrs_, input_shape, filter_shape);
    OP_REQUIRES(context, dims_or.ok(),
                errors::InvalidArgument(op, " (", DTypeName(kDTypeOf<T>),
                                        "): ", dims_or.status().message()));
    const Window3DDims& d = *dims_or;
    const std::vector<int64_t> out_dims = d.OutputDims(false);
    if (dy != nullptr) {
      OP_REQUIRES(context, dy->shape() == TensorShape(out_dims),
                  errors::InvalidArgument(op, ": out_backprop ", dy->shape(), " must be ",
                                          TensorShape(out_dims), " for input ", input_shape,
                                          " and filter ", filter_shape));
    }
    Tensor* output;
    const TensorShape result_shape = kKind == Conv3DKind::kForward ? TensorShape(out_dims)
                                     : kKind == Conv3DKind::kInput ? input_shape
                                                                   : filter_shape;
    OP_REQUIRES_OK(context, context->allocate_output(0, result_shape, &output));
    const int64_t ic = d.in_channels, oc = d.out_channels;
    std::vector<Acc<T>> acc(output->NumElements(), Acc<T>(0));
    const T* x = input ? input->data<T>() : nullptr;
    const T* f = filter ? filter->data<T>() : nullptr;
    const T* g = dy ? dy->data<T>() : nullptr;
    const int64_t units = d.batch * d.spatial[0].output;
    auto work = [&](int64_t begin, int64_t end) {
      for (int64_t u = begin; u < end; ++u) {
        ForEachTap(d, u / d.spatial[0].output, u % d.spatial[0].output,
                   [&](int64_t xo, int64_t fo, int64_t yo) {
                     for (int64_t i = 0; i < ic; ++i) {
                       if (kKind == Conv3DKind::kForward) {
                         const Acc<T> xv = static_cast<Acc<T>>(x[xo + i]);
                         for (int64_t o = 0; o < oc; ++o) {
                           acc[yo + o] += xv * static_cast<Acc<T>>(f[fo + i * oc + o]);
                         }
                       } else if (kKind == Conv3DKind::kInput) {
                         Acc<T> sum = 0;
                         for (int64_t o = 0; o < oc; ++o) {
                           sum += static_cast<Acc<T>>(f[fo + i * oc + o]) *
                                  static_cast<Acc<T>>(g[yo + o]);
                         }
                         acc[xo + i] += sum;
                       } else {
                         const Acc<T> xv = static_cast<Acc<T>>(x[xo + i]);
                         for (int64_t o = 0; o < oc; ++o) {
                           acc[fo + i * oc + o] += xv * static_cast<Acc<T>>(g[yo + o]);
                         }
                       }
                     }
                   });
      }
    };
    if (kKind == Conv3DKind::kForward) {
      // Each unit writes its own output planes: safe to split.
      const int64_t cost = d.spatial[1].output * d.spatial[2].output * filter_shape.num_elements();
      context->device()->intra_op_pool()->ParallelFor(units, std::max<int64_t>(cost, 1), work);
    } else {
      // The backprops scatter into shared input or filter sums: one thread.
      work(0, units);
    }
    T* out = output->data<T>();
    for (int64_t i = 0; i < output->NumElements(); ++i) out[i] = static_cast<T>(acc[i]);
  }

 private:
  Status SizesInput(OpKernelContext* context, int index, TensorShape* shape) const {
    const Tensor& sizes = context->input(index);
    if (sizes.dims() != 1 || sizes.NumElements() != 5) {
      return errors::InvalidArgument(type_string(), ": input ", index,
                                     " must be a vector of 5 sizes, got shape ", sizes.shape());
    }
    WEIR_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntTensorValues(sizes, "sizes"));
    WEIR_ASSIGN_OR_RETURN(*shape, TensorShape::FromDims(dims));
    return Status::OK();
  }

  Window3DAttrs attrs_;
};

}  // namespace

void RegisterConv3DKernels(KernelRegistry* registry) {
  ForEachType<Eigen::half, Eigen::bfloat16, float, double>([&]<typename T>() {
    registry->Register(KernelBuilder("Conv3D").TypeConstraint<T>("T"),
                       MakeKernel<Conv3DOp<T, Conv3DKind::kForward>>);
    registry->Register(KernelBuilder("Conv3DBackpropInputV2").TypeConstraint<T>("T"),
                       MakeKernel<Conv3DOp<T, Conv3DKind::kInput>>);
    registry->Register(KernelBuilder("Conv3DBackpropFilterV2").TypeConstraint<T>("T"),
                       MakeKernel<Conv3DOp<T, Conv3DKind::kFilter>>);
  });
}

}  // namespace weir
