// Strict text-to-number conversion for StringToNumber and DecodeCSV, as
// TensorFlow converts: surrounding whitespace is ignored, the whole rest
// must be the number. Integers: optional sign, decimal digits, in range.
// Floats: decimal or scientific notation, "inf"/"infinity"/"nan" in any
// case, 0x-prefixed hexadecimal integers; out-of-range values round to
// infinity or zero as strtod does.
#pragma once

#include <cstdint>
#include <string_view>

namespace weir {

bool ParseNumber(std::string_view text, float* value);
bool ParseNumber(std::string_view text, double* value);
bool ParseNumber(std::string_view text, int32_t* value);
bool ParseNumber(std::string_view text, int64_t* value);
bool ParseNumber(std::string_view text, uint32_t* value);
bool ParseNumber(std::string_view text, uint64_t* value);

}  // namespace weir
