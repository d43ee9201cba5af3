// AddN: the sum of N tensors of one shape. Each element is summed in input
// order, ((x0 + x1) + x2) + ..., whatever the sharding, so results are
// bit-identical from run to run. Integers wrap.
#include <algorithm>
#include <vector>

#include "weir/kernels/cwise_functors.h"
#include "weir/kernels/cwise_ops.h"
#include "weir/kernels/math_kernels.h"

namespace weir {
namespace {

template <typename T>
class AddNOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    [[maybe_unused]] FlushDenormalsFor<T> flush_denormals;
    const int count = context->num_inputs();
    const TensorShape shape = context->input(0).shape();
    for (int i = 1; i < count; ++i) {
      OP_REQUIRES(
          context, context->input(i).shape() == shape,
          errors::InvalidArgument("AddN: input ", i, " has shape ", context->input(i).shape(),
                                  " but input 0 has shape ", shape, " (dtype ", kDTypeOf<T>, ")"));
    }
    if (count == 1) {
      context->set_output(0, context->input(0));
      return;
    }
    // Only input 0 may become the output: it is read before each block of
    // the output is written, the others after.
    int forwarded;
    Tensor* out = ForwardOrAllocate(context, {0}, shape, &forwarded);
    const int64_t n = shape.num_elements();
    if (out == nullptr || n == 0) return;
    std::vector<const T*> inputs(count);
    for (int i = 0; i < count; ++i) {
      inputs[i] = (i == forwarded ? *out : context->input(i)).template data<T>();
    }
    T* z = out->template data<T>();
    constexpr double kCyclesPerInput = 1 + sizeof(T) * 11.0 / 64;
    ShardOrInline(context->device()->intra_op_pool(), n, count * kCyclesPerInput,
                  [&](int64_t begin, int64_t end) {
                    // Blocks small enough that z stays in L1 between inputs.
                    constexpr int64_t kBlock = 2048;
                    const functor::Add<T> add;
                    for (int64_t start = begin; start < end; start += kBlock) {
                      const int64_t size = std::min(kBlock, end - start);
                      T* zb = z + start;
                      const T* x0 = inputs[0] + start;
                      const T* x1 = inputs[1] + start;
                      for (int64_t j = 0; j < size; ++j) zb[j] = add(x0[j], x1[j]);
                      for (int i = 2; i < count; ++i) {
                        const T* xi = inputs[i] + start;
                        for (int64_t j = 0; j < size; ++j) zb[j] = add(zb[j], xi[j]);
                      }
                    }
                  });
  }
};

}  // namespace

void RegisterAddNKernels(KernelRegistry* registry) {
  ForEachType<float, double, int32_t, int64_t, complex64, complex128>([&]<typename T>() {
    registry->Register(KernelBuilder("AddN").TypeConstraint<T>("T"), MakeKernel<AddNOp<T>>);
  });
}

}  // namespace weir
