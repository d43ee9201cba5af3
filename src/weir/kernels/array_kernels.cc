// Kernels of the array family that never copy: they hand out a buffer that
// already exists (Const, Identity and its kin, Reshape, ExpandDims,
// Squeeze) or describe one (Shape, ShapeN, Size, Rank), so all are cheap
// and run inline on the executor thread. RegisterArrayKernels also calls
// the family's other files (array_kernels.h).
#include <limits>

#include "weir/framework/array_shape_rules.h"
#include "weir/framework/int_tensor_values.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/all_kernels.h"
#include "weir/kernels/array_kernels.h"
#include "weir/kernels/shape_util.h"
#include "weir/kernels/type_list.h"

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
  const Tensor* ConstantOutput() const override { return &value_; }

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

// Identity, IdentityN, StopGradient and PreventGradient: output i is
// input i.
class IdentityOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    for (int i = 0; i < context->num_inputs(); ++i) context->set_output(i, context->input(i));
  }
  bool IsExpensive() const override { return false; }
};

// The unfed value of a PlaceholderWithDefault, which must have the shape the
// attr promises (graph time may not have known the input's shape).
class PlaceholderWithDefaultOp : public OpKernel {
 public:
  explicit PlaceholderWithDefaultOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("shape", &shape_));
  }
  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    OP_REQUIRES(context, shape_.IsCompatibleWith(PartialShape(input.shape())),
                errors::InvalidArgument("node ", def().Describe(), ": the default value has shape ",
                                        input.shape(), ", not the shape attr's ", shape_));
    context->set_output(0, input);
  }
  bool IsExpensive() const override { return false; }

 private:
  PartialShape shape_;
};

// Output `output` of `context` is the dims of `shape` as a vector of Index.
template <typename Index>
void SetShapeOutput(OpKernelContext* context, int output, const TensorShape& shape) {
  Tensor* out;
  OP_REQUIRES_OK(context, context->allocate_output(output, TensorShape({shape.rank()}), &out));
  for (int i = 0; i < shape.rank(); ++i) {
    OP_REQUIRES(context, shape.dim_size(i) <= std::numeric_limits<Index>::max(),
                errors::InvalidArgument(context->op_kernel().type_string(), ": dimension ", i,
                                        " of input shape ", shape, " does not fit in ",
                                        kDTypeOf<Index>, "; use out_type=int64"));
    out->data<Index>()[i] = static_cast<Index>(shape.dim_size(i));
  }
}

// Shape and ShapeN: output i is the shape of input i.
template <typename Index>
class ShapeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    for (int i = 0; i < context->num_inputs(); ++i) {
      SetShapeOutput<Index>(context, i, context->input(i).shape());
    }
  }
  bool IsExpensive() const override { return false; }
};

template <typename Index>
class SizeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    const TensorShape& shape = context->input(0).shape();
    OP_REQUIRES(context, shape.num_elements() <= std::numeric_limits<Index>::max(),
                errors::InvalidArgument("Size: the ", shape.num_elements(),
                                        " elements of input shape ", shape, " do not fit in ",
                                        kDTypeOf<Index>, "; use out_type=int64"));
    context->set_output(0, Tensor::Scalar<Index>(static_cast<Index>(shape.num_elements())));
  }
  bool IsExpensive() const override { return false; }
};

class RankOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    context->set_output(0, Tensor::Scalar<int32_t>(context->input(0).dims()));
  }
  bool IsExpensive() const override { return false; }
};

class ExpandDimsOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    const Tensor& dim = context->input(1);
    OP_REQUIRES(context, dim.NumElements() == 1,
                errors::InvalidArgument("ExpandDims: dim must hold one value but has shape ",
                                        dim.shape(), " (input shape ", input.shape(), ")"));
    StatusOr<std::vector<int64_t>> value = IntTensorElements(dim, "ExpandDims: dim");
    OP_REQUIRES_OK(context, value.status());
    StatusOr<PartialShape> out = ExpandedShape(input.shape(), value->front());
    OP_REQUIRES_OK(context, out.status().WithContext("ExpandDims"));
    StatusOr<TensorShape> out_shape = CheckedShape(*out, "ExpandDims");  // rank + 1 may be too many
    OP_REQUIRES_OK(context, out_shape.status());
    Tensor output;
    CHECK(output.CopyFrom(input, *out_shape));
    context->set_output(0, std::move(output));
  }
  bool IsExpensive() const override { return false; }
};

class SqueezeOp : public OpKernel {
 public:
  explicit SqueezeOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("squeeze_dims", &squeeze_dims_));
  }
  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    StatusOr<PartialShape> out = SqueezedShape(input.shape(), squeeze_dims_);
    OP_REQUIRES_OK(context, out.status().WithContext("Squeeze"));
    Tensor output;
    CHECK(output.CopyFrom(input, out->ToTensorShape()));
    context->set_output(0, std::move(output));
  }
  bool IsExpensive() const override { return false; }

 private:
  std::vector<int64_t> squeeze_dims_;
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
    StatusOr<TensorShape> out_shape = CheckedShape(*target, "Reshape");
    OP_REQUIRES_OK(context, out_shape.status());
    // The rule keeps the element count; a count that differs anyway is an
    // error here, never a CHECK.
    OP_REQUIRES(context, out_shape->num_elements() == input.NumElements(),
                errors::InvalidArgument("Reshape: cannot reshape a tensor of shape ",
                                        input.shape(), " into shape [", StrJoin(*dims, ","),
                                        "]"));
    Tensor output;
    CHECK(output.CopyFrom(input, *out_shape));
    context->set_output(0, std::move(output));
  }
  bool IsExpensive() const override { return false; }
};

}  // namespace

void RegisterArrayKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("Const"), MakeKernel<ConstOp>);
  registry->Register(KernelBuilder("Placeholder"), MakeKernel<PlaceholderOp>);
  for (const char* op :
       {"Identity", "IdentityN", "StopGradient", "PreventGradient"}) {
    registry->Register(KernelBuilder(op), MakeKernel<IdentityOp>);
  }
  registry->Register(KernelBuilder("PlaceholderWithDefault"),
                     MakeKernel<PlaceholderWithDefaultOp>);
  ForEachType<int32_t, int64_t>([&]<typename Index>() {
    for (const char* op : {"Shape", "ShapeN"}) {
      registry->Register(KernelBuilder(op).TypeConstraint<Index>("out_type"),
                         MakeKernel<ShapeOp<Index>>);
    }
    registry->Register(KernelBuilder("Size").TypeConstraint<Index>("out_type"),
                       MakeKernel<SizeOp<Index>>);
  });
  registry->Register(KernelBuilder("Rank"), MakeKernel<RankOp>);
  registry->Register(KernelBuilder("Reshape").TypeConstraint<int32_t>("Tshape")
                         .TypeConstraint<int64_t>("Tshape"),
                     MakeKernel<ReshapeOp>);
  registry->Register(KernelBuilder("ExpandDims"), MakeKernel<ExpandDimsOp>);
  registry->Register(KernelBuilder("Squeeze"), MakeKernel<SqueezeOp>);
  RegisterTransposeKernels(registry);
  RegisterSequenceSpaceKernels(registry);
  RegisterSliceKernels(registry);
  RegisterConcatSplitKernels(registry);
  RegisterTilePadKernels(registry);
  RegisterGatherScatterKernels(registry);
  RegisterPartitionKernels(registry);
  RegisterFillKernels(registry);
}

}  // namespace weir
