// Conv2D and its two backprops in float or bfloat16 through oneDNN's
// convolution primitives, for NHWC activations and HWIO ([rows, cols, in,
// out]) filters, and the depthwise convolution's as grouped ones; bfloat16
// accumulates in float and rounds each result once. Kernels own one
// DnnlConv2D each; it caches the primitives it creates by shape, since
// creating one costs far more than running a small one. Thread-safe: steps
// may run the same kernel concurrently.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <mutex>

#include <oneapi/dnnl/dnnl_types.h>

#include "weir/base/status.h"
#include "weir/framework/types.h"
#include "weir/framework/window_shape.h"

namespace weir {

class OpKernelContext;

class DnnlConv2D {
 public:
  enum class Pass {
    kForward,         // a: input, b: filter, out: output
    kBackwardInput,   // a: out_backprop, b: filter, out: input gradient
    kBackwardFilter,  // a: input, b: out_backprop, out: filter gradient
  };

  DnnlConv2D();
  ~DnnlConv2D();
  DnnlConv2D(const DnnlConv2D&) = delete;
  DnnlConv2D& operator=(const DnnlConv2D&) = delete;

  // What the forward pass applies to each output before it is written:
  // oneDNN does it in the same pass over memory (_FusedConv2D).
  struct Epilogue {
    const void* bias = nullptr;  // [out_depth] of the convolution's type; null: none
    bool relu = false;
  };

  // Runs `pass` of the convolution `dims` on the device's intra-op pool,
  // overwriting `out`. T is float or Eigen::bfloat16; Unimplemented where
  // oneDNN has no such primitive on this CPU. REQUIRES: dims.layout is
  // NHWC, no dim is empty; an epilogue only with kForward.
  template <typename T>
  Status Run(OpKernelContext* context, Pass pass, const Window2DDims& dims, const T* a,
             const T* b, T* out, const Epilogue& epilogue);
  // No epilogue. (An overload, not a default argument: clang cannot use
  // Epilogue's member initializers before the enclosing class is complete.)
  template <typename T>
  Status Run(OpKernelContext* context, Pass pass, const Window2DDims& dims, const T* a,
             const T* b, T* out) {
    return Run(context, pass, dims, a, b, out, Epilogue());
  }

  // `pass` of the depthwise convolution `dims` (out_depth = in_depth *
  // multiplier): a grouped convolution with one group per input channel,
  // the filter [rows, cols, in_depth, multiplier]. No epilogue.
  template <typename T>
  Status RunDepthwise(OpKernelContext* context, Pass pass, const Window2DDims& dims, const T* a,
                      const T* b, T* out);

 private:
  struct Plan;
  using Key = std::array<int64_t, 20>;

  // Run with `groups` groups (1, or in_depth for a depthwise convolution).
  template <typename T>
  Status RunGroups(OpKernelContext* context, Pass pass, const Window2DDims& dims, int64_t groups,
                   const T* a, const T* b, T* out, const Epilogue& epilogue);

  // The cached plan for `pass` on `batch` images of `dims` in `type` in
  // `groups` groups, with a bias and/or relu epilogue, created on a miss.
  StatusOr<std::shared_ptr<const Plan>> GetPlan(Pass pass, const Window2DDims& dims, int64_t batch,
                                                int64_t groups, dnnl_data_type_t type, bool bias,
                                                bool relu);

  std::mutex mu_;
  std::map<Key, std::shared_ptr<const Plan>> plans_;  // guarded by mu_
};

}  // namespace weir
