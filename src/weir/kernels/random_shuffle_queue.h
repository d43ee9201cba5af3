// RandomShuffleQueue: dequeues a uniformly random element
// (RandomShuffleQueueV2). While open it keeps at least min_after_dequeue
// elements, so what leaves is well mixed; once closed it drains fully.
// seed and seed2 both 0: a random order; otherwise a fixed one per seeds.
#pragma once

#include <random>

#include "weir/kernels/queue_base.h"

namespace weir {

class RandomShuffleQueue final : public QueueBase {
 public:
  // InvalidArgument for bad shapes, min_after_dequeue < 0 or a bounded
  // capacity <= min_after_dequeue.
  static StatusOr<std::shared_ptr<RandomShuffleQueue>> Create(QueueOptions options,
                                                              int64_t min_after_dequeue,
                                                              int64_t seed, int64_t seed2);

 private:
  RandomShuffleQueue(QueueOptions options, int64_t min_after_dequeue, int64_t seed, int64_t seed2);

  int64_t StoredLocked() const override { return static_cast<int64_t>(elements_.size()); }
  int64_t DequeuableLocked() const override;
  void PushLocked(Tuple element) override { elements_.push_back(std::move(element)); }
  Tuple PopLocked() override;
  void RestoreLocked(std::vector<Tuple> taken) override;
  Status MatchesKindAttrs(const NodeDef& node_def) const override;

  const int64_t min_after_dequeue_;
  const int64_t seed_, seed2_;
  std::mt19937_64 generator_;  // guarded by mu_
  std::vector<Tuple> elements_;
};

}  // namespace weir
