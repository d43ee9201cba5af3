// Input pipelines built of queues (tf.train.string_input_producer, batch and
// shuffle_batch): graph code plus the QueueRunner that feeds it.
//
//   StatusOr<InputProducer> files =
//       StringInputProducer(root, ops::Const(root, names), {.num_epochs = 2});
//   ... a reader dequeues file names from files->queue ...
//   StatusOr<BatchResult> batch =
//       Batch(root, {image, label}, {.batch_size = 64, .min_after_dequeue = 500});
//   // (Re)start the epoch count, then the threads:
//   session->Run({}, {}, {files->local_init.name()}, &unused);
//   files->runner.Start(session, &coordinator);
//   batch->runner.Start(session, &coordinator);
//
// Build errors (bad options, wrong dtypes or shapes) are returned and kept
// in the scope, naming the pipeline.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "weir/graph/scope.h"
#include "weir/train/queue_runner.h"

namespace weir {

// local_init: the epoch counter's initializer (a NoOp without an epoch
// limit); run it before starting the runner, and again to restart.
struct InputProducer {
  Output queue;
  QueueRunner runner;
  Operation local_init;
};

struct StringInputProducerOptions {
  int64_t num_epochs = 0;  // 0: no limit
  bool shuffle = true;  // shuffle the strings anew each epoch
  int64_t seed = 0;  // 0: nondeterministic
  int capacity = 32;
  std::string name = "input_producer";
};

// A FIFOQueueV2 of scalar strings, fed each epoch with all of `strings` (a
// vector, not empty) by QueueEnqueueManyV2. With num_epochs > 0, an epoch
// counter (ResourceCountUpTo on a local int64 variable) ends the runner
// with OutOfRange after the last epoch, which closes the queue.
StatusOr<InputProducer> StringInputProducer(const Scope& scope, const Output& strings,
                                            const StringInputProducerOptions& options = {});

struct BatchOptions {
  int64_t batch_size = 32;
  int capacity = 1000;
  int min_after_dequeue = 0;  // > 0: a RandomShuffleQueueV2 (shuffle_batch)
  int num_threads = 1;
  int64_t seed = 0;  // the shuffle queue's; 0: nondeterministic
  bool allow_smaller_final_batch = false;
  std::string name = "batch";
  // The queue's element shapes, for tensors whose static shapes are not
  // fully defined (a dequeued element); empty: the tensors' own.
  std::vector<PartialShape> shapes = {};
};

struct BatchResult {
  std::vector<Output> batch;
  QueueRunner runner;
};

// tf.train.batch / shuffle_batch: `tensors` (one example each, fully defined
// shapes) enqueued by num_threads copies of one enqueue op into a FIFO
// (min_after_dequeue==0) or RandomShuffle queue; batch = DequeueMany
// (DequeueUpTo with allow_smaller_final_batch) "<name>/dequeue"; batch[i]
// is its component i with its static shape, [batch_size (or -1), shape...].
StatusOr<BatchResult> Batch(const Scope& scope, const std::vector<Output>& tensors,
                            const BatchOptions& options);

}  // namespace weir
