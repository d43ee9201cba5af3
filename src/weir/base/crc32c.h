// CRC-32C (Castagnoli), the checksum of LevelDB tables, TFRecord framing and
// TensorFlow checkpoints. Uses the SSE4.2 crc32 instruction when the CPU has
// it (checked once at run time) and a table otherwise; both give the same
// values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace weir::crc32c {

// The crc of data[0, n) appended to data whose crc is `crc`:
// Extend(Value(a), b) == Value(a + b).
uint32_t Extend(uint32_t crc, const char* data, size_t n);

inline uint32_t Value(const char* data, size_t n) { return Extend(0, data, n); }
inline uint32_t Value(std::string_view data) { return Value(data.data(), data.size()); }

// Stored crcs are masked, because the crc of a string that itself contains
// crcs is weak: rotate right by 15 bits, then add a constant.
inline constexpr uint32_t kMaskDelta = 0xa282ead8u;
inline uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }
inline uint32_t Unmask(uint32_t masked) {
  uint32_t rotated = masked - kMaskDelta;
  return (rotated >> 17) | (rotated << 15);
}

// For tests: whether Extend uses the instruction, and the table version.
bool UsesHardware();
uint32_t ExtendPortable(uint32_t crc, const char* data, size_t n);

}  // namespace weir::crc32c
