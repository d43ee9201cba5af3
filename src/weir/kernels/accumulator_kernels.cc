// Kernels of the conditional-accumulator family (ops/accumulator_ops.cc).
// The creation ops find or make the accumulator in the device's
// ResourceMgr; the other ops reach it through a resource handle or
// TensorFlow's [2] string handle (container, name). The take is
// asynchronous: it holds no thread while it waits, and its callback holds
// the accumulator.
#include <mutex>
#include <vector>

#include "weir/framework/kernel_registry.h"
#include "weir/framework/resource_handle.h"
#include "weir/framework/resource_var.h"
#include "weir/kernels/all_kernels.h"
#include "weir/kernels/conditional_accumulator.h"

namespace weir {
namespace {

// ConditionalAccumulator and SparseConditionalAccumulator (kResource false:
// a string handle) and ResourceConditionalAccumulator. shared_name empty: an accumulator private
// to the node, in the session's container (as queues).
template <bool kResource>
class AccumulatorHandleOp final : public OpKernel {
 public:
  explicit AccumulatorHandleOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("container", &container_));
    context->SetStatus(context->GetAttr("shared_name", &shared_name_));
    name_ = shared_name_.empty() ? "_" + name() : shared_name_;
  }

  void Compute(OpKernelContext* context) override {
    const std::string container =
        container_.empty() ? std::string(context->default_container()) : container_;
    ConditionalAccumulator* made = nullptr;
    auto accumulator = context->resource_manager()->LookupOrCreate<ConditionalAccumulator>(
        container, name_, [&]() -> StatusOr<std::shared_ptr<ConditionalAccumulator>> {
          WEIR_ASSIGN_OR_RETURN(auto created, ConditionalAccumulator::Create(def(), name_));
          made = created.get();
          return created;
        });
    OP_REQUIRES_OK(context, accumulator.status());
    if (accumulator->get() != made) OP_REQUIRES_OK(context, CheckShared(*accumulator));
    Tensor* out;
    if (kResource) {
      OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape(), &out));
      out->scalar<ResourceHandle>() =
          ResourceHandle(context->device()->name(), container, name_, kAccumulatorTypeName);
    } else {
      OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape({2}), &out));
      out->data<std::string>()[0] = container;
      out->data<std::string>()[1] = name_;
    }
  }

 private:
  // An accumulator made elsewhere must match this node's attrs; the last
  // one checked is remembered, as nodes run every step.
  Status CheckShared(const std::shared_ptr<ConditionalAccumulator>& accumulator) const {
    {
      std::lock_guard<std::mutex> lock(checked_mu_);
      if (checked_.lock() == accumulator) return Status::OK();
    }
    WEIR_RETURN_IF_ERROR(accumulator->MatchesNodeDef(def()));
    std::lock_guard<std::mutex> lock(checked_mu_);
    checked_ = accumulator;
    return Status::OK();
  }

  std::string container_;
  std::string shared_name_;
  std::string name_;
  mutable std::mutex checked_mu_;
  mutable std::weak_ptr<ConditionalAccumulator> checked_;
};

// The accumulator input 0 names: a resource handle or a [2] string vector.
template <bool kResource>
StatusOr<std::shared_ptr<ConditionalAccumulator>> LookupAccumulator(OpKernelContext* context) {
  std::string container, name;
  if (kResource) {
    WEIR_ASSIGN_OR_RETURN(const ResourceHandle* handle,
                          HandleFromInput(context, 0, kAccumulatorTypeName));
    container = handle->container();
    name = handle->name();
  } else {
    const Tensor& handle = context->input(0);
    if (handle.dtype() != DT_STRING || handle.shape() != TensorShape({2})) {
      return errors::InvalidArgument(
          "an accumulator's string handle is a [2] string vector "
          "(container, name), got ",
          handle.dtype(), " ", handle.shape());
    }
    container = handle.data<std::string>()[0];
    name = handle.data<std::string>()[1];
  }
  auto accumulator = context->resource_manager()->Lookup<ConditionalAccumulator>(container, name);
  if (!accumulator.ok()) {
    return errors::NotFound("accumulator '", name, "' (container '", container,
                            "') does not exist on ", context->device()->name(),
                            ": it was never created in this session, its container was reset, "
                            "or this op runs on another device than the accumulator");
  }
  return accumulator;
}

// The scalar of input `index` (local_step, new_global_step, num_required).
template <typename T>
StatusOr<T> ScalarInput(OpKernelContext* context, int index, const char* what) {
  const Tensor& t = context->input(index);
  if (t.shape().dims() != 0) {
    return errors::InvalidArgument(context->op_kernel().type_string(), ": ", what,
                                   " must be a scalar, got shape ", t.shape());
  }
  return t.scalar<T>();
}

// The op's dtype attr must be the accumulator's.
Status CheckDType(const OpKernel& kernel, DType dtype, const ConditionalAccumulator& accumulator) {
  if (dtype == accumulator.dtype()) return Status::OK();
  return errors::InvalidArgument(kernel.type_string(), " has dtype ", dtype, " but ",
                                 accumulator.DebugString(), " holds ", accumulator.dtype());
}

// A take on the other kind of accumulator is InvalidArgument.
Status CheckKind(const OpKernel& kernel, bool sparse, const ConditionalAccumulator& accumulator) {
  if (sparse == accumulator.sparse()) return Status::OK();
  return errors::InvalidArgument(kernel.type_string(), " cannot act on ", accumulator.DebugString(),
                                 " (", accumulator.sparse() ? "sparse" : "dense", ")");
}

template <bool kResource>
class ApplyGradientOp final : public OpKernel {
 public:
  explicit ApplyGradientOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("dtype", &dtype_));
  }
  void Compute(OpKernelContext* context) override {
    auto accumulator = LookupAccumulator<kResource>(context);
    OP_REQUIRES_OK(context, accumulator.status());
    OP_REQUIRES_OK(context, CheckDType(*this, dtype_, **accumulator));
    StatusOr<int64_t> local_step = ScalarInput<int64_t>(context, 1, "local_step");
    OP_REQUIRES_OK(context, local_step.status());
    OP_REQUIRES_OK(context, (*accumulator)->ApplyGradient(*local_step, context->input(2)));
  }

 private:
  DType dtype_ = DT_INVALID;
};

// AccumulatorTakeGradient (dense) and SparseAccumulatorTakeGradient
// (kSparse), each only on its kind of accumulator.
template <bool kResource, bool kSparse = false>
class TakeGradientOp final : public AsyncOpKernel {
 public:
  explicit TakeGradientOp(OpKernelConstruction* context) : AsyncOpKernel(context) {
    context->SetStatus(context->GetAttr("dtype", &dtype_));
  }
  void ComputeAsync(OpKernelContext* context, DoneCallback done) override {
    auto accumulator = LookupAccumulator<kResource>(context);
    OP_REQUIRES_OK_ASYNC(context, accumulator.status(), done);
    OP_REQUIRES_OK_ASYNC(context, CheckDType(*this, dtype_, **accumulator), done);
    OP_REQUIRES_OK_ASYNC(context, CheckKind(*this, kSparse, **accumulator), done);
    StatusOr<int32_t> num_required = ScalarInput<int32_t>(context, 1, "num_required");
    OP_REQUIRES_OK_ASYNC(context, num_required.status(), done);
    OP_REQUIRES_ASYNC(
        context, *num_required >= 1,
        errors::InvalidArgument("Argument num_required must be positive, but was ", *num_required,
                                " (", (*accumulator)->DebugString(), ")"),
        done);
    std::shared_ptr<ConditionalAccumulator> held = std::move(accumulator).value();
    ConditionalAccumulator* a = held.get();
    a->TryTakeGradient(*num_required, context,
                       [context, held = std::move(held),
                        done = std::move(done)](StatusOr<std::vector<Tensor>> result) {
                         if (result.ok()) {
                           for (size_t i = 0; i < result->size(); ++i) {
                             context->set_output(static_cast<int>(i), std::move((*result)[i]));
                           }
                         }
                         done();
                       });
  }

 private:
  DType dtype_ = DT_INVALID;
};

class SparseApplyGradientOp final : public OpKernel {
 public:
  explicit SparseApplyGradientOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("dtype", &dtype_));
    context->SetStatus(context->GetAttr("has_known_shape", &has_known_shape_));
  }
  void Compute(OpKernelContext* context) override {
    auto accumulator = LookupAccumulator<false>(context);
    OP_REQUIRES_OK(context, accumulator.status());
    OP_REQUIRES_OK(context, CheckDType(*this, dtype_, **accumulator));
    StatusOr<int64_t> local_step = ScalarInput<int64_t>(context, 1, "local_step");
    OP_REQUIRES_OK(context, local_step.status());
    OP_REQUIRES_OK(context,
                   (*accumulator)
                       ->ApplySparseGradient(*local_step, context->input(2), context->input(3),
                                             has_known_shape_ ? &context->input(4) : nullptr));
  }

 private:
  DType dtype_ = DT_INVALID;
  bool has_known_shape_ = false;
};

template <bool kResource>
class NumAccumulatedOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    auto accumulator = LookupAccumulator<kResource>(context);
    OP_REQUIRES_OK(context, accumulator.status());
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape(), &out));
    out->scalar<int32_t>() = (*accumulator)->num_accumulated();
  }
};

template <bool kResource>
class SetGlobalStepOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    auto accumulator = LookupAccumulator<kResource>(context);
    OP_REQUIRES_OK(context, accumulator.status());
    StatusOr<int64_t> step = ScalarInput<int64_t>(context, 1, "new_global_step");
    OP_REQUIRES_OK(context, step.status());
    (*accumulator)->SetGlobalStep(*step);
  }
};

template <bool kResource>
void RegisterForm(KernelRegistry* registry) {
  const std::string prefix = kResource ? "Resource" : "";
  registry->Register(
      KernelBuilder(kResource ? "ResourceConditionalAccumulator" : "ConditionalAccumulator")
          .Device(kDeviceCpu),
      MakeKernel<AccumulatorHandleOp<kResource>>);
  registry->Register(KernelBuilder(prefix + "AccumulatorApplyGradient").Device(kDeviceCpu),
                     MakeKernel<ApplyGradientOp<kResource>>);
  registry->Register(KernelBuilder(prefix + "AccumulatorTakeGradient").Device(kDeviceCpu),
                     MakeKernel<TakeGradientOp<kResource>>);
  registry->Register(KernelBuilder(prefix + "AccumulatorNumAccumulated").Device(kDeviceCpu),
                     MakeKernel<NumAccumulatedOp<kResource>>);
  registry->Register(KernelBuilder(prefix + "AccumulatorSetGlobalStep").Device(kDeviceCpu),
                     MakeKernel<SetGlobalStepOp<kResource>>);
}

}  // namespace

void RegisterAccumulatorKernels(KernelRegistry* registry) {
  RegisterForm<false>(registry);
  RegisterForm<true>(registry);
  registry->Register(KernelBuilder("SparseConditionalAccumulator").Device(kDeviceCpu),
                     MakeKernel<AccumulatorHandleOp<false>>);
  registry->Register(KernelBuilder("SparseAccumulatorApplyGradient").Device(kDeviceCpu),
                     MakeKernel<SparseApplyGradientOp>);
  registry->Register(KernelBuilder("SparseAccumulatorTakeGradient").Device(kDeviceCpu),
                     MakeKernel<TakeGradientOp<false, true>>);
}

}  // namespace weir
