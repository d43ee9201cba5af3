#include "input_pipeline.h"

#include <algorithm>

#include "fashion_mnist_data.h"
#include "weir/ops/const_op.h"
#include "weir/ops/standard_ops.h"
#include "weir/train/input.h"

namespace weir {
namespace fashion_mnist {
namespace {

struct ParsedBatch {
  Output images;  // float [n, 784]
  Output labels;  // int32 [n]
};

// A batch of serialized Examples -> pixels scaled as Load() scales them
// (uint8 * (1/255) in float) and int32 labels.
ParsedBatch ParseExamples(const Scope& s, const Output& serialized) {
  const Output no_keys = ops::Const(s, Tensor(DT_STRING, TensorShape({0})));
  const Output dense_keys = ops::Const(s, Tensor::FromVector<std::string>({"image", "label"}));
  // Both features are required: empty defaults.
  Operation parsed = ops::ParseExampleV2(
      s, serialized, no_keys, no_keys, dense_keys, no_keys,
      {ops::Const(s, Tensor(DT_STRING, TensorShape({0}))),
       ops::Const(s, Tensor(DT_INT64, TensorShape({0})))},
      0, {}, {}, {}, std::vector<PartialShape>{PartialShape({}), PartialShape({})});
  const Output pixels = ops::DecodeRaw(s, parsed.output(0), DT_UINT8);  // [n, 784]
  ParsedBatch batch;
  batch.images = ops::Mul(s, ops::Cast(s, pixels, DT_FLOAT), 1.0f / 255.0f);
  batch.labels = ops::Cast(s, parsed.output(1), DT_INT32);
  return batch;
}

}  // namespace

std::string TrainFilePattern(const std::string& dir) { return dir + "/train-*.tfrecord"; }

StatusOr<TFRecordInput> BuildTFRecordInput(const Scope& scope,
                                           const TFRecordInputOptions& options) {
  if (options.batch_size <= 0 || options.reader_threads <= 0 || options.records_per_read <= 0) {
    return errors::InvalidArgument("batch size (", options.batch_size, "), reader threads (",
                                   options.reader_threads, ") and records per read (",
                                   options.records_per_read, ") must be positive");
  }
  Scope s = scope.NewSubScope("input");
  TFRecordInput input;
  input.files = ops::MatchingFiles(
      s, ops::Const(s, Tensor::Scalar<std::string>(TrainFilePattern(options.dir))));
  StringInputProducerOptions producer_options;
  producer_options.num_epochs = 0;  // the trainer counts epochs; a resumed run restarts one
  producer_options.shuffle = true;
  producer_options.seed = options.seed;
  WEIR_ASSIGN_OR_RETURN(InputProducer producer,
                        StringInputProducer(s, input.files, producer_options));
  input.local_init = producer.local_init;

  // Room for every reader's largest enqueue and a few batches on top of the
  // shuffle buffer, so readers run ahead of the training step.
  const int64_t capacity = options.min_after_dequeue +
                           options.reader_threads * options.records_per_read +
                           3 * options.batch_size;
  const Output queue = ops::RandomShuffleQueueV2(
      s.WithOpName("shuffle_queue"), {DT_FLOAT, DT_INT32},
      {{"shapes", std::vector<PartialShape>{PartialShape({kImageSize}), PartialShape({})}},
       {"capacity", capacity},
       {"min_after_dequeue", options.min_after_dequeue},
       {"seed", options.seed},
       {"seed2", int64_t{1}}});
  std::vector<std::string> enqueue_ops;
  for (int r = 0; r < options.reader_threads; ++r) {
    Scope reader_scope = s.NewSubScope(StrCat("reader", r));
    const Output reader = ops::TFRecordReaderV2(reader_scope);
    Operation read =
        ops::ReaderReadUpToV2(reader_scope, reader, producer.queue, options.records_per_read);
    const ParsedBatch batch = ParseExamples(reader_scope, read.output(1));
    enqueue_ops.push_back(
        ops::QueueEnqueueManyV2(reader_scope, queue, {batch.images, batch.labels}).name());
  }
  const Operation close = ops::QueueCloseV2(s.WithOpName("shuffle_queue_close"), queue);
  const Operation cancel = ops::QueueCloseV2(s.WithOpName("shuffle_queue_cancel"), queue,
                                             {{"cancel_pending_enqueues", true}});
  const Output is_closed = ops::QueueIsClosedV2(s.WithOpName("shuffle_queue_is_closed"), queue);
  Operation dequeue = ops::QueueDequeueManyV2(s.WithOpName("batch"), queue,
                                              ops::Const(s, static_cast<int>(options.batch_size)),
                                              {DT_FLOAT, DT_INT32});
  WEIR_RETURN_IF_ERROR(s.status());
  input.images = dequeue.output(0);
  input.labels = dequeue.output(1);
  input.runners.push_back(std::move(producer.runner));
  input.runners.emplace_back(Operation(queue).name(), enqueue_ops, close.name(), cancel.name(),
                             Operation(is_closed).name());
  return input;
}

}  // namespace fashion_mnist
}  // namespace weir
