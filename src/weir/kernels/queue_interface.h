// QueueInterface: what a queue resource (FIFOQueueV2, RandomShuffleQueueV2,
// PaddingFIFOQueueV2, PriorityQueueV2) offers the kernels that use it: the
// queue ops themselves and the readers, which dequeue file names from one.
//
// Every operation that may wait is asynchronous: it calls its callback
// exactly once, on any thread, when it has finished or failed, and holds no
// thread while it waits. A failure is set on `context` (OutOfRange for a
// dequeue from a closed queue with too few elements left, Cancelled when the
// step is cancelled while waiting, InvalidArgument for a malformed element,
// each naming the queue and the component) before the callback runs; a
// failed dequeue calls back with an empty tuple. Waiting operations register
// with the step's CancellationManager, so a step's cancellation, timeout or
// Session::Close wakes them at once.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "weir/framework/op_kernel.h"
#include "weir/framework/resource_mgr.h"
#include "weir/framework/tensor.h"

namespace weir {

class QueueInterface : public ResourceBase {
 public:
  // One element: one tensor per component. For the *Many operations, one
  // tensor per component whose first dimension is the batch.
  using Tuple = std::vector<Tensor>;
  using DoneCallback = std::function<void()>;
  using CallbackWithTuple = std::function<void(Tuple)>;

  // InvalidArgument naming the component when `tuple` does not match the
  // queue's dtypes and shapes (as one element / as a batch of elements).
  virtual Status ValidateTuple(const Tuple& tuple) const = 0;
  virtual Status ValidateManyTuple(const Tuple& tuple) const = 0;

  // Adds one element, waiting while the queue is full.
  virtual void TryEnqueue(Tuple tuple, OpKernelContext* context, DoneCallback callback) = 0;
  // Adds every element of the batch, in order, waiting while the queue is
  // full; elements added before a failure stay in the queue.
  virtual void TryEnqueueMany(Tuple tuple, OpKernelContext* context, DoneCallback callback) = 0;

  // Removes one element, waiting while the queue is empty and open.
  virtual void TryDequeue(OpKernelContext* context, CallbackWithTuple callback) = 0;
  // Removes `num_elements` elements batched along a new first dimension,
  // waiting until that many are there. With `allow_small_batch`
  // (DequeueUpTo), a closed queue gives what it still holds (at least one).
  virtual void TryDequeueMany(int64_t num_elements, OpKernelContext* context,
                              bool allow_small_batch, CallbackWithTuple callback) = 0;

  // Refuses further enqueues; waiting dequeues that can no longer be served
  // get OutOfRange. With `cancel_pending_enqueues`, waiting enqueues get
  // Cancelled instead of completing.
  virtual void Close(OpKernelContext* context, bool cancel_pending_enqueues,
                     DoneCallback callback) = 0;

  virtual int64_t size() const = 0;
  virtual bool is_closed() const = 0;
  virtual const std::vector<DType>& component_dtypes() const = 0;

  // OK if a queue op with `node_def`'s attrs may share this queue (same
  // kind, dtypes, shapes and capacity); InvalidArgument naming what differs.
  virtual Status MatchesNodeDef(const NodeDef& node_def) const = 0;
};

// The type name a queue's handle carries.
inline constexpr char kQueueTypeName[] = "Queue";

// The queue behind the handle in input `input` of the kernel: NotFound when
// it does not exist (never created in this session, or reset),
// InvalidArgument when the handle is not a queue's or is for another device.
StatusOr<std::shared_ptr<QueueInterface>> LookupQueue(OpKernelContext* context, int input);

}  // namespace weir
