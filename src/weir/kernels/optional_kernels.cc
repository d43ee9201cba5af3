// The Optional kernels (kernels/tensor_list.h's OptionalValue): a v2 cond's
// gradient reads the forward branch's intermediates through Optionals, the
// branch that did not run giving none. Also AddN and ZerosLike of variants
// (a list's or an optional's gradients summed, or zeros for an unused one).
#include "weir/base/str_util.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/all_kernels.h"
#include "weir/kernels/tensor_list.h"

namespace weir {
namespace {

void OutputVariant(OpKernelContext* c, int index, Variant value) {
  Tensor* out;
  OP_REQUIRES_OK(c, c->allocate_output(index, TensorShape(), &out));
  out->scalar<Variant>() = std::move(value);
}

StatusOr<const OptionalValue*> ReadOptional(OpKernelContext* c, const OpKernel& kernel) {
  const Tensor& t = c->input(0);
  if (t.dtype() != DT_VARIANT || t.dims() != 0) {
    return errors::InvalidArgument(kernel.type_string(), " '", kernel.name(),
                                   "': optional must be a scalar variant, not a ", t.dtype(),
                                   " tensor of shape ", t.shape());
  }
  const OptionalValue* optional = t.scalar<Variant>().get<OptionalValue>();
  if (optional == nullptr) {
    return errors::InvalidArgument(kernel.type_string(), " '", kernel.name(), "': input holds a ",
                                   t.scalar<Variant>().TypeName(), " variant, not an Optional");
  }
  return optional;
}

class OptionalFromValueOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    std::vector<Tensor> components;
    for (int i = 0; i < c->num_inputs(); ++i) components.push_back(c->input(i));
    OutputVariant(c, 0, Variant::Make<OptionalValue>(std::move(components)));
  }
};

class OptionalNoneOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override { OutputVariant(c, 0, Variant::Make<OptionalValue>()); }
};

class OptionalHasValueOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    StatusOr<const OptionalValue*> optional = ReadOptional(c, *this);
    OP_REQUIRES_OK(c, optional.status());
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape(), &out));
    out->scalar<bool>() = (*optional)->has_value;
  }
};

class OptionalGetValueOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    StatusOr<const OptionalValue*> optional = ReadOptional(c, *this);
    OP_REQUIRES_OK(c, optional.status());
    const OptionalValue& value = **optional;
    const std::string where = StrCat("OptionalGetValue '", name(), "': ");
    OP_REQUIRES(c, value.has_value, errors::InvalidArgument(where, "the optional has no value"));
    OP_REQUIRES(c, static_cast<int>(value.components.size()) == c->num_outputs(),
                errors::InvalidArgument(where, "the optional has ", value.components.size(),
                                        " components but output_types lists ", c->num_outputs()));
    for (int i = 0; i < c->num_outputs(); ++i) {
      OP_REQUIRES(
          c, value.components[i].dtype() == c->expected_output_dtype(i),
          errors::InvalidArgument(where, "component ", i, " is ", value.components[i].dtype(),
                                  " but output_types says ", c->expected_output_dtype(i)));
      c->set_output(i, value.components[i]);
    }
  }
};

// AddN of variants: the values' own Add, left to right.
class AddNVariantOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    const TensorShape& shape = c->input(0).shape();
    for (int i = 1; i < c->num_inputs(); ++i) {
      OP_REQUIRES(c, c->input(i).shape() == shape,
                  errors::InvalidArgument("AddN '", name(), "': input ", i, " has shape ",
                                          c->input(i).shape(), " but input 0 has shape ", shape,
                                          " (dtype variant)"));
    }
    Tensor sum = c->input(0);
    for (int i = 1; i < c->num_inputs(); ++i) {
      StatusOr<Tensor> next = AddTensors(sum, c->input(i));
      OP_REQUIRES_OK(c, next.status().WithContext(StrCat("AddN '", name(), "'")));
      sum = *std::move(next);
    }
    c->set_output(0, std::move(sum));
  }
};

}  // namespace

void RegisterOptionalKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("OptionalFromValue"), MakeKernel<OptionalFromValueOp>);
  registry->Register(KernelBuilder("OptionalNone"), MakeKernel<OptionalNoneOp>);
  registry->Register(KernelBuilder("OptionalHasValue"), MakeKernel<OptionalHasValueOp>);
  registry->Register(KernelBuilder("OptionalGetValue"), MakeKernel<OptionalGetValueOp>);
  registry->Register(KernelBuilder("AddN").TypeConstraint<Variant>("T"), MakeKernel<AddNVariantOp>);
}

}  // namespace weir
