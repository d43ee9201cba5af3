// RecordWriter: writes a TFRecord file (the framing of record_reader.h),
// optionally as one zlib or gzip stream, through a 256 KiB buffer. Not
// thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "weir/base/file_system.h"
#include "weir/base/status.h"
#include "weir/base/zlib_stream.h"

namespace weir {

struct RecordWriterOptions {
  RecordCompression compression = RecordCompression::kNone;
  // true: written under a temporary name, renamed over `path` by Close()
  // (readers never see a partial file). false: written at `path` directly;
  // each Flush() makes the records so far readable (event files).
  bool atomic = true;
  // Direct writers only: AlreadyExists if `path` exists, instead of
  // truncating it (writers that must not take each other's file).
  bool exclusive = false;
};

class RecordWriter {
 public:
  static StatusOr<std::unique_ptr<RecordWriter>> Create(const std::string& path,
                                                        const RecordWriterOptions& options = {});
  // Without Close(): an atomic writer's temporary file is removed (`path`
  // stays as it was); a direct one keeps what was flushed.
  ~RecordWriter();
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  // One record: length, masked crc32c(length), data, masked crc32c(data).
  Status Write(std::string_view record);
  Status Flush();
  // Flushes, syncs and (atomic) renames. Call once; FailedPrecondition for
  // any call after it.
  Status Close();

  const std::string& path() const { return path_; }

 private:
  RecordWriter(std::string path, RecordWriterOptions options, std::unique_ptr<WritableFile> file);
  Status Emit(std::string_view bytes);
  Status CheckOpen() const;

  const std::string path_;
  const RecordWriterOptions options_;
  std::unique_ptr<WritableFile> file_;
  std::unique_ptr<ZlibCompressor> compressor_;
  bool closed_ = false;
};

}  // namespace weir
