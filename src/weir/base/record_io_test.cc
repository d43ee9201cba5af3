// RecordWriter and RecordReader: round trips in every compression, the exact
// framing, and every kind of damage (a changed byte anywhere, a cut anywhere,
// a huge length that passes its crc) giving DataLoss at the right offset.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "weir/base/crc32c.h"
#include "weir/base/file_system.h"
#include "weir/base/record_reader.h"
#include "weir/base/record_writer.h"

namespace weir {
namespace {

namespace fs = std::filesystem;

bool Mentions(const Status& s, const std::string& text) {
  return s.message().find(text) != std::string::npos;
}

class RecordIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "weir_record_io_test.XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  void Write(const std::string& path, const std::vector<std::string>& records,
             RecordCompression compression = RecordCompression::kNone) {
    auto writer = RecordWriter::Create(path, {.compression = compression});
    ASSERT_TRUE(writer.ok()) << writer.status();
    for (const std::string& r : records) ASSERT_TRUE((*writer)->Write(r).ok());
    ASSERT_TRUE((*writer)->Close().ok());
  }

  // Every record up to the first non-OK status, which is returned.
  Status ReadAll(const std::string& path, std::vector<std::string>* records,
                 RecordCompression compression = RecordCompression::kNone,
                 std::vector<uint64_t>* offsets = nullptr) {
    records->clear();
    auto reader = RecordReader::Open(path, compression);
    if (!reader.ok()) return reader.status();
    while (true) {
      if (offsets != nullptr) offsets->push_back((*reader)->offset());
      std::string record;
      Status s = (*reader)->ReadRecord(&record);
      if (!s.ok()) return s;
      records->push_back(record);
    }
  }

  std::string dir_;
};

std::vector<std::string> SampleRecords() {
  std::vector<std::string> records = {"", "a", std::string("\0\xff\x80 binary\n", 10),
                                      std::string(300, 'x')};
  std::mt19937 rng(7);
  for (int i = 0; i < 50; ++i) {
    std::string r(rng() % 2000, '\0');
    for (char& c : r) c = static_cast<char>(rng());
    records.push_back(r);
  }
  return records;
}

TEST_F(RecordIoTest, RoundTripInEveryCompression) {
  for (RecordCompression c :
       {RecordCompression::kNone, RecordCompression::kZlib, RecordCompression::kGzip}) {
    SCOPED_TRACE(std::string(RecordCompressionName(c)));
    std::vector<std::string> records = SampleRecords();
    Write(Path("f"), records, c);
    std::vector<std::string> read;
    std::vector<uint64_t> offsets;
    Status s = ReadAll(Path("f"), &read, c, &offsets);
    EXPECT_EQ(s.code(), Code::kOutOfRange) << s;
    EXPECT_EQ(read, records);
    // Offsets count the uncompressed stream: 16 bytes of framing per record.
    uint64_t expected = 0;
    for (size_t i = 0; i < records.size(); ++i) {
      EXPECT_EQ(offsets[i], expected);
      expected += 16 + records[i].size();
    }
    EXPECT_EQ(offsets.back(), expected);
  }
}

TEST_F(RecordIoTest, FramingIsLengthCrcDataCrc) {
  Write(Path("f"), {"hello"});
  std::string bytes = *ReadFileToString(Path("f"));
  ASSERT_EQ(bytes.size(), 8u + 4 + 5 + 4);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x05\0\0\0\0\0\0\0", 8));
  auto fixed32 = [&](size_t at) {
    return uint32_t(uint8_t(bytes[at])) | uint32_t(uint8_t(bytes[at + 1])) << 8 |
           uint32_t(uint8_t(bytes[at + 2])) << 16 | uint32_t(uint8_t(bytes[at + 3])) << 24;
  };
  EXPECT_EQ(fixed32(8), crc32c::Mask(crc32c::Value(bytes.data(), 8)));
  EXPECT_EQ(bytes.substr(12, 5), "hello");
  EXPECT_EQ(fixed32(17), crc32c::Mask(crc32c::Value("hello")));
}

TEST_F(RecordIoTest, CompressedFilesAreStandardZlibAndGzipStreams) {
  std::vector<std::string> records = SampleRecords();
  Write(Path("plain"), records);
  Write(Path("z"), records, RecordCompression::kZlib);
  Write(Path("gz"), records, RecordCompression::kGzip);
  std::string plain = *ReadFileToString(Path("plain"));
  // zlib's own decoders, independent of Weir's.
  std::string z = *ReadFileToString(Path("z"));
  std::string out(plain.size() + 100, '\0');
  uLongf out_size = out.size();
  ASSERT_EQ(uncompress(reinterpret_cast<Bytef*>(out.data()), &out_size,
                       reinterpret_cast<const Bytef*>(z.data()), z.size()),
            Z_OK);
  EXPECT_EQ(out.substr(0, out_size), plain);
  gzFile gz = gzopen(Path("gz").c_str(), "rb");
  ASSERT_NE(gz, nullptr);
  int got = gzread(gz, out.data(), out.size());
  gzclose(gz);
  EXPECT_EQ(std::string(out.data(), got), plain);
  EXPECT_EQ(uint8_t(ReadFileToString(Path("gz"))->at(0)), 0x1f);  // the gzip magic
}

TEST_F(RecordIoTest, LargeRecords) {
  std::string big(10 << 20, '\0');
  std::mt19937 rng(3);
  for (size_t i = 0; i < big.size(); i += 97) big[i] = static_cast<char>(rng());
  for (RecordCompression c :
       {RecordCompression::kNone, RecordCompression::kZlib, RecordCompression::kGzip}) {
    Write(Path("big"), {"small", big, "tail"}, c);
    std::vector<std::string> read;
    EXPECT_EQ(ReadAll(Path("big"), &read, c).code(), Code::kOutOfRange);
    ASSERT_EQ(read.size(), 3u);
    EXPECT_EQ(read[0], "small");
    EXPECT_TRUE(read[1] == big);
    EXPECT_EQ(read[2], "tail");
  }
}

TEST_F(RecordIoTest, EmptyFileHasNoRecords) {
  for (RecordCompression c :
       {RecordCompression::kNone, RecordCompression::kZlib, RecordCompression::kGzip}) {
    Write(Path("empty"), {}, c);
    std::vector<std::string> read;
    EXPECT_EQ(ReadAll(Path("empty"), &read, c).code(), Code::kOutOfRange);
    EXPECT_TRUE(read.empty());
  }
  ASSERT_TRUE(WriteStringToFileAtomic(Path("zero"), "").ok());
  std::vector<std::string> read;
  EXPECT_EQ(ReadAll(Path("zero"), &read, RecordCompression::kGzip).code(), Code::kOutOfRange);
}

// Changing any one byte of a file is found by a crc: the records before the
// damaged one read intact, then DataLoss names the file and that record's
// offset, and stays.
TEST_F(RecordIoTest, EveryChangedByteIsDataLossAtItsRecord) {
  const std::vector<std::string> records = {"first", "", "third record"};
  Write(Path("f"), records);
  const std::string good = *ReadFileToString(Path("f"));
  const std::vector<uint64_t> starts = {0, 21, 37};
  for (size_t at = 0; at < good.size(); ++at) {
    std::string bad = good;
    bad[at] ^= 0x20;
    ASSERT_TRUE(WriteStringToFileAtomic(Path("bad"), bad).ok());
    size_t damaged = at >= starts[2] ? 2 : at >= starts[1] ? 1 : 0;
    std::vector<std::string> read;
    Status s = ReadAll(Path("bad"), &read);
    ASSERT_EQ(s.code(), Code::kDataLoss) << "byte " << at << ": " << s;
    EXPECT_TRUE(
        Mentions(s, "byte offset " + std::to_string(starts[damaged]) + " of '" + Path("bad") + "'"))
        << s;
    // The length's crc is checked before the length is used.
    bool in_header = at - starts[damaged] < 12;
    EXPECT_TRUE(Mentions(s, in_header ? "length crc mismatch" : "data crc mismatch")) << s;
    EXPECT_EQ(read, std::vector<std::string>(records.begin(), records.begin() + damaged));
  }
}

// A file cut anywhere: a cut between records is a clean end (OutOfRange);
// any other cut is DataLoss at the offset of the cut record.
TEST_F(RecordIoTest, EveryCutIsCleanEndOrDataLoss) {
  const std::vector<std::string> records = {"first", "", "third record"};
  Write(Path("f"), records);
  const std::string good = *ReadFileToString(Path("f"));
  const std::vector<uint64_t> starts = {0, 21, 37, good.size()};
  for (size_t cut = 0; cut < good.size(); ++cut) {
    ASSERT_TRUE(WriteStringToFileAtomic(Path("cut"), good.substr(0, cut)).ok());
    size_t whole = 0;
    while (whole < 3 && starts[whole + 1] <= cut) ++whole;
    std::vector<std::string> read;
    Status s = ReadAll(Path("cut"), &read);
    EXPECT_EQ(read, std::vector<std::string>(records.begin(), records.begin() + whole));
    if (cut == starts[whole]) {
      EXPECT_EQ(s.code(), Code::kOutOfRange) << "cut " << cut << ": " << s;
    } else {
      ASSERT_EQ(s.code(), Code::kDataLoss) << "cut " << cut << ": " << s;
      EXPECT_TRUE(Mentions(s, "byte offset " + std::to_string(starts[whole]) + " of")) << s;
      EXPECT_TRUE(Mentions(s, "truncated")) << s;
    }
  }
}

// A compressed file cut anywhere never reads as a clean end: the stream's
// end is part of it.
TEST_F(RecordIoTest, EveryCutOfACompressedFileIsDataLoss) {
  for (RecordCompression c : {RecordCompression::kZlib, RecordCompression::kGzip}) {
    const std::vector<std::string> records = {"first", "", "third record", std::string(5000, 'q')};
    Write(Path("f"), records, c);
    const std::string good = *ReadFileToString(Path("f"));
    for (size_t cut = 1; cut < good.size(); ++cut) {
      ASSERT_TRUE(WriteStringToFileAtomic(Path("cut"), good.substr(0, cut)).ok());
      std::vector<std::string> read;
      Status s = ReadAll(Path("cut"), &read, c);
      ASSERT_EQ(s.code(), Code::kDataLoss) << RecordCompressionName(c) << " cut " << cut << s;
      EXPECT_TRUE(Mentions(s, Path("cut"))) << s;
      // What was decoded before the cut is intact (a cut in the stream's
      // trailer still lets every record through before the error).
      ASSERT_LE(read.size(), records.size());
      EXPECT_EQ(read, std::vector<std::string>(records.begin(), records.begin() + read.size()));
    }
  }
}

TEST_F(RecordIoTest, CorruptCompressedStreamIsDataLoss) {
  Write(Path("f"), SampleRecords(), RecordCompression::kGzip);
  std::string bytes = *ReadFileToString(Path("f"));
  for (size_t at : {size_t{0}, size_t{3}, bytes.size() / 2, bytes.size() - 3}) {
    std::string bad = bytes;
    bad[at] ^= 0x55;
    ASSERT_TRUE(WriteStringToFileAtomic(Path("bad"), bad).ok());
    std::vector<std::string> read;
    Status s = ReadAll(Path("bad"), &read, RecordCompression::kGzip);
    EXPECT_EQ(s.code(), Code::kDataLoss) << "byte " << at << ": " << s;
  }
  // Reading with the wrong compression is an error too, never a crash.
  std::vector<std::string> read;
  EXPECT_EQ(ReadAll(Path("f"), &read, RecordCompression::kZlib).code(), Code::kDataLoss);
  EXPECT_EQ(ReadAll(Path("f"), &read, RecordCompression::kNone).code(), Code::kDataLoss);
}

// A header whose length passes its crc but claims far more than the file
// holds allocates nothing for it.
TEST_F(RecordIoTest, HugeLengthWithValidCrcIsTruncatedNotAllocated) {
  std::string header(8, '\0');
  uint64_t length = uint64_t{1} << 60;
  for (int i = 0; i < 8; ++i) header[i] = static_cast<char>(length >> (8 * i));
  uint32_t masked = crc32c::Mask(crc32c::Value(header));
  for (int i = 0; i < 4; ++i) header.push_back(static_cast<char>(masked >> (8 * i)));
  std::string file = header + std::string(1000, 'z');
  ASSERT_TRUE(WriteStringToFileAtomic(Path("huge"), file).ok());
  std::vector<std::string> read;
  Status s = ReadAll(Path("huge"), &read);
  EXPECT_EQ(s.code(), Code::kDataLoss) << s;
  EXPECT_TRUE(Mentions(s, "truncated")) << s;
  // Compressed, the size is not known ahead: memory grows with the bytes read.
  gzFile gz = gzopen(Path("huge.gz").c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  ASSERT_EQ(gzwrite(gz, file.data(), file.size()), int(file.size()));
  gzclose(gz);
  s = ReadAll(Path("huge.gz"), &read, RecordCompression::kGzip);
  EXPECT_EQ(s.code(), Code::kDataLoss) << s;
  EXPECT_TRUE(Mentions(s, "truncated data (1000 of 1152921504606846976 bytes)")) << s;
}

TEST_F(RecordIoTest, ConcatenatedGzipMembersReadAsOneStream) {
  Write(Path("a"), {"one", "two"}, RecordCompression::kGzip);
  Write(Path("b"), {"three"}, RecordCompression::kGzip);
  ASSERT_TRUE(WriteStringToFileAtomic(Path("ab"),
                                      *ReadFileToString(Path("a")) + *ReadFileToString(Path("b")))
                  .ok());
  std::vector<std::string> read;
  EXPECT_EQ(ReadAll(Path("ab"), &read, RecordCompression::kGzip).code(), Code::kOutOfRange);
  EXPECT_EQ(read, (std::vector<std::string>{"one", "two", "three"}));
}

TEST_F(RecordIoTest, AtomicWriterShowsTheFileOnlyAfterClose) {
  {
    auto writer = RecordWriter::Create(Path("f"));
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->Write("x").ok());
    ASSERT_TRUE((*writer)->Flush().ok());
    EXPECT_FALSE(FileExists(Path("f")));
    ASSERT_TRUE((*writer)->Close().ok());
    EXPECT_TRUE(FileExists(Path("f")));
    Status again = (*writer)->Write("y");
    EXPECT_EQ(again.code(), Code::kFailedPrecondition) << again;
    EXPECT_EQ((*writer)->Close().code(), Code::kFailedPrecondition);
  }
  {
    // Abandoned without Close: the old file stays, no temporary is left.
    auto writer = RecordWriter::Create(Path("f"));
    ASSERT_TRUE((*writer)->Write("replacement").ok());
  }
  std::vector<std::string> read;
  EXPECT_EQ(ReadAll(Path("f"), &read).code(), Code::kOutOfRange);
  EXPECT_EQ(read, std::vector<std::string>{"x"});
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(RecordIoTest, DirectWriterMakesFlushedRecordsReadable) {
  auto writer = RecordWriter::Create(Path("events"), {.atomic = false});
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Write("e1").ok());
  ASSERT_TRUE((*writer)->Write("e2").ok());
  ASSERT_TRUE((*writer)->Flush().ok());
  std::vector<std::string> read;
  EXPECT_EQ(ReadAll(Path("events"), &read).code(), Code::kOutOfRange);
  EXPECT_EQ(read, (std::vector<std::string>{"e1", "e2"}));
  ASSERT_TRUE((*writer)->Write("e3").ok());
  ASSERT_TRUE((*writer)->Close().ok());
  EXPECT_EQ(ReadAll(Path("events"), &read).code(), Code::kOutOfRange);
  EXPECT_EQ(read, (std::vector<std::string>{"e1", "e2", "e3"}));
}

TEST_F(RecordIoTest, FlushedGzipRecordsDecodeBeforeTheStreamEnds) {
  auto writer =
      RecordWriter::Create(Path("g"), {.compression = RecordCompression::kGzip, .atomic = false});
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Write("one").ok());
  ASSERT_TRUE((*writer)->Flush().ok());
  std::vector<std::string> read;
  // The stream is unfinished: what was flushed reads, then the cut shows.
  EXPECT_EQ(ReadAll(Path("g"), &read, RecordCompression::kGzip).code(), Code::kDataLoss);
  EXPECT_EQ(read, std::vector<std::string>{"one"});
  ASSERT_TRUE((*writer)->Close().ok());
}

TEST_F(RecordIoTest, OpenErrors) {
  auto missing = RecordReader::Open(Path("missing"));
  EXPECT_EQ(missing.status().code(), Code::kNotFound);
  EXPECT_TRUE(Mentions(missing.status(), Path("missing")));
  auto dir = RecordReader::Open(dir_);
  EXPECT_FALSE(dir.ok());
  auto no_dir = RecordWriter::Create(Path("no/such/dir/f"));
  EXPECT_EQ(no_dir.status().code(), Code::kNotFound);
}

TEST(RecordCompressionTest, ParsesTensorFlowNames) {
  EXPECT_EQ(*ParseRecordCompression(""), RecordCompression::kNone);
  EXPECT_EQ(*ParseRecordCompression("ZLIB"), RecordCompression::kZlib);
  EXPECT_EQ(*ParseRecordCompression("GZIP"), RecordCompression::kGzip);
  Status s = ParseRecordCompression("gzip").status();
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Mentions(s, "'gzip'")) << s;
}

}  // namespace
}  // namespace weir
