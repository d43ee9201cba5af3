#include "weir/kernels/random_shuffle_queue.h"

#include "weir/base/str_util.h"
#include "weir/framework/node_def.h"
#include "weir/kernels/fifo_queue.h"

namespace weir {
namespace {

std::mt19937_64 MakeGenerator(int64_t seed, int64_t seed2) {
  if (seed == 0 && seed2 == 0) return std::mt19937_64(std::random_device()());
  std::seed_seq sequence{
      static_cast<uint64_t>(seed) >> 32, static_cast<uint64_t>(seed) & 0xffffffffu,
      static_cast<uint64_t>(seed2) >> 32, static_cast<uint64_t>(seed2) & 0xffffffffu};
  return std::mt19937_64(sequence);
}

}  // namespace

RandomShuffleQueue::RandomShuffleQueue(QueueOptions options, int64_t min_after_dequeue,
                                       int64_t seed, int64_t seed2)
    : QueueBase("RandomShuffleQueue", options, options.component_types, options.shapes),
      min_after_dequeue_(min_after_dequeue),
      seed_(seed),
      seed2_(seed2),
      generator_(MakeGenerator(seed, seed2)) {}

StatusOr<std::shared_ptr<RandomShuffleQueue>> RandomShuffleQueue::Create(QueueOptions options,
                                                                         int64_t min_after_dequeue,
                                                                         int64_t seed,
                                                                         int64_t seed2) {
  const std::string name = StrCat("RandomShuffleQueue '", options.name, "'");
  WEIR_RETURN_IF_ERROR(CheckQueueShapes(name, options.component_types, options.shapes, false));
  if (min_after_dequeue < 0) {
    return errors::InvalidArgument(name, ": min_after_dequeue ", min_after_dequeue, " < 0");
  }
  if (options.capacity >= 0 && options.capacity <= min_after_dequeue) {
    return errors::InvalidArgument(name, ": min_after_dequeue ", min_after_dequeue,
                                   " must be less than capacity ", options.capacity);
  }
  return std::shared_ptr<RandomShuffleQueue>(
      new RandomShuffleQueue(std::move(options), min_after_dequeue, seed, seed2));
}

int64_t RandomShuffleQueue::DequeuableLocked() const {
  const int64_t stored = StoredLocked();
  if (closed_locked()) return stored;
  return stored > min_after_dequeue_ ? stored - min_after_dequeue_ : 0;
}

QueueInterface::Tuple RandomShuffleQueue::PopLocked() {
  const size_t index = generator_() % elements_.size();
  std::swap(elements_[index], elements_.back());
  Tuple element = std::move(elements_.back());
  elements_.pop_back();
  return element;
}

void RandomShuffleQueue::RestoreLocked(std::vector<Tuple> taken) {
  for (Tuple& element : taken) elements_.push_back(std::move(element));
}

Status RandomShuffleQueue::MatchesKindAttrs(const NodeDef& node_def) const {
  int64_t min_after_dequeue = 0, seed = 0, seed2 = 0;
  WEIR_RETURN_IF_ERROR(GetAttr(node_def.attrs, "min_after_dequeue", &min_after_dequeue));
  WEIR_RETURN_IF_ERROR(GetAttr(node_def.attrs, "seed", &seed));
  WEIR_RETURN_IF_ERROR(GetAttr(node_def.attrs, "seed2", &seed2));
  if (min_after_dequeue != min_after_dequeue_ || seed != seed_ || seed2 != seed2_) {
    return errors::InvalidArgument("shared queue ", queue_name(), " has min_after_dequeue ",
                                   min_after_dequeue_, ", seed ", seed_, ", seed2 ", seed2_,
                                   " but node '", node_def.name, "' asks for ", min_after_dequeue,
                                   ", ", seed, ", ", seed2);
  }
  return Status::OK();
}

}  // namespace weir
