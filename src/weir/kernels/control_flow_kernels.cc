// Kernels of the control-flow family (ops/control_flow_ops.cc). They only
// move values: frames, iterations and deadness are the executor's, which
// moves the values of Enter, Exit, NextIteration and LoopCond itself (their
// kernels here serve other callers of a kernel, such as constant folding).
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/all_kernels.h"

namespace weir {
namespace {

class NoOpKernel final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext*) override {}
};

// Sets output_true (1) or output_false (0); the one left unset is dead.
class SwitchKernel final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    const Tensor& pred = context->input(1);
    OP_REQUIRES(context, pred.dtype() == DT_BOOL && pred.dims() == 0,
                errors::InvalidArgument("the predicate of Switch node ", def().Describe(),
                                        " must be a bool scalar, got ", pred.dtype(), " ",
                                        pred.shape()));
    context->set_output(pred.scalar<bool>() ? 1 : 0, context->input(0));
  }
};

// Forwards its one live input (the executor runs it once that arrived; the
// dead inputs are unset) and that input's index.
class MergeKernel final : public OpKernel {
 public:
  explicit MergeKernel(OpKernelConstruction* context) : OpKernel(context) {
    // value_index as shared constants: no allocation per iteration.
    for (int i = 0; i < num_inputs(); ++i) indices_.push_back(Tensor::Scalar<int32_t>(i));
  }
  void Compute(OpKernelContext* context) override {
    for (int i = 0; i < context->num_inputs(); ++i) {
      if (!context->input(i).IsInitialized()) continue;
      context->set_output(0, context->input(i));
      context->set_output(1, indices_[i]);
      return;
    }
    context->SetStatus(
        errors::Internal("Merge node ", def().Describe(), " ran without a live input"));
  }

 private:
  std::vector<Tensor> indices_;
};

// Enter, Exit, NextIteration, LoopCond.
class ForwardKernel final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    context->set_output(0, context->input(0));
  }
};

}  // namespace

void RegisterControlFlowKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("NoOp").Device(kDeviceCpu), MakeKernel<NoOpKernel>);
  registry->Register(KernelBuilder("ControlTrigger").Device(kDeviceCpu), MakeKernel<NoOpKernel>);
  registry->Register(KernelBuilder("Switch").Device(kDeviceCpu), MakeKernel<SwitchKernel>);
  registry->Register(KernelBuilder("Merge").Device(kDeviceCpu), MakeKernel<MergeKernel>);
  for (const char* op : {"Enter", "Exit", "NextIteration", "LoopCond"}) {
    registry->Register(KernelBuilder(op).Device(kDeviceCpu), MakeKernel<ForwardKernel>);
  }
}

}  // namespace weir
