#include "weir/kernels/float16_convert.h"

#include <Eigen/Core>
#include <bit>
#include <cstring>

#if defined(__F16C__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

// GCC 12 reports a false "may be used uninitialized" inside the AVX-512
// intrinsics' headers (their deliberate undefined vectors), as in
// framework/eigen_tensor.h.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace weir {

// Eigen 3.4's own half <-> float conversion of a tensor expression is
// scalar here (~7 ns an element); the instructions do 8 or 16 a cycle.

void HalfToFloat(const Eigen::half* in, float* out, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
    _mm512_storeu_ps(out + i, _mm512_cvtph_ps(h));
  }
#elif defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
  }
#endif
  for (; i < n; ++i) out[i] = static_cast<float>(in[i]);
}

void FloatToHalf(const float* in, Eigen::half* out, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16) {
    const __m256i h = _mm512_cvtps_ph(_mm512_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), h);
  }
#elif defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
  }
#endif
  for (; i < n; ++i) out[i] = Eigen::half(in[i]);
}

void Bfloat16ToFloat(const Eigen::bfloat16* in, float* out, int64_t n) {
  // The float with the bfloat16's bits on top: a loop the compiler
  // vectorizes.
  const uint16_t* bits = reinterpret_cast<const uint16_t*>(in);
  for (int64_t i = 0; i < n; ++i) out[i] = std::bit_cast<float>(uint32_t{bits[i]} << 16);
}

void FloatToBfloat16(const float* in, Eigen::bfloat16* out, int64_t n) {
  uint16_t* bits = reinterpret_cast<uint16_t*>(out);
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t f = std::bit_cast<uint32_t>(in[i]);
    // Round to nearest even on the dropped 16 bits; a NaN becomes the
    // quiet NaN of its sign, as Eigen's conversion gives (rounding could
    // carry a NaN into infinity).
    const bool nan = (f & 0x7fffffffu) > 0x7f800000u;
    const uint32_t rounded = (f + 0x7fffu + ((f >> 16) & 1u)) >> 16;
    bits[i] = static_cast<uint16_t>(nan ? ((f >> 16) & 0x8000u) | 0x7fc0u : rounded);
  }
}

}  // namespace weir
