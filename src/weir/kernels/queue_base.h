// QueueBase: the machinery every queue kind shares (TensorFlow's QueueBase
// and TypedQueue): capacity, the check of elements against the component
// dtypes and shapes, and the pending enqueue and dequeue attempts.
//
// Attempts wait in two FIFO lists under one lock; after every change the
// front attempts are retried until none progresses, and the callbacks of
// finished attempts run outside the lock. A waiting attempt is registered
// with its step's CancellationManager: cancelling the step ends it with
// Cancelled naming the queue, and elements a cancelled or failed
// DequeueMany had taken go back into the queue. Each pending attempt's
// callback holds the queue (the kernels capture it), so a queue dropped
// from its container lives until its waiters are done; cancellation
// callbacks hold it weakly.
//
// A kind supplies the element store (FIFO, shuffled, by priority) through
// the *Locked hooks, and may override how a batch is built (padding).
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "weir/base/cancellation.h"
#include "weir/framework/attr_value.h"
#include "weir/kernels/queue_interface.h"

namespace weir {

// The attrs every queue op has. For PriorityQueueV2, `component_types`
// and `shapes` are as declared, without the implicit priority component.
struct QueueOptions {
  std::string op;    // "FIFOQueueV2", ...
  std::string name;  // the resource's name, for messages
  std::vector<DType> component_types;
  std::vector<PartialShape> shapes;  // empty: any shapes
  int64_t capacity = -1;             // < 0: unbounded
};

// Reads component_types, shapes and capacity (and the op) of a queue node.
Status ReadQueueOptions(const NodeDef& node_def, QueueOptions* options);

class QueueBase : public QueueInterface, public std::enable_shared_from_this<QueueBase> {
 public:
  // `kind` names the queue in messages ("FIFOQueue 'name'"). `dtypes` and
  // `shapes` are the components actually stored (PriorityQueue prepends
  // its priority). REQUIRES: shapes empty or one per dtype.
  QueueBase(std::string kind, QueueOptions options, std::vector<DType> dtypes,
            std::vector<PartialShape> shapes);
  ~QueueBase() override;

  Status ValidateTuple(const Tuple& tuple) const override;
  Status ValidateManyTuple(const Tuple& tuple) const override;
  void TryEnqueue(Tuple tuple, OpKernelContext* context, DoneCallback callback) override;
  void TryEnqueueMany(Tuple tuple, OpKernelContext* context, DoneCallback callback) override;
  void TryDequeue(OpKernelContext* context, CallbackWithTuple callback) override;
  void TryDequeueMany(int64_t num_elements, OpKernelContext* context, bool allow_small_batch,
                      CallbackWithTuple callback) override;
  void Close(OpKernelContext* context, bool cancel_pending_enqueues,
             DoneCallback callback) override;
  int64_t size() const override;
  bool is_closed() const override;
  const std::vector<DType>& component_dtypes() const override { return dtypes_; }
  Status MatchesNodeDef(const NodeDef& node_def) const override;
  std::string DebugString() const override;

  // "FIFOQueue 'name'".
  const std::string& queue_name() const { return queue_name_; }
  int64_t capacity() const { return options_.capacity; }
  const std::vector<PartialShape>& component_shapes() const { return shapes_; }

 protected:
  // The element store. REQUIRES: mu_ held.
  virtual int64_t StoredLocked() const = 0;
  // How many elements a dequeue may take now (RandomShuffleQueue keeps
  // min_after_dequeue while open).
  virtual int64_t DequeuableLocked() const { return StoredLocked(); }
  virtual void PushLocked(Tuple element) = 0;
  // REQUIRES: DequeuableLocked() > 0.
  virtual Tuple PopLocked() = 0;
  // Puts back the elements a failed DequeueMany took, in the order taken.
  virtual void RestoreLocked(std::vector<Tuple> taken) = 0;

  // OK if DequeueMany / DequeueUpTo can build batches of this queue (by
  // default: every component's shape is given and fully defined).
  virtual Status CheckCanDequeueMany() const;
  // Stacks `elements` along a new dim 0 (runs outside the lock); with no
  // elements, a batch of size 0.
  virtual StatusOr<Tuple> MakeBatch(OpKernelContext* context, std::vector<Tuple>& elements) const;
  // The kind's own attrs for MatchesNodeDef (min_after_dequeue, seeds).
  virtual Status MatchesKindAttrs(const NodeDef& node_def) const;

  bool closed_locked() const { return closed_; }
  mutable std::mutex mu_;

 private:
  enum class Action { kEnqueue, kClose, kDequeue };
  enum class RunResult { kNoProgress, kProgress, kComplete };
  struct Attempt {
    Action action = Action::kEnqueue;
    OpKernelContext* context = nullptr;
    CancellationManager* cancellation = nullptr;
    CancellationToken token = 0;
    bool registered = false;
    Status failure;                // set when it fails; delivered outside the lock
    DoneCallback done;             // enqueue and close
    CallbackWithTuple deliver;     // dequeue
    std::vector<Tuple> elements;   // enqueue: still to add (from `next`); dequeue: taken
    size_t next = 0;
    int64_t requested = 0;         // dequeue: elements wanted
    bool batch = false;            // dequeue: DequeueMany / DequeueUpTo
    bool allow_small_batch = false;
  };
  using AttemptList = std::list<Attempt>;

  // Adds `attempt` behind the others of its kind, runs what can run, and
  // registers it for cancellation if it still waits.
  void Submit(Attempt attempt);
  RunResult RunLocked(Attempt* attempt);
  // Retries the front attempts until none progresses; moves the finished
  // ones to `finished`.
  void FlushLocked(AttemptList* finished);
  bool TryFrontLocked(AttemptList* attempts, AttemptList* finished);
  // Deregisters and calls back each finished attempt. REQUIRES: mu_ not held.
  void RunFinished(AttemptList* finished) const;
  void Cancel(CancellationManager* cancellation, CancellationToken token);
  Status ClosedAndInsufficient(int64_t requested) const;  // REQUIRES: mu_ held
  Status CheckComponentCount(const Tuple& tuple) const;

  const QueueOptions options_;
  const std::string queue_name_;
  const std::vector<DType> dtypes_;
  const std::vector<PartialShape> shapes_;
  bool closed_ = false;
  AttemptList enqueue_attempts_;  // enqueues and closes, in order
  AttemptList dequeue_attempts_;
};

}  // namespace weir
