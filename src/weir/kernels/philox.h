// Philox4x32-10, the counter-based random generator of Salmon, Moraes, Dror
// and Shaw, "Parallel Random Numbers: As Easy as 1, 2, 3" (SC 2011): a
// 128-bit counter and a 64-bit key go through ten rounds of multiply-xor
// and come out as four random 32-bit words. Each block depends only on
// (key, counter), so any thread can compute any part of a sequence, and the
// numbers never depend on how work was split.
//
// PhiloxStream organizes the counter space for kernels: the counter's high
// 64 bits are a `position` (kernels reserve positions, one per independent
// stream) and its low 64 bits count the blocks drawn from that stream.
#pragma once

#include <array>
#include <cstdint>

namespace weir {

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

namespace philox_internal {

inline constexpr uint32_t kMultiplier0 = 0xD2511F53;
inline constexpr uint32_t kMultiplier1 = 0xCD9E8D57;
// The key schedule adds the golden ratio and sqrt(3) - 1, as 32-bit fractions.
inline constexpr uint32_t kKeyStep0 = 0x9E3779B9;
inline constexpr uint32_t kKeyStep1 = 0xBB67AE85;
inline constexpr int kRounds = 10;

// One round on counter words c0..c3 with key words k0, k1.
inline void Round(uint32_t& c0, uint32_t& c1, uint32_t& c2, uint32_t& c3, uint32_t k0,
                  uint32_t k1) {
  const uint64_t product0 = uint64_t{kMultiplier0} * c0;
  const uint64_t product1 = uint64_t{kMultiplier1} * c2;
  const uint32_t next0 = static_cast<uint32_t>(product1 >> 32) ^ c1 ^ k0;
  const uint32_t next2 = static_cast<uint32_t>(product0 >> 32) ^ c3 ^ k1;
  c1 = static_cast<uint32_t>(product1);
  c3 = static_cast<uint32_t>(product0);
  c0 = next0;
  c2 = next2;
}

}  // namespace philox_internal

// The key of a kernel with attrs seed and seed2 (random_ops.cc): a fresh
// random key when both are 0, else a mix of the two.
PhiloxKey KeyFromSeeds(int64_t seed, int64_t seed2);

// The four random words of one block.
inline PhiloxCounter PhiloxBlock(PhiloxCounter counter, PhiloxKey key) {
  uint32_t k0 = key[0], k1 = key[1];
  for (int round = 0; round < philox_internal::kRounds; ++round) {
    philox_internal::Round(counter[0], counter[1], counter[2], counter[3], k0, k1);
    k0 += philox_internal::kKeyStep0;
    k1 += philox_internal::kKeyStep1;
  }
  return counter;
}

// Blocks of one stream: counter {sub, position} (low word first) for
// sub = first_sub + i, i < N, written as out[4 * i + word]. Computed lane by
// lane over the N blocks so the compiler vectorizes the rounds; each block
// equals PhiloxBlock of its counter.
template <int N>
void PhiloxBlocks(PhiloxKey key, uint64_t position, uint64_t first_sub, uint32_t* out) {
  uint32_t c0[N], c1[N], c2[N], c3[N];
  for (int i = 0; i < N; ++i) {
    const uint64_t sub = first_sub + static_cast<uint64_t>(i);
    c0[i] = static_cast<uint32_t>(sub);
    c1[i] = static_cast<uint32_t>(sub >> 32);
    c2[i] = static_cast<uint32_t>(position);
    c3[i] = static_cast<uint32_t>(position >> 32);
  }
  uint32_t k0 = key[0], k1 = key[1];
  for (int round = 0; round < philox_internal::kRounds; ++round) {
    // Fully unrolled, this loop is not vectorized and runs ~5x slower.
#pragma GCC unroll 1
    for (int i = 0; i < N; ++i) philox_internal::Round(c0[i], c1[i], c2[i], c3[i], k0, k1);
    k0 += philox_internal::kKeyStep0;
    k1 += philox_internal::kKeyStep1;
  }
  for (int i = 0; i < N; ++i) {
    out[4 * i] = c0[i];
    out[4 * i + 1] = c1[i];
    out[4 * i + 2] = c2[i];
    out[4 * i + 3] = c3[i];
  }
}

// The random words of stream (key, position), in order, 16 blocks at a time.
// A stream never ends (2^64 blocks).
class PhiloxStream {
 public:
  static constexpr int kBlocksPerBatch = 16;
  static constexpr int kBatchWords = 4 * kBlocksPerBatch;

  // Starts at block `first_sub` of the stream.
  PhiloxStream(PhiloxKey key, uint64_t position, uint64_t first_sub = 0)
      : key_(key), position_(position), next_sub_(first_sub) {}

  // The next kBatchWords words; valid until the next call.
  const uint32_t* NextBatch() {
    Refill();
    used_ = kBatchWords;
    return words_;
  }
  uint32_t NextUint32() {
    if (used_ == kBatchWords) Refill();
    return words_[used_++];
  }
  uint64_t NextUint64() {
    const uint64_t low = NextUint32();
    return low | uint64_t{NextUint32()} << 32;
  }

 private:
  void Refill() {
    PhiloxBlocks<kBlocksPerBatch>(key_, position_, next_sub_, words_);
    next_sub_ += kBlocksPerBatch;
    used_ = 0;
  }

  PhiloxKey key_;
  uint64_t position_;
  uint64_t next_sub_;
  int used_ = kBatchWords;
  uint32_t words_[kBatchWords];
};

}  // namespace weir
