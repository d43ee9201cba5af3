#include "weir/framework/sstable.h"

#include <algorithm>

#include "weir/base/coding.h"
#include "weir/base/crc32c.h"
#include "weir/base/file_system.h"
#include "weir/base/logging.h"

namespace weir {
namespace {

constexpr uint64_t kMagic = 0xdb4775248b80fb57ull;
constexpr size_t kMaxHandleSize = 20;  // two varint64s
constexpr size_t kFooterSize = 2 * kMaxHandleSize + 8;
constexpr size_t kTrailerSize = 5;     // type byte + masked crc
constexpr char kNoCompression = 0;
constexpr char kSnappyCompression = 1;

struct BlockHandle {
  uint64_t offset = 0;
  uint64_t size = 0;
};

void PutHandle(std::string* out, const BlockHandle& handle) {
  PutVarint64(out, handle.offset);
  PutVarint64(out, handle.size);
}

bool GetHandle(std::string_view* input, BlockHandle* handle) {
  return GetVarint64(input, &handle->offset) && GetVarint64(input, &handle->size);
}

size_t SharedPrefixLength(std::string_view a, std::string_view b) {
  size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

}  // namespace

// Accumulates the entries of one block with prefix-compressed keys.
class SSTableBuilder::BlockBuilder {
 public:
  explicit BlockBuilder(int restart_interval) : restart_interval_(restart_interval) {
    CHECK(restart_interval >= 1) << "restart_interval must be >= 1";
  }

  bool empty() const { return num_entries_ == 0; }
  size_t SizeEstimate() const { return buffer_.size() + 4 * (restarts_.size() + 1); }

  void Add(std::string_view key, std::string_view value) {
    size_t shared = 0;
    if (num_entries_ % restart_interval_ == 0) {
      restarts_.push_back(static_cast<uint32_t>(buffer_.size()));
    } else {
      shared = SharedPrefixLength(last_key_, key);
    }
    PutVarint32(&buffer_, static_cast<uint32_t>(shared));
    PutVarint32(&buffer_, static_cast<uint32_t>(key.size() - shared));
    PutVarint32(&buffer_, static_cast<uint32_t>(value.size()));
    buffer_.append(key.substr(shared));
    buffer_.append(value);
    last_key_.assign(key);
    ++num_entries_;
  }

  // The block's bytes; the builder is then empty again.
  std::string Finish() {
    if (restarts_.empty()) restarts_.push_back(0);  // an empty block
    for (uint32_t restart : restarts_) PutFixed32(&buffer_, restart);
    PutFixed32(&buffer_, static_cast<uint32_t>(restarts_.size()));
    std::string block = std::move(buffer_);
    buffer_.clear();
    restarts_.clear();
    last_key_.clear();
    num_entries_ = 0;
    return block;
  }

 private:
  const int restart_interval_;
  std::string buffer_;
  std::vector<uint32_t> restarts_;
  std::string last_key_;
  int64_t num_entries_ = 0;
};

SSTableBuilder::SSTableBuilder(SSTableOptions options)
    : options_(options),
      data_block_(std::make_unique<BlockBuilder>(options.restart_interval)),
      index_block_(std::make_unique<BlockBuilder>(1)) {}

SSTableBuilder::~SSTableBuilder() = default;

void SSTableBuilder::Add(std::string_view key, std::string_view value) {
  CHECK(!finished_) << "SSTableBuilder::Add after Finish";
  CHECK(num_entries_ == 0 || key > std::string_view(last_key_))
      << "SSTableBuilder keys must be added in increasing order";
  data_block_->Add(key, value);
  last_key_.assign(key);
  ++num_entries_;
  if (data_block_->SizeEstimate() >= options_.block_size) FlushDataBlock();
}

void SSTableBuilder::FlushDataBlock() {
  if (data_block_->empty()) return;
  std::string handle = WriteBlock(data_block_->Finish());
  // The block's own last key separates it from the next block: it is >=
  // every key in this block and < every key after it.
  index_block_->Add(last_key_, handle);
}

std::string SSTableBuilder::WriteBlock(std::string_view contents) {
  BlockHandle handle{file_.size(), contents.size()};
  file_.append(contents);
  file_.push_back(kNoCompression);
  uint32_t crc = crc32c::Extend(crc32c::Value(contents), &kNoCompression, 1);
  PutFixed32(&file_, crc32c::Mask(crc));
  std::string encoded;
  PutHandle(&encoded, handle);
  return encoded;
}

std::string SSTableBuilder::Finish() {
  CHECK(!finished_) << "SSTableBuilder::Finish called twice";
  finished_ = true;
  FlushDataBlock();
  std::string metaindex_handle = WriteBlock(BlockBuilder(1).Finish());
  std::string index_handle = WriteBlock(index_block_->Finish());
  std::string footer = metaindex_handle + index_handle;
  footer.resize(2 * kMaxHandleSize, '\0');
  PutFixed64(&footer, kMagic);
  file_.append(footer);
  return std::move(file_);
}

namespace {

// Reads one table's bytes; every failure names the file.
class TableParser {
 public:
  TableParser(std::string_view contents, const std::string& file_name)
      : contents_(contents), file_name_(file_name) {}

  Status Parse(std::vector<SSTable::Entry>* entries) {
    if (contents_.size() < kFooterSize) {
      return Corrupt("the file has ", contents_.size(), " bytes, fewer than the ",
                     kFooterSize, "-byte footer");
    }
    std::string_view footer = contents_.substr(contents_.size() - kFooterSize);
    const uint64_t magic = DecodeFixed64(footer.data() + 2 * kMaxHandleSize);
    if (magic != kMagic) return Corrupt("bad magic number in the footer");
    BlockHandle metaindex, index;
    if (!GetHandle(&footer, &metaindex) || !GetHandle(&footer, &index)) {
      return Corrupt("bad block handles in the footer");
    }
    std::vector<SSTable::Entry> index_entries;
    std::string_view block;
    WEIR_RETURN_IF_ERROR(ReadBlock(metaindex, "metaindex block", &block));
    WEIR_RETURN_IF_ERROR(ParseBlock(block, "metaindex block", &index_entries));
    WEIR_RETURN_IF_ERROR(ReadBlock(index, "index block", &block));
    index_entries.clear();
    WEIR_RETURN_IF_ERROR(ParseBlock(block, "index block", &index_entries));

    for (size_t i = 0; i < index_entries.size(); ++i) {
      const auto& [separator, encoded_handle] = index_entries[i];
      std::string_view rest = encoded_handle;
      BlockHandle handle;
      if (!GetHandle(&rest, &handle) || !rest.empty()) {
        return Corrupt("bad block handle in index entry ", i);
      }
      const std::string what = StrCat("data block ", i, " (offset ", handle.offset, ")");
      WEIR_RETURN_IF_ERROR(ReadBlock(handle, what, &block));
      const size_t first = entries->size();
      WEIR_RETURN_IF_ERROR(ParseBlock(block, what, entries));
      if (entries->size() == first) return Corrupt(what, " is empty");
      if (first > 0 && (*entries)[first - 1].first >= (*entries)[first].first) {
        return Corrupt("keys out of order between data blocks ", i - 1, " and ", i);
      }
      if (entries->back().first > separator) {
        return Corrupt("index key ", i, " sorts before the last key of ", what);
      }
    }
    return Status::OK();
  }

 private:
  template <typename... Args>
  Status Corrupt(const Args&... args) const {
    return errors::DataLoss("corrupt table '", file_name_, "': ", args...);
  }

  // The verified contents of the block at `handle`, without the trailer.
  Status ReadBlock(const BlockHandle& handle, const std::string& what, std::string_view* out) {
    const uint64_t limit = contents_.size() - kFooterSize;
    if (handle.offset > limit || handle.size > limit - handle.offset ||
        kTrailerSize > limit - handle.offset - handle.size) {
      return Corrupt(what, " at offset ", handle.offset, " with ", handle.size,
                     " bytes runs past the end of the blocks (byte ", limit, ")");
    }
    const char* data = contents_.data() + handle.offset;
    const uint32_t stored = crc32c::Unmask(DecodeFixed32(data + handle.size + 1));
    const uint32_t actual = crc32c::Value(data, handle.size + 1);
    if (stored != actual) return Corrupt("checksum mismatch in ", what);
    const char type = data[handle.size];
    if (type == kSnappyCompression) {
      return errors::Unimplemented("table '", file_name_, "': ", what,
                                   " is snappy-compressed, which Weir does not read");
    }
    if (type != kNoCompression) {
      return Corrupt(what, " has unknown compression type ", static_cast<int>(type));
    }
    *out = std::string_view(data, handle.size);
    return Status::OK();
  }

  // Appends the block's entries, checking that keys strictly increase.
  Status ParseBlock(std::string_view block, const std::string& what,
                    std::vector<SSTable::Entry>* entries) {
    uint32_t num_restarts;
    std::string_view tail = block.size() >= 4 ? block.substr(block.size() - 4) : block;
    if (!GetFixed32(&tail, &num_restarts)) return Corrupt(what, " is too short");
    if (num_restarts == 0 || num_restarts > (block.size() - 4) / 4) {
      return Corrupt(what, " has a bad restart count ", num_restarts);
    }
    const size_t restarts_offset = block.size() - 4 - 4 * size_t{num_restarts};
    for (uint32_t r = 0; r < num_restarts; ++r) {
      uint32_t restart = DecodeFixed32(block.data() + restarts_offset + 4 * r);
      if (restart > restarts_offset) return Corrupt(what, " has a bad restart point");
    }
    std::string_view input = block.substr(0, restarts_offset);
    std::string key;
    const size_t block_first = entries->size();
    while (!input.empty()) {
      uint32_t shared, non_shared, value_size;
      if (!GetVarint32(&input, &shared) || !GetVarint32(&input, &non_shared) ||
          !GetVarint32(&input, &value_size) || shared > key.size() ||
          input.size() < uint64_t{non_shared} + value_size) {
        return Corrupt("bad entry ", entries->size(), " in ", what);
      }
      key.resize(shared);
      key.append(input.substr(0, non_shared));
      if (entries->size() > block_first && key <= entries->back().first) {
        return Corrupt("keys out of order in ", what);
      }
      entries->emplace_back(key, std::string(input.substr(non_shared, value_size)));
      input.remove_prefix(non_shared + value_size);
    }
    return Status::OK();
  }

  std::string_view contents_;
  const std::string& file_name_;
};

}  // namespace

StatusOr<SSTable> SSTable::Parse(std::string_view contents, const std::string& file_name) {
  SSTable table;
  WEIR_RETURN_IF_ERROR(TableParser(contents, file_name).Parse(&table.entries_));
  return table;
}

StatusOr<SSTable> SSTable::Open(const std::string& path) {
  WEIR_ASSIGN_OR_RETURN(std::string contents, ReadFileToString(path));
  return Parse(contents, path);
}

const std::string* SSTable::Find(std::string_view key) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), key,
                             [](const Entry& e, std::string_view k) { return e.first < k; });
  return it != entries_.end() && it->first == key ? &it->second : nullptr;
}

}  // namespace weir
