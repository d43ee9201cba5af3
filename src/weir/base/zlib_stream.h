// The compression of TFRecord files (TensorFlow's compression_type): none,
// or the whole file one zlib or gzip stream (deflate with windowBits 15, or
// 15 + 16 for the gzip wrapper, as TensorFlow's ZlibOutputBuffer writes).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "weir/base/file_system.h"
#include "weir/base/status.h"

namespace weir {

enum class RecordCompression { kNone, kZlib, kGzip };

// "" / "ZLIB" / "GZIP" (TensorFlow's compression_type strings);
// InvalidArgument otherwise.
StatusOr<RecordCompression> ParseRecordCompression(std::string_view name);
// The inverse: "", "ZLIB" or "GZIP".
std::string_view RecordCompressionName(RecordCompression compression);

// Compresses what is appended into one stream, handing compressed bytes to
// `sink` as its buffer fills.
class ZlibCompressor {
 public:
  using Sink = std::function<Status(std::string_view)>;
  // REQUIRES: compression != kNone.
  static StatusOr<std::unique_ptr<ZlibCompressor>> Create(RecordCompression compression, Sink sink);
  ~ZlibCompressor();
  ZlibCompressor(const ZlibCompressor&) = delete;
  ZlibCompressor& operator=(const ZlibCompressor&) = delete;

  Status Append(std::string_view data);
  // Hands the sink everything appended so far, decodable without what
  // follows (a zlib sync flush).
  Status Flush();
  // Ends the stream. Call once; nothing may be appended after it.
  Status Finish();

 private:
  struct State;
  explicit ZlibCompressor(std::unique_ptr<State> state);
  Status Deflate(int flush);

  std::unique_ptr<State> state_;
};

// Decompresses the stream stored in `file` (concatenated gzip members read
// as one stream). A corrupt or truncated stream is DataLoss naming the file.
class ZlibDecompressor {
 public:
  // REQUIRES: compression != kNone.
  static StatusOr<std::unique_ptr<ZlibDecompressor>> Create(RecordCompression compression,
                                                            std::unique_ptr<SequentialFile> file);
  ~ZlibDecompressor();
  ZlibDecompressor(const ZlibDecompressor&) = delete;
  ZlibDecompressor& operator=(const ZlibDecompressor&) = delete;

  // Up to `n` decompressed bytes into `out`; fewer only at the end of the
  // stream (0 there).
  StatusOr<size_t> Read(char* out, size_t n);

 private:
  struct State;
  explicit ZlibDecompressor(std::unique_ptr<State> state);

  std::unique_ptr<State> state_;
};

}  // namespace weir
