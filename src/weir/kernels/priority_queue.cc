#include "weir/kernels/priority_queue.h"

#include <algorithm>

#include "weir/base/str_util.h"
#include "weir/kernels/fifo_queue.h"

namespace weir {
namespace {

std::vector<DType> WithPriorityType(std::vector<DType> types) {
  types.insert(types.begin(), DT_INT64);
  return types;
}

// Declared shapes with the scalar priority first; with none declared, the
// priority is still a scalar and the rest are free.
std::vector<PartialShape> WithPriorityShape(const QueueOptions& options) {
  std::vector<PartialShape> shapes = options.shapes;
  if (shapes.empty()) shapes.resize(options.component_types.size(), PartialShape::UnknownRank());
  shapes.insert(shapes.begin(), PartialShape(std::vector<int64_t>{}));
  return shapes;
}

// Heap order: std::push_heap keeps the greatest on top, so "greater" means
// a lower priority (earlier sequence among equals).
bool LeavesLater(int64_t pa, uint64_t sa, int64_t pb, uint64_t sb) {
  return pa != pb ? pa > pb : sa > sb;
}

}  // namespace

PriorityQueue::PriorityQueue(QueueOptions options)
    : QueueBase("PriorityQueue", options, WithPriorityType(options.component_types),
                WithPriorityShape(options)) {}

StatusOr<std::shared_ptr<PriorityQueue>> PriorityQueue::Create(QueueOptions options) {
  WEIR_RETURN_IF_ERROR(CheckQueueShapes(StrCat("PriorityQueue '", options.name, "'"),
                                        options.component_types, options.shapes, false));
  return std::shared_ptr<PriorityQueue>(new PriorityQueue(std::move(options)));
}

Status PriorityQueue::ValidateTuple(const Tuple& tuple) const {
  if (!tuple.empty() && tuple[0].dtype() != DT_INT64) {
    return errors::InvalidArgument(
        queue_name(), ": component 0 is the priority and must be int64, got ", tuple[0].dtype());
  }
  return QueueBase::ValidateTuple(tuple);
}

Status PriorityQueue::ValidateManyTuple(const Tuple& tuple) const {
  if (!tuple.empty() && tuple[0].dtype() != DT_INT64) {
    return errors::InvalidArgument(
        queue_name(), ": component 0 is the priority and must be int64, got ", tuple[0].dtype());
  }
  return QueueBase::ValidateManyTuple(tuple);
}

Status PriorityQueue::CheckCanDequeueMany() const {
  for (size_t i = 1; i < component_shapes().size(); ++i) {
    if (!component_shapes()[i].IsFullyDefined()) {
      return errors::InvalidArgument(queue_name(),
                                     ": DequeueMany and DequeueUpTo need every component's "
                                     "shape fully defined (the `shapes` attr)");
    }
  }
  return Status::OK();
}

void PriorityQueue::PushLocked(Tuple element) {
  const int64_t priority = element[0].scalar<int64_t>();
  heap_.push_back(Entry{priority, next_sequence_++, std::move(element)});
  std::push_heap(heap_.begin(), heap_.end(), [](const Entry& a, const Entry& b) {
    return LeavesLater(a.priority, a.sequence, b.priority, b.sequence);
  });
}

QueueInterface::Tuple PriorityQueue::PopLocked() {
  std::pop_heap(heap_.begin(), heap_.end(), [](const Entry& a, const Entry& b) {
    return LeavesLater(a.priority, a.sequence, b.priority, b.sequence);
  });
  Tuple element = std::move(heap_.back().element);
  heap_.pop_back();
  return element;
}

void PriorityQueue::RestoreLocked(std::vector<Tuple> taken) {
  for (Tuple& element : taken) PushLocked(std::move(element));
}

}  // namespace weir
