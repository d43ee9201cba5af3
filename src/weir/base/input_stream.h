// InputStream: a file read front to back through one buffer, decompressed
// on the way when it is one zlib or gzip stream. Positions count bytes of
// the uncompressed stream. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "weir/base/file_system.h"
#include "weir/base/status.h"
#include "weir/base/zlib_stream.h"

namespace weir {

class InputStream {
 public:
  static constexpr size_t kDefaultBufferBytes = 256 * 1024;

  static StatusOr<std::unique_ptr<InputStream>> Open(
      const std::string& path, RecordCompression compression = RecordCompression::kNone,
      size_t buffer_bytes = kDefaultBufferBytes);
  ~InputStream();

  // Reads up to `n` bytes into `out`; fewer only at the end of the stream.
  // Reads of a buffer's size or more bypass the buffer.
  StatusOr<size_t> Read(char* out, size_t n);
  // Appends up to `n` bytes to `out`, growing it as bytes arrive, so an `n`
  // from a corrupt file allocates no more than the stream holds.
  StatusOr<size_t> ReadAppend(size_t n, std::string* out);
  // Skips up to `n` bytes; fewer only at the end of the stream.
  StatusOr<uint64_t> Skip(uint64_t n);
  // The bytes buffered at position(), possibly none (nothing is read), for
  // parsing in place; Skip() then consumes them.
  std::string_view Peek() const {
    return std::string_view(buffer_.get() + start_, limit_ - start_);
  }
  // The next line, without its '\n' nor a '\r' before it; the last line
  // needs no '\n'. OutOfRange at the end of the stream.
  Status ReadLine(std::string* line);

  uint64_t position() const { return position_; }
  // Bytes from position() to the end of the file, when it is uncompressed
  // (its size is then the stream's); nullopt for a compressed stream.
  std::optional<uint64_t> remaining() const;
  const std::string& path() const { return path_; }

 private:
  InputStream(std::string path, std::unique_ptr<SequentialFile> file,
              std::unique_ptr<ZlibDecompressor> decompressor, size_t buffer_bytes);
  // Reads from the file or decompressor, bypassing the buffer.
  StatusOr<size_t> ReadSource(char* out, size_t n);
  // Refills an empty buffer; leaves it empty at the end of the stream.
  Status Fill();
  size_t buffered() const { return limit_ - start_; }

  const std::string path_;
  std::unique_ptr<SequentialFile> file_;               // when uncompressed
  std::unique_ptr<ZlibDecompressor> decompressor_;     // when compressed
  std::unique_ptr<char[]> buffer_;
  const size_t buffer_bytes_;
  size_t start_ = 0;  // buffer_[start_, limit_) is unread
  size_t limit_ = 0;
  uint64_t position_ = 0;
  uint64_t file_size_ = 0;
};

}  // namespace weir
