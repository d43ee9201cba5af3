// SSTable: an immutable sorted map of byte strings in LevelDB's table file
// format, the format of TensorFlow's checkpoint index (tensor_bundle.h).
//
// A file is a sequence of blocks, then a 48-byte footer:
//   data block*   sorted entries, cut at about `block_size` bytes
//   metaindex     an empty block (no filters or statistics are written)
//   index         one entry per data block: a key >= every key of that block
//                 and < every key of the next, mapping to the block's handle
//   footer        metaindex handle, index handle (each a varint64 offset and
//                 a varint64 size), zero padding to 40 bytes, then the 8-byte
//                 magic number 0xdb4775248b80fb57, little-endian
// Each block is followed by a 5-byte trailer: a compression type byte (0:
// none; the only kind written or read) and the masked CRC-32C of the block's
// bytes and that type byte.
//
// Inside a block each entry is varint32 shared-prefix length, varint32
// non-shared length, varint32 value length, the key bytes not shared with
// the previous key, then the value. Every `restart_interval` entries the key
// is stored whole (a restart point); the block ends with the fixed32 offsets
// of its restart points and their fixed32 count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "weir/base/status.h"

namespace weir {

struct SSTableOptions {
  // A data block is closed once its contents reach this many bytes.
  // TensorFlow uses the same size for checkpoint indexes.
  size_t block_size = 256 * 1024;
  // Keys stored whole every this many entries of a data block (the index
  // block stores every key whole).
  int restart_interval = 16;
};

// Builds a table in memory; indexes are small next to the data they describe.
class SSTableBuilder {
 public:
  explicit SSTableBuilder(SSTableOptions options = {});
  ~SSTableBuilder();
  SSTableBuilder(const SSTableBuilder&) = delete;
  SSTableBuilder& operator=(const SSTableBuilder&) = delete;

  // REQUIRES: `key` sorts bytewise after every key added before, and
  // Finish() has not been called.
  void Add(std::string_view key, std::string_view value);

  // Writes the last data block, the metaindex and index blocks and the
  // footer, and returns the whole file. Call once.
  std::string Finish();

  int64_t num_entries() const { return num_entries_; }

 private:
  class BlockBuilder;
  void FlushDataBlock();
  // Appends `contents` and its trailer; returns the encoded block handle.
  std::string WriteBlock(std::string_view contents);

  SSTableOptions options_;
  std::string file_;
  std::unique_ptr<BlockBuilder> data_block_;
  std::unique_ptr<BlockBuilder> index_block_;
  std::string last_key_;
  int64_t num_entries_ = 0;
  bool finished_ = false;
};

// A whole table read into memory and verified: the footer and its magic
// number, every block's checksum and bounds, the entries' encoding and their
// strictly increasing order, and the index keys against the blocks.
class SSTable {
 public:
  using Entry = std::pair<std::string, std::string>;

  // Parses the bytes of a table. `file_name` names it in errors: DataLoss
  // "corrupt table '<file_name>': <what is wrong>" on any damage or
  // truncation; Unimplemented for compressed blocks.
  static StatusOr<SSTable> Parse(std::string_view contents, const std::string& file_name);
  // Reads the file at `path` and parses it.
  static StatusOr<SSTable> Open(const std::string& path);

  // The value of `key`, or null when the table does not hold it.
  const std::string* Find(std::string_view key) const;
  // All entries, sorted by key.
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  std::vector<Entry> entries_;
};

}  // namespace weir
