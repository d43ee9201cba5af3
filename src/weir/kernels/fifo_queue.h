// FIFOQueue: elements leave in the order they came (FIFOQueueV2). Shapes,
// when given, must be fully defined.
#pragma once

#include <deque>

#include "weir/kernels/queue_base.h"

namespace weir {

class FIFOQueue : public QueueBase {
 public:
  // InvalidArgument for shapes that are partial or not one per component.
  static StatusOr<std::shared_ptr<FIFOQueue>> Create(QueueOptions options);

 protected:
  FIFOQueue(std::string kind, QueueOptions options);

  int64_t StoredLocked() const override { return static_cast<int64_t>(elements_.size()); }
  void PushLocked(Tuple element) override { elements_.push_back(std::move(element)); }
  Tuple PopLocked() override;
  void RestoreLocked(std::vector<Tuple> taken) override;

 private:
  friend class PaddingFIFOQueue;
  std::deque<Tuple> elements_;
};

// Shared by the queue kinds: `shapes` empty or one per dtype, and fully
// defined unless `allow_partial`. `queue_name` prefixes the message.
Status CheckQueueShapes(const std::string& queue_name, const std::vector<DType>& dtypes,
                        const std::vector<PartialShape>& shapes, bool allow_partial);

}  // namespace weir
