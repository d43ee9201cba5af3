// Softmax and LogSoftmax along the last axis, and the two softmax
// cross-entropy losses. Each row is computed independently on the intra-op
// pool, shifted by its maximum first so exp never overflows (logits of 1e4
// give finite results).
// GCC 12 reports the deliberately undefined registers inside Eigen's
// AVX-512 exp (_mm512_undefined_pd) as uninitialized; diagnostics are
// judged at the intrinsic headers' text, so the pragma must come before any
// include.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include <cmath>

#include "weir/base/denormal.h"
#include "weir/base/threadpool.h"
#include "weir/framework/eigen_tensor.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/nn_kernels.h"
#include "weir/kernels/type_list.h"

namespace weir {
namespace {

template <typename T>
using ConstRow = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
template <typename T>
using Row = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;

// Runs fn(row) for rows [0, rows) on the pool; `cost` is per row.
template <typename Fn>
void ForEachRow(OpKernelContext* context, int64_t rows, int64_t cost, const Fn& fn) {
  context->device()->intra_op_pool()->ParallelFor(rows, cost, [&](int64_t first, int64_t last) {
    for (int64_t r = first; r < last; ++r) fn(r);
  });
}

// Writes x - max(x) (n values; `shifted` may be x) and returns
// log(sum(exp(x - max(x)))). The shift keeps exp in (0, 1], so nothing
// overflows. A NaN or +inf anywhere in the row makes the whole row NaN.
template <typename T>
T ShiftAndLogSum(const T* x, int64_t n, T* shifted) {
  Row<T> y(shifted, n);
  y = ConstRow<T>(x, n) - ConstRow<T>(x, n).maxCoeff();
  return std::log(y.exp().sum());
}

template <typename T, bool kLog>
class SoftmaxOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    ScopedFlushDenormals flush_denormals;
    const Tensor& logits = context->input(0);
    OP_REQUIRES(
        context, logits.dims() >= 1,
        errors::InvalidArgument(type_string(), ": logits must have rank at least 1 ",
                                "but has shape ", logits.shape(), " (dtype ", kDTypeOf<T>, ")"));
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, logits.shape(), &out));
    const int64_t classes = logits.dim_size(logits.dims() - 1);
    if (logits.NumElements() == 0) return;
    const int64_t rows = logits.NumElements() / classes;
    const T* in = logits.data<T>();
    T* o = out->data<T>();
    ForEachRow(context, rows, classes * 8, [&](int64_t r) {
      Row<T> y(o + r * classes, classes);
      const ConstRow<T> x(in + r * classes, classes);
      if constexpr (kLog) {
        y = x - x.maxCoeff();
        y -= std::log(y.exp().sum());
      } else {
        y = (x - x.maxCoeff()).exp();
        y /= y.sum();
      }
    });
  }
};

// The broadcast view of a [rows, cols] operand of shape [r, c] where r is
// rows or 1 and c is cols or 1.
template <typename T>
struct BroadcastMatrix {
  const T* data;
  int64_t row_stride, col_stride;
  T at(int64_t r, int64_t c) const { return data[r * row_stride + c * col_stride]; }
};

template <typename T>
BroadcastMatrix<T> BroadcastView(const Tensor& t, int64_t rows, int64_t cols) {
  const int64_t t_cols = t.dim_size(1);
  return {t.data<T>(), t.dim_size(0) == 1 && rows != 1 ? 0 : t_cols,
          t_cols == 1 && cols != 1 ? 0 : 1};
}

template <typename T>
class SoftmaxCrossEntropyOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    ScopedFlushDenormals flush_denormals;
    const Tensor& features = context->input(0);
    const Tensor& labels = context->input(1);
    auto fail = [&](const std::string& what) {
      return errors::InvalidArgument("SoftmaxCrossEntropyWithLogits: features ", features.shape(),
                                     " and labels ", labels.shape(), " ", what, " (dtype ",
                                     kDTypeOf<T>, ")");
    };
    OP_REQUIRES(context, features.dims() == 2 && labels.dims() == 2,
                fail("must both have rank 2: [batch, classes]"));
    int64_t dims[2];
    for (int i = 0; i < 2; ++i) {
      const int64_t f = features.dim_size(i), l = labels.dim_size(i);
      OP_REQUIRES(context, f == l || f == 1 || l == 1,
                  fail("must be broadcastable (each dim equal or 1)"));
      dims[i] = f == 1 ? l : f;
    }
    const int64_t rows = dims[0], classes = dims[1];
    OP_REQUIRES(context, rows == 0 || classes > 0, fail("must have at least one class"));
    Tensor *loss, *backprop;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape({rows}), &loss));
    OP_REQUIRES_OK(context, context->allocate_output(1, TensorShape({rows, classes}), &backprop));
    if (rows == 0) return;
    const BroadcastMatrix<T> x = BroadcastView<T>(features, rows, classes);
    const BroadcastMatrix<T> p = BroadcastView<T>(labels, rows, classes);
    T* losses = loss->data<T>();
    T* grad = backprop->data<T>();
    ForEachRow(context, rows, classes * 12, [&](int64_t r) {
      // The row's logits, materialized when broadcast.
      Row<T> shifted(grad + r * classes, classes);
      for (int64_t c = 0; c < classes; ++c) shifted[c] = x.at(r, c);
      const T log_sum = ShiftAndLogSum<T>(shifted.data(), classes, shifted.data());
      // loss = sum(p * (log_sum - shifted)); backprop = softmax - p.
      T total = 0;
      for (int64_t c = 0; c < classes; ++c) {
        const T label = p.at(r, c);
        total += label * (log_sum - shifted[c]);
        shifted[c] = std::exp(shifted[c] - log_sum) - label;
      }
      losses[r] = total;
    });
  }
};

template <typename T, typename Label>
class SparseSoftmaxCrossEntropyOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    ScopedFlushDenormals flush_denormals;
    const Tensor& features = context->input(0);
    const Tensor& labels = context->input(1);
    OP_REQUIRES(
        context,
        features.dims() == 2 && labels.dims() == 1 && labels.dim_size(0) == features.dim_size(0),
        errors::InvalidArgument("SparseSoftmaxCrossEntropyWithLogits: features ", features.shape(),
                                " must be [batch, classes] and labels ", labels.shape(),
                                " [batch] (dtypes ", kDTypeOf<T>, ", ", kDTypeOf<Label>, ")"));
    const int64_t rows = features.dim_size(0), classes = features.dim_size(1);
    // Every label is checked before any is used as an index.
    const Label* label = labels.data<Label>();
    for (int64_t r = 0; r < rows; ++r) {
      OP_REQUIRES(context, label[r] >= 0 && label[r] < classes,
                  errors::InvalidArgument("SparseSoftmaxCrossEntropyWithLogits: labels[", r,
                                          "] = ", label[r], " is outside the valid range [0, ",
                                          classes, ") of classes for features ", features.shape()));
    }
    Tensor *loss, *backprop;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape({rows}), &loss));
    OP_REQUIRES_OK(context, context->allocate_output(1, features.shape(), &backprop));
    if (rows == 0) return;
    const T* x = features.data<T>();
    T* losses = loss->data<T>();
    T* grad = backprop->data<T>();
    ForEachRow(context, rows, classes * 10, [&](int64_t r) {
      Row<T> y(grad + r * classes, classes);
      const T log_sum = ShiftAndLogSum<T>(x + r * classes, classes, y.data());
      losses[r] = log_sum - y[label[r]];
      y = (y - log_sum).exp();
      y[label[r]] -= T(1);
    });
  }
};

}  // namespace

void RegisterSoftmaxKernels(KernelRegistry* registry) {
  ForEachType<float, double>([&]<typename T>() {
    registry->Register(KernelBuilder("Softmax").TypeConstraint<T>("T"),
                       MakeKernel<SoftmaxOp<T, false>>);
    registry->Register(KernelBuilder("LogSoftmax").TypeConstraint<T>("T"),
                       MakeKernel<SoftmaxOp<T, true>>);
    registry->Register(KernelBuilder("SoftmaxCrossEntropyWithLogits").TypeConstraint<T>("T"),
                       MakeKernel<SoftmaxCrossEntropyOp<T>>);
    ForEachType<int32_t, int64_t>([&]<typename Label>() {
      registry->Register(KernelBuilder("SparseSoftmaxCrossEntropyWithLogits")
                             .TypeConstraint("T", kDTypeOf<T>)
                             .TypeConstraint("Tlabels", kDTypeOf<Label>),
                         MakeKernel<SparseSoftmaxCrossEntropyOp<T, Label>>);
    });
  });
}

}  // namespace weir
