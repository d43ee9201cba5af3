// CallFrame: the values a step is fed and the values it returns. The session
// rewrites each feed into an _Arg node and each fetch into a _Retval node;
// those kernels read and write this frame, which is cheaper than a
// rendezvous round trip.
#pragma once

#include <mutex>
#include <vector>

#include "weir/base/status.h"
#include "weir/framework/tensor.h"

namespace weir {

class CallFrame {
 public:
  CallFrame(std::vector<Tensor> args, int num_retvals)
      : args_(std::move(args)), retvals_(num_retvals) {}

  int num_args() const { return static_cast<int>(args_.size()); }
  int num_retvals() const { return static_cast<int>(retvals_.size()); }

  StatusOr<const Tensor*> GetArg(int index) const {
    if (index < 0 || index >= num_args()) {
      return errors::Internal("_Arg index ", index, " out of range; the frame has ",
                              num_args(), " args");
    }
    return &args_[index];
  }
  // Retvals are set by different partitions, possibly concurrently, but each
  // index by exactly one node, so no lock is needed.
  Status SetRetval(int index, const Tensor& value) {
    if (index < 0 || index >= num_retvals()) {
      return errors::Internal("_Retval index ", index, " out of range; the frame has ",
                              num_retvals(), " retvals");
    }
    retvals_[index] = value;
    return Status::OK();
  }
  std::vector<Tensor>& retvals() { return retvals_; }

 private:
  std::vector<Tensor> args_;
  std::vector<Tensor> retvals_;
};

}  // namespace weir
