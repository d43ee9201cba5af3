// RecordReader: reads a TFRecord file, record by record. Each record is
//   uint64 length, uint32 masked crc32c(length), data[length],
//   uint32 masked crc32c(data)
// (little-endian; base/crc32c.h for the mask), the whole file optionally one
// zlib or gzip stream. Reads go through one 256 KiB buffer; every crc is
// checked. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "weir/base/input_stream.h"
#include "weir/base/status.h"
#include "weir/base/zlib_stream.h"

namespace weir {

// The bytes of a record's framing: header (length and its crc), footer.
inline constexpr size_t kRecordHeaderBytes = 12;
inline constexpr size_t kRecordFooterBytes = 4;

class RecordReader {
 public:
  static StatusOr<std::unique_ptr<RecordReader>> Open(
      const std::string& path, RecordCompression compression = RecordCompression::kNone);

  // The next record. OutOfRange at a clean end of file; DataLoss naming the
  // file and the byte offset of the record when it is corrupt or truncated
  // (and for every later call: a reader does not resynchronize). A length
  // is trusted only after its crc is checked, and only as far as the file's
  // remaining bytes (uncompressed) or the bytes actually read (compressed).
  Status ReadRecord(std::string* record);

  // Where the next record starts (in the uncompressed stream).
  uint64_t offset() const { return offset_; }
  const std::string& path() const { return stream_->path(); }

 private:
  explicit RecordReader(std::unique_ptr<InputStream> stream) : stream_(std::move(stream)) {}
  Status ReadRecordAt(std::string* record);

  std::unique_ptr<InputStream> stream_;
  uint64_t offset_ = 0;
  Status error_;  // sticky: the first DataLoss or read error
};

}  // namespace weir
