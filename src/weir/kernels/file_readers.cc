#include "weir/kernels/file_readers.h"

#include "weir/base/checked_math.h"
#include "weir/base/file_system.h"
#include "weir/base/input_stream.h"
#include "weir/base/record_reader.h"

namespace weir {
namespace {

class TFRecordReader final : public ReaderBase {
 public:
  TFRecordReader(std::string name, std::string signature, RecordCompression compression)
      : ReaderBase(std::move(name), std::move(signature)), compression_(compression) {}

 protected:
  Status OnWorkStartedLocked(const std::string& filename) override {
    WEIR_ASSIGN_OR_RETURN(reader_, RecordReader::Open(filename, compression_));
    return Status::OK();
  }
  Status ReadLocked(std::string* key, std::string* value, bool* produced, bool* at_end) override {
    const uint64_t offset = reader_->offset();
    Status status = reader_->ReadRecord(value);
    if (status.code() == Code::kOutOfRange) {
      *at_end = true;
      return Status::OK();
    }
    WEIR_RETURN_IF_ERROR(status);
    *key = StrCat(current_work(), ":", offset);
    *produced = true;
    return Status::OK();
  }
  void OnWorkFinishedLocked() override { reader_.reset(); }

 private:
  const RecordCompression compression_;
  std::unique_ptr<RecordReader> reader_;
};

// As TensorFlow (checked against it): record i starts header_bytes + i * hop
// bytes in (hop = record_bytes when hop_bytes is 0) and is produced when
// record_bytes + footer_bytes bytes follow its start; bytes read past a
// record are kept for the next one, not read twice.
class FixedLengthRecordReader final : public ReaderBase {
 public:
  FixedLengthRecordReader(std::string name, std::string signature, int64_t header_bytes,
                          int64_t record_bytes, int64_t footer_bytes, int64_t hop_bytes,
                          RecordCompression compression)
      : ReaderBase(std::move(name), std::move(signature)),
        header_bytes_(header_bytes),
        record_bytes_(record_bytes),
        footer_bytes_(footer_bytes),
        hop_bytes_(hop_bytes),
        compression_(compression) {}

 protected:
  Status OnWorkStartedLocked(const std::string& filename) override {
    record_number_ = 0;
    lookahead_.clear();
    WEIR_ASSIGN_OR_RETURN(stream_, InputStream::Open(filename, compression_));
    WEIR_ASSIGN_OR_RETURN(uint64_t skipped, stream_->Skip(static_cast<uint64_t>(header_bytes_)));
    short_header_ = skipped < static_cast<uint64_t>(header_bytes_);
    return Status::OK();
  }
  Status ReadLocked(std::string* key, std::string* value, bool* produced, bool* at_end) override {
    if (short_header_) {
      *at_end = true;
      return Status::OK();
    }
    const uint64_t record_and_footer =
        static_cast<uint64_t>(record_bytes_) + static_cast<uint64_t>(footer_bytes_);
    if (record_number_ != 0) {
      // Keep what overlaps the next record (and the footer bytes read after
      // this one), read only the rest.
      const uint64_t hop = static_cast<uint64_t>(hop_bytes_ > 0 ? hop_bytes_ : record_bytes_);
      if (hop > lookahead_.size()) {
        WEIR_RETURN_IF_ERROR(stream_->ReadAppend(hop - lookahead_.size(), &lookahead_).status());
        if (lookahead_.size() < hop) {
          *at_end = true;
          return Status::OK();
        }
      }
      lookahead_.erase(0, hop);
    }
    WEIR_RETURN_IF_ERROR(
        stream_->ReadAppend(record_and_footer - lookahead_.size(), &lookahead_).status());
    if (lookahead_.size() < record_and_footer) {
      lookahead_.clear();  // a partial last record is dropped, as TensorFlow does
      *at_end = true;
      return Status::OK();
    }
    *key = StrCat(current_work(), ":", record_number_);
    value->assign(lookahead_, 0, static_cast<size_t>(record_bytes_));
    *produced = true;
    ++record_number_;
    return Status::OK();
  }
  void OnWorkFinishedLocked() override {
    stream_.reset();
    lookahead_.clear();
  }

 private:
  const int64_t header_bytes_, record_bytes_, footer_bytes_, hop_bytes_;
  const RecordCompression compression_;
  std::unique_ptr<InputStream> stream_;
  std::string lookahead_;
  int64_t record_number_ = 0;
  bool short_header_ = false;
};

class TextLineReader final : public ReaderBase {
 public:
  TextLineReader(std::string name, std::string signature, int64_t skip_header_lines)
      : ReaderBase(std::move(name), std::move(signature)), skip_header_lines_(skip_header_lines) {}

 protected:
  Status OnWorkStartedLocked(const std::string& filename) override {
    line_number_ = 0;
    WEIR_ASSIGN_OR_RETURN(stream_, InputStream::Open(filename));
    std::string header;
    for (; line_number_ < skip_header_lines_; ++line_number_) {
      Status status = stream_->ReadLine(&header);
      if (status.code() == Code::kOutOfRange) break;  // a file of header lines only: no records
      WEIR_RETURN_IF_ERROR(status);
    }
    return Status::OK();
  }
  Status ReadLocked(std::string* key, std::string* value, bool* produced, bool* at_end) override {
    Status status = stream_->ReadLine(value);
    if (status.code() == Code::kOutOfRange) {
      *at_end = true;
      return Status::OK();
    }
    WEIR_RETURN_IF_ERROR(status);
    ++line_number_;
    *key = StrCat(current_work(), ":", line_number_);
    *produced = true;
    return Status::OK();
  }
  void OnWorkFinishedLocked() override { stream_.reset(); }

 private:
  const int64_t skip_header_lines_;
  std::unique_ptr<InputStream> stream_;
  int64_t line_number_ = 0;
};

class WholeFileReader final : public ReaderBase {
 public:
  using ReaderBase::ReaderBase;

 protected:
  Status OnWorkStartedLocked(const std::string&) override { return Status::OK(); }
  Status ReadLocked(std::string* key, std::string* value, bool* produced, bool* at_end) override {
    WEIR_ASSIGN_OR_RETURN(*value, ReadFileToString(current_work()));
    *key = current_work();
    *produced = true;
    *at_end = true;
    return Status::OK();
  }
  void OnWorkFinishedLocked() override {}
};

}  // namespace

StatusOr<ReaderSpec> TFRecordReaderSpec(std::string_view compression_type) {
  StatusOr<RecordCompression> compression = ParseRecordCompression(compression_type);
  if (!compression.ok()) return compression.status().WithContext("attr compression_type");
  std::string signature = StrCat("TFRecordReaderV2(compression_type=\"", compression_type, "\")");
  return ReaderSpec{signature, [signature, c = *compression](const std::string& name) {
                      return std::make_shared<TFRecordReader>(name, signature, c);
                    }};
}

StatusOr<ReaderSpec> FixedLengthRecordReaderSpec(int64_t header_bytes, int64_t record_bytes,
                                                 int64_t footer_bytes, int64_t hop_bytes,
                                                 std::string_view encoding) {
  for (auto [name, value] : {std::pair{"header_bytes", header_bytes},
                             {"footer_bytes", footer_bytes},
                             {"hop_bytes", hop_bytes}}) {
    if (value < 0) return errors::InvalidArgument(name, " must be >= 0, not ", value);
  }
  // TensorFlow allows 0, which (without a hop) reads empty records forever.
  if (record_bytes <= 0) {
    return errors::InvalidArgument("record_bytes must be > 0, not ", record_bytes);
  }
  int64_t unused;
  WEIR_RETURN_IF_ERROR(
      CheckedAdd(record_bytes, footer_bytes, &unused, "record_bytes + footer_bytes"));
  StatusOr<RecordCompression> compression = ParseRecordCompression(encoding);
  if (!compression.ok()) return compression.status().WithContext("attr encoding");
  std::string signature = StrCat("FixedLengthRecordReaderV2(header_bytes=", header_bytes,
                                 ", record_bytes=", record_bytes, ", footer_bytes=", footer_bytes,
                                 ", hop_bytes=", hop_bytes, ", encoding=\"", encoding, "\")");
  return ReaderSpec{signature, [=, c = *compression](const std::string& name) {
                      return std::make_shared<FixedLengthRecordReader>(
                          name, signature, header_bytes, record_bytes, footer_bytes, hop_bytes, c);
                    }};
}

StatusOr<ReaderSpec> TextLineReaderSpec(int64_t skip_header_lines) {
  if (skip_header_lines < 0) {
    return errors::InvalidArgument("skip_header_lines must be >= 0, not ", skip_header_lines);
  }
  std::string signature = StrCat("TextLineReaderV2(skip_header_lines=", skip_header_lines, ")");
  return ReaderSpec{signature, [=](const std::string& name) {
                      return std::make_shared<TextLineReader>(name, signature, skip_header_lines);
                    }};
}

ReaderSpec WholeFileReaderSpec() {
  std::string signature = "WholeFileReaderV2()";
  return ReaderSpec{signature, [signature](const std::string& name) {
                      return std::make_shared<WholeFileReader>(name, signature);
                    }};
}

}  // namespace weir
