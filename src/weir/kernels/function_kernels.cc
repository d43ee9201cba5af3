// _Arg and _Retval: read feeds from and write fetches to the call frame.
#include <limits>

#include "weir/framework/call_frame.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/all_kernels.h"

namespace weir {
namespace {

// Reads the int64 "index" attr; an index that doesn't fit an int (the
// frame's size type) is an error rather than a truncated, wrong slot.
void ReadIndex(OpKernelConstruction* context, int64_t* index) {
  Status status = context->GetAttr("index", index);
  if (status.ok() && (*index < 0 || *index > std::numeric_limits<int>::max())) {
    status = errors::InvalidArgument("node ", context->node().Describe(), ": attr 'index' is ",
                                     *index, ", outside [0, ", std::numeric_limits<int>::max(),
                                     "]");
  }
  context->SetStatus(status);
}

class ArgKernel final : public OpKernel {
 public:
  explicit ArgKernel(OpKernelConstruction* context) : OpKernel(context) {
    ReadIndex(context, &index_);
  }
  void Compute(OpKernelContext* context) override {
    OP_REQUIRES(context, context->call_frame() != nullptr,
                errors::Internal("_Arg run without a call frame"));
    StatusOr<const Tensor*> arg = context->call_frame()->GetArg(index_);
    OP_REQUIRES_OK(context, arg.status());
    context->set_output(0, **arg);
  }

 private:
  int64_t index_ = 0;
};

class RetvalKernel final : public OpKernel {
 public:
  explicit RetvalKernel(OpKernelConstruction* context) : OpKernel(context) {
    ReadIndex(context, &index_);
  }
  void Compute(OpKernelContext* context) override {
    OP_REQUIRES(context, context->call_frame() != nullptr,
                errors::Internal("_Retval run without a call frame"));
    OP_REQUIRES_OK(context,
                   context->call_frame()->SetRetval(index_, context->input(0)));
  }

 private:
  int64_t index_ = 0;
};

}  // namespace

void RegisterFunctionKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("_Arg").Device(kDeviceCpu), MakeKernel<ArgKernel>);
  registry->Register(KernelBuilder("_Retval").Device(kDeviceCpu), MakeKernel<RetvalKernel>);
}

}  // namespace weir
