#include "weir/base/crc32c.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace weir::crc32c {
namespace {

TEST(Crc32cTest, KnownAnswers) {
  EXPECT_EQ(Value("123456789"), 0xe3069283u);
  EXPECT_EQ(Value(std::string(32, '\0')), 0x8a9136aau);
  EXPECT_EQ(Value(std::string(32, '\xff')), 0x62a8ab43u);
  std::string ascending, descending;
  for (int i = 0; i < 32; ++i) {
    ascending.push_back(static_cast<char>(i));
    descending.push_back(static_cast<char>(31 - i));
  }
  EXPECT_EQ(Value(ascending), 0x46dd794eu);
  EXPECT_EQ(Value(descending), 0x113fdb5cu);
  EXPECT_EQ(Value(""), 0u);
}

TEST(Crc32cTest, ExtendEqualsValueOfTheConcatenation) {
  std::mt19937 rng(7);
  std::string data(1000, '\0');
  for (char& c : data) c = static_cast<char>(rng());
  const uint32_t whole = Value(data);
  for (size_t split : {0, 1, 7, 8, 9, 500, 999, 1000}) {
    uint32_t crc = Extend(Value(data.data(), split), data.data() + split, data.size() - split);
    EXPECT_EQ(crc, whole) << split;
  }
}

// The instruction path (when present) and the table path agree on every
// length and alignment, including the tails shorter than a word.
TEST(Crc32cTest, HardwareAndTableAgree) {
  std::mt19937 rng(11);
  std::string data(300, '\0');
  for (char& c : data) c = static_cast<char>(rng());
  for (size_t offset = 0; offset < 9; ++offset) {
    for (size_t n = 0; n + offset <= data.size(); n += 13) {
      EXPECT_EQ(Extend(0x1234u, data.data() + offset, n),
                ExtendPortable(0x1234u, data.data() + offset, n))
          << offset << " " << n;
    }
  }
  RecordProperty("uses_hardware", UsesHardware() ? "yes" : "no");
}

// Long inputs take the three-chain path (blocks of 8192, 256 and 64 bytes,
// joined by shift tables): every length around those block sizes agrees.
TEST(Crc32cTest, HardwareAndTableAgreeOnLongInputs) {
  std::mt19937 rng(5);
  // Room for the longest length at the largest offset.
  std::string data(50019 + 3, '\0');
  for (char& c : data) c = static_cast<char>(rng());
  for (size_t n : {191u, 192u, 193u, 200u, 255u, 767u, 768u, 769u, 959u, 960u, 1000u, 1535u,
                   1536u, 24575u, 24576u, 24577u, 25344u, 49151u, 49152u, 49159u, 49920u,
                   50019u}) {
    for (size_t offset : {0u, 3u}) {
      EXPECT_EQ(Extend(0xabcdu, data.data() + offset, n),
                ExtendPortable(0xabcdu, data.data() + offset, n))
          << offset << " " << n;
    }
  }
}

TEST(Crc32cTest, MaskRoundTripsAndChangesTheValue) {
  for (uint32_t crc : {0u, 1u, 0xe3069283u, 0xffffffffu, 0x80000000u}) {
    EXPECT_EQ(Unmask(Mask(crc)), crc);
    EXPECT_NE(Mask(crc), crc);
    EXPECT_NE(Mask(Mask(crc)), Mask(crc));
  }
  // Rotate right 15, add the delta: Mask(0) is the delta itself.
  EXPECT_EQ(Mask(0), 0xa282ead8u);
  EXPECT_EQ(Mask(1), (1u << 17) + 0xa282ead8u);
}

}  // namespace
}  // namespace weir::crc32c
