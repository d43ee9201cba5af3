// Fashion-MNIST as TFRecord files of tf.train.Example, as TensorFlow input
// pipelines read it:
//   <dir>/train-00000-of-00008.tfrecord ... <dir>/test-00007-of-00008.tfrecord
// Each record is one Example with the features
//   "image": bytes_list of one value, the 784 raw uint8 pixels (row-major)
//   "label": int64_list of one value in [0, 10)
// Examples go to the shards in order, in contiguous runs of near-equal size.
#pragma once

#include <cstdint>
#include <string>

#include "weir/base/status.h"

namespace weir {
namespace fashion_mnist {

struct WriteTFRecordsOptions {
  int shards = 8;           // files per split
  int64_t train_limit = 0;  // only the first N examples of a split (0: all)
  int64_t test_limit = 0;
};

struct WrittenTFRecords {
  int64_t train_examples = 0;
  int64_t test_examples = 0;
};

// Reads the IDX files in `data_dir` (fashion_mnist_data.h) and writes both
// splits into `out_dir`, creating it if needed. Each file is written under a
// temporary name and renamed into place, so a reader never sees half a file.
StatusOr<WrittenTFRecords> WriteTFRecords(const std::string& data_dir, const std::string& out_dir,
                                          const WriteTFRecordsOptions& options = {});

// "<split>-<shard, 5 digits>-of-<shards, 5 digits>.tfrecord".
std::string ShardFileName(const std::string& split, int shard, int shards);

// The serialized Example of one image (784 bytes) and its label.
std::string SerializeExample(const uint8_t* image, int64_t label);

// The number of records in a TFRecord file; DataLoss names a damaged one.
StatusOr<int64_t> CountRecords(const std::string& path);

}  // namespace fashion_mnist
}  // namespace weir
