// NCHW <-> NHWC copies for kernels whose computation is written for NHWC
// (convolution and pooling): an NCHW node transposes its image operands
// into NHWC temporaries, runs the NHWC code and transposes its image result
// back. Two extra passes over memory, which are cheap next to a
// convolution; the alternative, a second layout in every inner loop and
// oneDNN plan, is more code for each op than this one file.
#pragma once

#include "weir/base/status.h"
#include "weir/framework/tensor.h"

namespace weir {

class OpKernelContext;

// [N, C, H, W] -> [N, H, W, C] and back.
TensorShape NchwToNhwcShape(const TensorShape& nchw);
TensorShape NhwcToNchwShape(const TensorShape& nhwc);

// A temporary NHWC copy of the rank-4 NCHW tensor `nchw`.
StatusOr<Tensor> NchwToNhwc(OpKernelContext* context, const Tensor& nchw);

// Allocates output `index` as the NCHW transpose of the rank-4 NHWC tensor
// `nhwc` and fills it.
Status SetNchwOutputFromNhwc(OpKernelContext* context, int index, const Tensor& nhwc);

// For kernels that handle both layouts: `image` itself when !nchw, else
// its NHWC copy.
StatusOr<Tensor> ImageAsNhwc(OpKernelContext* context, bool nchw, const Tensor& image);

// An image result computed in NHWC. Allocate gives output `index` itself
// (NHWC nodes) or a temporary (NCHW nodes); Finish then transposes the
// temporary into output `index`.
class NhwcImageOutput {
 public:
  NhwcImageOutput(bool nchw, int index) : nchw_(nchw), index_(index) {}
  Status Allocate(OpKernelContext* context, DType dtype, const TensorShape& nhwc, Tensor** out);
  Status Finish(OpKernelContext* context) const;

 private:
  bool nchw_;
  int index_;
  Tensor temp_;
};

}  // namespace weir
