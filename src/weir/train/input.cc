#include "weir/train/input.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "weir/ops/standard_ops.h"
#include "weir/train/variables.h"

namespace weir {
namespace {

// TensorFlow's graph seed when only an op seed is given (random_seed.py),
// so a seed means the same (seed, seed2) pair as there.
constexpr int64_t kDefaultGraphSeed = 87654321;

void AddSeeds(int64_t seed, AttrMap* attrs) {
  if (seed == 0) return;
  (*attrs)["seed"] = kDefaultGraphSeed;
  (*attrs)["seed2"] = seed;
}

// Records `error` (with the pipeline's name) in the scope and returns it.
Status Fail(const Scope& scope, std::string_view what, std::string_view name, const Status& error) {
  Status status = error.WithContext(StrCat(what, " '", name, "'"));
  scope.UpdateStatus(status);
  return status;
}

// The close, cancel and is-closed ops of `queue` and the runner of `enqueue_ops`.
QueueRunner MakeRunner(const Scope& scope, const Output& queue,
                       std::vector<std::string> enqueue_ops) {
  Operation close = ops::QueueCloseV2(scope.WithOpName("close"), queue);
  Operation cancel = ops::QueueCloseV2(scope.WithOpName("close_on_stop"), queue,
                                       {{"cancel_pending_enqueues", true}});
  Output is_closed = ops::QueueIsClosedV2(scope.WithOpName("is_closed"), queue);
  if (!scope.ok()) return QueueRunner();
  return QueueRunner(queue.node()->name(), std::move(enqueue_ops), close.name(), cancel.name(),
                     is_closed.node()->name());
}

}  // namespace

StatusOr<InputProducer> StringInputProducer(const Scope& scope, const Output& strings,
                                            const StringInputProducerOptions& options) {
  WEIR_RETURN_IF_ERROR(scope.status());
  auto fail = [&](const Status& error) {
    return Fail(scope, "StringInputProducer", options.name, error);
  };
  if (!strings.valid()) return fail(errors::InvalidArgument("the strings are not a valid output"));
  if (strings.dtype() != DT_STRING) {
    return fail(
        errors::InvalidArgument("needs strings, got ", strings.dtype(), " (", strings.name(), ")"));
  }
  const PartialShape shape = strings.shape();
  if (shape.known_rank() && shape.rank() != 1) {
    return fail(
        errors::InvalidArgument("needs a vector of strings, got shape ", shape.DebugString()));
  }
  if (shape.known_rank() && shape.dim(0) == 0) {
    return fail(errors::InvalidArgument("needs at least one string, got an empty vector"));
  }
  if (options.num_epochs < 0) {
    return fail(
        errors::InvalidArgument("num_epochs must be >= 0 (0: no limit), got ", options.num_epochs));
  }
  if (options.capacity <= 0) {
    return fail(errors::InvalidArgument("capacity must be positive, got ", options.capacity));
  }

  Scope s = scope.NewSubScope(options.name);
  Output epoch = strings;
  if (options.shuffle) {
    AttrMap seeds;
    AddSeeds(options.seed, &seeds);
    epoch = ops::RandomShuffle(s, epoch, seeds);
  }
  Operation local_init;
  if (options.num_epochs > 0) {
    // Each enqueue of the whole list first counts one epoch; past the last
    // the count fails with OutOfRange, which ends the runner's thread.
    Scope limit = s.NewSubScope("limit_epochs");
    WEIR_ASSIGN_OR_RETURN(Variable epochs,
                          Variable::Create(limit, "epochs", ops::Const(limit, int64_t{0})));
    Output counter = ops::ResourceCountUpTo(limit, epochs.handle, options.num_epochs, DT_INT64);
    epoch = ops::Identity(limit.WithControlDependencies({counter}), epoch);
    local_init = epochs.initializer;
  } else {
    local_init = ops::NoOp(s.WithOpName("local_init"));
  }
  Output queue =
      ops::FIFOQueueV2(s.WithOpName("fifo_queue"), {DT_STRING},
                       {{"shapes", std::vector<PartialShape>{PartialShape(std::vector<int64_t>{})}},
                        {"capacity", options.capacity}});
  // As TensorFlow: an empty list is an error when it runs (its size may be
  // known only then, as MatchingFiles' is), not an endless loop of empty
  // enqueues that leaves the readers waiting.
  Operation non_empty = ops::Assert(
      s.WithOpName("assert_non_empty"),
      ops::Greater(s, ops::Size(s, strings), ops::Const(s, 0)),
      {Input(ops::Const(s, Tensor::Scalar<std::string>(StrCat(
                               "StringInputProducer '", options.name, "': the string list is empty"))))});
  Operation enqueue = ops::QueueEnqueueManyV2(
      s.WithOpName("enqueue").WithControlDependencies({non_empty}), queue, {epoch});
  QueueRunner runner = MakeRunner(s, queue, {enqueue.name()});
  WEIR_RETURN_IF_ERROR(scope.status());
  return InputProducer{queue, std::move(runner), local_init};
}

StatusOr<BatchResult> Batch(const Scope& scope, const std::vector<Output>& tensors,
                            const BatchOptions& options) {
  WEIR_RETURN_IF_ERROR(scope.status());
  auto fail = [&](const Status& error) { return Fail(scope, "Batch", options.name, error); };
  if (tensors.empty()) return fail(errors::InvalidArgument("needs at least one tensor"));
  std::vector<DType> dtypes;
  std::vector<PartialShape> shapes;
  InputList components;
  if (!options.shapes.empty() && options.shapes.size() != tensors.size()) {
    return fail(
        errors::InvalidArgument(tensors.size(), " tensors but ", options.shapes.size(), " shapes"));
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!tensors[i].valid())
      return fail(errors::InvalidArgument("tensors[", i, "] is not a valid output"));
    PartialShape shape = tensors[i].shape();
    if (!options.shapes.empty()) {
      StatusOr<PartialShape> merged = shape.Merge(options.shapes[i]);
      if (!merged.ok()) {
        return fail(errors::InvalidArgument("tensors[", i, "] (", tensors[i].name(), ") has shape ",
                                            shape.DebugString(), ", incompatible with shapes[", i,
                                            "] = ", options.shapes[i].DebugString()));
      }
      shape = *merged;
    }
    if (!shape.IsFullyDefined()) {
      return fail(errors::InvalidArgument(
          "tensors[", i, "] (", tensors[i].name(), ") has shape ", shape.DebugString(),
          "; every example's shape must be fully defined (see shapes)"));
    }
    dtypes.push_back(tensors[i].dtype());
    shapes.push_back(shape);
    components.push_back(tensors[i]);
  }
  if (options.batch_size < 1 || options.batch_size > std::numeric_limits<int32_t>::max()) {
    return fail(
        errors::InvalidArgument("batch_size must be in [1, 2^31), got ", options.batch_size));
  }
  if (options.capacity < 1) {
    return fail(errors::InvalidArgument("capacity must be positive, got ", options.capacity));
  }
  if (options.num_threads < 1) {
    return fail(errors::InvalidArgument("num_threads must be positive, got ", options.num_threads));
  }
  if (options.min_after_dequeue < 0 || options.min_after_dequeue >= options.capacity) {
    return fail(errors::InvalidArgument("min_after_dequeue must be in [0, capacity = ",
                                        options.capacity, "), got ", options.min_after_dequeue));
  }

  Scope s = scope.NewSubScope(options.name);
  AttrMap queue_attrs = {{"shapes", shapes}, {"capacity", options.capacity}};
  Output queue;
  if (options.min_after_dequeue > 0) {
    queue_attrs["min_after_dequeue"] = options.min_after_dequeue;
    AddSeeds(options.seed, &queue_attrs);
    queue = ops::RandomShuffleQueueV2(s.WithOpName("random_shuffle_queue"), dtypes, queue_attrs);
  } else {
    queue = ops::FIFOQueueV2(s.WithOpName("fifo_queue"), dtypes, queue_attrs);
  }
  Operation enqueue = ops::QueueEnqueueV2(s.WithOpName("enqueue"), queue, components);
  QueueRunner runner =
      MakeRunner(s, queue, std::vector<std::string>(options.num_threads, enqueue.name()));
  const Input batch_size(static_cast<int>(options.batch_size));
  Operation dequeue =
      options.allow_smaller_final_batch
          ? ops::QueueDequeueUpToV2(s.WithOpName("dequeue"), queue, batch_size, dtypes)
          : ops::QueueDequeueManyV2(s.WithOpName("dequeue"), queue, batch_size, dtypes);
  WEIR_RETURN_IF_ERROR(scope.status());
  // Dequeued components carry no static shape (queue handles hold none); a
  // Reshape to the known batch shape gives it, sharing the buffer.
  BatchResult result{{}, std::move(runner)};
  for (int i = 0; i < dequeue.num_outputs(); ++i) {
    std::vector<int64_t> dims = {options.allow_smaller_final_batch ? -1 : options.batch_size};
    dims.insert(dims.end(), shapes[i].dim_sizes().begin(), shapes[i].dim_sizes().end());
    Tensor dims_tensor(DT_INT64, TensorShape({static_cast<int64_t>(dims.size())}));
    std::copy(dims.begin(), dims.end(), dims_tensor.data<int64_t>());
    result.batch.push_back(ops::Reshape(s.WithOpName(StrCat("component_", i)), dequeue.output(i),
                                        ops::Const(s, dims_tensor)));
  }
  WEIR_RETURN_IF_ERROR(scope.status());
  return result;
}

}  // namespace weir
