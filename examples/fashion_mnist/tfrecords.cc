#include "tfrecords.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <cstdio>
#include <memory>

#include "fashion_mnist_data.h"
#include "proto/example.pb.h"
#include "weir/base/file_system.h"
#include "weir/base/record_reader.h"
#include "weir/base/record_writer.h"

namespace weir {
namespace fashion_mnist {
namespace {

// Writes the first `limit` examples of one split (images uint8 [n, 28, 28],
// labels uint8 [n]) as `shards` files; returns how many were written.
StatusOr<int64_t> WriteSplit(const std::string& dir, const std::string& split, const Tensor& images,
                             const Tensor& labels, int shards, int64_t limit) {
  int64_t n = labels.NumElements();
  if (limit > 0 && limit < n) n = limit;
  const uint8_t* pixels = images.data<uint8_t>();
  const uint8_t* label = labels.data<uint8_t>();
  for (int shard = 0; shard < shards; ++shard) {
    const std::string path = StrCat(dir, "/", ShardFileName(split, shard, shards));
    WEIR_ASSIGN_OR_RETURN(std::unique_ptr<RecordWriter> writer, RecordWriter::Create(path));
    for (int64_t i = n * shard / shards; i < n * (shard + 1) / shards; ++i) {
      if (label[i] >= kNumClasses) {
        return errors::DataLoss("the Fashion-MNIST ", split, " labels have ", int{label[i]},
                                " at index ", i, ", outside [0, 10)");
      }
      WEIR_RETURN_IF_ERROR(writer->Write(SerializeExample(pixels + i * kImageSize, label[i])));
    }
    WEIR_RETURN_IF_ERROR(writer->Close());
  }
  // Shards of an earlier run with another shard count would match the
  // training pattern too: remove them once the new ones are whole.
  WEIR_ASSIGN_OR_RETURN(std::vector<std::string> existing,
                        GetMatchingPaths(StrCat(dir, "/", split, "-*-of-*.tfrecord")));
  const std::string suffix = ShardFileName(split, 0, shards).substr(split.size() + 6);  // -of-N...
  for (const std::string& path : existing) {
    if (!path.ends_with(suffix)) WEIR_RETURN_IF_ERROR(DeleteFile(path));
  }
  return n;
}

}  // namespace

std::string ShardFileName(const std::string& split, int shard, int shards) {
  char name[64];
  std::snprintf(name, sizeof(name), "-%05d-of-%05d.tfrecord", shard, shards);
  return split + name;
}

std::string SerializeExample(const uint8_t* image, int64_t label) {
  wire::Example example;
  auto& features = *example.mutable_features()->mutable_feature();
  features["image"].mutable_bytes_list()->add_value(reinterpret_cast<const char*>(image),
                                                    kImageSize);
  features["label"].mutable_int64_list()->add_value(label);
  // Deterministic: map entries in key order, so the same data gives the
  // same bytes on every run.
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    example.SerializeToCodedStream(&coded);
  }
  return bytes;
}

StatusOr<int64_t> CountRecords(const std::string& path) {
  WEIR_ASSIGN_OR_RETURN(std::unique_ptr<RecordReader> reader, RecordReader::Open(path));
  int64_t count = 0;
  std::string record;
  for (;;) {
    Status status = reader->ReadRecord(&record);
    if (status.code() == Code::kOutOfRange) return count;
    WEIR_RETURN_IF_ERROR(status);
    ++count;
  }
}

StatusOr<WrittenTFRecords> WriteTFRecords(const std::string& data_dir, const std::string& out_dir,
                                          const WriteTFRecordsOptions& options) {
  if (options.shards <= 0 || options.shards > 99999) {
    return errors::InvalidArgument("--shards must be in [1, 99999], got ", options.shards);
  }
  WEIR_RETURN_IF_ERROR(RecursivelyCreateDir(out_dir));
  WrittenTFRecords written;
  for (const char* split : {"train", "test"}) {
    const std::string idx = std::string(split) == "train" ? "train" : "t10k";
    WEIR_ASSIGN_OR_RETURN(Tensor images,
                          ReadIdxFile(StrCat(data_dir, "/", idx, "-images-idx3-ubyte.gz")));
    WEIR_ASSIGN_OR_RETURN(Tensor labels,
                          ReadIdxFile(StrCat(data_dir, "/", idx, "-labels-idx1-ubyte.gz")));
    if (images.dims() != 3 || images.dim_size(1) * images.dim_size(2) != kImageSize ||
        labels.dims() != 1 || images.dim_size(0) != labels.dim_size(0)) {
      return errors::DataLoss("the Fashion-MNIST ", split, " files in '", data_dir,
                              "' hold images of shape ", images.shape(), " and labels of shape ",
                              labels.shape(), ", expected [n,28,28] and [n]");
    }
    const bool train = idx == "train";
    WEIR_ASSIGN_OR_RETURN(int64_t n, WriteSplit(out_dir, split, images, labels, options.shards,
                                                train ? options.train_limit : options.test_limit));
    (train ? written.train_examples : written.test_examples) = n;
  }
  return written;
}

}  // namespace fashion_mnist
}  // namespace weir
