// Float 5x5 stride-1 convolutions of NHWC images with HWIO filters by
// Winograd's minimal filtering F(2x2, 5x5): each 2x2 block of outputs is
// computed from a 6x6 block of inputs with 36 multiplies per (in, out)
// channel pair instead of 100. The multiplies are 36 independent
// [tiles, in] x [in, out] products, run as one batched oneDNN matmul per
// block of tiles; the transforms around them are vectorized loops over
// channels. Rounding differs from a direct convolution's: the transforms
// scale inputs by up to 5 before the products are summed, and the error
// against the exact result reaches about 1.4e-6 of the sum of |terms|
// (TensorFlow's direct convolution: 2e-7; python/tests/
// test_conv_winograd.py measures both), as with the Winograd convolutions
// of cuDNN and oneDNN. WEIR_CONV_WINOGRAD=0 turns the path off (conv_ops.cc).
//
// Thread-safe: steps may run the same kernel concurrently.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <mutex>

#include "weir/base/status.h"
#include "weir/framework/window_shape.h"

namespace weir {

class ThreadPool;

class WinogradConv2D {
 public:
  WinogradConv2D();
  ~WinogradConv2D();
  WinogradConv2D(const WinogradConv2D&) = delete;
  WinogradConv2D& operator=(const WinogradConv2D&) = delete;

  // Whether this path computes `d`: 5x5 windows, stride 1, no dilation,
  // enough channels that the products, not the transforms, dominate, and
  // at least 64 2x2 output tiles over the batch (fewer run faster
  // directly).
  static bool Applies(const Window2DDims& d);

  // Overwrites `out` (NHWC, d.output_shape()) with the convolution of
  // `input` (NHWC) by `filter` (HWIO), plus `bias` ([out_depth]; null:
  // none), then max(0, .) if `relu`. Work is split over `pool`; `scratch`
  // must hold ScratchFloats(d, pool) floats. REQUIRES: Applies(d), no dim
  // of `d` empty.
  Status Run(ThreadPool* pool, const Window2DDims& d, const float* input, const float* filter,
             const float* bias, bool relu, float* out, float* scratch);

  // The floats Run needs as scratch; InvalidArgument if the count overflows.
  static StatusOr<int64_t> ScratchFloats(const Window2DDims& d, const ThreadPool* pool);

 private:
  struct Plan;
  StatusOr<std::shared_ptr<const Plan>> GetPlan(int64_t tiles, int64_t in_depth, int64_t out_depth);

  std::mutex mu_;
  std::map<std::array<int64_t, 3>, std::shared_ptr<const Plan>> plans_;  // guarded by mu_
};

}  // namespace weir
