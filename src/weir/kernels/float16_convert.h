// Bulk conversions between float32 and the 16-bit floats, vectorized
// (F16C / AVX-512 where the build targets them): float to 16 bits rounds
// to nearest even, overflow gives infinity, NaN stays NaN. These are the
// loads and stores of the 16-bit kernels that compute in float32, and
// Cast's fast path for these pairs.
#pragma once

#include <cstdint>

#include "weir/framework/types.h"

namespace weir {

void HalfToFloat(const Eigen::half* in, float* out, int64_t n);
void FloatToHalf(const float* in, Eigen::half* out, int64_t n);
void Bfloat16ToFloat(const Eigen::bfloat16* in, float* out, int64_t n);
void FloatToBfloat16(const float* in, Eigen::bfloat16* out, int64_t n);

}  // namespace weir
