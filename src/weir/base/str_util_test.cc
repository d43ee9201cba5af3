#include "weir/base/str_util.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <list>
#include <string>
#include <vector>

namespace weir {
namespace {

using Strings = std::vector<std::string>;

TEST(StrCatTest, ConcatenatesMixedValues) {
  EXPECT_EQ(StrCat("a"), "a");
  EXPECT_EQ(StrCat("x=", 3, ", y=", -2.5, ' ', std::string("s"), std::string_view("v")),
            "x=3, y=-2.5 sv");
  EXPECT_EQ(StrCat(int64_t{-9223372036854775807LL - 1}),
            "-9223372036854775808");
  EXPECT_EQ(StrCat(uint64_t{18446744073709551615ULL}), "18446744073709551615");
}

TEST(StrJoinTest, JoinsWithSeparator) {
  EXPECT_EQ(StrJoin(Strings{}, ","), "");
  EXPECT_EQ(StrJoin(Strings{"a"}, ","), "a");
  EXPECT_EQ(StrJoin(Strings{"a", "b", "c"}, ", "), "a, b, c");
  EXPECT_EQ(StrJoin(Strings{"", ""}, ","), ",");
  EXPECT_EQ(StrJoin(std::vector<int>{1, -2, 3}, ""), "1-23");
  EXPECT_EQ(StrJoin(std::list<int64_t>{4, 5}, " x "), "4 x 5");
}

TEST(StrSplitTest, SplitsOnEverySeparator) {
  EXPECT_EQ(StrSplit("a,b,c", ','), (Strings{"a", "b", "c"}));
  EXPECT_EQ(StrSplit("abc", ','), (Strings{"abc"}));
  EXPECT_EQ(StrSplit("a;;b", ';'), (Strings{"a", "", "b"}));
}

TEST(StrSplitTest, KeepsEmptyPiecesAtTheEnds) {
  // The empty string is one empty piece, and every separator ends a piece,
  // so splitting then joining with the same separator is the identity.
  EXPECT_EQ(StrSplit("", ','), (Strings{""}));
  EXPECT_EQ(StrSplit("a,", ','), (Strings{"a", ""}));
  EXPECT_EQ(StrSplit(",a", ','), (Strings{"", "a"}));
  EXPECT_EQ(StrSplit(",", ','), (Strings{"", ""}));
  EXPECT_EQ(StrSplit(",,", ','), (Strings{"", "", ""}));
  for (const char* text : {"", ",", "a,,b,", ",x,", "abc"}) {
    EXPECT_EQ(StrJoin(StrSplit(text, ','), ","), text);
  }
}

TEST(StartsEndsWithTest, Basics) {
  EXPECT_TRUE(StartsWith("list(int)", "list("));
  EXPECT_TRUE(StartsWith("abc", ""));
  EXPECT_TRUE(StartsWith("abc", "abc"));
  EXPECT_FALSE(StartsWith("ab", "abc"));
  EXPECT_FALSE(StartsWith("abc", "b"));
  EXPECT_FALSE(StartsWith("", "a"));
  EXPECT_TRUE(EndsWith("list(int)", ")"));
  EXPECT_TRUE(EndsWith("abc", ""));
  EXPECT_TRUE(EndsWith("abc", "abc"));
  EXPECT_FALSE(EndsWith("bc", "abc"));
  EXPECT_FALSE(EndsWith("abc", "b"));
  EXPECT_FALSE(EndsWith("", "a"));
}

TEST(ParseInt64Test, AcceptsWholeDecimalIntegers) {
  int64_t v = -1;
  ASSERT_TRUE(ParseInt64("0", &v));
  EXPECT_EQ(v, 0);
  ASSERT_TRUE(ParseInt64("42", &v));
  EXPECT_EQ(v, 42);
  ASSERT_TRUE(ParseInt64("-17", &v));
  EXPECT_EQ(v, -17);
  ASSERT_TRUE(ParseInt64("007", &v));
  EXPECT_EQ(v, 7);
  ASSERT_TRUE(ParseInt64("9223372036854775807", &v));
  EXPECT_EQ(v, std::numeric_limits<int64_t>::max());
  ASSERT_TRUE(ParseInt64("-9223372036854775808", &v));
  EXPECT_EQ(v, std::numeric_limits<int64_t>::min());
}

TEST(ParseInt64Test, RejectsJunkAndOverflow) {
  int64_t v = 0;
  for (const char* bad : {"", "-", " 1", "1 ", "12x", "x12", "1.5", "0x10", "1e3", "--1",
                          "9223372036854775808", "-9223372036854775809",
                          "99999999999999999999999"}) {
    EXPECT_FALSE(ParseInt64(bad, &v)) << "'" << bad << "'";
  }
}

TEST(ParseUint64Test, AcceptsTheFullUnsignedRange) {
  uint64_t v = 1;
  ASSERT_TRUE(ParseUint64("0", &v));
  EXPECT_EQ(v, 0u);
  ASSERT_TRUE(ParseUint64("9223372036854775808", &v));  // 2^63: beyond int64
  EXPECT_EQ(v, uint64_t{1} << 63);
  ASSERT_TRUE(ParseUint64("18446744073709551615", &v));
  EXPECT_EQ(v, std::numeric_limits<uint64_t>::max());
  for (const char* bad : {"", "-1", "-0", "+1", " 1", "1x", "18446744073709551616"}) {
    EXPECT_FALSE(ParseUint64(bad, &v)) << "'" << bad << "'";
  }
}

TEST(ParseInt64Test, StopsAtViewEnd) {
  // A view into a longer buffer: only the viewed characters count.
  std::string_view text = std::string_view("123456").substr(0, 3);
  int64_t v = 0;
  ASSERT_TRUE(ParseInt64(text, &v));
  EXPECT_EQ(v, 123);
}

}  // namespace
}  // namespace weir
