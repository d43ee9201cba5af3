#include "weir/base/coding.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

namespace weir {
namespace {

TEST(CodingTest, FixedIsLittleEndian) {
  std::string s;
  PutFixed32(&s, 0x04030201u);
  PutFixed64(&s, 0x0c0b0a0908070605ull);
  ASSERT_EQ(s.size(), 12u);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(s[i], i + 1);
  std::string_view in = s;
  uint32_t a;
  uint64_t b;
  ASSERT_TRUE(GetFixed32(&in, &a));
  ASSERT_TRUE(GetFixed64(&in, &b));
  EXPECT_EQ(a, 0x04030201u);
  EXPECT_EQ(b, 0x0c0b0a0908070605ull);
  EXPECT_TRUE(in.empty());
  EXPECT_FALSE(GetFixed32(&in, &a));
}

TEST(CodingTest, VarintKnownEncodings) {
  std::string s;
  PutVarint64(&s, 0);
  EXPECT_EQ(s, std::string(1, '\0'));
  s.clear();
  PutVarint64(&s, 300);
  EXPECT_EQ(s, "\xac\x02");
  s.clear();
  PutVarint64(&s, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(s.size(), 10u);
  EXPECT_EQ(s.back(), '\x01');
}

TEST(CodingTest, VarintRoundTrips) {
  std::vector<uint64_t> values;
  for (int bits = 0; bits < 64; ++bits) {
    uint64_t p = uint64_t{1} << bits;
    values.insert(values.end(), {p - 1, p, p + 1});
  }
  values.push_back(std::numeric_limits<uint64_t>::max());
  std::string s;
  for (uint64_t v : values) PutVarint64(&s, v);
  std::string_view in = s;
  for (uint64_t v : values) {
    uint64_t got;
    ASSERT_TRUE(GetVarint64(&in, &got));
    EXPECT_EQ(got, v);
  }
  EXPECT_TRUE(in.empty());
}

TEST(CodingTest, MalformedVarintsAreRejectedAndLeaveTheInput) {
  uint64_t v64;
  uint32_t v32;
  // Truncated: the continuation bit promises another byte.
  std::string_view truncated = "\x80\x80";
  EXPECT_FALSE(GetVarint64(&truncated, &v64));
  EXPECT_EQ(truncated.size(), 2u);
  // Eleven bytes is longer than any 64-bit value.
  std::string too_long(10, '\x80');
  too_long.push_back('\x01');
  std::string_view in = too_long;
  EXPECT_FALSE(GetVarint64(&in, &v64));
  // 2^64 does not fit: the tenth byte may only hold one bit.
  std::string overflow(9, '\xff');
  overflow.push_back('\x02');
  in = overflow;
  EXPECT_FALSE(GetVarint64(&in, &v64));
  // 2^32 does not fit in 32 bits, 2^32 - 1 does.
  std::string s;
  PutVarint64(&s, uint64_t{1} << 32);
  in = s;
  EXPECT_FALSE(GetVarint32(&in, &v32));
  s.clear();
  PutVarint32(&s, 0xffffffffu);
  in = s;
  ASSERT_TRUE(GetVarint32(&in, &v32));
  EXPECT_EQ(v32, 0xffffffffu);
}

}  // namespace
}  // namespace weir
