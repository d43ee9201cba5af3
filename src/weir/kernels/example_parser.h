// Parses serialized tf.train.Example protos (proto/example.proto) straight
// from the protobuf wire format into the tensors of ParseExampleV2 and
// ParseSingleExample: only the requested features are decoded, values go
// directly into the outputs, and no map of every feature is built.
//
// Semantics are protobuf's: the last map entry of a key wins, a Feature's
// last oneof member wins (repeats of that member concatenate), packed and
// unpacked lists are both accepted, unknown fields are skipped. Features
// nobody asked for are not decoded (as in TensorFlow's fast parser, so their
// contents are not validated). A map entry holding its value twice merges
// the two, as protobuf does.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "weir/base/status.h"
#include "weir/framework/allocator.h"
#include "weir/framework/tensor.h"

namespace weir {

struct DenseFeatureConfig {
  std::string key;
  DType dtype = DT_FLOAT;  // float, int64 or string
  // Fully known, or with an unknown first dim (-1): a variable-length
  // feature, padded with its default (one element) to the longest example.
  PartialShape shape;
  // Fixed-length features: no elements makes the feature required;
  // otherwise the value of a missing feature, of `shape`.
  Tensor default_value;
};

struct VarLenFeatureConfig {
  std::string key;
  DType dtype = DT_FLOAT;        // float, int64 or string
  DType split_dtype = DT_INT64;  // ragged features: int32 or int64
};

struct ExampleParserConfig {
  std::vector<DenseFeatureConfig> dense;
  std::vector<VarLenFeatureConfig> sparse;
  std::vector<VarLenFeatureConfig> ragged;
};

// The outputs, in the ops' order, one per feature of each group. "batch"
// dims are present only when parsing a batch.
struct ParsedExamples {
  std::vector<Tensor> sparse_indices;  // int64 [N, rank]: (example,) position
  std::vector<Tensor> sparse_values;   // [N]
  std::vector<Tensor> sparse_shapes;   // int64 [rank]: (batch size,) longest list
  std::vector<Tensor> dense_values;    // (batch,) shape
  std::vector<Tensor> ragged_values;   // [N]
  std::vector<Tensor> ragged_splits;   // [batch + 1]; [0] when not a batch
};

// A validated config with its key lookup; Parse may run concurrently.
class ExampleParser {
 public:
  // InvalidArgument naming the feature for an unsupported dtype, a shape
  // unknown beyond its first dim, a default that does not fit the shape, or
  // a key listed twice.
  static StatusOr<ExampleParser> Create(ExampleParserConfig config);

  // Parses `serialized`, one Example per entry. `batched`: outputs have a
  // leading batch dim (ParseExampleV2 on a vector); otherwise `serialized`
  // holds one Example (a scalar input). `names` is empty or one name per
  // example, for errors. InvalidArgument naming the example, the feature
  // and what was expected and found; `out` is complete only on success.
  Status Parse(std::span<const std::string> serialized, std::span<const std::string> names,
               bool batched, Allocator* allocator, ParsedExamples* out) const;

  const ExampleParserConfig& config() const { return config_; }

 private:
  explicit ExampleParser(ExampleParserConfig config) : config_(std::move(config)) {}
  // The feature number of `key` (dense, then sparse, then ragged), or -1
  // when nobody asked for it.
  int Find(std::string_view key) const;

  ExampleParserConfig config_;
  std::vector<std::pair<std::string, int>> keys_;  // sorted
};

}  // namespace weir
