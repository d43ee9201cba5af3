// Kernels of the control-flow family (ops/control_flow_ops.cc).
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/all_kernels.h"

namespace weir {
namespace {

class NoOpKernel final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext*) override {}
};

}  // namespace

void RegisterControlFlowKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("NoOp").Device(kDeviceCpu), MakeKernel<NoOpKernel>);
}

}  // namespace weir
