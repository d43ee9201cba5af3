// PaddingFIFOQueue: a FIFO queue whose component shapes may have unknown
// dims (PaddingFIFOQueueV2). DequeueMany and DequeueUpTo pad every element
// to the largest size in the batch along each unknown dim, with zeros (empty
// strings for DT_STRING).
#pragma once

#include "weir/kernels/fifo_queue.h"

namespace weir {

class PaddingFIFOQueue final : public FIFOQueue {
 public:
  // InvalidArgument unless every component has a shape of known rank.
  static StatusOr<std::shared_ptr<PaddingFIFOQueue>> Create(QueueOptions options);

 private:
  explicit PaddingFIFOQueue(QueueOptions options);

  Status CheckCanDequeueMany() const override { return Status::OK(); }
  StatusOr<Tuple> MakeBatch(OpKernelContext* context, std::vector<Tuple>& elements) const override;
};

}  // namespace weir
