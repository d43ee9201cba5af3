#include "weir/base/input_stream.h"

#include <algorithm>
#include <cstring>

namespace weir {

StatusOr<std::unique_ptr<InputStream>> InputStream::Open(const std::string& path,
                                                         RecordCompression compression,
                                                         size_t buffer_bytes) {
  WEIR_ASSIGN_OR_RETURN(std::unique_ptr<SequentialFile> file, SequentialFile::Open(path));
  std::unique_ptr<ZlibDecompressor> decompressor;
  if (compression != RecordCompression::kNone) {
    WEIR_ASSIGN_OR_RETURN(decompressor, ZlibDecompressor::Create(compression, std::move(file)));
  }
  return std::unique_ptr<InputStream>(new InputStream(
      path, std::move(file), std::move(decompressor), std::max<size_t>(buffer_bytes, 64)));
}

InputStream::InputStream(std::string path, std::unique_ptr<SequentialFile> file,
                         std::unique_ptr<ZlibDecompressor> decompressor, size_t buffer_bytes)
    : path_(std::move(path)),
      file_(std::move(file)),
      decompressor_(std::move(decompressor)),
      buffer_(std::make_unique<char[]>(buffer_bytes)),
      buffer_bytes_(buffer_bytes),
      file_size_(file_ != nullptr ? file_->size() : 0) {}

InputStream::~InputStream() = default;

std::optional<uint64_t> InputStream::remaining() const {
  if (file_ == nullptr) return std::nullopt;
  return file_size_ > position_ ? file_size_ - position_ : 0;
}

StatusOr<size_t> InputStream::ReadSource(char* out, size_t n) {
  return file_ != nullptr ? file_->Read(out, n) : decompressor_->Read(out, n);
}

Status InputStream::Fill() {
  start_ = limit_ = 0;  // nothing stale is left buffered if the read fails
  WEIR_ASSIGN_OR_RETURN(limit_, ReadSource(buffer_.get(), buffer_bytes_));
  return Status::OK();
}

StatusOr<size_t> InputStream::Read(char* out, size_t n) {
  size_t done = std::min(n, buffered());
  std::memcpy(out, buffer_.get() + start_, done);
  start_ += done;
  if (done < n) {
    // The buffer is empty now: a large read goes straight to the source.
    if (n - done >= buffer_bytes_) {
      WEIR_ASSIGN_OR_RETURN(size_t got, ReadSource(out + done, n - done));
      done += got;
    } else {
      while (done < n) {
        WEIR_RETURN_IF_ERROR(Fill());
        if (limit_ == 0) break;
        size_t take = std::min(n - done, buffered());
        std::memcpy(out + done, buffer_.get() + start_, take);
        start_ += take;
        done += take;
      }
    }
  }
  position_ += done;
  return done;
}

StatusOr<size_t> InputStream::ReadAppend(size_t n, std::string* out) {
  size_t done = 0;
  while (done < n) {
    // Grow by at most what was read so far (and 1 MiB to start), so memory
    // follows the bytes actually there.
    size_t chunk = std::min(n - done, std::max<size_t>(size_t{1} << 20, out->size()));
    size_t old_size = out->size();
    out->resize(old_size + chunk);
    WEIR_ASSIGN_OR_RETURN(size_t got, Read(out->data() + old_size, chunk));
    out->resize(old_size + got);
    done += got;
    if (got < chunk) break;
  }
  return done;
}

StatusOr<uint64_t> InputStream::Skip(uint64_t n) {
  uint64_t done = 0;
  while (done < n) {
    if (buffered() == 0) {
      WEIR_RETURN_IF_ERROR(Fill());
      if (limit_ == 0) break;
    }
    size_t take = static_cast<size_t>(std::min<uint64_t>(n - done, buffered()));
    start_ += take;
    done += take;
  }
  position_ += done;
  return done;
}

Status InputStream::ReadLine(std::string* line) {
  line->clear();
  bool any = false;
  while (true) {
    if (buffered() == 0) {
      WEIR_RETURN_IF_ERROR(Fill());
      if (limit_ == 0) break;
    }
    any = true;
    const char* begin = buffer_.get() + start_;
    const char* newline = static_cast<const char*>(std::memchr(begin, '\n', buffered()));
    size_t take = newline != nullptr ? static_cast<size_t>(newline - begin) : buffered();
    line->append(begin, take);
    start_ += take;
    position_ += take;
    if (newline != nullptr) {
      ++start_;
      ++position_;
      if (!line->empty() && line->back() == '\r') line->pop_back();
      return Status::OK();
    }
  }
  if (!any) return errors::OutOfRange("end of '", path_, "'");
  if (!line->empty() && line->back() == '\r') line->pop_back();
  return Status::OK();
}

}  // namespace weir
