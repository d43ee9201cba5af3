// FuzzInput: reads typed choices from a fuzzer's bytes. Past the end every
// read returns zero, so a short input means "the first / default choice" and
// any byte string is a valid input.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace weir::fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  bool empty() const { return pos_ >= size_; }
  size_t remaining() const { return empty() ? 0 : size_ - pos_; }

  uint8_t Byte() { return empty() ? 0 : data_[pos_++]; }
  bool Bool() { return Byte() & 1; }
  uint16_t U16() { return static_cast<uint16_t>(Byte() | (Byte() << 8)); }
  uint64_t U64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t{Byte()} << (8 * i);
    return v;
  }
  // A value in [0, n); 0 when n is 0.
  size_t Below(size_t n) { return n == 0 ? 0 : (n <= 256 ? Byte() : U16()) % n; }
  template <typename T>
  const T& Pick(const std::vector<T>& values) { return values[Below(values.size())]; }

  // An int64 biased to the values that break size arithmetic: mostly small
  // (-1 .. 8), else a boundary (2^31, 2^32, 2^62, INT64_MAX, INT64_MIN...),
  // else any 64-bit pattern.
  int64_t InterestingInt() {
    static constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
    static constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
    static constexpr int64_t kBoundaries[] = {
        kMax, kMin, kMax - 1, kMin + 1, int64_t{1} << 62, (int64_t{1} << 62) + 1,
        -(int64_t{1} << 62), int64_t{1} << 31, (int64_t{1} << 31) - 1, -(int64_t{1} << 31),
        int64_t{1} << 32, (int64_t{1} << 32) - 1, int64_t{1} << 40, int64_t{1} << 20,
        int64_t{1} << 53, 3037000500,  // sqrt(2^63), rounded up
        255, 256, 65535, 65536, 4096, -2, -3, -100, 100, 16, 64};
    const uint8_t b = Byte();
    if (b < 176) return static_cast<int64_t>(b % 10) - 1;
    if (b < 248) return kBoundaries[b % (sizeof(kBoundaries) / sizeof(kBoundaries[0]))];
    return static_cast<int64_t>(U64());
  }

  // A double biased to the awkward ones: NaN, infinities, signed zero,
  // denormals, huge values, small integers, else any bit pattern.
  double InterestingDouble() {
    static constexpr double kValues[] = {0.0, 1.0, -1.0, 0.5, 2.0, -0.0, 3.0, 1e-45, 1e30, -1e30,
                                         std::numeric_limits<double>::quiet_NaN(),
                                         std::numeric_limits<double>::infinity(),
                                         -std::numeric_limits<double>::infinity(),
                                         std::numeric_limits<double>::denorm_min(),
                                         std::numeric_limits<double>::max(), 9.3e18, -9.3e18,
                                         4294967296.0, 65504.0, 1e-8};
    const uint8_t b = Byte();
    if (b < 240) return kValues[b % (sizeof(kValues) / sizeof(kValues[0]))];
    const uint64_t bits = U64();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }

  // A length-prefixed string of at most `max_len` bytes.
  std::string String(size_t max_len) {
    const size_t n = Below(max_len + 1);
    std::string s;
    while (s.size() < n && !empty()) s.push_back(static_cast<char>(Byte()));
    return s;
  }

  // Everything not read yet.
  std::string_view Rest() {
    if (empty()) return {};
    std::string_view rest(reinterpret_cast<const char*>(data_ + pos_), size_ - pos_);
    pos_ = size_;
    return rest;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace weir::fuzz
