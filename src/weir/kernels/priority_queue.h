// PriorityQueue: dequeues the element of lowest priority first
// (PriorityQueueV2); equal priorities leave in the order they came. Every
// element's component 0 is its priority, an int64 scalar, followed by the
// declared component_types.
#pragma once

#include <vector>

#include "weir/kernels/queue_base.h"

namespace weir {

class PriorityQueue final : public QueueBase {
 public:
  static StatusOr<std::shared_ptr<PriorityQueue>> Create(QueueOptions options);

  Status ValidateTuple(const Tuple& tuple) const override;
  Status ValidateManyTuple(const Tuple& tuple) const override;

 private:
  explicit PriorityQueue(QueueOptions options);

  struct Entry {
    int64_t priority;
    uint64_t sequence;
    Tuple element;
  };

  int64_t StoredLocked() const override { return static_cast<int64_t>(heap_.size()); }
  void PushLocked(Tuple element) override;
  Tuple PopLocked() override;
  void RestoreLocked(std::vector<Tuple> taken) override;
  Status CheckCanDequeueMany() const override;

  std::vector<Entry> heap_;  // a min-heap on (priority, sequence)
  uint64_t next_sequence_ = 0;
};

}  // namespace weir
