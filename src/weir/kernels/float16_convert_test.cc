// The bulk conversions against Eigen's scalar ones: every half and bfloat16
// bit pattern to float, and floats at the rounding ties, overflow, the
// subnormal range and NaN back to 16 bits, through both the vector body and
// the scalar tail (lengths that are not a multiple of 16).
#include "weir/kernels/float16_convert.h"

#include <gtest/gtest.h>

#include <Eigen/Core>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace weir {
namespace {

template <typename T>
uint16_t Bits(T x) {
  return std::bit_cast<uint16_t>(x);
}

std::vector<float> InterestingFloats() {
  std::vector<float> v = {0.0f,
                          -0.0f,
                          1.0f,
                          -1.0f,
                          65504.0f,
                          65519.0f,
                          65520.0f,
                          1e30f,
                          -1e30f,
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN(),
                          -std::numeric_limits<float>::quiet_NaN(),
                          std::bit_cast<float>(0x7f800001u),  // signaling NaN
                          5.96e-8f,
                          2.98e-8f,
                          2.99e-8f,
                          6.1e-5f,
                          1e-40f};
  // Ties and near-ties of both formats: floats whose dropped bits are
  // exactly half, or one unit either side.
  std::mt19937 rng(5);
  for (int i = 0; i < 4000; ++i) {
    const uint32_t f = rng();
    for (uint32_t low : {0x1000u, 0x0fffu, 0x1001u, 0x8000u, 0x7fffu, 0x8001u}) {
      v.push_back(std::bit_cast<float>((f & ~0x1fffu) | (low & 0x1fffu)));
      v.push_back(std::bit_cast<float>((f & ~0xffffu) | low));
    }
    v.push_back(std::bit_cast<float>(f));
  }
  return v;
}

TEST(Float16ConvertTest, EveryHalfAndBfloat16ToFloatIsExact) {
  std::vector<Eigen::half> half(65536 + 7);
  std::vector<Eigen::bfloat16> bf16(half.size());
  for (size_t i = 0; i < half.size(); ++i) {
    half[i] = std::bit_cast<Eigen::half>(static_cast<uint16_t>(i));
    bf16[i] = std::bit_cast<Eigen::bfloat16>(static_cast<uint16_t>(i));
  }
  std::vector<float> out(half.size());
  HalfToFloat(half.data(), out.data(), static_cast<int64_t>(half.size()));
  for (size_t i = 0; i < half.size(); ++i) {
    const float want = static_cast<float>(half[i]);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(out[i])) << i;
    } else {
      ASSERT_EQ(std::bit_cast<uint32_t>(out[i]), std::bit_cast<uint32_t>(want)) << i;
    }
  }
  Bfloat16ToFloat(bf16.data(), out.data(), static_cast<int64_t>(bf16.size()));
  for (size_t i = 0; i < bf16.size(); ++i) {
    ASSERT_EQ(std::bit_cast<uint32_t>(out[i]), uint32_t(i & 0xffff) << 16) << i;
  }
}

TEST(Float16ConvertTest, FloatToSixteenBitsRoundsToNearestEvenAsEigen) {
  const std::vector<float> in = InterestingFloats();
  std::vector<Eigen::half> half(in.size());
  std::vector<Eigen::bfloat16> bf16(in.size());
  FloatToHalf(in.data(), half.data(), static_cast<int64_t>(in.size()));
  FloatToBfloat16(in.data(), bf16.data(), static_cast<int64_t>(in.size()));
  for (size_t i = 0; i < in.size(); ++i) {
    const Eigen::half want_half(in[i]);
    const Eigen::bfloat16 want_bf16(in[i]);
    if (std::isnan(in[i])) {
      ASSERT_TRUE(Eigen::numext::isnan(half[i])) << in[i];
      ASSERT_EQ(Bits(bf16[i]), Bits(want_bf16)) << i;
      continue;
    }
    ASSERT_EQ(Bits(half[i]), Bits(want_half)) << "half of " << in[i] << " (" << i << ")";
    ASSERT_EQ(Bits(bf16[i]), Bits(want_bf16)) << "bfloat16 of " << in[i] << " (" << i << ")";
  }
  EXPECT_TRUE(Eigen::numext::isinf(half[7])) << "65520 rounds up to infinity";
  EXPECT_EQ(static_cast<float>(half[5]), 65504.0f);
}

}  // namespace
}  // namespace weir
