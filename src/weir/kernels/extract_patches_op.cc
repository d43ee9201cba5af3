// ExtractImagePatches on the CPU: each output pixel's depth holds its
// ksize_rows x ksize_cols patch (taps `rates` apart), row-major over the
// patch, channels innermost; taps outside the image are zero. The kernel
// moves bytes, so one instance serves every dtype.
#include <cstring>
#include <string>

#include "weir/framework/kernel_registry.h"
#include "weir/framework/window3d_shape.h"

namespace weir {
namespace {

class ExtractImagePatchesOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& images = context->input(0);
    StatusOr<Window3DDims> dims_or = ComputePatchDims(def().attrs, images.shape());
    OP_REQUIRES(context, dims_or.ok(),
                errors::InvalidArgument("ExtractImagePatches (", images.dtype(),
                                        "): ", dims_or.status().message()));
    const Window3DDims& d = *dims_or;
    const WindowDim &pr = d.spatial[1], &pc = d.spatial[2];
    Tensor* output;
    OP_REQUIRES_OK(context,
                   context->allocate_output(
                       0, TensorShape({d.batch, pr.output, pc.output, d.out_channels}), &output));
    const int64_t item = static_cast<int64_t>(DTypeSize(images.dtype()));
    const int64_t run = d.in_channels * item;  // one tap's channels, in bytes
    const char* in = static_cast<const char*>(images.raw_data());
    char* out = static_cast<char*>(output->raw_data());
    for (int64_t n = 0; n < d.batch; ++n) {
      for (int64_t oh = 0; oh < pr.output; ++oh) {
        for (int64_t ow = 0; ow < pc.output; ++ow) {
          for (int64_t kh = 0; kh < pr.window; ++kh) {
            const int64_t ih = oh * pr.stride - pr.pad_before + kh * pr.dilation;
            for (int64_t kw = 0; kw < pc.window; ++kw) {
              const int64_t iw = ow * pc.stride - pc.pad_before + kw * pc.dilation;
              if (ih < 0 || ih >= pr.input || iw < 0 || iw >= pc.input) {
                std::memset(out, 0, run);
              } else {
                std::memcpy(out, in + ((n * pr.input + ih) * pc.input + iw) * run, run);
              }
              out += run;
            }
          }
        }
      }
    }
  }
};

}  // namespace

void RegisterExtractImagePatchesKernels(KernelRegistry* registry) {
  for (DType dtype :
       {DT_BFLOAT16, DT_HALF, DT_FLOAT, DT_DOUBLE, DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_UINT8,
        DT_UINT16, DT_UINT32, DT_UINT64, DT_COMPLEX64, DT_COMPLEX128, DT_BOOL}) {
    registry->Register(KernelBuilder("ExtractImagePatches").TypeConstraint("T", dtype),
                       MakeKernel<ExtractImagePatchesOp>);
  }
}

}  // namespace weir
