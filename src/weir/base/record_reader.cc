#include "weir/base/record_reader.h"

#include "weir/base/coding.h"
#include "weir/base/crc32c.h"

namespace weir {

StatusOr<std::unique_ptr<RecordReader>> RecordReader::Open(const std::string& path,
                                                           RecordCompression compression) {
  WEIR_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> stream, InputStream::Open(path, compression));
  return std::unique_ptr<RecordReader>(new RecordReader(std::move(stream)));
}

Status RecordReader::ReadRecord(std::string* record) {
  if (!error_.ok()) return error_;
  Status status = ReadRecordAt(record);
  if (!status.ok() && status.code() != Code::kOutOfRange) error_ = status;
  return status;
}

Status RecordReader::ReadRecordAt(std::string* record) {
  auto corrupt = [&](auto&&... what) {
    return errors::DataLoss("corrupt record at byte offset ", offset_, " of '", path(),
                            "': ", what...);
  };
  // Fast path: the whole record is in the stream's buffer, so it is checked
  // in place and copied once. Anything else (a record across the buffer's
  // end, damage) takes the general path below, which reports the damage.
  std::string_view buffered = stream_->Peek();
  if (buffered.size() >= kRecordHeaderBytes + kRecordFooterBytes) {
    const uint64_t length = DecodeFixed64(buffered.data());
    const char* data = buffered.data() + kRecordHeaderBytes;
    if (length <= buffered.size() - kRecordHeaderBytes - kRecordFooterBytes &&
        crc32c::Unmask(DecodeFixed32(buffered.data() + 8)) == crc32c::Value(buffered.data(), 8) &&
        crc32c::Unmask(DecodeFixed32(data + length)) == crc32c::Value(data, length)) {
      record->assign(data, length);
      const uint64_t framed = kRecordHeaderBytes + length + kRecordFooterBytes;
      WEIR_RETURN_IF_ERROR(stream_->Skip(framed).status());
      offset_ += framed;
      return Status::OK();
    }
  }

  char header[kRecordHeaderBytes];
  WEIR_ASSIGN_OR_RETURN(size_t got, stream_->Read(header, sizeof(header)));
  if (got == 0) return errors::OutOfRange("no more records in '", path(), "' after byte ", offset_);
  if (got < sizeof(header)) {
    return corrupt("truncated header (", got, " of ", sizeof(header), " bytes)");
  }
  const uint64_t length = DecodeFixed64(header);
  const uint32_t length_crc = crc32c::Value(header, 8);
  if (crc32c::Unmask(DecodeFixed32(header + 8)) != length_crc) {
    return corrupt("length crc mismatch");
  }

  uint32_t data_crc;
  if (std::optional<uint64_t> remaining = stream_->remaining()) {
    if (length > *remaining || *remaining - length < kRecordFooterBytes) {
      return corrupt("truncated: the record's ", length, " bytes and its crc need ",
                     length + kRecordFooterBytes, " more bytes, the file has ", *remaining);
    }
    record->resize(length);
    WEIR_ASSIGN_OR_RETURN(got, stream_->Read(record->data(), length));
    if (got < length) {
      // The file shrank after it was opened.
      return corrupt("truncated data (", got, " of ", length, " bytes)");
    }
  } else {
    record->clear();
    WEIR_ASSIGN_OR_RETURN(got, stream_->ReadAppend(length, record));
    if (got < length) return corrupt("truncated data (", got, " of ", length, " bytes)");
  }
  char footer[kRecordFooterBytes];
  WEIR_ASSIGN_OR_RETURN(got, stream_->Read(footer, sizeof(footer)));
  if (got < sizeof(footer)) {
    return corrupt("truncated data crc (", got, " of ", sizeof(footer), " bytes)");
  }
  data_crc = crc32c::Value(*record);
  if (crc32c::Unmask(DecodeFixed32(footer)) != data_crc) return corrupt("data crc mismatch");
  offset_ += kRecordHeaderBytes + length + kRecordFooterBytes;
  return Status::OK();
}

}  // namespace weir
