#include "weir/base/checked_math.h"

#include <gtest/gtest.h>

namespace weir {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST(CheckedMathTest, OptionalFormsAreExactOrEmpty) {
  EXPECT_EQ(AddWithoutOverflow(kMax - 1, 1), kMax);
  EXPECT_FALSE(AddWithoutOverflow(kMax, 1).has_value());
  EXPECT_FALSE(AddWithoutOverflow(kMin, -1).has_value());
  EXPECT_EQ(SubtractWithoutOverflow(0, kMax), -kMax);
  EXPECT_FALSE(SubtractWithoutOverflow(kMin, 1).has_value());
  EXPECT_EQ(MultiplyWithoutOverflow(int64_t{1} << 31, int64_t{1} << 31), int64_t{1} << 62);
  EXPECT_FALSE(MultiplyWithoutOverflow(int64_t{1} << 32, int64_t{1} << 31).has_value());
  EXPECT_FALSE(MultiplyWithoutOverflow(kMin, -1).has_value());
  EXPECT_EQ(MultiplyWithoutOverflow(0, kMax), 0);
}

TEST(CheckedMathTest, StatusFormsNameTheQuantityAndOperands) {
  int64_t out = 7;
  ASSERT_TRUE(CheckedAdd(2, 3, &out, "sum").ok());
  EXPECT_EQ(out, 5);
  Status s = CheckedAdd(kMax, 1, &out, "Conv2D output height");
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "Conv2D output height: 9223372036854775807 + 1 overflows int64");
  EXPECT_FALSE(CheckedSubtract(kMin, 1, &out, "d").ok());
  s = CheckedMultiply(int64_t{1} << 40, int64_t{1} << 40, &out, "Tile output dim 0");
  EXPECT_NE(s.message().find("1099511627776 * 1099511627776"), std::string::npos) << s;
}

TEST(CheckedMathTest, ElementCount) {
  std::vector<int64_t> dims = {2, 3, 4};
  EXPECT_EQ(*CheckedElementCount(dims, "x"), 24);
  EXPECT_EQ(*CheckedElementCount({}, "x"), 1);
  dims = {int64_t{1} << 62, 2};
  Status s = CheckedElementCount(dims, "Fill output").status();
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("Fill output: shape [4611686018427387904,2]"), std::string::npos)
      << s;
  // Wrapping to exactly zero (2^32 * 2^32 = 2^64) must not pass as an empty shape.
  dims = {int64_t{1} << 32, int64_t{1} << 32};
  EXPECT_FALSE(CheckedElementCount(dims, "x").ok());
  dims = {5, -1};
  EXPECT_NE(CheckedElementCount(dims, "x").status().message().find("negative"),
            std::string::npos);
  dims = {0, kMax};
  EXPECT_EQ(*CheckedElementCount(dims, "x"), 0);
}

TEST(CheckedMathTest, ByteSize) {
  EXPECT_EQ(*CheckedByteSize(10, 4, 100, "t"), 40);
  EXPECT_FALSE(CheckedByteSize(kMax / 2, 4, kMax, "t").ok());
  Status s = CheckedByteSize(1000, 8, 4096, "Const value").status();
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("8000 bytes"), std::string::npos) << s;
  EXPECT_FALSE(CheckedByteSize(-1, 4, 100, "t").ok());
}

}  // namespace
}  // namespace weir
