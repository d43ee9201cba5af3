// Kernels of the array family. None of them computes: they hand out a
// buffer that already exists (Const, Identity, Reshape) or describe one
// (Shape), so all are cheap and run inline on the executor thread.
#include <limits>

#include "weir/framework/kernel_registry.h"
#include "weir/kernels/all_kernels.h"
#include "weir/kernels/array_kernels.h"
#include "weir/ops/shape_fns.h"

namespace weir {
namespace {

class ConstOp : public OpKernel {
 public:
  explicit ConstOp(OpKernelConstruction* context) : OpKernel(context) {
    DType dtype;
    Status status = context->GetAttr("value", &value_);
    status.Update(context->GetAttr("dtype", &dtype));
    if (status.ok() && !value_.IsInitialized()) {
      status = errors::InvalidArgument("Const: the value attr holds no data");
    }
    if (status.ok() && value_.dtype() != dtype) {
      status = errors::InvalidArgument("Const: value has dtype ", value_.dtype(), " and shape ",
                                       value_.shape(), " but the dtype attr is ", dtype);
    }
    context->SetStatus(status);
  }

  // Every step shares the attr's buffer; consumers never write into an
  // input they do not own alone, and this kernel keeps a reference.
  void Compute(OpKernelContext* context) override { context->set_output(0, value_); }
  bool IsExpensive() const override { return false; }

 private:
  Tensor value_;
};

class PlaceholderOp : public OpKernel {
 public:
  explicit PlaceholderOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("shape", &shape_));
  }

  // The session replaces every fed placeholder, so running one means the
  // client forgot the feed.
  void Compute(OpKernelContext* context) override {
    std::string shape_clause =
        shape_.known_rank() ? StrCat(" and shape ", shape_) : std::string();
    context->SetStatus(errors::InvalidArgument("You must feed a value for placeholder tensor '",
                                               name(), "' with dtype ", output_type(0),
                                               shape_clause));
  }
  bool IsExpensive() const override { return false; }

 private:
  PartialShape shape_;
};

class IdentityOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override { context->set_output(0, context->input(0)); }
  bool IsExpensive() const override { return false; }
};

template <typename Index>
class ShapeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    const TensorShape& shape = context->input(0).shape();
    Tensor* output;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape({shape.rank()}), &output));
    for (int i = 0; i < shape.rank(); ++i) {
      OP_REQUIRES(context, shape.dim_size(i) <= std::numeric_limits<Index>::max(),
                  errors::InvalidArgument("Shape: dimension ", i, " of input shape ", shape,
                                          " does not fit in ", output_type(0),
                                          "; use out_type=int64"));
      output->data<Index>()[i] = static_cast<Index>(shape.dim_size(i));
    }
  }
  bool IsExpensive() const override { return false; }
};

class ReshapeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    const Tensor& sizes = context->input(1);
    OP_REQUIRES(context, sizes.dims() == 1,
                errors::InvalidArgument("Reshape: the shape input must be a vector but has "
                                        "shape ", sizes.shape(), " (input shape ",
                                        input.shape(), ")"));
    StatusOr<std::vector<int64_t>> dims = IntTensorValues(sizes, "Reshape: shape input");
    OP_REQUIRES_OK(context, dims.status());
    StatusOr<PartialShape> target = ReshapeTarget(input.shape(), *dims);
    OP_REQUIRES_OK(context, target.status().WithContext("Reshape"));
    Tensor output;
    CHECK(output.CopyFrom(input, target->ToTensorShape()));
    context->set_output(0, std::move(output));
  }
  bool IsExpensive() const override { return false; }
};

}  // namespace

void RegisterArrayKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("Const"), MakeKernel<ConstOp>);
  registry->Register(KernelBuilder("Placeholder"), MakeKernel<PlaceholderOp>);
  registry->Register(KernelBuilder("Identity"), MakeKernel<IdentityOp>);
  registry->Register(KernelBuilder("Shape").TypeConstraint<int32_t>("out_type"),
                     MakeKernel<ShapeOp<int32_t>>);
  registry->Register(KernelBuilder("Shape").TypeConstraint<int64_t>("out_type"),
                     MakeKernel<ShapeOp<int64_t>>);
  registry->Register(KernelBuilder("Reshape").TypeConstraint<int32_t>("Tshape")
                         .TypeConstraint<int64_t>("Tshape"),
                     MakeKernel<ReshapeOp>);
  RegisterTransposeKernels(registry);
  RegisterSliceKernels(registry);
  RegisterConcatSplitKernels(registry);
  RegisterTilePadKernels(registry);
  RegisterGatherScatterKernels(registry);
  RegisterPartitionKernels(registry);
}

}  // namespace weir
