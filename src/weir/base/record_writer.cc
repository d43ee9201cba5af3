#include "weir/base/record_writer.h"

#include <unistd.h>

#include "weir/base/crc32c.h"
#include "weir/base/record_reader.h"

namespace weir {
namespace {

void EncodeLittle(uint64_t value, int bytes, char* out) {
  for (int i = 0; i < bytes; ++i) out[i] = static_cast<char>((value >> (8 * i)) & 0xff);
}

}  // namespace

StatusOr<std::unique_ptr<RecordWriter>> RecordWriter::Create(const std::string& path,
                                                             const RecordWriterOptions& options) {
  std::unique_ptr<WritableFile> file;
  if (options.atomic) {
    WEIR_ASSIGN_OR_RETURN(file, WritableFile::CreateTemp(path));
  } else {
    WEIR_ASSIGN_OR_RETURN(file, WritableFile::Create(path, options.exclusive));
  }
  std::unique_ptr<RecordWriter> writer(new RecordWriter(path, options, std::move(file)));
  if (options.compression != RecordCompression::kNone) {
    WritableFile* sink = writer->file_.get();
    WEIR_ASSIGN_OR_RETURN(
        writer->compressor_,
        ZlibCompressor::Create(options.compression,
                               [sink](std::string_view bytes) { return sink->Append(bytes); }));
  }
  return writer;
}

RecordWriter::RecordWriter(std::string path, RecordWriterOptions options,
                           std::unique_ptr<WritableFile> file)
    : path_(std::move(path)), options_(options), file_(std::move(file)) {}

RecordWriter::~RecordWriter() {
  if (closed_) return;
  if (options_.atomic) {
    ::unlink(file_->path().c_str());
  } else {
    // Best effort: what was written before the writer went away.
    if (compressor_ != nullptr) (void)compressor_->Flush();
    (void)file_->Flush();
  }
}

Status RecordWriter::CheckOpen() const {
  if (closed_) return errors::FailedPrecondition("record writer of '", path_, "' is closed");
  return Status::OK();
}

Status RecordWriter::Emit(std::string_view bytes) {
  return compressor_ != nullptr ? compressor_->Append(bytes) : file_->Append(bytes);
}

Status RecordWriter::Write(std::string_view record) {
  WEIR_RETURN_IF_ERROR(CheckOpen());
  char header[kRecordHeaderBytes];
  EncodeLittle(record.size(), 8, header);
  EncodeLittle(crc32c::Mask(crc32c::Value(header, 8)), 4, header + 8);
  char footer[kRecordFooterBytes];
  EncodeLittle(crc32c::Mask(crc32c::Value(record)), 4, footer);
  WEIR_RETURN_IF_ERROR(Emit(std::string_view(header, sizeof(header))));
  WEIR_RETURN_IF_ERROR(Emit(record));
  return Emit(std::string_view(footer, sizeof(footer)));
}

Status RecordWriter::Flush() {
  WEIR_RETURN_IF_ERROR(CheckOpen());
  if (compressor_ != nullptr) WEIR_RETURN_IF_ERROR(compressor_->Flush());
  return file_->Flush();
}

Status RecordWriter::Close() {
  WEIR_RETURN_IF_ERROR(CheckOpen());
  closed_ = true;
  Status status;
  if (compressor_ != nullptr) status = compressor_->Finish();
  status.Update(file_->Close());
  if (options_.atomic) {
    if (status.ok()) status = RenameFile(file_->path(), path_);
    if (!status.ok()) {
      ::unlink(file_->path().c_str());
      return status;
    }
    return SyncParentDirectory(path_);
  }
  return status;
}

}  // namespace weir
