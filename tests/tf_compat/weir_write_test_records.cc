// Writes TFRecord files with Weir's RecordWriter for TensorFlow to read
// (export_records.py --check DIR): DIR/weir_{none,gzip,zlib}.* holding the
// same records (empty, every byte value, a 1 MiB record, many small ones)
// and DIR/manifest.json with the records (hex) and each file's record
// offsets, the keys TensorFlow's TFRecordReader must give.
//
//   weir_write_test_records DIR
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "weir/base/file_system.h"
#include "weir/base/record_writer.h"

namespace {

std::string Hex(const std::string& bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

std::vector<std::string> Records() {
  std::vector<std::string> records = {"", "weir"};
  std::string every_byte;
  for (int b = 0; b < 256; ++b) every_byte.push_back(static_cast<char>(b));
  records.push_back(every_byte);
  std::mt19937 rng(13);
  std::string large(1 << 20, '\0');
  for (char& c : large) c = static_cast<char>(rng() % 16);  // compressible, not trivially
  records.push_back(large);
  for (int i = 0; i < 200; ++i) records.push_back(weir::StrCat("small record ", i));
  return records;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  weir::Status status = weir::RecursivelyCreateDir(dir);
  const std::vector<std::string> records = Records();
  nlohmann::json manifest;
  for (const std::string& r : records) manifest["records"].push_back(Hex(r));
  const std::pair<const char*, weir::RecordCompression> files[] = {
      {"weir_none.tfrecord", weir::RecordCompression::kNone},
      {"weir_gzip.tfrecord.gz", weir::RecordCompression::kGzip},
      {"weir_zlib.tfrecord.zz", weir::RecordCompression::kZlib}};
  for (const auto& [name, compression] : files) {
    if (!status.ok()) break;
    auto writer = weir::RecordWriter::Create(dir + "/" + name, {.compression = compression});
    if (!writer.ok()) {
      status = writer.status();
      break;
    }
    nlohmann::json offsets = nlohmann::json::array();
    uint64_t offset = 0;
    for (const std::string& r : records) {
      offsets.push_back(offset);
      offset += 16 + r.size();
      status.Update((*writer)->Write(r));
    }
    status.Update((*writer)->Close());
    manifest["files"].push_back(
        {{"file", name},
         {"compression", std::string(weir::RecordCompressionName(compression))},
         {"offsets", offsets}});
  }
  if (status.ok()) status = weir::WriteStringToFileAtomic(dir + "/manifest.json", manifest.dump(1));
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
    return 1;
  }
  std::printf("wrote %zu records into each of 3 files in %s\n", records.size(), dir.c_str());
  return 0;
}
