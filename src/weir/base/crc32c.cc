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
// The crc32 instruction has a latency of three cycles but starts one per
// cycle, so one dependent chain runs at a third of its speed. Long inputs
// are cut into three adjacent blocks crc'd by three independent chains,
// then joined: crc(A B) = Shift(crc(A), |B|) ^ crc(B) (B's from a zero
// register), where Shift appends |B| zero bytes, a linear map applied by
// four table lookups.
constexpr size_t kBlockSizes[] = {8192, 256, 64};

// GF(2) 32x32 matrices as 32 column words: the product with a vector, and
// the square (the map applied twice).
uint32_t MatrixTimes(const uint32_t* matrix, uint32_t vector) {
  uint32_t sum = 0;
  for (; vector != 0; vector >>= 1, ++matrix) {
    if (vector & 1) sum ^= *matrix;
  }
  return sum;
}

void MatrixSquare(uint32_t* square, const uint32_t* matrix) {
  for (int n = 0; n < 32; ++n) square[n] = MatrixTimes(matrix, matrix[n]);
}

// Shift by `length` zero bytes (a power of two), as four byte-indexed tables.
using ShiftTables = std::array<std::array<uint32_t, 256>, 4>;

ShiftTables MakeShiftTables(size_t length) {
  uint32_t odd[32], even[32];
  odd[0] = kPolynomial;  // one zero bit
  for (int n = 1; n < 32; ++n) odd[n] = uint32_t{1} << (n - 1);
  MatrixSquare(even, odd);  // two zero bits
  MatrixSquare(odd, even);  // four
  // Each square doubles: one zero byte, two, four... until length is used up.
  const uint32_t* op = nullptr;
  while (op == nullptr) {
    MatrixSquare(even, odd);
    length >>= 1;
    if (length == 0) {
      op = even;
      break;
    }
    MatrixSquare(odd, even);
    length >>= 1;
    if (length == 0) op = odd;
  }
  ShiftTables tables{};
  for (uint32_t b = 0; b < 256; ++b) {
    for (int k = 0; k < 4; ++k) tables[k][b] = MatrixTimes(op, b << (8 * k));
  }
  return tables;
}

uint32_t Shift(const ShiftTables& tables, uint32_t crc) {
  return tables[0][crc & 0xff] ^ tables[1][(crc >> 8) & 0xff] ^ tables[2][(crc >> 16) & 0xff] ^
         tables[3][crc >> 24];
}

__attribute__((target("sse4.2"))) inline uint64_t Crc64(uint64_t state, const unsigned char* p) {
  uint64_t word;
  std::memcpy(&word, p, 8);  // the instruction wants little-endian words
  return __builtin_ia32_crc32di(state, word);
}

__attribute__((target("sse4.2"))) uint32_t ExtendHardware(uint32_t crc, const char* data,
                                                          size_t n) {
  static const ShiftTables kShifts[] = {MakeShiftTables(kBlockSizes[0]),
                                        MakeShiftTables(kBlockSizes[1]),
                                        MakeShiftTables(kBlockSizes[2])};
  const auto* p = reinterpret_cast<const unsigned char*>(data);
  uint64_t state = ~crc;
  for (int tier = 0; tier < 3; ++tier) {
    const size_t block = kBlockSizes[tier];
    const ShiftTables& shift = kShifts[tier];
    for (; n >= 3 * block; n -= 3 * block, p += 3 * block) {
      uint64_t state1 = 0, state2 = 0;
      for (size_t i = 0; i < block; i += 8) {
        state = Crc64(state, p + i);
        state1 = Crc64(state1, p + block + i);
        state2 = Crc64(state2, p + 2 * block + i);
      }
      state = Shift(shift, static_cast<uint32_t>(state)) ^ state1;
      state = Shift(shift, static_cast<uint32_t>(state)) ^ state2;
    }
  }
  for (; n >= 8; n -= 8, p += 8) state = Crc64(state, p);
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
