// MaxPool, AvgPool and their gradients on NHWC images, as loops over the
// window with the channels innermost (contiguous, vectorized), split over
// the intra-op pool by rows: output rows for the forward ops, input rows
// for the gradients. Measured single-threaded (CPU time) on the
// Fashion-MNIST CNN's 2x2 pools and a ResNet 3x3/2 pool, the forward loops
// match or beat oneDNN's pooling primitives (1.0-1.35x), so oneDNN is not
// used here.
//
// The gradients gather rather than scatter: each input pixel sums the
// contributions of the few windows that cover it, so every element of the
// result is written once, with no zero fill, no read-modify-write over
// overlapping windows and no conflicts between threads. MaxPoolGrad first
// records each window's argmax per channel. Against a scatter version,
// MaxPoolGrad is 2-3x faster on overlapping pools; on the ResNet pool both
// are dominated by page faults on the fresh 100 MB output. Windows that do
// not overlap (2x2/2) need neither: each window writes its own pixels in
// one pass (ScatterDisjointWindows).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "weir/base/denormal.h"
#include "weir/base/threadpool.h"
#include "weir/framework/kernel_registry.h"
#include "weir/framework/window_shape.h"
#include "weir/kernels/image_layout.h"
#include "weir/kernels/nn_kernels.h"
#include "weir/kernels/type_list.h"

namespace weir {
namespace {

// The window of output (oh, ow) clipped to the input: rows [h0, h1), cols
// [w0, w1).
struct Window {
  int64_t h0, h1, w0, w1;
  int64_t count() const { return (h1 - h0) * (w1 - w0); }
};

Window WindowAt(const Window2DDims& d, int64_t oh, int64_t ow) {
  const int64_t h = oh * d.rows.stride - d.rows.pad_before;
  const int64_t w = ow * d.cols.stride - d.cols.pad_before;
  return {std::max<int64_t>(h, 0), std::min(h + d.rows.window, d.rows.input),
          std::max<int64_t>(w, 0), std::min(w + d.cols.window, d.cols.input)};
}

// The outputs whose windows cover input index `i` of `dim`: [first, last).
std::pair<int64_t, int64_t> Covering(const WindowDim& dim, int64_t i) {
  // Output o covers o * stride - pad_before + [0, window).
  const int64_t shifted = i + dim.pad_before;
  const int64_t first = shifted < dim.window ? 0 : (shifted - dim.window) / dim.stride + 1;
  const int64_t last = std::min(dim.output, shifted / dim.stride + 1);
  return {first, last};
}

// The common part of every pooling kernel: attrs checked once, loops on
// NHWC images.
class PoolOpBase : public OpKernel {
 public:
  explicit PoolOpBase(OpKernelConstruction* context) : OpKernel(context) {
    StatusOr<Window2DAttrs> attrs = GetPool2DAttrs(context->node().attrs);
    if (!attrs.ok()) {
      context->SetStatus(attrs.status().WithContext(context->node().op));
      return;
    }
    attrs_ = *attrs;
    // NCHW nodes transpose their images around the NHWC loops
    // (image_layout.h); the spatial attrs are per dim already.
    nchw_ = !attrs_.layout.channels_last;
    attrs_.layout.channels_last = true;
  }

 protected:
  // The dims for an NHWC input of `shape`, errors naming the op and dtype.
  StatusOr<Window2DDims> Dims(const TensorShape& shape, DType dtype) const {
    StatusOr<Window2DDims> dims = ComputePool2DDims(attrs_, shape);
    if (!dims.ok()) {
      return dims.status().WithContext(StrCat(type_string(), " (input ", Node(shape), ", dtype ",
                                              dtype, nchw_ ? ", data_format NCHW" : "", ")"));
    }
    return dims;
  }

  // An NHWC shape in the node's layout, for messages.
  TensorShape Node(const TensorShape& nhwc) const {
    return nchw_ && nhwc.rank() == 4 ? NhwcToNchwShape(nhwc) : nhwc;
  }

  // An image input in NHWC (a copy for NCHW nodes).
  StatusOr<Tensor> ImageIn(OpKernelContext* context, int index) const {
    StatusOr<Tensor> nhwc = ImageAsNhwc(context, nchw_, context->input(index));
    if (!nhwc.ok()) return nhwc.status().WithContext(StrCat(type_string(), " (data_format NCHW)"));
    return nhwc;
  }

  // Runs fn(n, h) for every input row h of every image n on the pool,
  // `cost` per row.
  template <typename Fn>
  static void ForEachInputRow(OpKernelContext* context, const Window2DDims& d, int64_t cost,
                              const Fn& fn) {
    context->device()->intra_op_pool()->ParallelFor(d.batch * d.rows.input, cost,
                                                    [&](int64_t first, int64_t last) {
                                                      for (int64_t row = first; row < last; ++row)
                                                        fn(row / d.rows.input, row % d.rows.input);
                                                    });
  }

  Window2DAttrs attrs_;  // layout NHWC: what the loops see
  bool nchw_ = false;    // the node's images are NCHW
};

template <typename T, bool kMax>
class PoolOp : public PoolOpBase {
 public:
  using PoolOpBase::PoolOpBase;

  void Compute(OpKernelContext* context) override {
    ScopedFlushDenormals flush_denormals;
    StatusOr<Tensor> nhwc_input = ImageIn(context, 0);
    OP_REQUIRES_OK(context, nhwc_input.status());
    const Tensor& input = *nhwc_input;
    StatusOr<Window2DDims> dims = Dims(input.shape(), kDTypeOf<T>);
    OP_REQUIRES_OK(context, dims.status());
    const Window2DDims& d = *dims;
    NhwcImageOutput image_out(nchw_, 0);
    Tensor* out;
    OP_REQUIRES_OK(context, image_out.Allocate(context, kDTypeOf<T>, d.output_shape(), &out));
    if (out->NumElements() > 0) Pool(context, d, input, out);
    OP_REQUIRES_OK(context, image_out.Finish(context));
  }

 private:
  void Pool(OpKernelContext* context, const Window2DDims& d, const Tensor& input, Tensor* out) {
    const int64_t depth = d.in_depth;
    const T* x = input.data<T>();
    T* y = out->data<T>();
    const int64_t out_rows = d.batch * d.rows.output;
    const int64_t cost = d.cols.output * d.rows.window * d.cols.window * depth;
    context->device()->intra_op_pool()->ParallelFor(
        out_rows, cost, [&](int64_t first, int64_t last) {
          for (int64_t row = first; row < last; ++row) {
            const int64_t n = row / d.rows.output, oh = row % d.rows.output;
            for (int64_t ow = 0; ow < d.cols.output; ++ow) {
              const Window w = WindowAt(d, oh, ow);
              T* o = y + (row * d.cols.output + ow) * depth;
              std::fill_n(o, depth, kMax ? -std::numeric_limits<T>::infinity() : T(0));
              for (int64_t h = w.h0; h < w.h1; ++h) {
                for (int64_t c = w.w0; c < w.w1; ++c) {
                  const T* v = x + ((n * d.rows.input + h) * d.cols.input + c) * depth;
                  for (int64_t k = 0; k < depth; ++k) {
                    if constexpr (kMax) {
                      // NaN wins and stays: v > o is false for NaN.
                      o[k] = (v[k] > o[k] || v[k] != v[k]) ? v[k] : o[k];
                    } else {
                      o[k] += v[k];
                    }
                  }
                }
              }
              if constexpr (!kMax) {
                const T scale = T(1) / static_cast<T>(w.count());
                for (int64_t k = 0; k < depth; ++k) o[k] *= scale;
              }
            }
          }
        });
  }
};

// MaxPoolGrad, and _FusedMaxPoolGrad with fused_ops [ReluGrad]: the same
// pass, keeping a gradient only where orig_input > 0 (orig_input is then
// the Relu's output, and ReluGrad's mask is exactly that).
template <typename T>
class MaxPoolGradOp : public PoolOpBase {
  // Pixel indices as wide as T, so the comparison in the gather vectorizes
  // lane for lane with the values.
  using Pixel = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;

 public:
  explicit MaxPoolGradOp(OpKernelConstruction* context) : PoolOpBase(context) {
    if (context->node().op != "_FusedMaxPoolGrad") return;
    std::vector<std::string> fused_ops;
    Status status = context->GetAttr("fused_ops", &fused_ops);
    if (status.ok() && fused_ops != std::vector<std::string>{"ReluGrad"}) {
      status = errors::Unimplemented("_FusedMaxPoolGrad: fused_ops [", StrJoin(fused_ops, ", "),
                                     "] is not supported; supported: [ReluGrad]");
    }
    if (!status.ok()) context->SetStatus(status);
    relu_mask_ = true;
  }

  void Compute(OpKernelContext* context) override {
    ScopedFlushDenormals flush_denormals;
    StatusOr<Window2DDims> dims = Dims(ImageShapeOf(context->input(0)), kDTypeOf<T>);
    OP_REQUIRES_OK(context, dims.status());
    const Window2DDims& d = *dims;
    const TensorShape want = Node(d.output_shape());
    OP_REQUIRES(context,
                context->input(1).shape() == want && context->input(2).shape() == want,
                errors::InvalidArgument("MaxPoolGrad: orig_output ", context->input(1).shape(),
                                        " and grad ", context->input(2).shape(),
                                        " must have shape ", want,
                                        ", the output of pooling orig_input ",
                                        context->input(0).shape()));
    OP_REQUIRES(context, d.rows.input * d.cols.input <= std::numeric_limits<Pixel>::max(),
                errors::InvalidArgument("MaxPoolGrad: orig_input ", context->input(0).shape(),
                                        " has too many pixels per image"));
    StatusOr<Tensor> input = ImageIn(context, 0);
    OP_REQUIRES_OK(context, input.status());
    StatusOr<Tensor> grad = ImageIn(context, 2);
    OP_REQUIRES_OK(context, grad.status());
    NhwcImageOutput image_out(nchw_, 0);
    Tensor* out;
    OP_REQUIRES_OK(context, image_out.Allocate(context, kDTypeOf<T>, input->shape(), &out));
    if (out->NumElements() > 0) Backward(context, d, *input, *grad, out);
    OP_REQUIRES_OK(context, image_out.Finish(context));
  }

 private:
  // The NHWC shape of a node's image input (left as it is when not rank 4,
  // for the dims check to report).
  TensorShape ImageShapeOf(const Tensor& t) const {
    return nchw_ && t.dims() == 4 ? NchwToNhwcShape(t.shape()) : t.shape();
  }

  void Backward(OpKernelContext* context, const Window2DDims& d, const Tensor& input,
                const Tensor& grad, Tensor* out) {
    const int64_t depth = d.in_depth;
    const T* x = input.data<T>();
    const T* g = grad.data<T>();
    T* dx = out->data<T>();

    if (d.rows.window <= d.rows.stride && d.cols.window <= d.cols.stride) {
      ScatterDisjointWindows(context, d, relu_mask_, x, g, dx);
      return;
    }

    // Pass 1: where each window's maximum came from.
    Tensor argmax_holder;
    OP_REQUIRES_OK(context, context->allocate_temp(kDTypeOf<Pixel>, grad.shape(), &argmax_holder));
    Pixel* argmax = argmax_holder.data<Pixel>();
    const int64_t window_cost = d.rows.window * d.cols.window * depth * 2;
    context->device()->intra_op_pool()->ParallelFor(
        d.batch * d.rows.output, d.cols.output * window_cost, [&](int64_t first, int64_t last) {
          std::vector<T> best(depth);
          for (int64_t row = first; row < last; ++row) {
            const int64_t n = row / d.rows.output, oh = row % d.rows.output;
            const T* image = x + n * d.rows.input * d.cols.input * depth;
            for (int64_t ow = 0; ow < d.cols.output; ++ow) {
              WindowArgmax(image, d, WindowAt(d, oh, ow), best.data(),
                           argmax + (row * d.cols.output + ow) * depth);
            }
          }
        });

    // Pass 2: each input pixel gathers the gradients of the windows whose
    // maximum it is.
    const int64_t cover = ((d.rows.window + d.rows.stride - 1) / d.rows.stride) *
                          ((d.cols.window + d.cols.stride - 1) / d.cols.stride);
    ForEachInputRow(context, d, d.cols.input * cover * depth * 2, [&](int64_t n, int64_t h) {
      const auto [oh0, oh1] = Covering(d.rows, h);
      for (int64_t w = 0; w < d.cols.input; ++w) {
        const auto [ow0, ow1] = Covering(d.cols, w);
        const Pixel pixel = static_cast<Pixel>(h * d.cols.input + w);
        T* o = dx + ((n * d.rows.input + h) * d.cols.input + w) * depth;
        std::fill_n(o, depth, T(0));
        for (int64_t oh = oh0; oh < oh1; ++oh) {
          for (int64_t ow = ow0; ow < ow1; ++ow) {
            const int64_t at = ((n * d.rows.output + oh) * d.cols.output + ow) * depth;
            const Pixel* where = argmax + at;
            const T* go = g + at;
            for (int64_t k = 0; k < depth; ++k) o[k] += where[k] == pixel ? go[k] : T(0);
          }
        }
        if (relu_mask_) {
          const T* v = x + ((n * d.rows.input + h) * d.cols.input + w) * depth;
          for (int64_t k = 0; k < depth; ++k) o[k] = v[k] > T(0) ? o[k] : T(0);
        }
      }
    });
  }

  // Writes to where[k] the pixel (h * cols + w) of window w's first maximal
  // element in channel k (the first NaN if any): where MaxPool's value came
  // from. `best` is scratch of depth elements.
  static void WindowArgmax(const T* image, const Window2DDims& d, const Window& w, T* best,
                           Pixel* where) {
    const int64_t depth = d.in_depth;
    const Pixel start = static_cast<Pixel>(w.h0 * d.cols.input + w.w0);
    std::copy_n(image + start * depth, depth, best);
    std::fill_n(where, depth, start);
    for (int64_t h = w.h0; h < w.h1; ++h) {
      for (int64_t c = w.w0; c < w.w1; ++c) {
        const Pixel pixel = static_cast<Pixel>(h * d.cols.input + c);
        const T* v = image + pixel * depth;
        for (int64_t k = 0; k < depth; ++k) {
          const bool better = v[k] > best[k] || (v[k] != v[k] && best[k] == best[k]);
          best[k] = better ? v[k] : best[k];
          where[k] = better ? pixel : where[k];
        }
      }
    }
  }

  // Windows that do not overlap (window <= stride: the common 2x2/2 pool):
  // every input pixel is in at most one window, so one pass over the
  // windows can find each argmax and write its window's gradient
  // (grad at the argmax, 0 elsewhere) at once, with no argmax tensor and no
  // second pass over the output. Output row oh owns the input rows of its
  // stride band (the last one also the rows below it) and zeroes first the
  // ones no window writes. Measured on the Fashion-MNIST pools: see the
  // commit adding it.
  static void ScatterDisjointWindows(OpKernelContext* context, const Window2DDims& d,
                                     bool relu_mask, const T* x, const T* g, T* dx) {
    const int64_t depth = d.in_depth;
    const int64_t row_size = d.cols.input * depth;
    // Windows that tile the input exactly write every element themselves.
    const bool tiled = d.rows.window == d.rows.stride && d.cols.window == d.cols.stride &&
                       d.rows.pad_before == 0 && d.cols.pad_before == 0 &&
                       d.rows.output * d.rows.stride == d.rows.input &&
                       d.cols.output * d.cols.stride == d.cols.input;
    if (d.rows.output == 0) {  // no windows: all of dx is zero
      std::fill_n(dx, d.batch * d.rows.input * row_size, T(0));
      return;
    }
    const int64_t window_cost = d.rows.window * d.cols.window * depth * 3;
    context->device()->intra_op_pool()->ParallelFor(
        d.batch * d.rows.output, d.cols.output * window_cost, [&](int64_t first, int64_t last) {
          std::vector<T> best(depth);
          std::vector<Pixel> where(depth);
          for (int64_t row = first; row < last; ++row) {
            const int64_t n = row / d.rows.output, oh = row % d.rows.output;
            const T* image = x + n * d.rows.input * row_size;
            T* dx_image = dx + n * d.rows.input * row_size;
            if (!tiled) {
              const int64_t band = oh * d.rows.stride - d.rows.pad_before;
              const int64_t h0 = std::max<int64_t>(band, 0);
              const int64_t h1 = oh + 1 == d.rows.output
                                     ? d.rows.input
                                     : std::min(band + d.rows.stride, d.rows.input);
              if (h1 > h0) std::fill(dx_image + h0 * row_size, dx_image + h1 * row_size, T(0));
            }
            for (int64_t ow = 0; ow < d.cols.output; ++ow) {
              const Window w = WindowAt(d, oh, ow);
              WindowArgmax(image, d, w, best.data(), where.data());
              const T* go = g + (row * d.cols.output + ow) * depth;
              for (int64_t h = w.h0; h < w.h1; ++h) {
                for (int64_t c = w.w0; c < w.w1; ++c) {
                  const Pixel pixel = static_cast<Pixel>(h * d.cols.input + c);
                  T* o = dx_image + pixel * depth;
                  if (relu_mask) {
                    // The maximum is the only value that can receive the
                    // gradient; ReluGrad keeps it where it is > 0.
                    for (int64_t k = 0; k < depth; ++k) {
                      o[k] = where[k] == pixel && best[k] > T(0) ? go[k] : T(0);
                    }
                  } else {
                    for (int64_t k = 0; k < depth; ++k) o[k] = where[k] == pixel ? go[k] : T(0);
                  }
                }
              }
            }
          }
        });
  }

  bool relu_mask_ = false;  // _FusedMaxPoolGrad [ReluGrad]
};

template <typename T>
class AvgPoolGradOp : public PoolOpBase {
 public:
  using PoolOpBase::PoolOpBase;

  void Compute(OpKernelContext* context) override {
    ScopedFlushDenormals flush_denormals;
    StatusOr<TensorShape> input_shape = ShapeFromSizes(context->input(0), 4, "orig_input_shape");
    OP_REQUIRES_OK(context, input_shape.status().WithContext("AvgPoolGrad"));
    const TensorShape nhwc_shape = nchw_ ? NchwToNhwcShape(*input_shape) : *input_shape;
    StatusOr<Window2DDims> dims = Dims(nhwc_shape, kDTypeOf<T>);
    OP_REQUIRES_OK(context, dims.status());
    const Window2DDims& d = *dims;
    OP_REQUIRES(context, context->input(1).shape() == Node(d.output_shape()),
                errors::InvalidArgument("AvgPoolGrad: grad ", context->input(1).shape(),
                                        " must have shape ", Node(d.output_shape()),
                                        ", the output of pooling an input of shape ",
                                        *input_shape));
    StatusOr<Tensor> grad = ImageIn(context, 1);
    OP_REQUIRES_OK(context, grad.status());
    NhwcImageOutput image_out(nchw_, 0);
    Tensor* out;
    OP_REQUIRES_OK(context, image_out.Allocate(context, kDTypeOf<T>, nhwc_shape, &out));
    if (out->NumElements() > 0) Backward(context, d, *grad, out);
    OP_REQUIRES_OK(context, image_out.Finish(context));
  }

 private:
  void Backward(OpKernelContext* context, const Window2DDims& d, const Tensor& grad, Tensor* out) {
    const T* g = grad.data<T>();
    T* dx = out->data<T>();
    const int64_t depth = d.in_depth;
    // Each input pixel gathers grad / (window element count) from the
    // windows that cover it.
    const int64_t cover = ((d.rows.window + d.rows.stride - 1) / d.rows.stride) *
                          ((d.cols.window + d.cols.stride - 1) / d.cols.stride);
    ForEachInputRow(context, d, d.cols.input * cover * depth, [&](int64_t n, int64_t h) {
      const auto [oh0, oh1] = Covering(d.rows, h);
      for (int64_t w = 0; w < d.cols.input; ++w) {
        const auto [ow0, ow1] = Covering(d.cols, w);
        T* o = dx + ((n * d.rows.input + h) * d.cols.input + w) * depth;
        std::fill_n(o, depth, T(0));
        for (int64_t oh = oh0; oh < oh1; ++oh) {
          for (int64_t ow = ow0; ow < ow1; ++ow) {
            const T scale = T(1) / static_cast<T>(WindowAt(d, oh, ow).count());
            const T* go = g + ((n * d.rows.output + oh) * d.cols.output + ow) * depth;
            for (int64_t k = 0; k < depth; ++k) o[k] += go[k] * scale;
          }
        }
      }
    });
  }
};

}  // namespace

void RegisterPoolingKernels(KernelRegistry* registry) {
  ForEachType<float, double>([&]<typename T>() {
    registry->Register(KernelBuilder("MaxPool").TypeConstraint<T>("T"),
                       MakeKernel<PoolOp<T, true>>);
    registry->Register(KernelBuilder("AvgPool").TypeConstraint<T>("T"),
                       MakeKernel<PoolOp<T, false>>);
    registry->Register(KernelBuilder("MaxPoolGrad").TypeConstraint<T>("T"),
                       MakeKernel<MaxPoolGradOp<T>>);
    registry->Register(KernelBuilder("_FusedMaxPoolGrad").TypeConstraint<T>("T"),
                       MakeKernel<MaxPoolGradOp<T>>);
    registry->Register(KernelBuilder("AvgPoolGrad").TypeConstraint<T>("T"),
                       MakeKernel<AvgPoolGradOp<T>>);
  });
}

}  // namespace weir
