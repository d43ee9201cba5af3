// InputStream: reads, skips and lines across buffer boundaries, plain and
// decompressed, and the buffer bypass for large reads.
#include "weir/base/input_stream.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "weir/base/record_writer.h"
#include "weir/base/zlib_stream.h"

namespace weir {
namespace {

namespace fs = std::filesystem;

class InputStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "weir_input_stream_test.XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // `contents` stored as-is, or as one compressed stream.
  std::string Store(const std::string& contents, RecordCompression compression) {
    std::string path = dir_ + "/f" + std::string(RecordCompressionName(compression));
    if (compression == RecordCompression::kNone) {
      EXPECT_TRUE(WriteStringToFileAtomic(path, contents).ok());
      return path;
    }
    std::string compressed;
    auto compressor = ZlibCompressor::Create(compression, [&](std::string_view bytes) {
      compressed.append(bytes);
      return Status::OK();
    });
    EXPECT_TRUE((*compressor)->Append(contents).ok());
    EXPECT_TRUE((*compressor)->Finish().ok());
    EXPECT_TRUE(WriteStringToFileAtomic(path, compressed).ok());
    return path;
  }

  std::vector<RecordCompression> AllCompressions() const {
    return {RecordCompression::kNone, RecordCompression::kZlib, RecordCompression::kGzip};
  }

  std::string dir_;
};

std::string Pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131) ^ (i >> 7));
  return s;
}

TEST_F(InputStreamTest, ReadsInPiecesOfEverySize) {
  const std::string contents = Pattern(5000);
  for (RecordCompression c : AllCompressions()) {
    for (size_t piece :
         {size_t{1}, size_t{7}, size_t{64}, size_t{100}, size_t{4999}, size_t{6000}}) {
      auto stream = InputStream::Open(Store(contents, c), c, /*buffer_bytes=*/64);
      ASSERT_TRUE(stream.ok()) << stream.status();
      std::string read;
      while (true) {
        std::string chunk(piece, '\0');
        StatusOr<size_t> got = (*stream)->Read(chunk.data(), piece);
        ASSERT_TRUE(got.ok()) << got.status();
        read.append(chunk, 0, *got);
        EXPECT_EQ((*stream)->position(), read.size());
        if (*got < piece) break;
      }
      EXPECT_TRUE(read == contents) << "piece " << piece;
      if (c == RecordCompression::kNone) {
        EXPECT_EQ((*stream)->remaining(), 0u);
      } else {
        EXPECT_FALSE((*stream)->remaining().has_value());
      }
    }
  }
}

TEST_F(InputStreamTest, SkipAndReadAppend) {
  const std::string contents = Pattern(3000);
  for (RecordCompression c : AllCompressions()) {
    auto stream = InputStream::Open(Store(contents, c), c, 64);
    ASSERT_TRUE(stream.ok());
    EXPECT_EQ(*(*stream)->Skip(1000), 1000u);
    std::string out = "pre";
    EXPECT_EQ(*(*stream)->ReadAppend(500, &out), 500u);
    EXPECT_EQ(out, "pre" + contents.substr(1000, 500));
    EXPECT_EQ(*(*stream)->Skip(100000), 1500u);  // to the end
    EXPECT_EQ(*(*stream)->ReadAppend(10, &out), 0u);
    EXPECT_EQ((*stream)->position(), 3000u);
  }
}

TEST_F(InputStreamTest, LinesAsTensorFlowReadsThem) {
  const std::string text = "first\r\n\nthird line\n" + std::string(200, 'L') + "\nlast\r";
  for (RecordCompression c : AllCompressions()) {
    auto stream = InputStream::Open(Store(text, c), c, 64);
    ASSERT_TRUE(stream.ok());
    std::vector<std::string> lines;
    std::string line;
    Status s;
    while ((s = (*stream)->ReadLine(&line)).ok()) lines.push_back(line);
    EXPECT_EQ(s.code(), Code::kOutOfRange) << s;
    EXPECT_EQ(lines,
              (std::vector<std::string>{"first", "", "third line", std::string(200, 'L'), "last"}));
  }
  // A final '\n' ends the last line; it starts no empty one.
  auto stream = InputStream::Open(Store("a\nb\n", RecordCompression::kNone));
  std::string line;
  ASSERT_TRUE((*stream)->ReadLine(&line).ok());
  ASSERT_TRUE((*stream)->ReadLine(&line).ok());
  EXPECT_EQ(line, "b");
  EXPECT_EQ((*stream)->ReadLine(&line).code(), Code::kOutOfRange);
}

TEST_F(InputStreamTest, MissingFileIsNotFound) {
  auto stream = InputStream::Open(dir_ + "/missing");
  EXPECT_EQ(stream.status().code(), Code::kNotFound);
}

}  // namespace
}  // namespace weir
