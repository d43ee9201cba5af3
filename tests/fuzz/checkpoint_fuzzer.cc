// Checkpoint files -> BundleReader::Open, then ListTensors and Lookup of
// every tensor. The input is laid out as
//   byte 0, even: raw files. A 2-byte index length, the index file's bytes,
//                 then the data bytes (SSTable parsing is fuzzed directly).
//   byte 0, odd:  a well-formed SSTable built from fuzzed entries: a count,
//                 then per entry a key and a value (BundleHeaderProto for
//                 key "", BundleEntryProto otherwise), then the data bytes.
//                 With byte 1 odd the entries' crc32c are recomputed over
//                 the data they point at, so decoding past the checksum is
//                 fuzzed too.
// The data bytes are written as P.data-00000-of-00001 and also split in two
// at a fuzzed point as P.data-0000{0,1}-of-00002, so both shard counts find
// their files.
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include "proto/tensor_bundle.pb.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/fuzz_support.h"
#include "weir/base/crc32c.h"
#include "weir/framework/sstable.h"
#include "weir/framework/tensor_bundle.h"

namespace weir::fuzz {
namespace {

std::string* temp_dir = nullptr;

// One directory per process, removed at exit.
std::string Prefix() {
  if (temp_dir == nullptr) {
    const char* tmp = std::getenv("TMPDIR");
    temp_dir = new std::string(std::string(tmp && *tmp ? tmp : "/tmp") +
                               "/weir_checkpoint_fuzz.XXXXXX");
    Require(mkdtemp(temp_dir->data()) != nullptr, "mkdtemp failed");
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(*temp_dir, ec);
    });
  }
  return *temp_dir + "/ckpt";
}

// Plain writes: the atomic, synced writer would make each run cost a sync.
void WriteFile(const std::string& path, std::string_view contents) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  Require(file != nullptr, "cannot create a temporary file");
  Require(std::fwrite(contents.data(), 1, contents.size(), file) == contents.size(),
          "cannot write a temporary file");
  std::fclose(file);
}

// Recomputes a numeric entry's checksum over the bytes it points at
// (strings have a checksum of their own layout: left as fuzzed).
std::string FixChecksum(const std::string& value, std::string_view data) {
  wire::BundleEntryProto entry;
  if (!entry.ParseFromString(value) || entry.dtype() == wire::DT_STRING) return value;
  const uint64_t offset = static_cast<uint64_t>(entry.offset());
  const uint64_t size = static_cast<uint64_t>(entry.size());
  if (offset > data.size() || size > data.size() - offset) return value;
  entry.set_crc32c(crc32c::Mask(crc32c::Value(data.substr(offset, size))));
  return entry.SerializeAsString();
}

}  // namespace
}  // namespace weir::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  using namespace weir;
  using namespace weir::fuzz;
  InitOnce();
  FuzzInput in(bytes, size);
  const uint8_t mode = in.Byte();
  std::string index;
  std::string_view data;
  if (mode % 2 == 0) {
    const size_t index_size = std::min<size_t>(in.U16(), in.remaining());
    for (size_t i = 0; i < index_size; ++i) index.push_back(static_cast<char>(in.Byte()));
    data = in.Rest();
  } else {
    const bool fix_checksums = in.Byte() % 2 == 1;
    std::map<std::string, std::string> entries;  // SSTableBuilder wants sorted keys
    const size_t count = in.Below(17);
    for (size_t i = 0; i < count; ++i) {
      std::string key = in.String(32);
      entries[key] = in.String(in.U16() % 512);
    }
    data = in.Rest();
    SSTableBuilder builder;
    for (const auto& [key, value] : entries) {
      builder.Add(key, fix_checksums && !key.empty() ? FixChecksum(value, data) : value);
    }
    index = builder.Finish();
  }

  const std::string prefix = Prefix();
  WriteFile(BundleIndexFilename(prefix), index);
  WriteFile(BundleDataFilename(prefix, 0, 1), data);
  const size_t cut = data.empty() ? 0 : static_cast<size_t>(bytes[size - 1]) % (data.size() + 1);
  WriteFile(BundleDataFilename(prefix, 0, 2), data.substr(0, cut));
  WriteFile(BundleDataFilename(prefix, 1, 2), data.substr(cut));

  StatusOr<std::unique_ptr<BundleReader>> reader = BundleReader::Open(prefix);
  if (!reader.ok()) return 0;
  for (const BundleTensorInfo& info : (*reader)->ListTensors()) {
    Require((*reader)->FindTensor(info.name) != nullptr, "a listed tensor is not found");
    StatusOr<Tensor> tensor = (*reader)->Lookup(info.name);
    if (tensor.ok()) {
      Require(tensor->dtype() == info.dtype && tensor->shape() == info.shape,
              "Lookup returned a tensor other than the one listed");
    }
  }
  return 0;
}
