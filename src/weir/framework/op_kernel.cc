#include "weir/framework/op_kernel.h"

namespace weir {

OpKernel::OpKernel(OpKernelConstruction* context)
    : def_(context->node()),
      input_types_(context->input_types()),
      output_types_(context->output_types()) {}

void AsyncOpKernel::Compute(OpKernelContext* context) {
  context->SetStatus(errors::Internal("asynchronous kernel ", name(),
                                      " was called synchronously"));
}

Status OpKernelContext::allocate_output(int index, const TensorShape& shape, Tensor** output) {
  DType dtype = expected_output_dtype(index);
  StatusOr<Tensor> tensor = Tensor::Allocate(allocator(), dtype, shape);
  if (!tensor.ok()) {
    Status s = tensor.status().WithContext(StrCat("output ", index, " of node ",
                                                  op_kernel().def().Describe()));
    SetStatus(s);
    return s;
  }
  if (params_->track_allocations) bytes_allocated_ += tensor->TotalBytes();
  params_->outputs[index] = std::move(tensor).value();
  *output = &params_->outputs[index];
  return Status::OK();
}

Status OpKernelContext::allocate_temp(DType dtype, const TensorShape& shape, Tensor* out) {
  StatusOr<Tensor> tensor = Tensor::Allocate(allocator(), dtype, shape);
  if (!tensor.ok()) {
    Status s = tensor.status().WithContext(StrCat("temporary of node ",
                                                  op_kernel().def().Describe()));
    SetStatus(s);
    return s;
  }
  if (params_->track_allocations) bytes_allocated_ += tensor->TotalBytes();
  *out = std::move(tensor).value();
  return Status::OK();
}

void OpKernelContext::set_output(int index, Tensor value) {
  params_->outputs[index] = std::move(value);
}

Tensor* OpKernelContext::forward_input_to_output(int input_index, int output_index,
                                                 const TensorShape& shape) {
  Tensor& in = params_->inputs[input_index];
  if (!in.RefCountIsOne() || in.dtype() != expected_output_dtype(output_index) ||
      in.NumElements() != shape.num_elements() || IsNonPodDType(in.dtype())) {
    return nullptr;
  }
  Tensor& out = params_->outputs[output_index];
  if (in.shape() == shape) {
    out = std::move(in);  // no reference count to raise and drop again
  } else {
    out.CopyFrom(in, shape);
    in = Tensor();
  }
  return &out;
}

void OpKernelContext::SetStatus(const Status& status) {
  if (status.ok() || !status_.ok()) return;
  status_ = status;
}

}  // namespace weir
