#include "weir/framework/sstable.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "weir/base/coding.h"
#include "weir/base/crc32c.h"
#include "weir/base/file_system.h"

namespace weir {
namespace {

using Entries = std::vector<SSTable::Entry>;

std::string Build(const Entries& entries, SSTableOptions options = {}) {
  SSTableBuilder builder(options);
  for (const auto& [key, value] : entries) builder.Add(key, value);
  return builder.Finish();
}

// Keys with long shared prefixes, odd bytes and the empty key (which the
// checkpoint header uses), values of varied sizes including empty.
Entries ManyEntries(int n) {
  Entries entries;
  entries.emplace_back("", "header");
  for (int i = 0; i < n; ++i) {
    char key[64];
    std::snprintf(key, sizeof(key), "layer%03d/kernel/%06d", i % 37, i);
    entries.emplace_back(key, std::string(static_cast<size_t>(i % 50), static_cast<char>(i)));
  }
  entries.emplace_back(std::string("z\0\xff", 3), "binary key");
  entries.emplace_back("\xff\xff", std::string(3000, 'v'));  // larger than a block
  std::sort(entries.begin(), entries.end());
  return entries;
}

bool Mentions(const Status& s, const std::string& text) {
  return s.message().find(text) != std::string::npos;
}

TEST(SSTableTest, EmptyTableRoundTrips) {
  std::string file = Build({});
  EXPECT_EQ(file.size(), 13u /*metaindex*/ + 13u /*index*/ + 48u);
  StatusOr<SSTable> table = SSTable::Parse(file, "empty.index");
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_TRUE(table->entries().empty());
  EXPECT_EQ(table->Find(""), nullptr);
}

TEST(SSTableTest, ManyKeysAcrossManyBlocks) {
  const Entries entries = ManyEntries(5000);
  for (size_t block_size : {size_t{1}, size_t{256}, size_t{4096}, size_t{1} << 20}) {
    for (int restart_interval : {1, 16}) {
      SSTableOptions options;
      options.block_size = block_size;
      options.restart_interval = restart_interval;
      std::string file = Build(entries, options);
      StatusOr<SSTable> table = SSTable::Parse(file, "t.index");
      ASSERT_TRUE(table.ok()) << table.status() << " block_size " << block_size;
      EXPECT_EQ(table->entries(), entries);
      for (const auto& [key, value] : entries) {
        const std::string* found = table->Find(key);
        ASSERT_NE(found, nullptr) << key;
        EXPECT_EQ(*found, value);
      }
      EXPECT_EQ(table->Find("layer000"), nullptr);
      EXPECT_EQ(table->Find("layer000/kernel/000000x"), nullptr);
      EXPECT_EQ(table->Find("\xff\xff\xff"), nullptr);
    }
  }
}

TEST(SSTableTest, PrefixCompressionShrinksSharedKeys) {
  const Entries entries = ManyEntries(2000);
  SSTableOptions every_key_whole;
  every_key_whole.restart_interval = 1;
  EXPECT_LT(Build(entries).size(), Build(entries, every_key_whole).size() * 3 / 4);
}

// The exact bytes of a one-entry table, spelled out from the format.
TEST(SSTableTest, LayoutOfASmallTable) {
  std::string file = Build({{"ab", "xyz"}});
  std::string data_block = std::string("\x00\x02\x03" "abxyz", 8);
  PutFixed32(&data_block, 0);  // restart point at offset 0
  PutFixed32(&data_block, 1);  // one restart point
  auto with_trailer = [](const std::string& block) {
    std::string out = block;
    out.push_back('\0');
    PutFixed32(&out, crc32c::Mask(crc32c::Value(out)));
    return out;
  };
  std::string empty_block;
  PutFixed32(&empty_block, 0);
  PutFixed32(&empty_block, 1);
  // The index maps the block's last key to its handle (offset 0, size 16).
  std::string index_block = std::string("\x00\x02\x02" "ab\x00\x10", 7);
  PutFixed32(&index_block, 0);
  PutFixed32(&index_block, 1);
  std::string expected = with_trailer(data_block) + with_trailer(empty_block) +
                         with_trailer(index_block);
  std::string footer;
  PutVarint64(&footer, 21);  // metaindex: after the 16 + 5 bytes of block 0
  PutVarint64(&footer, 8);
  PutVarint64(&footer, 34);  // index
  PutVarint64(&footer, 15);
  footer.resize(40, '\0');
  footer += "\x57\xfb\x80\x8b\x24\x75\x47\xdb";
  expected += footer;
  EXPECT_EQ(file, expected);
}

class SSTableCorruptionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SSTableOptions options;
    options.block_size = 512;
    entries_ = ManyEntries(300);
    file_ = Build(entries_, options);
  }

  StatusOr<SSTable> ParseWithByteFlipped(size_t offset) const {
    std::string damaged = file_;
    damaged[offset] ^= 0x10;
    return SSTable::Parse(damaged, "model.ckpt.index");
  }
  // Where the index block starts, read from the footer.
  uint64_t IndexOffset() const {
    std::string_view footer = std::string_view(file_).substr(file_.size() - 48);
    uint64_t value;
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(GetVarint64(&footer, &value));
    return value;
  }
  void ExpectDataLossNamingFile(const Status& s) const {
    EXPECT_TRUE(errors::IsDataLoss(s)) << s;
    EXPECT_TRUE(Mentions(s, "'model.ckpt.index'")) << s;
  }

  Entries entries_;
  std::string file_;
};

TEST_F(SSTableCorruptionTest, FlippedByteInADataBlock) {
  StatusOr<SSTable> table = ParseWithByteFlipped(100);
  ASSERT_FALSE(table.ok());
  ExpectDataLossNamingFile(table.status());
  EXPECT_TRUE(Mentions(table.status(), "checksum mismatch in data block 0")) << table.status();
}

TEST_F(SSTableCorruptionTest, FlippedByteInTheIndexBlock) {
  StatusOr<SSTable> table = ParseWithByteFlipped(IndexOffset() + 3);
  ASSERT_FALSE(table.ok());
  ExpectDataLossNamingFile(table.status());
  EXPECT_TRUE(Mentions(table.status(), "index block")) << table.status();
}

TEST_F(SSTableCorruptionTest, TruncatedFooter) {
  for (size_t cut : {size_t{1}, size_t{8}, size_t{47}, size_t{48}, file_.size() - 10}) {
    StatusOr<SSTable> table =
        SSTable::Parse(std::string_view(file_).substr(0, file_.size() - cut), "model.ckpt.index");
    ASSERT_FALSE(table.ok()) << cut;
    ExpectDataLossNamingFile(table.status());
  }
  StatusOr<SSTable> empty = SSTable::Parse("", "model.ckpt.index");
  ASSERT_FALSE(empty.ok());
  ExpectDataLossNamingFile(empty.status());
}

TEST_F(SSTableCorruptionTest, BadMagic) {
  StatusOr<SSTable> table = ParseWithByteFlipped(file_.size() - 1);
  ASSERT_FALSE(table.ok());
  ExpectDataLossNamingFile(table.status());
  EXPECT_TRUE(Mentions(table.status(), "magic")) << table.status();
}

// No single flipped byte anywhere gives a table with different contents:
// each is either caught or lands in the footer's unused padding.
TEST_F(SSTableCorruptionTest, EveryFlippedByteIsCaughtOrHarmless) {
  for (size_t offset = 0; offset < file_.size(); ++offset) {
    StatusOr<SSTable> table = ParseWithByteFlipped(offset);
    if (table.ok()) {
      EXPECT_EQ(table->entries(), entries_) << offset;
    } else {
      EXPECT_TRUE(errors::IsDataLoss(table.status())) << offset << " " << table.status();
    }
  }
}

TEST(SSTableTest, CompressedBlocksAreUnimplemented) {
  // Mark data block 0 as snappy-compressed, with a checksum to match. The
  // block is one 5-byte entry and 8 bytes of restarts, so its type byte is
  // at offset 13.
  std::string table = Build({{"k", "v"}});
  const size_t type_offset = 13;
  table[type_offset] = 1;
  std::string crc;
  PutFixed32(&crc, crc32c::Mask(crc32c::Value(table.data(), type_offset + 1)));
  table.replace(type_offset + 1, 4, crc);
  StatusOr<SSTable> parsed = SSTable::Parse(table, "t.index");
  EXPECT_TRUE(errors::IsUnimplemented(parsed.status())) << parsed.status();
  EXPECT_TRUE(Mentions(parsed.status(), "snappy")) << parsed.status();
}

TEST(SSTableFileTest, OpenReadsAndNamesMissingFiles) {
  const std::string path = ::testing::TempDir() + "/sstable_test.index";
  ASSERT_TRUE(WriteStringToFileAtomic(path, Build(ManyEntries(10))).ok());
  StatusOr<SSTable> table = SSTable::Open(path);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->entries(), ManyEntries(10));
  std::string contents = *ReadFileToString(path);
  ASSERT_TRUE(WriteStringToFileAtomic(path, contents.substr(0, contents.size() / 2)).ok());
  table = SSTable::Open(path);
  EXPECT_TRUE(errors::IsDataLoss(table.status())) << table.status();
  EXPECT_TRUE(Mentions(table.status(), path)) << table.status();
  ASSERT_TRUE(DeleteFile(path).ok());
  EXPECT_TRUE(errors::IsNotFound(SSTable::Open(path).status()));
}

}  // namespace
}  // namespace weir
