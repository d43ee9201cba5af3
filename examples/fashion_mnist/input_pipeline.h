// Training batches from the TFRecord files of tfrecords.h, read inside the
// graph as the TensorFlow papers' input pipelines do:
//
//   MatchingFiles("<dir>/train-*.tfrecord") -> StringInputProducer (shuffled
//   filename queue, no epoch limit) -> per reader thread: TFRecordReaderV2 +
//   ReaderReadUpToV2 -> ParseExampleV2 -> DecodeRaw uint8 -> float / 255 ->
//   QueueEnqueueManyV2 into one RandomShuffleQueueV2 -> QueueDequeueManyV2.
//
// The preprocessing is the in-memory path's (fashion_mnist_data.h), so both
// give the model bit-identical pixels. Two QueueRunners (filename queue,
// shuffle queue) must be started on the session after the graph's variables
// are initialized (or restored) and `local_init` ran; a Coordinator stops them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "weir/graph/scope.h"
#include "weir/train/queue_runner.h"

namespace weir {
namespace fashion_mnist {

struct TFRecordInputOptions {
  std::string dir;             // holds train-*.tfrecord
  int64_t batch_size = 100;
  int reader_threads = 2;      // readers, each with its own enqueue thread
  int64_t records_per_read = 100;  // ReaderReadUpToV2's num_records
  int64_t min_after_dequeue = 10000;  // the shuffle queue's buffer
  int64_t seed = 1;
};

struct TFRecordInput {
  Output files;      // string [n]: the matched file names, in order
  Output images;     // float [batch_size, 784] in [0, 1]
  Output labels;     // int32 [batch_size]
  Operation local_init;  // the filename producer's local state
  std::vector<QueueRunner> runners;
};

// The glob of the training files in `dir`.
std::string TrainFilePattern(const std::string& dir);

StatusOr<TFRecordInput> BuildTFRecordInput(const Scope& scope, const TFRecordInputOptions& options);

}  // namespace fashion_mnist
}  // namespace weir
