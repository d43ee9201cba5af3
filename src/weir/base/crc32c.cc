#include "weir/base/crc32c.h"

#include <array>
#include <cstring>

namespace weir::crc32c {
namespace {

// The Castagnoli polynomial, bit-reversed (the crc is computed LSB first).
constexpr uint32_t kPolynomial = 0x82f63b78u;

// tables[0] is the classic byte-at-a-time table; tables[k][b] is the crc of
// byte b followed by k zero bytes, so eight bytes fold in with eight lookups
// and no dependency between them ("slicing by 8").
using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables MakeTables() {
  Tables tables{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t crc = b;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) ? kPolynomial : 0);
    tables[0][b] = crc;
  }
  for (int k = 1; k < 8; ++k) {
    for (uint32_t b = 0; b < 256; ++b) {
      uint32_t prev = tables[k - 1][b];
      tables[k][b] = (prev >> 8) ^ tables[0][prev & 0xff];
    }
  }
  return tables;
}

constexpr Tables kTables = MakeTables();

uint32_t LoadLittle32(const unsigned char* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) |
         (uint32_t{p[3]} << 24);
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t ExtendHardware(uint32_t crc, const char* data,
                                                          size_t n) {
  const auto* p = reinterpret_cast<const unsigned char*>(data);
  uint64_t state = ~crc;
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);  // the instruction wants little-endian words
    state = __builtin_ia32_crc32di(state, word);
  }
  auto state32 = static_cast<uint32_t>(state);
  for (; n > 0; --n, ++p) state32 = __builtin_ia32_crc32qi(state32, *p);
  return ~state32;
}

bool DetectHardware() { return __builtin_cpu_supports("sse4.2"); }
#else
uint32_t ExtendHardware(uint32_t crc, const char* data, size_t n) {
  return ExtendPortable(crc, data, n);
}
bool DetectHardware() { return false; }
#endif

}  // namespace

uint32_t ExtendPortable(uint32_t crc, const char* data, size_t n) {
  const auto* p = reinterpret_cast<const unsigned char*>(data);
  uint32_t state = ~crc;
  for (; n >= 8; n -= 8, p += 8) {
    uint32_t low = state ^ LoadLittle32(p);
    uint32_t high = LoadLittle32(p + 4);
    state = kTables[7][low & 0xff] ^ kTables[6][(low >> 8) & 0xff] ^
            kTables[5][(low >> 16) & 0xff] ^ kTables[4][low >> 24] ^
            kTables[3][high & 0xff] ^ kTables[2][(high >> 8) & 0xff] ^
            kTables[1][(high >> 16) & 0xff] ^ kTables[0][high >> 24];
  }
  for (; n > 0; --n, ++p) state = (state >> 8) ^ kTables[0][(state ^ *p) & 0xff];
  return ~state;
}

bool UsesHardware() {
  static const bool has_hardware = DetectHardware();
  return has_hardware;
}

uint32_t Extend(uint32_t crc, const char* data, size_t n) {
  return UsesHardware() ? ExtendHardware(crc, data, n) : ExtendPortable(crc, data, n);
}

}  // namespace weir::crc32c
