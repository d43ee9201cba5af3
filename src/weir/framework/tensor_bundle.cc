#include "weir/framework/tensor_bundle.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <limits>
#include <optional>
#include <set>
#include <utility>

#include "proto/tensor_bundle.pb.h"
#include "proto/tensor_shape.pb.h"
#include "weir/base/coding.h"
#include "weir/base/crc32c.h"
#include "weir/base/file_system.h"
#include "weir/framework/sstable.h"
#include "weir/framework/tensor_proto.h"
#include "weir/framework/tensor_slice.h"

namespace weir {
namespace {

// Two of `pieces` (boxes: `starts` and `lengths` per dim, inside a tensor
// of rank `rank`) that share an element, or none. Pieces with an empty
// extent share nothing. A sweep along the dim where the pieces start at the
// most places keeps the pieces that cross the sweep line ordered by their
// start in another dim: when the pieces seen so far are disjoint, those of
// rank 2 that cross the line have disjoint extents there, so only the
// neighbours of a new piece can meet it, O(n log n) in all. For rank 3 and
// more each crossing piece is checked, which stays O(n log n) for tensors
// sliced along one dim (partitioned variables) and O(n * crossing) at worst.
// How many of a tensor's slices BundleWriter::AddSlice checks a new one
// against.
constexpr size_t kEagerOverlapChecks = 64;

// A slice as "[start:end, ...]" for errors.
std::string SliceText(const std::vector<int64_t>& starts, const std::vector<int64_t>& lengths) {
  std::vector<std::string> extents;
  for (size_t d = 0; d < starts.size(); ++d) {
    extents.push_back(StrCat(starts[d], ":", starts[d] + lengths[d]));
  }
  return StrCat("[", StrJoin(extents, ", "), "]");
}

// Two slices of a tensor of rank `rank` (boxes: starts[k] and lengths[k]
// per dim, inside the tensor) that share an element, or none. Slices with
// an empty extent share nothing. A sweep along the dim where the slices
// start at the most places keeps the slices that cross the sweep line
// ordered by their start in another dim: when the slices seen so far are
// disjoint, those of rank 2 that cross the line have disjoint extents
// there, so only the neighbours of a new slice can meet it, O(n log n) in
// all. For rank 3 and more each crossing slice is checked, which stays
// O(n log n) for tensors sliced along one dim (partitioned variables) and
// is O(n * crossing) at worst.
std::optional<std::pair<size_t, size_t>> FindOverlap(
    const std::vector<std::vector<int64_t>>& starts,
    const std::vector<std::vector<int64_t>>& lengths, int rank) {
  struct Piece {
    const std::vector<int64_t>& starts;
    const std::vector<int64_t>& lengths;
  };
  std::vector<Piece> pieces;
  pieces.reserve(starts.size());
  for (size_t k = 0; k < starts.size(); ++k) pieces.push_back({starts[k], lengths[k]});
  std::vector<size_t> order;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (std::ranges::all_of(pieces[i].lengths, [](int64_t l) { return l > 0; })) order.push_back(i);
  }
  if (order.size() < 2) return std::nullopt;
  if (rank == 0) return std::make_pair(order[0], order[1]);
  auto meet = [&](size_t a, size_t b) {
    for (int d = 0; d < rank; ++d) {
      if (pieces[a].starts[d] >= pieces[b].starts[d] + pieces[b].lengths[d] ||
          pieces[b].starts[d] >= pieces[a].starts[d] + pieces[a].lengths[d]) {
        return false;
      }
    }
    return true;
  };
  // The sweep dim `a` has the most distinct starts; the key dim `b` the
  // most among the others.
  std::vector<std::pair<size_t, int>> distinct;
  for (int d = 0; d < rank; ++d) {
    std::vector<int64_t> starts;
    for (size_t i : order) starts.push_back(pieces[i].starts[d]);
    std::ranges::sort(starts);
    distinct.push_back(
        {static_cast<size_t>(std::ranges::unique(starts).begin() - starts.begin()), d});
  }
  std::ranges::sort(distinct, std::greater<>());
  const int a = distinct[0].second;
  const int b = rank > 1 ? distinct[1].second : a;
  std::ranges::sort(order,
                    [&](size_t x, size_t y) { return pieces[x].starts[a] < pieces[y].starts[a]; });
  std::set<std::pair<int64_t, size_t>> ends;     // (end in dim a, piece) of the crossing pieces
  std::set<std::pair<int64_t, size_t>> crossing;  // (start in dim b, piece)
  for (size_t i : order) {
    const Piece& piece = pieces[i];
    while (!ends.empty() && ends.begin()->first <= piece.starts[a]) {
      const size_t gone = ends.begin()->second;
      crossing.erase({pieces[gone].starts[b], gone});
      ends.erase(ends.begin());
    }
    if (rank == 1) {
      if (!crossing.empty()) return std::make_pair(crossing.begin()->second, i);
    } else if (rank == 2) {
      auto next = crossing.lower_bound({piece.starts[b], 0});
      if (next != crossing.end() && meet(next->second, i)) return std::make_pair(next->second, i);
      if (next != crossing.begin() && meet(std::prev(next)->second, i)) {
        return std::make_pair(std::prev(next)->second, i);
      }
    } else {
      const int64_t end_b = piece.starts[b] + piece.lengths[b];
      for (auto it = crossing.begin(); it != crossing.end() && it->first < end_b; ++it) {
        if (meet(it->second, i)) return std::make_pair(it->second, i);
      }
    }
    ends.insert({piece.starts[a] + piece.lengths[a], i});
    crossing.insert({piece.starts[b], i});
  }
  return std::nullopt;
}

// Data files hold the host's bytes as they are, marked little-endian.
static_assert(std::endian::native == std::endian::little,
              "checkpoint data is written in the host's byte order, assumed little-endian");

// TensorFlow's bundle format version: this writer's, and the newest whose
// files this reader understands.
constexpr int kBundleVersion = 1;

// The most data files a checkpoint may have: far more than any save
// produces; bounds the files a reader opens.
constexpr int kMaxShards = 1 << 16;

// Keys of the pieces of a tensor saved in slices start with a zero byte
// (TensorFlow's encoding of the slice); they are not tensors themselves.
bool IsSliceKey(const std::string& key) { return !key.empty() && key[0] == '\0'; }

bool CanStore(DType dtype) {
  return dtype != DT_RESOURCE && dtype != DT_VARIANT && IsValidDType(dtype);
}

// The crc32c contribution of one string length, in TensorFlow's convention:
// four little-endian bytes when the length fits, else eight.
uint32_t ExtendWithLength(uint32_t crc, uint64_t length) {
  std::string bytes;
  if (length <= std::numeric_limits<uint32_t>::max()) {
    PutFixed32(&bytes, static_cast<uint32_t>(length));
  } else {
    PutFixed64(&bytes, length);
  }
  return crc32c::Extend(crc, bytes.data(), bytes.size());
}

std::string DescribeTensor(const std::string& name, DType dtype, const TensorShape& shape) {
  return StrCat("tensor '", name, "' (", dtype, " ", shape, ")");
}

}  // namespace

std::string BundleIndexFilename(const std::string& prefix) { return prefix + ".index"; }

std::string BundleDataFilename(const std::string& prefix, int shard, int num_shards) {
  char suffix[40];
  std::snprintf(suffix, sizeof(suffix), ".data-%05d-of-%05d", shard, num_shards);
  return prefix + suffix;
}

// ---------------------------------------------------------------- writer

BundleWriter::BundleWriter(std::string prefix) : prefix_(std::move(prefix)) {
  if (prefix_.empty()) {
    status_ = errors::InvalidArgument("a checkpoint prefix cannot be empty");
    return;
  }
  const size_t slash = prefix_.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    status_ = RecursivelyCreateDir(prefix_.substr(0, slash));
  }
  if (status_.ok()) {
    StatusOr<std::unique_ptr<WritableFile>> file =
        WritableFile::CreateTemp(BundleDataFilename(prefix_, 0, 1));
    if (file.ok()) {
      data_file_ = std::move(file).value();
    } else {
      status_ = file.status();
    }
  }
  if (!status_.ok()) status_ = status_.WithContext(StrCat("writing checkpoint '", prefix_, "'"));
}

BundleWriter::~BundleWriter() {
  if (!finished_ || !status_.ok()) RemoveTemporaryFiles();
}

Status BundleWriter::CheckAddable(const std::string& name, const Tensor& tensor) {
  if (!status_.ok()) return status_;
  if (finished_) {
    return errors::FailedPrecondition("checkpoint '", prefix_, "': Add of tensor '", name,
                                      "' after Finish");
  }
  const std::string where = StrCat("checkpoint '", prefix_, "': ");
  if (name.empty()) {
    status_ = errors::InvalidArgument(where, "a tensor name cannot be empty (the empty key "
                                      "holds the checkpoint's header)");
  } else if (!tensor.IsInitialized()) {
    status_ = errors::InvalidArgument(where, "tensor '", name, "' has no value");
  } else if (!CanStore(tensor.dtype())) {
    status_ = errors::InvalidArgument(where, DescribeTensor(name, tensor.dtype(), tensor.shape()),
                                      " cannot be saved: a checkpoint holds no ",
                                      tensor.dtype(), " values");
  }
  return status_;
}

Status BundleWriter::Add(const std::string& name, const Tensor& tensor) {
  WEIR_RETURN_IF_ERROR(CheckAddable(name, tensor));
  if (entries_.count(name) || sliced_.count(name)) {
    status_ = errors::InvalidArgument("checkpoint '", prefix_, "': tensor '", name,
                                      "' is added twice");
    return status_;
  }
  StatusOr<std::string> entry = AppendData(tensor);
  if (!entry.ok()) return status_ = entry.status();
  entries_[name] = std::move(entry).value();
  return Status::OK();
}

Status BundleWriter::AddSlice(const std::string& name, const ShapeAndSlice& slice,
                              const Tensor& piece) {
  WEIR_RETURN_IF_ERROR(CheckAddable(name, piece));
  const std::string where = StrCat("checkpoint '", prefix_, "': tensor '", name, "' ");
  auto fail = [&](const auto&... why) { return status_ = errors::InvalidArgument(where, why...); };
  if (piece.shape() != slice.slice_shape()) {
    return fail("gets a slice of shape ", slice.slice_shape(), " from a tensor of shape ",
                piece.shape());
  }
  if (entries_.count(name)) return fail("was added whole, so it cannot get slices");
  for (size_t d = 0; d < slice.starts.size(); ++d) {
    if (slice.starts[d] >= kMaxSliceExtent || slice.lengths[d] >= kMaxSliceExtent) {
      return fail("gets a slice with an extent past 2^55 in dim ", d,
                  ", more than a checkpoint key encodes");
    }
  }
  auto [it, added] = sliced_.try_emplace(name, SlicedTensor{piece.dtype(), slice.full_shape, {}, {}});
  SlicedTensor& sliced = it->second;
  if (sliced.dtype != piece.dtype() || sliced.full_shape != slice.full_shape) {
    return fail("has slices of ", sliced.dtype, " ", sliced.full_shape, "; this one is ",
                piece.dtype(), " ", slice.full_shape);
  }
  // The first slices are checked here, so that the usual mistake fails at
  // once; a tensor of more slices is checked as a whole, in O(n log n), by
  // Finish.
  for (size_t k = 0; k < sliced.starts.size() && k < kEagerOverlapChecks; ++k) {
    if (FindOverlap({sliced.starts[k], slice.starts}, {sliced.lengths[k], slice.lengths},
                    static_cast<int>(slice.starts.size()))) {
      return fail("gets overlapping slices (", SliceText(sliced.starts[k], sliced.lengths[k]),
                  " and ", SliceText(slice.starts, slice.lengths), ")");
    }
  }
  StatusOr<std::string> entry = AppendData(piece);
  if (!entry.ok()) return status_ = entry.status();
  // Whole extents are written as explicit lengths, as TensorFlow's
  // partitioned variables are: the key and the listed slice agree either way.
  entries_[TensorSliceKey(name, slice.starts, slice.lengths)] = std::move(entry).value();
  sliced.starts.push_back(slice.starts);
  sliced.lengths.push_back(slice.lengths);
  return Status::OK();
}

StatusOr<std::string> BundleWriter::AppendData(const Tensor& tensor) {
  uint32_t crc = 0;
  uint64_t size = 0;
  Status appended;
  if (tensor.dtype() == DT_STRING) {
    std::string lengths;
    for (const std::string& s : tensor.flat<std::string>()) {
      PutVarint64(&lengths, s.size());
      crc = ExtendWithLength(crc, s.size());
    }
    std::string length_crc;
    PutFixed32(&length_crc, crc32c::Mask(crc));
    crc = crc32c::Extend(crc, length_crc.data(), length_crc.size());
    appended.Update(data_file_->Append(lengths));
    appended.Update(data_file_->Append(length_crc));
    size = lengths.size() + length_crc.size();
    for (const std::string& s : tensor.flat<std::string>()) {
      if (!appended.ok()) break;
      appended.Update(data_file_->Append(s));
      crc = crc32c::Extend(crc, s.data(), s.size());
      size += s.size();
    }
  } else {
    const char* data = static_cast<const char*>(tensor.raw_data());
    size = tensor.TotalBytes();
    crc = crc32c::Value(data, size);
    appended = data_file_->Append(std::string_view(data, size));
  }
  WEIR_RETURN_IF_ERROR(appended);

  wire::BundleEntryProto entry;
  entry.set_dtype(static_cast<wire::DataType>(tensor.dtype()));
  ShapeToProto(PartialShape(tensor.shape()), entry.mutable_shape());
  entry.set_shard_id(0);
  entry.set_offset(static_cast<int64_t>(data_size_));
  entry.set_size(static_cast<int64_t>(size));
  entry.set_crc32c(crc32c::Mask(crc));
  data_size_ += size;
  return entry.SerializeAsString();
}

Status BundleWriter::Finish() {
  if (finished_) {
    return errors::FailedPrecondition("checkpoint '", prefix_, "': Finish called twice");
  }
  finished_ = true;
  if (status_.ok()) status_ = WriteAndRename();
  if (!status_.ok()) RemoveTemporaryFiles();
  return status_;
}

Status BundleWriter::WriteAndRename() {
  WEIR_RETURN_IF_ERROR(data_file_->Close());

  SSTableBuilder builder;
  wire::BundleHeaderProto header;
  header.set_num_shards(1);
  header.set_endianness(wire::BundleHeaderProto::LITTLE);
  header.mutable_version()->set_producer(kBundleVersion);
  header.mutable_version()->set_min_consumer(0);
  builder.Add("", header.SerializeAsString());
  // A sliced tensor's entry: dtype, full shape and its slices, no bytes.
  for (const auto& [name, sliced] : sliced_) {
    if (sliced.starts.size() > kEagerOverlapChecks) {
      auto pair = FindOverlap(sliced.starts, sliced.lengths, sliced.full_shape.dims());
      if (pair) {
        return errors::InvalidArgument(
            "checkpoint '", prefix_, "': tensor '", name, "' gets overlapping slices (",
            SliceText(sliced.starts[pair->first], sliced.lengths[pair->first]), " and ",
            SliceText(sliced.starts[pair->second], sliced.lengths[pair->second]), ")");
      }
    }
    wire::BundleEntryProto entry;
    entry.set_dtype(static_cast<wire::DataType>(sliced.dtype));
    ShapeToProto(PartialShape(sliced.full_shape), entry.mutable_shape());
    for (size_t k = 0; k < sliced.starts.size(); ++k) {
      wire::TensorSliceProto* slice = entry.add_slices();
      for (size_t d = 0; d < sliced.starts[k].size(); ++d) {
        wire::TensorSliceProto::Extent* extent = slice->add_extent();
        extent->set_start(sliced.starts[k][d]);
        extent->set_length(sliced.lengths[k][d]);
      }
    }
    entries_[name] = entry.SerializeAsString();
  }
  for (const auto& [name, entry] : entries_) builder.Add(name, entry);

  const std::string index_path = BundleIndexFilename(prefix_);
  WEIR_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> index_file,
                        WritableFile::CreateTemp(index_path));
  index_temp_path_ = index_file->path();
  WEIR_RETURN_IF_ERROR(index_file->Append(builder.Finish()));
  WEIR_RETURN_IF_ERROR(index_file->Close());

  // Data first, made durable before the index names it: after a crash at
  // any point, an index never refers to data that is not on disk.
  const std::string data_path = BundleDataFilename(prefix_, 0, 1);
  WEIR_RETURN_IF_ERROR(RenameFile(data_file_->path(), data_path));
  WEIR_RETURN_IF_ERROR(SyncParentDirectory(data_path));
  WEIR_RETURN_IF_ERROR(RenameFile(index_temp_path_, index_path));
  index_temp_path_.clear();
  return SyncParentDirectory(index_path);
}

void BundleWriter::RemoveTemporaryFiles() {
  // Each may already be gone (renamed into place, or never created).
  if (data_file_ != nullptr) (void)DeleteFile(data_file_->path());
  if (!index_temp_path_.empty()) (void)DeleteFile(index_temp_path_);
  index_temp_path_.clear();
}

// ---------------------------------------------------------------- reader

BundleReader::~BundleReader() = default;

StatusOr<std::unique_ptr<BundleReader>> BundleReader::Open(const std::string& prefix) {
  std::unique_ptr<BundleReader> reader(new BundleReader());
  reader->prefix_ = prefix;
  WEIR_RETURN_IF_ERROR(reader->ReadEntries(BundleIndexFilename(prefix)));
  return reader;
}

Status BundleReader::ReadEntries(const std::string& index_path) {
  StatusOr<SSTable> table = SSTable::Open(index_path);
  if (errors::IsNotFound(table.status())) {
    return errors::NotFound("no checkpoint at prefix '", prefix_, "': ",
                            table.status().message());
  }
  WEIR_RETURN_IF_ERROR(table.status());
  auto corrupt = [&](const auto&... args) {
    return errors::DataLoss("corrupt checkpoint index '", index_path, "': ", args...);
  };

  const std::string* header_bytes = table->Find("");
  wire::BundleHeaderProto header;
  if (header_bytes == nullptr) return corrupt("it has no header entry");
  if (!header.ParseFromString(*header_bytes)) return corrupt("the header does not parse");
  if (header.endianness() != wire::BundleHeaderProto::LITTLE) {
    return errors::Unimplemented("checkpoint '", prefix_,
                                 "' holds big-endian data, which Weir does not read");
  }
  const wire::VersionDef& version = header.version();
  bool refused = version.min_consumer() > kBundleVersion;
  for (int bad : version.bad_consumers()) refused |= bad == kBundleVersion;
  if (refused) {
    return errors::Unimplemented("checkpoint '", prefix_, "' has format version ",
                                 version.producer(), " and needs a reader of version ",
                                 version.min_consumer(), " or later; Weir reads version ",
                                 kBundleVersion);
  }
  const int num_shards = header.num_shards();
  if (num_shards < 1 || num_shards > kMaxShards) {
    return corrupt("the header says ", num_shards, " data files");
  }

  // Every entry, a tensor's or a slice piece's, says where its bytes are
  // unless it is a sliced tensor's (whose pieces do).
  auto parse = [&](const std::string& key, const std::string& value, Entry* entry,
                   wire::BundleEntryProto* proto) -> Status {
    if (!proto->ParseFromString(value)) return corrupt("the entry of tensor '", key, "' does not parse");
    entry->wire_dtype = proto->dtype();
    PartialShape partial;
    Status shape_status = ShapeFromProto(proto->shape(), &partial);
    if (!shape_status.ok() || !partial.IsFullyDefined()) {
      return corrupt("tensor '", key, "' has an invalid shape");
    }
    StatusOr<TensorShape> shape = TensorShape::FromDims(partial.dim_sizes());
    if (!shape.ok()) return corrupt("tensor '", key, "': ", shape.status().message());
    entry->shape = *shape;
    entry->sliced = proto->slices_size() > 0;
    if (!entry->sliced) {
      if (proto->shard_id() < 0 || proto->shard_id() >= num_shards || proto->offset() < 0 ||
          proto->size() < 0) {
        return corrupt("tensor '", key, "' has shard ", proto->shard_id(), ", offset ",
                       proto->offset(), " and size ", proto->size(), " (", num_shards,
                       " data files)");
      }
      entry->shard = proto->shard_id();
      entry->offset = static_cast<uint64_t>(proto->offset());
      entry->size = static_cast<uint64_t>(proto->size());
      entry->masked_crc32c = proto->crc32c();
    }
    return Status::OK();
  };
  std::vector<std::pair<std::string, wire::BundleEntryProto>> sliced;
  for (const auto& [key, value] : table->entries()) {
    if (key.empty()) continue;
    Entry entry;
    wire::BundleEntryProto proto;
    WEIR_RETURN_IF_ERROR(parse(key, value, &entry, &proto));
    if (IsSliceKey(key)) {
      if (entry.sliced) return corrupt("a slice piece of a tensor is itself sliced");
      piece_entries_.emplace(key, std::move(entry));
      continue;
    }
    if (entry.sliced) sliced.emplace_back(key, std::move(proto));
    // DT_INVALID: a dtype this reader cannot load (Lookup says which).
    const bool loadable =
        IsValidDType(entry.wire_dtype) && CanStore(static_cast<DType>(entry.wire_dtype));
    const DType dtype = loadable ? static_cast<DType>(entry.wire_dtype) : DT_INVALID;
    tensors_.push_back({key, dtype, entry.shape});
    entries_.emplace(key, std::move(entry));
  }
  // A sliced tensor's pieces: boxes inside its shape, disjoint, each stored
  // under its slice key with the box's shape and the tensor's dtype.
  for (const auto& [name, proto] : sliced) {
    Entry& entry = entries_.at(name);
    const int rank = entry.shape.dims();
    for (const wire::TensorSliceProto& slice : proto.slices()) {
      if (slice.extent_size() != rank) {
        return corrupt("a slice of tensor '", name, "' has ", slice.extent_size(),
                       " extents for rank ", rank);
      }
      Piece piece;
      std::vector<int64_t> key_lengths;
      for (int d = 0; d < rank; ++d) {
        const wire::TensorSliceProto::Extent& extent = slice.extent(d);
        const int64_t dim = entry.shape.dim_size(d);
        const bool whole = extent.has_length_case() == wire::TensorSliceProto::Extent::HAS_LENGTH_NOT_SET;
        const int64_t length = whole ? dim - extent.start() : extent.length();
        if (extent.start() < 0 || extent.start() > dim || length < 0 ||
            length > dim - extent.start()) {
          return corrupt("a slice of tensor '", name, "' leaves dim ", d, " of size ", dim);
        }
        if (extent.start() >= kMaxSliceExtent || length >= kMaxSliceExtent) {
          return corrupt("a slice of tensor '", name, "' has an extent past 2^55 in dim ", d);
        }
        piece.starts.push_back(extent.start());
        piece.lengths.push_back(length);
        key_lengths.push_back(whole ? -1 : length);
      }
      piece.key = TensorSliceKey(name, piece.starts, key_lengths);
      auto stored = piece_entries_.find(piece.key);
      if (stored == piece_entries_.end()) {
        return corrupt("tensor '", name, "' lists a slice whose bytes are not in the index");
      }
      if (stored->second.wire_dtype != entry.wire_dtype ||
          !std::ranges::equal(stored->second.shape.dim_sizes(), piece.lengths)) {
        return corrupt("a slice of tensor '", name, "' is stored with another dtype or shape");
      }
      entry.pieces.push_back(std::move(piece));
    }
    std::vector<std::vector<int64_t>> starts, lengths;
    for (const Piece& piece : entry.pieces) {
      starts.push_back(piece.starts);
      lengths.push_back(piece.lengths);
    }
    if (auto pair = FindOverlap(starts, lengths, rank)) {
      return corrupt("two slices of tensor '", name, "' overlap (",
                     SliceText(starts[pair->first], lengths[pair->first]), " and ",
                     SliceText(starts[pair->second], lengths[pair->second]), ")");
    }
  }

  for (int shard = 0; shard < num_shards; ++shard) {
    const std::string path = BundleDataFilename(prefix_, shard, num_shards);
    StatusOr<std::unique_ptr<RandomAccessFile>> file = RandomAccessFile::Open(path);
    if (errors::IsNotFound(file.status())) {
      return errors::DataLoss("checkpoint '", prefix_, "' is missing its data file '", path,
                              "'");
    }
    WEIR_RETURN_IF_ERROR(file.status());
    data_files_.push_back(std::move(file).value());
  }
  for (const auto* entries : {&entries_, &piece_entries_}) {
    for (const auto& [name, entry] : *entries) {
      if (entry.sliced) continue;
      const RandomAccessFile& file = *data_files_[entry.shard];
      if (entry.offset > file.size() || entry.size > file.size() - entry.offset) {
        return errors::DataLoss("checkpoint data file '", file.path(), "' is truncated: it has ",
                                file.size(), " bytes but tensor '", name, "' ends at byte ",
                                entry.offset + entry.size);
      }
    }
  }
  return Status::OK();
}

const BundleTensorInfo* BundleReader::FindTensor(const std::string& name) const {
  auto it = std::lower_bound(
      tensors_.begin(), tensors_.end(), name,
      [](const BundleTensorInfo& info, const std::string& key) { return info.name < key; });
  return it != tensors_.end() && it->name == name ? &*it : nullptr;
}

StatusOr<Tensor> BundleReader::Lookup(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) {
    return errors::NotFound("tensor '", name, "' is not in checkpoint '", prefix_, "'");
  }
  const Entry& entry = it->second;
  if (entry.sliced) {
    const auto dims = entry.shape.dim_sizes();
    return Assemble(name, entry, std::vector<int64_t>(dims.size(), 0),
                    std::vector<int64_t>(dims.begin(), dims.end()));
  }
  return ReadStored(name, entry);
}

StatusOr<Tensor> BundleReader::LookupSlice(const std::string& name,
                                           const ShapeAndSlice& slice) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) {
    return errors::NotFound("tensor '", name, "' is not in checkpoint '", prefix_, "'");
  }
  const Entry& entry = it->second;
  if (slice.full_shape != entry.shape) {
    return errors::InvalidArgument("tensor '", name, "' of checkpoint '", prefix_,
                                   "' has shape ", entry.shape, ", not the requested slice's ",
                                   slice.full_shape);
  }
  if (entry.sliced) return Assemble(name, entry, slice.starts, slice.lengths);
  WEIR_ASSIGN_OR_RETURN(Tensor whole, ReadStored(name, entry));
  return ExtractSlice(whole, slice);
}

StatusOr<Tensor> BundleReader::ReadStored(const std::string& name, const Entry& entry) const {
  if (!IsValidDType(entry.wire_dtype) || !CanStore(static_cast<DType>(entry.wire_dtype))) {
    return errors::Unimplemented("tensor '", name, "' of checkpoint '", prefix_,
                                 "' has dtype ", WireDTypeName(entry.wire_dtype),
                                 ", which Weir does not support");
  }
  if (entry.wire_dtype == DT_STRING) return ReadStrings(name, entry);
  return ReadNumeric(name, entry);
}

StatusOr<Tensor> BundleReader::Assemble(const std::string& name, const Entry& entry,
                                        const std::vector<int64_t>& starts,
                                        const std::vector<int64_t>& lengths) const {
  if (!IsValidDType(entry.wire_dtype) || !CanStore(static_cast<DType>(entry.wire_dtype))) {
    return ReadStored(name, entry);  // the dtype error
  }
  const DType dtype = static_cast<DType>(entry.wire_dtype);
  WEIR_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(lengths));
  WEIR_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(DefaultCpuAllocator(), dtype, shape));
  const int rank = entry.shape.dims();
  // The pieces are disjoint (checked on Open), so the box is covered when
  // their overlaps with it add up to its size.
  int64_t covered = 0;
  for (const Piece& piece : entry.pieces) {
    std::vector<int64_t> lo(rank), box(rank);
    int64_t count = 1;
    for (int d = 0; d < rank; ++d) {
      lo[d] = std::max(starts[d], piece.starts[d]);
      int64_t hi = std::min(starts[d] + lengths[d], piece.starts[d] + piece.lengths[d]);
      box[d] = std::max<int64_t>(0, hi - lo[d]);
      count *= box[d];
    }
    if (count == 0) continue;
    const std::string what = StrCat(name, " (slice ", StrJoin(piece.starts, ","), " + ",
                                    StrJoin(piece.lengths, ","), ")");
    WEIR_ASSIGN_OR_RETURN(Tensor stored, ReadStored(what, piece_entries_.at(piece.key)));
    CopyBox(stored, piece.starts, &out, starts, lo, box);
    covered += count;
  }
  if (covered != out.NumElements()) {
    return errors::InvalidArgument(DescribeTensor(name, dtype, entry.shape),
                                   " of checkpoint '", prefix_, "' was saved in ",
                                   entry.pieces.size(), " slices that cover ", covered, " of the ",
                                   out.NumElements(), " elements asked for (from ",
                                   StrJoin(starts, ","), ", lengths ", StrJoin(lengths, ","), ")");
  }
  return out;
}

StatusOr<Tensor> BundleReader::ReadNumeric(const std::string& name, const Entry& entry) const {
  const DType dtype = static_cast<DType>(entry.wire_dtype);
  const RandomAccessFile& file = *data_files_[entry.shard];
  const std::string what = StrCat("checkpoint data file '", file.path(), "': ",
                                  DescribeTensor(name, dtype, entry.shape));
  const uint64_t element_size = DTypeSize(dtype);
  const uint64_t n = static_cast<uint64_t>(entry.shape.num_elements());
  if (n > std::numeric_limits<uint64_t>::max() / element_size ||
      n * element_size != entry.size) {
    return errors::DataLoss(what, " has ", entry.size, " bytes in the index, not ",
                            n, " elements of ", element_size, " bytes");
  }
  WEIR_ASSIGN_OR_RETURN(Tensor tensor,
                        Tensor::Allocate(DefaultCpuAllocator(), dtype, entry.shape));
  char* data = static_cast<char*>(tensor.raw_data());
  Status read = file.Read(entry.offset, entry.size, data);
  if (!read.ok()) return errors::DataLoss(what, ": ", read.message());
  const uint32_t actual = crc32c::Value(data, entry.size);
  if (actual != crc32c::Unmask(entry.masked_crc32c)) {
    return errors::DataLoss(what, ": checksum mismatch (the index says ",
                            crc32c::Unmask(entry.masked_crc32c), ", the data gives ", actual,
                            ")");
  }
  if (dtype == DT_BOOL) {
    // A bool must hold 0 or 1; other writers may use any nonzero byte.
    for (uint64_t i = 0; i < n; ++i) data[i] = data[i] != 0;
  }
  return tensor;
}

StatusOr<Tensor> BundleReader::ReadStrings(const std::string& name, const Entry& entry) const {
  const RandomAccessFile& file = *data_files_[entry.shard];
  const std::string what = StrCat("checkpoint data file '", file.path(), "': ",
                                  DescribeTensor(name, DT_STRING, entry.shape));
  const uint64_t n = static_cast<uint64_t>(entry.shape.num_elements());
  // At least one byte per length, and the length checksum.
  if (entry.size < 4 || n > entry.size - 4) {
    return errors::DataLoss(what, " cannot fit in the ", entry.size,
                            " bytes the index gives it");
  }
  std::string bytes(entry.size, '\0');
  Status read = file.Read(entry.offset, entry.size, bytes.data());
  if (!read.ok()) return errors::DataLoss(what, ": ", read.message());

  std::string_view input = bytes;
  std::vector<uint64_t> lengths(n);
  uint32_t crc = 0;
  for (uint64_t i = 0; i < n; ++i) {
    if (!GetVarint64(&input, &lengths[i])) {
      return errors::DataLoss(what, ": bad length of element ", i);
    }
    crc = ExtendWithLength(crc, lengths[i]);
  }
  uint32_t masked_length_crc;
  if (!GetFixed32(&input, &masked_length_crc)) {
    return errors::DataLoss(what, ": the lengths run past the tensor's bytes");
  }
  if (crc32c::Unmask(masked_length_crc) != crc) {
    return errors::DataLoss(what, ": checksum mismatch in the string lengths");
  }
  crc = crc32c::Extend(crc, input.data() - 4, 4);
  uint64_t total = 0;
  for (uint64_t length : lengths) {
    if (length > input.size() - total) {
      return errors::DataLoss(what, ": the string lengths exceed the tensor's bytes");
    }
    total += length;
  }
  if (total != input.size()) {
    return errors::DataLoss(what, ": ", input.size() - total,
                            " bytes left over after the strings");
  }
  crc = crc32c::Extend(crc, input.data(), input.size());
  if (crc != crc32c::Unmask(entry.masked_crc32c)) {
    return errors::DataLoss(what, ": checksum mismatch (the index says ",
                            crc32c::Unmask(entry.masked_crc32c), ", the data gives ", crc, ")");
  }
  WEIR_ASSIGN_OR_RETURN(Tensor tensor,
                        Tensor::Allocate(DefaultCpuAllocator(), DT_STRING, entry.shape));
  std::string* out = tensor.data<std::string>();
  for (uint64_t i = 0; i < n; ++i) {
    out[i].assign(input.substr(0, lengths[i]));
    input.remove_prefix(lengths[i]);
  }
  return tensor;
}

// ---------------------------------------------------------------- merge

namespace {

std::string DirName(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return "";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// One input of a merge: its prefix, header and entries as stored.
struct MergeInput {
  std::string prefix;
  int num_shards = 0;
  std::vector<std::pair<std::string, wire::BundleEntryProto>> entries;
};

// Reads and checks the checkpoint `prefix` for a merge: the reader's checks
// (header, entries, data files present and long enough), then its entries.
StatusOr<MergeInput> ReadMergeInput(const std::string& prefix) {
  WEIR_RETURN_IF_ERROR(BundleReader::Open(prefix).status());
  const std::string index_path = BundleIndexFilename(prefix);
  WEIR_ASSIGN_OR_RETURN(SSTable table, SSTable::Open(index_path));
  MergeInput input;
  input.prefix = prefix;
  for (const auto& [key, value] : table.entries()) {
    if (key.empty()) {
      wire::BundleHeaderProto header;
      if (!header.ParseFromString(value)) {
        return errors::DataLoss("corrupt checkpoint index '", index_path,
                                "': the header does not parse");
      }
      input.num_shards = header.num_shards();
      continue;
    }
    wire::BundleEntryProto entry;
    if (!entry.ParseFromString(value)) {
      return errors::DataLoss("corrupt checkpoint index '", index_path, "': the entry of '", key,
                              "' does not parse");
    }
    input.entries.emplace_back(key, std::move(entry));
  }
  return input;
}

// Moves data files into place, keeping what they replace beside it until
// the merge is done, so that a failure can put everything back.
class FileMover {
 public:
  // Moves `from` to `to`; a file already at `to` is moved aside first.
  Status Move(const std::string& from, const std::string& to) {
    std::string aside;
    if (FileExists(to)) {
      aside = to + ".replaced.tmp";
      WEIR_RETURN_IF_ERROR(RenameFile(to, aside));
    }
    Status moved = RenameFile(from, to);
    if (!moved.ok()) {
      if (!aside.empty()) (void)RenameFile(aside, to);
      return moved;
    }
    moves_.push_back({from, to, aside});
    return Status::OK();
  }
  // Moves every file back where it was, and the replaced ones back too.
  void Undo() {
    for (auto it = moves_.rbegin(); it != moves_.rend(); ++it) {
      (void)RenameFile(it->to, it->from);
      if (!it->aside.empty()) (void)RenameFile(it->aside, it->to);
    }
    moves_.clear();
  }
  // Deletes the replaced files: the moves are final.
  void Commit() {
    for (const Moved& moved : moves_) {
      if (!moved.aside.empty()) (void)DeleteFile(moved.aside);
    }
    moves_.clear();
  }

 private:
  struct Moved {
    std::string from, to, aside;
  };
  std::vector<Moved> moves_;
};

}  // namespace

Status MergeBundles(const std::vector<std::string>& prefixes, const std::string& merged_prefix,
                    bool allow_missing_files) {
  auto invalid = [&](const auto&... why) {
    return errors::InvalidArgument("merging checkpoints into '", merged_prefix, "': ", why...);
  };
  if (merged_prefix.empty()) {
    return errors::InvalidArgument("merging checkpoints: the destination prefix is empty");
  }
  if (prefixes.empty()) return invalid("no checkpoints to merge");
  std::set<std::string> seen;
  for (const std::string& prefix : prefixes) {
    if (prefix.empty()) return invalid("an input prefix is empty");
    if (prefix == merged_prefix) {
      return invalid("the destination is also an input (the merge would delete it)");
    }
    if (!seen.insert(prefix).second) return invalid("input '", prefix, "' is listed twice");
  }

  // Read and check every input before anything moves.
  std::vector<MergeInput> inputs;
  int64_t total_shards = 0;
  for (const std::string& prefix : prefixes) {
    if (!FileExists(BundleIndexFilename(prefix))) {
      if (allow_missing_files) continue;
      return errors::NotFound("merging checkpoints into '", merged_prefix, "': input '", prefix,
                              "' has no index file '", BundleIndexFilename(prefix), "'");
    }
    StatusOr<MergeInput> input = ReadMergeInput(prefix);
    if (!input.ok()) {
      return input.status().WithContext(
          StrCat("merging checkpoint '", prefix, "' into '", merged_prefix, "'"));
    }
    total_shards += input->num_shards;
    inputs.push_back(std::move(input).value());
  }
  if (inputs.empty()) {
    return errors::NotFound("merging checkpoints into '", merged_prefix, "': none of the ",
                            prefixes.size(), " inputs exists (", StrJoin(prefixes, ", "), ")");
  }
  if (total_shards > kMaxShards) {
    return invalid("the inputs have ", total_shards, " data files; a checkpoint has at most ",
                   kMaxShards);
  }
  const int num_shards = static_cast<int>(total_shards);

  // The merged entries: each input's shards follow the earlier inputs'.
  std::map<std::string, wire::BundleEntryProto> merged;
  std::map<std::string, std::string> source;  // key -> the input it came from
  std::vector<std::pair<std::string, std::string>> renames;  // data file -> merged name
  int first_shard = 0;
  for (MergeInput& input : inputs) {
    for (auto& [key, entry] : input.entries) {
      auto [it, added] = merged.try_emplace(key);
      if (!added) {
        wire::BundleEntryProto& existing = it->second;
        if (IsSliceKey(key)) {
          return invalid("one slice of a tensor is in both '", source[key], "' and '", input.prefix,
                         "'");
        }
        if (existing.slices_size() == 0 || entry.slices_size() == 0) {
          return invalid("tensor '", key, "' is in both '", source[key], "' and '", input.prefix,
                         "'");
        }
        PartialShape a, b;
        if (existing.dtype() != entry.dtype() || !ShapeFromProto(existing.shape(), &a).ok() ||
            !ShapeFromProto(entry.shape(), &b).ok() || a.dim_sizes() != b.dim_sizes()) {
          return invalid("the slices of tensor '", key, "' in '", source[key], "' (",
                         WireDTypeName(existing.dtype()), " ", a, ") and in '", input.prefix, "' (",
                         WireDTypeName(entry.dtype()), " ", b, ") disagree");
        }
        for (const wire::TensorSliceProto& slice : entry.slices()) *existing.add_slices() = slice;
        continue;
      }
      source[key] = input.prefix;
      if (entry.slices_size() == 0) entry.set_shard_id(first_shard + entry.shard_id());
      it->second = std::move(entry);
    }
    for (int shard = 0; shard < input.num_shards; ++shard) {
      renames.emplace_back(BundleDataFilename(input.prefix, shard, input.num_shards),
                           BundleDataFilename(merged_prefix, first_shard + shard, num_shards));
    }
    first_shard += input.num_shards;
  }
  // Slices joined from several inputs must not overlap (each input's own
  // were checked when it was read).
  for (const auto& [key, entry] : merged) {
    if (entry.slices_size() == 0) continue;
    std::vector<std::vector<int64_t>> starts, lengths;
    PartialShape shape;
    (void)ShapeFromProto(entry.shape(), &shape);
    for (const wire::TensorSliceProto& slice : entry.slices()) {
      std::vector<int64_t> start, length;
      for (int d = 0; d < slice.extent_size(); ++d) {
        const auto& extent = slice.extent(d);
        start.push_back(extent.start());
        const bool whole =
            extent.has_length_case() == wire::TensorSliceProto::Extent::HAS_LENGTH_NOT_SET;
        length.push_back(whole ? shape.dim(d) - extent.start() : extent.length());
      }
      starts.push_back(std::move(start));
      lengths.push_back(std::move(length));
    }
    if (auto pair = FindOverlap(starts, lengths, shape.rank())) {
      return invalid("tensor '", key, "' gets overlapping slices from the inputs (",
                     SliceText(starts[pair->first], lengths[pair->first]), " and ",
                     SliceText(starts[pair->second], lengths[pair->second]), ")");
    }
  }

  // The merged index, to a temporary file beside its final name.
  const std::string dir = DirName(merged_prefix);
  if (!dir.empty()) WEIR_RETURN_IF_ERROR(RecursivelyCreateDir(dir));
  SSTableBuilder builder;
  wire::BundleHeaderProto header;
  header.set_num_shards(num_shards);
  header.set_endianness(wire::BundleHeaderProto::LITTLE);
  header.mutable_version()->set_producer(kBundleVersion);
  header.mutable_version()->set_min_consumer(0);
  builder.Add("", header.SerializeAsString());
  for (const auto& [key, entry] : merged) builder.Add(key, entry.SerializeAsString());
  const std::string index_path = BundleIndexFilename(merged_prefix);
  WEIR_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> index_file,
                        WritableFile::CreateTemp(index_path));
  const std::string index_temp = index_file->path();
  Status written = index_file->Append(builder.Finish());
  written.Update(index_file->Close());
  if (!written.ok()) {
    (void)DeleteFile(index_temp);
    return written.WithContext(StrCat("merging checkpoints into '", merged_prefix, "'"));
  }

  // Data files first, made durable before the index names them; the index
  // last, so a crash never leaves an index without its data.
  FileMover mover;
  Status moved;
  for (const auto& [from, to] : renames) {
    moved = mover.Move(from, to);
    if (!moved.ok()) break;
  }
  if (moved.ok()) moved = SyncParentDirectory(index_path);
  if (moved.ok()) moved = RenameFile(index_temp, index_path);
  if (!moved.ok()) {
    mover.Undo();
    (void)DeleteFile(index_temp);
    return moved.WithContext(StrCat("merging checkpoints into '", merged_prefix, "'"));
  }
  mover.Commit();
  WEIR_RETURN_IF_ERROR(SyncParentDirectory(index_path));
  // The inputs are now part of the merged checkpoint; their indexes go.
  for (const MergeInput& input : inputs) (void)DeleteFile(BundleIndexFilename(input.prefix));
  return Status::OK();
}

}  // namespace weir
