// Slice and StridedSlice. Both describe their output as a strided view of
// the input; SetOutputToView shares the input's buffer when the view is one
// contiguous run (rows of the first dim, or any slice that only narrows the
// first dim that is not 1) and copies it otherwise.
#include "weir/framework/array_shape_rules.h"
#include "weir/framework/int_tensor_values.h"
#include "weir/framework/kernel_registry.h"
#include "weir/framework/strided_slice_spec.h"
#include "weir/kernels/array_copy.h"
#include "weir/kernels/array_kernels.h"
#include "weir/kernels/shape_util.h"

namespace weir {
namespace {

// The values of a vector input of a slicing op; `what` is "Slice: begin".
StatusOr<std::vector<int64_t>> VectorInput(const Tensor& t, std::string_view what,
                                           const TensorShape& input_shape) {
  if (t.dims() != 1) {
    return errors::InvalidArgument(what, " must be a vector but has shape ", t.shape(),
                                   " (input shape ", input_shape, ")");
  }
  return IntTensorValues(t, what);
}

class SliceOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    StatusOr<std::vector<int64_t>> begin =
        VectorInput(context->input(1), "Slice: begin", input.shape());
    OP_REQUIRES_OK(context, begin.status());
    StatusOr<std::vector<int64_t>> size =
        VectorInput(context->input(2), "Slice: size", input.shape());
    OP_REQUIRES_OK(context, size.status());
    StatusOr<PartialShape> out = SliceOutputShape(input.shape(), *begin, *size);
    OP_REQUIRES_OK(context, out.status().WithContext("Slice"));
    StatusOr<TensorShape> out_shape = CheckedShape(*out, "Slice");
    OP_REQUIRES_OK(context, out_shape.status());
    // The view must lie in the input: begin in [0, dim], begin + size <=
    // dim (the rule checks it; the view's memory safety rests on it).
    for (int i = 0; i < input.dims(); ++i) {
      OP_REQUIRES(context,
                  (*begin)[i] >= 0 && (*begin)[i] <= input.dim_size(i) &&
                      out_shape->dim_size(i) <= input.dim_size(i) - (*begin)[i],
                  errors::InvalidArgument("Slice: begin [", StrJoin(*begin, ","), "] and size [",
                                          StrJoin(*size, ","), "] leave input shape ",
                                          input.shape(), " in dim ", i));
    }
    if (out_shape->num_elements() == 0) {
      Tensor* output;
      OP_REQUIRES_OK(context, context->allocate_output(0, *out_shape, &output));
      return;
    }
    const std::vector<int64_t> strides = DenseStrides(input.shape());
    int64_t offset = 0;
    for (int i = 0; i < input.dims(); ++i) offset += (*begin)[i] * strides[i];
    SetOutputToView(context, input, *out_shape, out_shape->dim_sizes(), offset, strides);
  }
};

class StridedSliceOp : public OpKernel {
 public:
  explicit StridedSliceOp(OpKernelConstruction* context) : OpKernel(context) {
    Status status = context->GetAttr("begin_mask", &masks_.begin);
    status.Update(context->GetAttr("end_mask", &masks_.end));
    status.Update(context->GetAttr("ellipsis_mask", &masks_.ellipsis));
    status.Update(context->GetAttr("new_axis_mask", &masks_.new_axis));
    status.Update(context->GetAttr("shrink_axis_mask", &masks_.shrink_axis));
    context->SetStatus(status);
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    std::optional<std::vector<int64_t>> values[3];
    const char* kNames[] = {"StridedSlice: begin", "StridedSlice: end", "StridedSlice: strides"};
    for (int i = 0; i < 3; ++i) {
      StatusOr<std::vector<int64_t>> v =
          VectorInput(context->input(i + 1), kNames[i], input.shape());
      OP_REQUIRES_OK(context, v.status());
      values[i] = std::move(*v);
    }
    OP_REQUIRES(context,
                values[0]->size() == values[1]->size() && values[0]->size() == values[2]->size(),
                errors::InvalidArgument("StridedSlice: begin, end and strides must have the "
                                        "same length but have ", values[0]->size(), ", ",
                                        values[1]->size(), " and ", values[2]->size(),
                                        " (input shape ", input.shape(), ")"));
    StatusOr<StridedSlicePlan> plan =
        MakeStridedSlicePlan(input.shape(), static_cast<int>(values[0]->size()), values[0],
                             values[1], values[2], masks_);
    OP_REQUIRES_OK(context, plan.status().WithContext("StridedSlice"));
    StatusOr<TensorShape> out_shape = CheckedShape(plan->output, "StridedSlice");
    OP_REQUIRES_OK(context, out_shape.status());
    if (out_shape->num_elements() == 0) {
      Tensor* output;
      OP_REQUIRES_OK(context, context->allocate_output(0, *out_shape, &output));
      return;
    }
    // Every element the view reads must lie in the input: per dim, the
    // first and the last index taken are in [0, dim). Checked in O(rank),
    // and in a form that cannot overflow (stride * (size - 1) is bounded
    // by the dim before it is multiplied out).
    std::vector<int64_t> strides = DenseStrides(input.shape());
    int64_t offset = 0;
    for (int d = 0; d < input.dims(); ++d) {
      const int64_t dim = input.dim_size(d), first = plan->begin[d], step = plan->stride[d];
      const int64_t count = plan->size[d];
      bool inside = count >= 1 && first >= 0 && first < dim && step != 0;
      if (inside && count > 1) {
        // The last index, first + step * (count - 1), stays in [0, dim).
        const int64_t room = step > 0 ? dim - 1 - first : first;
        const uint64_t magnitude =
            step > 0 ? static_cast<uint64_t>(step) : uint64_t{0} - static_cast<uint64_t>(step);
        inside = magnitude <= static_cast<uint64_t>(room) / static_cast<uint64_t>(count - 1);
      }
      OP_REQUIRES(context, inside,
                  errors::InvalidArgument("StridedSlice: begin [", StrJoin(*values[0], ","),
                                          "], end [", StrJoin(*values[1], ","), "] and strides [",
                                          StrJoin(*values[2], ","), "] take ", count,
                                          " elements from ", first, " by ", step, " in dim ", d,
                                          " of input shape ", input.shape(),
                                          ", outside the input"));
      offset += first * strides[d];
      // A dim taken once is never stepped along: its stride may be any
      // size, so it is not multiplied out.
      strides[d] = count > 1 ? strides[d] * step : 0;
    }
    SetOutputToView(context, input, *out_shape, plan->size, offset, strides);
  }

 private:
  StridedSliceMasks masks_;
};

}  // namespace

void RegisterSliceKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("Slice"), MakeKernel<SliceOp>);
  registry->Register(KernelBuilder("StridedSlice"), MakeKernel<StridedSliceOp>);
}

}  // namespace weir
