// Kernels of the stack ops (ops/data_flow_ops.cc): a per-step stack of
// tensors, which a loop's gradient fills in the forward loop and empties in
// the backward one. Elements are held, not copied (tensors are immutable).
#include <mutex>
#include <vector>

#include "weir/framework/kernel_registry.h"
#include "weir/kernels/all_kernels.h"
#include "weir/kernels/step_resources.h"

namespace weir {
namespace {

inline constexpr char kStackTypeName[] = "Stack";

class Stack final : public ResourceBase {
 public:
  Stack(std::string name, DType dtype, int64_t max_size)
      : name_(std::move(name)), dtype_(dtype), max_size_(max_size) {}

  Status Push(Tensor value) {
    std::lock_guard<std::mutex> lock(mu_);
    WEIR_RETURN_IF_ERROR(CheckOpen());
    if (value.dtype() != dtype_) {
      return errors::InvalidArgument("Stack[", name_, "] holds ", dtype_, ", not ", value.dtype());
    }
    if (max_size_ >= 0 && static_cast<int64_t>(elements_.size()) >= max_size_) {
      return errors::InvalidArgument("Stack[", name_, "] overflowed its max_size (", max_size_,
                                     ")");
    }
    elements_.push_back(std::move(value));
    return Status::OK();
  }

  StatusOr<Tensor> Pop() {
    std::lock_guard<std::mutex> lock(mu_);
    WEIR_RETURN_IF_ERROR(CheckOpen());
    if (elements_.empty()) {
      return errors::InvalidArgument("Stack[", name_, "] is empty when calling Pop()");
    }
    Tensor top = std::move(elements_.back());
    elements_.pop_back();
    return top;
  }

  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    elements_.clear();
    closed_ = true;
  }

  DType dtype() const { return dtype_; }
  std::string DebugString() const override { return StrCat("Stack[", name_, "] of ", dtype_); }

 private:
  Status CheckOpen() const {
    if (closed_) return errors::InvalidArgument("Stack[", name_, "] has already been closed");
    return Status::OK();
  }

  const std::string name_;
  const DType dtype_;
  const int64_t max_size_;  // < 0: unbounded
  std::mutex mu_;
  std::vector<Tensor> elements_;
  bool closed_ = false;
};

class StackOp final : public OpKernel {
 public:
  explicit StackOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("elem_type", &elem_type_));
    context->SetStatus(context->GetAttr("stack_name", &stack_name_));
    if (stack_name_.empty()) stack_name_ = name();
  }
  void Compute(OpKernelContext* context) override {
    const Tensor& max_size = context->input(0);
    OP_REQUIRES(context, max_size.dims() == 0,
                errors::InvalidArgument("max_size must be a scalar, has shape ", max_size.shape()));
    std::string name = UniqueStepResourceName(stack_name_);
    auto stack = std::make_shared<Stack>(name, elem_type_, max_size.scalar<int32_t>());
    OP_REQUIRES_OK(context, CreateStepResource<Stack>(context, kStackTypeName, name, stack, 0));
  }

 private:
  DType elem_type_ = DT_FLOAT;
  std::string stack_name_;
};

class StackPushOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    StatusOr<std::shared_ptr<Stack>> stack = LookupStepResource<Stack>(context, 0, kStackTypeName);
    OP_REQUIRES_OK(context, stack.status());
    OP_REQUIRES_OK(context, (*stack)->Push(context->input(1)));
    context->set_output(0, context->input(1));
  }
};

class StackPopOp final : public OpKernel {
 public:
  explicit StackPopOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("elem_type", &elem_type_));
  }
  void Compute(OpKernelContext* context) override {
    StatusOr<std::shared_ptr<Stack>> stack = LookupStepResource<Stack>(context, 0, kStackTypeName);
    OP_REQUIRES_OK(context, stack.status());
    OP_REQUIRES(context, (*stack)->dtype() == elem_type_,
                errors::InvalidArgument("the stack holds ", (*stack)->dtype(), " but the op pops ",
                                        elem_type_));
    StatusOr<Tensor> top = (*stack)->Pop();
    OP_REQUIRES_OK(context, top.status());
    context->set_output(0, std::move(top).value());
  }

 private:
  DType elem_type_ = DT_FLOAT;
};

class StackCloseOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    StatusOr<std::shared_ptr<Stack>> stack = LookupStepResource<Stack>(context, 0, kStackTypeName);
    OP_REQUIRES_OK(context, stack.status());
    (*stack)->Close();
  }
};

}  // namespace

void RegisterStackKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("StackV2"), MakeKernel<StackOp>);
  registry->Register(KernelBuilder("StackPushV2"), MakeKernel<StackPushOp>);
  registry->Register(KernelBuilder("StackPopV2"), MakeKernel<StackPopOp>);
  registry->Register(KernelBuilder("StackCloseV2"), MakeKernel<StackCloseOp>);
}

}  // namespace weir
