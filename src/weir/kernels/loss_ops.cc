// L2Loss and InTopKV2.
#include <cmath>

#include "weir/base/denormal.h"
#include "weir/base/threadpool.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/channel_sums.h"
#include "weir/kernels/nn_kernels.h"
#include "weir/kernels/type_list.h"

namespace weir {
namespace {

// sum(t * t) / 2, accumulated in double over fixed blocks (deterministic).
template <typename T>
class L2LossOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    ScopedFlushDenormals flush_denormals;
    const Tensor& t = context->input(0);
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape(), &out));
    const T* x = t.data<T>();
    double total;
    SumRowBlocks<double>(
        context->device()->intra_op_pool(), t.NumElements(), 1, 1,
        [&](int64_t begin, int64_t end, double* acc) {
          double sum = 0;
          for (int64_t i = begin; i < end; ++i) sum += static_cast<double>(x[i]) * x[i];
          *acc += sum;
        },
        &total);
    out->scalar<T>() = static_cast<T>(total / 2);
  }
};

template <typename Index>
class InTopKOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& predictions = context->input(0);
    const Tensor& targets = context->input(1);
    const Tensor& k_tensor = context->input(2);
    OP_REQUIRES(context,
                predictions.dims() == 2 && targets.dims() == 1 &&
                    targets.dim_size(0) == predictions.dim_size(0) && k_tensor.dims() == 0,
                errors::InvalidArgument("InTopKV2: predictions ", predictions.shape(),
                                        " must be [batch, classes], targets ", targets.shape(),
                                        " [batch] and k ", k_tensor.shape(),
                                        " a scalar (T=", kDTypeOf<Index>, ")"));
    const int64_t rows = predictions.dim_size(0), classes = predictions.dim_size(1);
    const int64_t k = k_tensor.scalar<Index>();
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape({rows}), &out));
    const float* p = predictions.data<float>();
    const Index* target = targets.data<Index>();
    bool* in_top_k = out->data<bool>();
    context->device()->intra_op_pool()->ParallelFor(
        rows, classes * 2, [&](int64_t first, int64_t last) {
          for (int64_t r = first; r < last; ++r) {
            in_top_k[r] = InTopK(p + r * classes, classes, target[r], k);
          }
        });
  }

 private:
  // Fewer than k classes score strictly higher than the target. An
  // out-of-range target or any non-finite score leaves the answer unknown:
  // false.
  static bool InTopK(const float* scores, int64_t classes, int64_t target, int64_t k) {
    if (target < 0 || target >= classes) return false;
    const float target_score = scores[target];
    int64_t higher = 0;
    bool finite = true;
    for (int64_t c = 0; c < classes; ++c) {
      finite &= std::isfinite(scores[c]);
      higher += scores[c] > target_score;
    }
    return finite && higher < k;
  }
};

}  // namespace

void RegisterLossKernels(KernelRegistry* registry) {
  ForEachType<float, double>([&]<typename T>() {
    registry->Register(KernelBuilder("L2Loss").TypeConstraint<T>("T"), MakeKernel<L2LossOp<T>>);
  });
  ForEachType<int32_t, int64_t>([&]<typename Index>() {
    registry->Register(KernelBuilder("InTopKV2").TypeConstraint<Index>("T"),
                       MakeKernel<InTopKOp<Index>>);
  });
}

}  // namespace weir
