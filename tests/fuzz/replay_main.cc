// A main for the harnesses outside libFuzzer: runs LLVMFuzzerTestOneInput
// once on every file named or found (recursively, in sorted order) under the
// directories named, so the normal build replays the seed corpora and the
// saved regression inputs. A directory that does not exist is skipped.
#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "weir/base/sanitizers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
#if !defined(WEIR_ADDRESS_SANITIZER) && !defined(WEIR_THREAD_SANITIZER)
  // Without ASan's allocation ceiling (fuzz_support.cc), a cap on address
  // space keeps an input that asks for a huge tensor from being served.
  const rlimit limit = {rlim_t{16} << 30, rlim_t{16} << 30};
  setrlimit(RLIMIT_AS, &limit);
#endif
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    const fs::path path(argv[i]);
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      for (const auto& entry : fs::recursive_directory_iterator(path)) {
        if (entry.is_regular_file() && entry.path().filename().string()[0] != '.') {
          files.push_back(entry.path());
        }
      }
    } else if (fs::is_regular_file(path, ec)) {
      files.push_back(path);
    }
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    std::ifstream in(file, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
      std::fprintf(stderr, "cannot read %s\n", file.c_str());
      return 1;
    }
    std::fprintf(stderr, "replaying %s (%zu bytes)\n", file.c_str(), bytes.size());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("replayed %zu inputs\n", files.size());
  return 0;
}
