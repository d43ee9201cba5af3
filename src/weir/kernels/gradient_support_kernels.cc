// Kernels of ops/gradient_support_ops.cc.
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/all_kernels.h"
#include "weir/kernels/type_list.h"

namespace weir {
namespace {

template <typename T>
class BroadcastGradientArgsOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    const Tensor& s0 = context->input(0);
    const Tensor& s1 = context->input(1);
    OP_REQUIRES(context, s0.dims() == 1 && s1.dims() == 1,
                errors::InvalidArgument("BroadcastGradientArgs: shapes must be vectors, got ",
                                        s0.shape(), " and ", s1.shape()));
    const int64_t n0 = s0.NumElements(), n1 = s1.NumElements();
    const int64_t rank = std::max(n0, n1);
    std::vector<T> r0, r1;
    for (int64_t i = 0; i < rank; ++i) {
      // Dims aligned from the right; missing leading dims are 1.
      T d0 = i < rank - n0 ? 1 : s0.data<T>()[i - (rank - n0)];
      T d1 = i < rank - n1 ? 1 : s1.data<T>()[i - (rank - n1)];
      OP_REQUIRES(context, d0 == d1 || d0 == 1 || d1 == 1,
                  errors::InvalidArgument("BroadcastGradientArgs: incompatible shapes [",
                                          StrJoin(s0.flat<T>(), ","), "] vs. [",
                                          StrJoin(s1.flat<T>(), ","), "]"));
      T out = std::max(d0, d1);
      if (i < rank - n0 || (d0 == 1 && out != 1)) r0.push_back(static_cast<T>(i));
      if (i < rank - n1 || (d1 == 1 && out != 1)) r1.push_back(static_cast<T>(i));
    }
    for (int k = 0; k < 2; ++k) {
      const std::vector<T>& axes = k == 0 ? r0 : r1;
      Tensor* out;
      OP_REQUIRES_OK(context, context->allocate_output(k, TensorShape({static_cast<int64_t>(axes.size())}), &out));
      std::copy(axes.begin(), axes.end(), out->data<T>());
    }
  }
};

}  // namespace

void RegisterGradientSupportKernels(KernelRegistry* registry) {
  ForEachType<int32_t, int64_t>([&]<typename T>() {
    registry->Register(KernelBuilder("BroadcastGradientArgs").TypeConstraint<T>("T"),
                       MakeKernel<BroadcastGradientArgsOp<T>>);
  });
}

}  // namespace weir
