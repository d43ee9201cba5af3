#include "weir/kernels/image_layout.h"

#include "weir/framework/device.h"
#include "weir/framework/op_kernel.h"
#include "weir/kernels/array_copy.h"

namespace weir {

TensorShape NchwToNhwcShape(const TensorShape& s) {
  return TensorShape({s.dim_size(0), s.dim_size(2), s.dim_size(3), s.dim_size(1)});
}

TensorShape NhwcToNchwShape(const TensorShape& s) {
  return TensorShape({s.dim_size(0), s.dim_size(3), s.dim_size(1), s.dim_size(2)});
}

StatusOr<Tensor> NchwToNhwc(OpKernelContext* context, const Tensor& nchw) {
  const TensorShape& s = nchw.shape();
  if (s.rank() != 4) {
    return errors::InvalidArgument("an NCHW image must have rank 4 but has shape ", s);
  }
  Tensor nhwc;
  WEIR_RETURN_IF_ERROR(context->allocate_temp(nchw.dtype(), NchwToNhwcShape(s), &nhwc));
  if (s.num_elements() == 0) return nhwc;
  const int64_t n = s.dim_size(0), c = s.dim_size(1), h = s.dim_size(2), w = s.dim_size(3);
  const int64_t dims[] = {n, h, w, c};
  // Read position of NHWC index (n, h, w, c) in the NCHW buffer.
  const int64_t in_strides[] = {c * h * w, w, 1, h * w};
  const std::vector<int64_t> out_strides = DenseStrides(nhwc.shape());
  CopyStrided(context->device()->intra_op_pool(), dims, nchw, 0, in_strides, &nhwc, 0,
              out_strides);
  return nhwc;
}

Status SetNchwOutputFromNhwc(OpKernelContext* context, int index, const Tensor& nhwc) {
  const TensorShape& s = nhwc.shape();
  Tensor* out;
  WEIR_RETURN_IF_ERROR(context->allocate_output(index, NhwcToNchwShape(s), &out));
  if (s.num_elements() == 0) return Status::OK();
  const int64_t n = s.dim_size(0), h = s.dim_size(1), w = s.dim_size(2), c = s.dim_size(3);
  const int64_t dims[] = {n, c, h, w};
  const int64_t in_strides[] = {h * w * c, 1, w * c, c};
  const std::vector<int64_t> out_strides = DenseStrides(out->shape());
  CopyStrided(context->device()->intra_op_pool(), dims, nhwc, 0, in_strides, out, 0, out_strides);
  return Status::OK();
}

StatusOr<Tensor> ImageAsNhwc(OpKernelContext* context, bool nchw, const Tensor& image) {
  if (!nchw) return image;
  return NchwToNhwc(context, image);
}

Status NhwcImageOutput::Allocate(OpKernelContext* context, DType dtype, const TensorShape& nhwc,
                                 Tensor** out) {
  if (!nchw_) return context->allocate_output(index_, nhwc, out);
  WEIR_RETURN_IF_ERROR(context->allocate_temp(dtype, nhwc, &temp_));
  *out = &temp_;
  return Status::OK();
}

Status NhwcImageOutput::Finish(OpKernelContext* context) const {
  return nchw_ ? SetNchwOutputFromNhwc(context, index_, temp_) : Status::OK();
}

}  // namespace weir
