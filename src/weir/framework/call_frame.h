// CallFrame: the values a step is fed and the values it returns. The session
// rewrites each feed into an _Arg node and each fetch into a _Retval node;
// those kernels read and write this frame, which is cheaper than a
// rendezvous round trip.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "weir/base/status.h"
#include "weir/framework/tensor.h"

namespace weir {

class CallFrame {
 public:
  CallFrame(std::vector<Tensor> args, int num_retvals)
      : args_(std::move(args)), retvals_(num_retvals), retval_set_(num_retvals) {}

  int num_args() const { return static_cast<int>(args_.size()); }
  int num_retvals() const { return static_cast<int>(retvals_.size()); }

  // Internal if `index` is out of range (indexes are int64 attrs: no
  // truncation).
  StatusOr<const Tensor*> GetArg(int64_t index) const {
    if (index < 0 || index >= num_args()) {
      return errors::Internal("_Arg index ", index, " out of range; the frame has ",
                              num_args(), " args");
    }
    return &args_[index];
  }
  // Internal if `index` is out of range; FailedPrecondition if the slot was
  // already set this step (two _Retval nodes with one index, or one that ran
  // twice), which would silently replace a fetch's value. Safe to call
  // concurrently for different indexes (partitions run in parallel).
  Status SetRetval(int64_t index, const Tensor& value) {
    if (index < 0 || index >= num_retvals()) {
      return errors::Internal("_Retval index ", index, " out of range; the frame has ",
                              num_retvals(), " retvals");
    }
    if (retval_set_[index].exchange(true, std::memory_order_acq_rel)) {
      return errors::FailedPrecondition("_Retval index ", index,
                                        " was set twice in one step: a fetch's value would be "
                                        "overwritten");
    }
    retvals_[index] = value;
    return Status::OK();
  }
  std::vector<Tensor>& retvals() { return retvals_; }

 private:
  std::vector<Tensor> args_;
  std::vector<Tensor> retvals_;
  std::vector<std::atomic<bool>> retval_set_;
};

}  // namespace weir
