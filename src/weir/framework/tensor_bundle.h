// Checkpoints in TensorFlow's V2 layout (a "tensor bundle"), so TensorFlow
// reads what Weir writes and the other way round.
//
// A checkpoint with prefix P is two files:
//   P.index                the SSTable (sstable.h) of proto/tensor_bundle.proto:
//                          "" -> BundleHeaderProto, each tensor name ->
//                          BundleEntryProto (dtype, shape, shard, offset,
//                          size, masked crc32c)
//   P.data-00000-of-00001  the tensors' bytes back to back, no padding
// How a tensor is stored, and what its entry's crc32c covers:
//   numbers, bool, half   the elements' little-endian bytes; the entry holds
//                         Mask(crc32c(those bytes))
//   string                a varint64 length per element, then a fixed32
//                         Mask(L) where L is the crc32c of the lengths taken
//                         as 4-byte little-endian integers (8 bytes for a
//                         length that needs them), then the elements' bytes.
//                         The entry holds Mask(crc32c of L's input, then the
//                         4 stored bytes of Mask(L), then the elements' bytes))
//                         -- TensorFlow's rule, so it is not the crc of the
//                         stored bytes.
// Readers take several data files (P.data-<i>-of-<n>, as TensorFlow's
// sharded saves leave after merging); the writer always writes one, and
// MergeBundles joins several checkpoints into one of several data files.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "weir/base/status.h"
#include "weir/framework/tensor.h"
#include "weir/framework/tensor_shape.h"

namespace weir {

class RandomAccessFile;
class WritableFile;
struct ShapeAndSlice;

// "P.index" and "P.data-00003-of-00008".
std::string BundleIndexFilename(const std::string& prefix);
std::string BundleDataFilename(const std::string& prefix, int shard, int num_shards);

// Writes one checkpoint. Nothing appears under the checkpoint's names until
// Finish succeeds: tensors stream into a temporary data file, the index is
// written to another, both are synced, and then the data file and last the
// index are renamed into place. A checkpoint already at the prefix stays
// readable until those renames; between them a reader sees the old index
// with the new data and reports DataLoss (checksums), never wrong values.
//
// Not thread-safe.
class BundleWriter {
 public:
  // Creates the prefix's directory if needed and the temporary data file;
  // a failure is returned by every later call.
  explicit BundleWriter(std::string prefix);
  // Removes the temporary files unless Finish succeeded.
  ~BundleWriter();
  BundleWriter(const BundleWriter&) = delete;
  BundleWriter& operator=(const BundleWriter&) = delete;

  // Appends `tensor` under `name`. InvalidArgument for an empty or
  // duplicate name, an uninitialized tensor or a dtype a checkpoint cannot
  // hold (resource). The first error sticks: later calls return it.
  Status Add(const std::string& name, const Tensor& tensor);

  // Appends `piece` as the part `slice` of tensor `name` (of shape
  // slice.full_shape), as TensorFlow saves partitioned variables: several
  // calls give the tensor's slices, which must not overlap. InvalidArgument,
  // besides Add's cases, when piece's shape is not the slice's, when `name`
  // was added whole, or when an earlier slice of it has another dtype or
  // full shape or overlaps this one. Sticky like Add.
  Status AddSlice(const std::string& name, const ShapeAndSlice& slice, const Tensor& piece);

  // Writes the index and moves both files into place (see above). Returns
  // the first error of the writer's life; on any error the temporary files
  // are gone and the checkpoint names are untouched. Call once.
  Status Finish();

  const std::string& prefix() const { return prefix_; }

 private:
  Status CheckAddable(const std::string& name, const Tensor& tensor);
  // Appends the tensor's bytes to the data file; returns its entry.
  StatusOr<std::string> AppendData(const Tensor& tensor);
  Status WriteAndRename();
  void RemoveTemporaryFiles();

  struct SlicedTensor {
    DType dtype;
    TensorShape full_shape;
    std::vector<std::vector<int64_t>> starts, lengths;  // per slice
  };
  std::map<std::string, SlicedTensor> sliced_;

  std::string prefix_;
  Status status_;
  std::unique_ptr<WritableFile> data_file_;
  std::string index_temp_path_;
  uint64_t data_size_ = 0;
  std::map<std::string, std::string> entries_;  // name -> serialized entry
  bool finished_ = false;
};

// The name, dtype and shape of one tensor in a checkpoint.
struct BundleTensorInfo {
  std::string name;
  DType dtype = DT_INVALID;  // DT_INVALID: a dtype Weir does not support
  TensorShape shape;
};

// Reads a checkpoint. Lookup may be called from several threads at once.
class BundleReader {
 public:
  // Reads and verifies the index and opens the data files. NotFound when
  // there is no P.index; DataLoss naming the file when the index is damaged,
  // a data file is missing or shorter than the index says; Unimplemented
  // for big-endian data or a format newer than this reader.
  static StatusOr<std::unique_ptr<BundleReader>> Open(const std::string& prefix);
  ~BundleReader();

  // Every tensor, sorted by name. (The keys under which a sliced tensor's
  // pieces are stored are not listed; the sliced tensor itself is.)
  const std::vector<BundleTensorInfo>& ListTensors() const { return tensors_; }
  // The listing of `name`, or null when the checkpoint does not hold it.
  const BundleTensorInfo* FindTensor(const std::string& name) const;

  // The tensor stored under `name`, read and checked; a tensor saved in
  // slices (partitioned variables) is assembled from its pieces. NotFound
  // naming the tensor and the prefix; DataLoss naming the data file and the
  // tensor when its size or checksum does not match the index;
  // InvalidArgument when the saved slices do not cover the whole tensor;
  // Unimplemented for dtypes Weir does not support.
  StatusOr<Tensor> Lookup(const std::string& name) const;
  // The part `slice` of tensor `name`, whether it was saved whole or in
  // slices (only the pieces that overlap `slice` are read). Errors as
  // Lookup's; InvalidArgument when slice.full_shape is not the tensor's
  // shape or the saved slices do not cover `slice`.
  StatusOr<Tensor> LookupSlice(const std::string& name, const ShapeAndSlice& slice) const;

  const std::string& prefix() const { return prefix_; }

 private:
  // One saved slice of a sliced tensor: its box and the key of its bytes.
  struct Piece {
    std::vector<int64_t> starts;
    std::vector<int64_t> lengths;
    std::string key;
  };
  struct Entry {
    int wire_dtype = 0;
    TensorShape shape;
    int shard = 0;
    uint64_t offset = 0;
    uint64_t size = 0;
    uint32_t masked_crc32c = 0;
    bool sliced = false;
    std::vector<Piece> pieces;  // when sliced
  };
  BundleReader() = default;
  Status ReadEntries(const std::string& index_path);
  StatusOr<Tensor> ReadNumeric(const std::string& name, const Entry& entry) const;
  StatusOr<Tensor> ReadStrings(const std::string& name, const Entry& entry) const;
  StatusOr<Tensor> ReadStored(const std::string& name, const Entry& entry) const;
  // The box starts/lengths of the sliced tensor `name`, from its pieces.
  StatusOr<Tensor> Assemble(const std::string& name, const Entry& entry,
                            const std::vector<int64_t>& starts,
                            const std::vector<int64_t>& lengths) const;

  std::string prefix_;
  std::map<std::string, Entry, std::less<>> entries_;
  std::map<std::string, Entry, std::less<>> piece_entries_;  // by slice key
  std::vector<BundleTensorInfo> tensors_;
  std::vector<std::unique_ptr<RandomAccessFile>> data_files_;  // by shard
};

// Joins the checkpoints `prefixes` (each written by one task of a sharded
// save) into one checkpoint at `merged_prefix`, as TensorFlow's
// MergeV2Checkpoints: the inputs' data files, in the order of `prefixes`
// and of their shards, become <merged_prefix>.data-<i>-of-<n> (renamed, not
// copied: all must be on one file system), the merged index points each
// entry at its renamed file, and the inputs' index files are deleted. The
// slices of a tensor saved in slices by several inputs (a partitioned
// variable across tasks) join into one entry.
//
// Every input is read and checked (as BundleReader::Open does) before any
// file moves. The merged index goes to a temporary file that is renamed
// into place last, after the data files are renamed and synced; on a
// failure the renamed files go back, and so do the files of a checkpoint
// already at `merged_prefix` that they replaced (kept aside until the index
// lands). So a failure leaves every checkpoint as it was; a crash leaves a
// checkpoint at another prefix untouched, and one at `merged_prefix` itself
// either whole or (same-named data files replaced before the new index
// landed) reporting DataLoss on read, never wrong values.
//
// Errors name the files: InvalidArgument for no prefixes, an empty or
// repeated prefix, `merged_prefix` among the inputs, a tensor in two inputs
// (unless both hold slices of it, of one dtype and shape, that do not
// overlap), more data files than a checkpoint may have; NotFound for an
// input without an index unless `allow_missing_files` (then it is skipped,
// but at least one must exist); the input's DataLoss/Unimplemented for a
// damaged or unreadable input.
Status MergeBundles(const std::vector<std::string>& prefixes, const std::string& merged_prefix,
                    bool allow_missing_files);

}  // namespace weir
