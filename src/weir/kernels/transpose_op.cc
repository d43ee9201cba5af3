// Transpose, ReverseV2 and Reverse: every output element is one input
// element at a computed place, so each kernel describes its output as a
// strided view of the input (permuted or negated strides) and
// SetOutputToView shares the buffer when that view is the input as it
// lies, or copies it (tiled, for transposes) over the intra-op pool.
#include "weir/framework/axes.h"
#include "weir/framework/int_tensor_values.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/array_copy.h"
#include "weir/kernels/array_kernels.h"
#include "weir/kernels/shape_util.h"

namespace weir {
namespace {

class TransposeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    const Tensor& perm_tensor = context->input(1);
    OP_REQUIRES(context, perm_tensor.dims() == 1,
                errors::InvalidArgument("Transpose: perm must be a vector but has shape ",
                                        perm_tensor.shape(), " (input shape ", input.shape(),
                                        ")"));
    StatusOr<std::vector<int64_t>> perm = IntTensorValues(perm_tensor, "Transpose: perm");
    OP_REQUIRES_OK(context, perm.status());
    StatusOr<std::vector<int>> order = TransposePermutation(*perm, input.shape());
    OP_REQUIRES_OK(context, order.status().WithContext("Transpose"));
    const std::vector<int64_t> strides = DenseStrides(input.shape());
    std::vector<int64_t> dims(input.dims()), view_strides(input.dims());
    for (int i = 0; i < input.dims(); ++i) {
      dims[i] = input.dim_size((*order)[i]);
      view_strides[i] = strides[(*order)[i]];
    }
    // The permuted dims of an empty input may multiply past int64 in their
    // new order ([0, 2^62, 2^62] -> [2^62, 2^62, 0]).
    StatusOr<TensorShape> out_shape = CheckedShape(dims, "Transpose");
    OP_REQUIRES_OK(context, out_shape.status());
    SetOutputToView(context, input, *out_shape, dims, 0, view_strides);
  }
};

// Output 0 is `input` with the dims marked in `reversed` reversed.
void ReverseDims(OpKernelContext* context, const Tensor& input, const std::vector<bool>& reversed) {
  std::vector<int64_t> strides = DenseStrides(input.shape());
  int64_t offset = 0;
  for (int d = 0; d < input.dims(); ++d) {
    if (reversed[d] && input.dim_size(d) > 0) {
      offset += (input.dim_size(d) - 1) * strides[d];
      strides[d] = -strides[d];
    }
  }
  SetOutputToView(context, input, input.shape(), input.shape().dim_sizes(), offset, strides);
}

class ReverseV2Op : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    const Tensor& axis_tensor = context->input(1);
    OP_REQUIRES(context, axis_tensor.dims() == 1,
                errors::InvalidArgument("ReverseV2: axis must be a vector but has shape ",
                                        axis_tensor.shape(), " (input shape ", input.shape(),
                                        ")"));
    StatusOr<std::vector<int64_t>> axes = IntTensorValues(axis_tensor, "ReverseV2: axis");
    OP_REQUIRES_OK(context, axes.status());
    std::vector<bool> reversed(input.dims(), false);
    for (int64_t axis : *axes) {
      StatusOr<int> a = NormalizeAxis(axis, input.dims(), "axis", input.shape());
      OP_REQUIRES_OK(context, a.status().WithContext("ReverseV2"));
      OP_REQUIRES(context, !reversed[*a],
                  errors::InvalidArgument("ReverseV2: axis [", StrJoin(*axes, ","),
                                          "] names dim ", *a, " twice (input shape ",
                                          input.shape(), ")"));
      reversed[*a] = true;
    }
    ReverseDims(context, input, reversed);
  }
};

class ReverseOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    const Tensor& dims = context->input(1);
    OP_REQUIRES(context, dims.dims() == 1 && dims.dim_size(0) == input.dims(),
                errors::InvalidArgument("Reverse: dims must be a bool vector with one entry "
                                        "per input dim, but has shape ", dims.shape(),
                                        " for input shape ", input.shape()));
    std::vector<bool> reversed(dims.data<bool>(), dims.data<bool>() + input.dims());
    ReverseDims(context, input, reversed);
  }
};

}  // namespace

void RegisterTransposeKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("Transpose"), MakeKernel<TransposeOp>);
  registry->Register(KernelBuilder("ReverseV2"), MakeKernel<ReverseV2Op>);
  registry->Register(KernelBuilder("Reverse"), MakeKernel<ReverseOp>);
}

}  // namespace weir
