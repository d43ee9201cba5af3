// ConcatV2, Pack, Split, SplitV and Unpack. Joining or cutting along dim
// `axis` views every tensor as a matrix [outer, axis * inner] (outer: the
// product of the dims before the axis); the pieces are column blocks of the
// whole, moved row run by row run with memcpy over the intra-op pool.
// When outer is 1 each piece of a split is a contiguous run of the input,
// and the outputs share its buffer instead of copying.
#include <numeric>
#include <optional>

#include "weir/base/checked_math.h"
#include "weir/framework/array_shape_rules.h"
#include "weir/framework/axes.h"
#include "weir/framework/int_tensor_values.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/array_copy.h"
#include "weir/kernels/array_kernels.h"
#include "weir/kernels/shape_util.h"

namespace weir {
namespace {

// Output 0 is the inputs joined as column blocks of [outer, sum(cols)].
void JoinColumns(OpKernelContext* context, const std::vector<const Tensor*>& inputs,
                 int64_t outer, const TensorShape& out_shape) {
  std::vector<int64_t> cols;
  const Tensor* only_nonempty = nullptr;
  int nonempty = 0;
  for (const Tensor* t : inputs) {
    cols.push_back(outer == 0 ? 0 : t->NumElements() / outer);
    if (t->NumElements() > 0) {
      only_nonempty = t;
      ++nonempty;
    }
  }
  if (nonempty == 1) {
    // Joining one tensor with empty ones: the result is that tensor.
    context->set_output(0, ShareElements(*only_nonempty, 0, out_shape));
    return;
  }
  Tensor* out;
  OP_REQUIRES_OK(context, context->allocate_output(0, out_shape, &out));
  ConcatColumns(context->device()->intra_op_pool(), outer, cols, inputs, out);
}

// Sets the outputs to `input` cut into column blocks of [outer, sum(cols)]
// with shapes `shapes`.
void CutColumns(OpKernelContext* context, const Tensor& input, int64_t outer,
                const std::vector<TensorShape>& shapes) {
  std::vector<int64_t> cols;
  for (const TensorShape& s : shapes) cols.push_back(outer == 0 ? 0 : s.num_elements() / outer);
  if (outer == 1) {
    int64_t offset = 0;
    for (size_t i = 0; i < shapes.size(); ++i) {
      context->set_output(static_cast<int>(i), ShareElements(input, offset, shapes[i]));
      offset += cols[i];
    }
    return;
  }
  std::vector<Tensor*> outputs;
  for (size_t i = 0; i < shapes.size(); ++i) {
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(static_cast<int>(i), shapes[i], &out));
    outputs.push_back(out);
  }
  SplitColumns(context->device()->intra_op_pool(), outer, cols, input, outputs);
}

class ConcatV2Op : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const int n = context->num_inputs() - 1;
    const Tensor& axis_tensor = context->input(n);
    std::vector<PartialShape> shapes;
    std::vector<const Tensor*> inputs;
    for (int i = 0; i < n; ++i) {
      shapes.emplace_back(context->input(i).shape());
      inputs.push_back(&context->input(i));
    }
    OP_REQUIRES(context, axis_tensor.dims() == 0,
                errors::InvalidArgument("ConcatV2: axis must be a scalar but has shape ",
                                        axis_tensor.shape(), " (input shapes ",
                                        StrJoin(shapes, ", "), ")"));
    StatusOr<std::vector<int64_t>> axis_value = IntTensorValues(axis_tensor, "ConcatV2: axis");
    OP_REQUIRES_OK(context, axis_value.status());
    const int64_t axis = axis_value->front();
    StatusOr<PartialShape> out_shape = ConcatOutputShape(shapes, axis);
    OP_REQUIRES_OK(context, out_shape.status().WithContext("ConcatV2"));
    const int rank = out_shape->rank();
    const int a = static_cast<int>(axis < 0 ? axis + rank : axis);
    // The axis dims add up in int64 without wrapping (empty inputs may
    // have any dims).
    std::vector<int64_t> dims = out_shape->dim_sizes();
    dims[a] = 0;
    for (const Tensor* t : inputs) {
      // The message is formatted only on overflow: this runs every step.
      std::optional<int64_t> sum = AddWithoutOverflow(dims[a], t->dim_size(a));
      OP_REQUIRES(context, sum.has_value(),
                  errors::InvalidArgument("ConcatV2: dim ", a, " of input shapes ",
                                          StrJoin(shapes, ", "), " adds up past int64"));
      dims[a] = *sum;
    }
    StatusOr<TensorShape> out = CheckedShape(dims, "ConcatV2");
    OP_REQUIRES_OK(context, out.status());
    JoinColumns(context, inputs, DimProduct(*out, 0, a), *out);
  }
};

class PackOp : public OpKernel {
 public:
  explicit PackOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("axis", &axis_));
  }

  void Compute(OpKernelContext* context) override {
    const TensorShape& first = context->input(0).shape();
    std::vector<const Tensor*> inputs;
    for (int i = 0; i < context->num_inputs(); ++i) {
      const TensorShape& shape = context->input(i).shape();
      OP_REQUIRES(context, shape == first,
                  errors::InvalidArgument("Pack: all inputs must have the same shape, but "
                                          "input 0 has shape ", first, " and input ", i,
                                          " has shape ", shape));
      inputs.push_back(&context->input(i));
    }
    StatusOr<int> a = NormalizeAxis(axis_, first.rank() + 1, "axis", first);
    OP_REQUIRES_OK(context, a.status().WithContext("Pack"));
    std::vector<int64_t> dims(first.dim_sizes().begin(), first.dim_sizes().end());
    dims.insert(dims.begin() + *a, context->num_inputs());
    StatusOr<TensorShape> out = CheckedShape(dims, "Pack");
    OP_REQUIRES_OK(context, out.status());
    JoinColumns(context, inputs, DimProduct(first, 0, *a), *out);
  }

 private:
  int64_t axis_ = 0;
};

class SplitOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& axis_tensor = context->input(0);
    const Tensor& input = context->input(1);
    const int num_split = context->num_outputs();
    OP_REQUIRES(context, axis_tensor.dims() == 0,
                errors::InvalidArgument("Split: split_dim must be a scalar but has shape ",
                                        axis_tensor.shape(), " (input shape ", input.shape(),
                                        ")"));
    StatusOr<int> a =
        NormalizeAxis(axis_tensor.scalar<int32_t>(), input.dims(), "split_dim", input.shape());
    OP_REQUIRES_OK(context, a.status().WithContext("Split"));
    OP_REQUIRES(context, input.dim_size(*a) % num_split == 0,
                errors::InvalidArgument("Split: num_split ", num_split, " does not divide dim ",
                                        *a, " of input shape ", input.shape()));
    TensorShape piece = input.shape();
    piece.set_dim(*a, input.dim_size(*a) / num_split);
    CutColumns(context, input, DimProduct(input.shape(), 0, *a),
               std::vector<TensorShape>(num_split, piece));
  }
};

class SplitVOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    const Tensor& sizes_tensor = context->input(1);
    const Tensor& axis_tensor = context->input(2);
    OP_REQUIRES(context, sizes_tensor.dims() == 1 && axis_tensor.dims() == 0,
                errors::InvalidArgument("SplitV: size_splits must be a vector and split_dim a "
                                        "scalar, but they have shapes ", sizes_tensor.shape(),
                                        " and ", axis_tensor.shape(), " (input shape ",
                                        input.shape(), ")"));
    StatusOr<int> a =
        NormalizeAxis(axis_tensor.scalar<int32_t>(), input.dims(), "split_dim", input.shape());
    OP_REQUIRES_OK(context, a.status().WithContext("SplitV"));
    StatusOr<std::vector<int64_t>> size_values =
        IntTensorValues(sizes_tensor, "SplitV: size_splits");
    OP_REQUIRES_OK(context, size_values.status());
    const std::vector<int64_t>& sizes = *size_values;
    OP_REQUIRES(context, static_cast<int>(sizes.size()) == context->num_outputs(),
                errors::InvalidArgument("SplitV: size_splits has ", sizes.size(),
                                        " entries but num_split is ", context->num_outputs(),
                                        " (input shape ", input.shape(), ")"));
    StatusOr<std::vector<int64_t>> resolved = ResolveSplitSizes(sizes, input.dim_size(*a));
    OP_REQUIRES_OK(context, resolved.status().WithContext(
                                StrCat("SplitV of dim ", *a, " of shape ", input.shape())));
    // The pieces must tile the dim exactly: sizes that wrapped in the sum
    // would cut pieces past the end of the input.
    int64_t total = 0;
    for (int64_t size : *resolved) {
      OP_REQUIRES(context,
                  size >= 0 && size <= input.dim_size(*a) - total,
                  errors::InvalidArgument("SplitV: size_splits [", StrJoin(sizes, ","),
                                          "] do not add up to dim ", *a, " of input shape ",
                                          input.shape()));
      total += size;
    }
    OP_REQUIRES(context, total == input.dim_size(*a),
                errors::InvalidArgument("SplitV: size_splits [", StrJoin(sizes, ","),
                                        "] add up to ", total, " but dim ", *a,
                                        " of input shape ", input.shape(), " is ",
                                        input.dim_size(*a)));
    std::vector<TensorShape> shapes;
    for (int64_t size : *resolved) {
      TensorShape piece = input.shape();
      piece.set_dim(*a, size);
      shapes.push_back(piece);
    }
    CutColumns(context, input, DimProduct(input.shape(), 0, *a), shapes);
  }
};

class UnpackOp : public OpKernel {
 public:
  explicit UnpackOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("axis", &axis_));
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    StatusOr<int> a = NormalizeAxis(axis_, input.dims(), "axis", input.shape());
    OP_REQUIRES_OK(context, a.status().WithContext("Unpack"));
    OP_REQUIRES(context, input.dim_size(*a) == context->num_outputs(),
                errors::InvalidArgument("Unpack: num is ", context->num_outputs(), " but dim ",
                                        *a, " of input shape ", input.shape(), " is ",
                                        input.dim_size(*a)));
    TensorShape piece = input.shape();
    piece.RemoveDim(*a);
    CutColumns(context, input, DimProduct(input.shape(), 0, *a),
               std::vector<TensorShape>(context->num_outputs(), piece));
  }

 private:
  int64_t axis_ = 0;
};

}  // namespace

void RegisterConcatSplitKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("ConcatV2"), MakeKernel<ConcatV2Op>);
  registry->Register(KernelBuilder("Pack"), MakeKernel<PackOp>);
  registry->Register(KernelBuilder("Split"), MakeKernel<SplitOp>);
  registry->Register(KernelBuilder("SplitV"), MakeKernel<SplitVOp>);
  registry->Register(KernelBuilder("Unpack"), MakeKernel<UnpackOp>);
}

}  // namespace weir
