#include "weir/kernels/fifo_queue.h"

#include "weir/base/str_util.h"

namespace weir {

Status CheckQueueShapes(const std::string& queue_name, const std::vector<DType>& dtypes,
                        const std::vector<PartialShape>& shapes, bool allow_partial) {
  if (!shapes.empty() && shapes.size() != dtypes.size()) {
    return errors::InvalidArgument(queue_name, ": `shapes` has ", shapes.size(),
                                   " entries but there are ", dtypes.size(), " components");
  }
  for (size_t i = 0; i < shapes.size(); ++i) {
    WEIR_RETURN_IF_ERROR(shapes[i].Validate());
    if (!allow_partial && !shapes[i].IsFullyDefined()) {
      return errors::InvalidArgument(queue_name, ": the shape of component ", i, ", ", shapes[i],
                                     ", is not fully defined (PaddingFIFOQueue allows unknown "
                                     "dims)");
    }
  }
  return Status::OK();
}

FIFOQueue::FIFOQueue(std::string kind, QueueOptions options)
    : QueueBase(std::move(kind), options, options.component_types, options.shapes) {}

StatusOr<std::shared_ptr<FIFOQueue>> FIFOQueue::Create(QueueOptions options) {
  WEIR_RETURN_IF_ERROR(CheckQueueShapes(StrCat("FIFOQueue '", options.name, "'"),
                                        options.component_types, options.shapes, false));
  return std::shared_ptr<FIFOQueue>(new FIFOQueue("FIFOQueue", std::move(options)));
}

QueueInterface::Tuple FIFOQueue::PopLocked() {
  Tuple element = std::move(elements_.front());
  elements_.pop_front();
  return element;
}

void FIFOQueue::RestoreLocked(std::vector<Tuple> taken) {
  for (auto it = taken.rbegin(); it != taken.rend(); ++it) elements_.push_front(std::move(*it));
}

}  // namespace weir
