// TFRecord files -> RecordReader. The first byte picks the layout:
//   0 (mod 4): the rest is a file, read uncompressed;
//   1, 2:      the rest is a file, read as a ZLIB / GZIP stream (mostly
//              garbage to inflate, which must fail cleanly);
//   3:         the rest is split into records (a byte of length each, then
//              its bytes), written with RecordWriter under the compression
//              the next byte picks, then damaged at a fuzzed offset (or
//              left whole). A whole file must read back exactly the records
//              written; a damaged one may end early, but only with DataLoss,
//              and every record it gives before that must be one written.
// Every read ends with OutOfRange or DataLoss (nothing else); an error is
// sticky; the bytes read never exceed what the file can hold.
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/fuzz_support.h"
#include "weir/base/file_system.h"
#include "weir/base/record_reader.h"
#include "weir/base/record_writer.h"

namespace weir::fuzz {
namespace {

// One file per process, in a directory removed at exit.
const std::string& Path() {
  static const std::string* dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    auto* d = new std::string(std::string(tmp && *tmp ? tmp : "/tmp") +
                              "/weir_tfrecord_fuzz.XXXXXX");
    Require(mkdtemp(d->data()) != nullptr, "mkdtemp failed");
    return d;
  }();
  static const std::string* path = [] {
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(*dir, ec);
    });
    return new std::string(*dir + "/file.tfrecord");
  }();
  return *path;
}

void WritePlain(std::string_view contents) {
  std::FILE* file = std::fopen(Path().c_str(), "wb");
  Require(file != nullptr, "cannot create a temporary file");
  Require(std::fwrite(contents.data(), 1, contents.size(), file) == contents.size(),
          "cannot write a temporary file");
  std::fclose(file);
}

// Reads the file to its end; returns the records and the final status.
std::vector<std::string> ReadAll(RecordCompression compression, uint64_t file_size,
                                 Status* end) {
  std::vector<std::string> records;
  StatusOr<std::unique_ptr<RecordReader>> reader = RecordReader::Open(Path(), compression);
  if (!reader.ok()) {
    *end = reader.status();
    return records;
  }
  uint64_t bytes = 0;
  while (true) {
    std::string record;
    Status s = (*reader)->ReadRecord(&record);
    if (!s.ok()) {
      Require(errors::IsOutOfRange(s) || errors::IsDataLoss(s),
              "ReadRecord failed with a code other than OutOfRange or DataLoss");
      Status again = (*reader)->ReadRecord(&record);
      Require(again.code() == s.code(), "a reader's end or error is not sticky");
      *end = s;
      return records;
    }
    bytes += record.size() + kRecordHeaderBytes + kRecordFooterBytes;
    // Uncompressed, records and framing come from the file's bytes.
    if (compression == RecordCompression::kNone) {
      Require(bytes <= file_size, "read more record bytes than the file holds");
    }
    records.push_back(std::move(record));
  }
}

void Written(FuzzInput& in) {
  static const RecordCompression kCompressions[] = {
      RecordCompression::kNone, RecordCompression::kZlib, RecordCompression::kGzip};
  const RecordCompression compression = kCompressions[in.Below(3)];
  const bool damage = in.Bool();
  const uint16_t damage_at = in.U16();
  const uint8_t damage_xor = in.Byte() | 1;
  std::vector<std::string> records;
  while (!in.empty() && records.size() < 64) records.push_back(in.String(255));

  RecordWriterOptions options;
  options.compression = compression;
  options.atomic = false;  // no sync per run
  StatusOr<std::unique_ptr<RecordWriter>> writer = RecordWriter::Create(Path(), options);
  Require(writer.ok(), "RecordWriter::Create failed");
  for (const std::string& r : records) Require((*writer)->Write(r).ok(), "Write failed");
  Require((*writer)->Close().ok(), "Close failed");

  std::string contents = ReadFileToString(Path()).value();
  bool damaged = false;
  if (damage && !contents.empty()) {
    contents[damage_at % contents.size()] ^= static_cast<char>(damage_xor);
    damaged = true;
    WritePlain(contents);
  }
  Status end;
  std::vector<std::string> read = ReadAll(compression, contents.size(), &end);
  if (!damaged) {
    Require(errors::IsOutOfRange(end), "a whole file did not end with OutOfRange");
    Require(read == records, "a whole file read back different records");
    return;
  }
  if (compression != RecordCompression::kNone) {
    // A flipped byte inside a compressed stream may turn a back-reference
    // into a copy of a whole earlier record, crcs included, before the
    // stream's own checksum (checked at its end) catches the damage: such a
    // file can give written records again, in other places, but no other.
    for (const std::string& r : read) {
      Require(std::find(records.begin(), records.end(), r) != records.end(),
              "a damaged compressed file gave a record that was not written");
    }
    Require(!errors::IsOutOfRange(end) || read == records,
            "a damaged compressed file ended cleanly with other records");
    return;
  }
  Require(read.size() <= records.size(), "a damaged file gave more records than were written");
  // A flipped byte inside a record's data is caught by its crc.
  for (size_t i = 0; i < read.size(); ++i) {
    Require(read[i] == records[i], "a damaged file gave a record that was not written");
  }
  if (read.size() < records.size()) {
    Require(errors::IsDataLoss(end), "a damaged file ended early without DataLoss");
  }
}

}  // namespace
}  // namespace weir::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace weir;
  using namespace weir::fuzz;
  InitOnce();
  FuzzInput in(data, size);
  const uint8_t mode = in.Byte() % 4;
  if (mode == 3) {
    Written(in);
    return 0;
  }
  const std::string_view rest = in.Rest();
  WritePlain(rest);
  Status end;
  static const RecordCompression kRaw[] = {RecordCompression::kNone, RecordCompression::kZlib,
                                           RecordCompression::kGzip};
  ReadAll(kRaw[mode], rest.size(), &end);
  return 0;
}
