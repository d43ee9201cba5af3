// ToBool, the one kernel of the functional family (ops/functional_ops.cc):
// If, Case and While have none, they are lowered before a step runs.
#include <Eigen/Core>

#include "weir/framework/kernel_registry.h"
#include "weir/kernels/all_kernels.h"

namespace weir {
namespace {

// TensorFlow's truth of a tensor: a scalar by its value (a string by being
// non-empty), any other shape by having elements.
class ToBoolKernel final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    if (input.dims() > 0) {
      context->set_output(0, Tensor::Scalar<bool>(input.NumElements() > 0));
      return;
    }
    bool truth = false;
    bool known = true;
    switch (input.dtype()) {
      case DT_STRING: truth = !input.scalar<std::string>().empty(); break;
      case DT_HALF: truth = static_cast<float>(input.scalar<Eigen::half>()) != 0; break;
      case DT_BFLOAT16: truth = static_cast<float>(input.scalar<Eigen::bfloat16>()) != 0; break;
      default:
        known = DispatchNumericDType(input.dtype(), [&]<typename T>() {
          truth = input.scalar<T>() != T(0);
        });
    }
    OP_REQUIRES(context, known,
                errors::InvalidArgument("ToBool node ", def().Describe(), ": a ", input.dtype(),
                                        " scalar has no truth value"));
    context->set_output(0, Tensor::Scalar<bool>(truth));
  }
};

}  // namespace

void RegisterFunctionalKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("ToBool").Device(kDeviceCpu), MakeKernel<ToBoolKernel>);
}

}  // namespace weir
