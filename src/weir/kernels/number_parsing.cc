#include "weir/kernels/number_parsing.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

namespace weir {
namespace {

std::string_view TrimSpaces(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  return text;
}

// An optional sign, then decimal digits and nothing else.
bool ParseMagnitude(std::string_view text, bool* negative, uint64_t* magnitude) {
  *negative = false;
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) {
    *negative = text.front() == '-';
    text.remove_prefix(1);
  }
  if (text.empty() || text.front() == '-' || text.front() == '+') return false;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *magnitude);
  return error == std::errc() && end == text.data() + text.size();
}

template <typename Int>
bool ParseInteger(std::string_view text, Int* value) {
  bool negative;
  uint64_t magnitude;
  if (!ParseMagnitude(TrimSpaces(text), &negative, &magnitude)) return false;
  if constexpr (std::is_signed_v<Int>) {
    const uint64_t limit =
        static_cast<uint64_t>(std::numeric_limits<Int>::max()) + (negative ? 1 : 0);
    if (magnitude > limit) return false;
    *value = negative ? static_cast<Int>(0 - magnitude) : static_cast<Int>(magnitude);
  } else {
    if (negative && magnitude != 0) return false;
    if (magnitude > std::numeric_limits<Int>::max()) return false;
    *value = static_cast<Int>(magnitude);
  }
  return true;
}

template <typename Float>
bool ParseFloat(std::string_view text, Float* value) {
  std::string_view body = TrimSpaces(text);
  bool negative = false;
  if (!body.empty() && (body.front() == '-' || body.front() == '+')) {
    negative = body.front() == '-';
    body.remove_prefix(1);
  }
  if (body.empty() || body.front() == '-' || body.front() == '+') return false;
  Float magnitude;
  if (body.size() > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')) {
    uint64_t integer;
    const char* end = body.data() + body.size();
    auto [stop, error] = std::from_chars(body.data() + 2, end, integer, 16);
    if (error != std::errc() || stop != end) return false;
    magnitude = static_cast<Float>(integer);
  } else {
    const char* end = body.data() + body.size();
    auto [stop, error] = std::from_chars(body.data(), end, magnitude);
    if (stop != end) return false;
    if (error == std::errc::result_out_of_range) {
      // Too large or too small: round as strtod does (to infinity or zero).
      const std::string copy(body);
      magnitude =
          static_cast<Float>(std::is_same_v<Float, float> ? std::strtof(copy.c_str(), nullptr)
                                                          : std::strtod(copy.c_str(), nullptr));
    } else if (error != std::errc()) {
      return false;
    }
  }
  *value = negative ? -magnitude : magnitude;
  return true;
}

}  // namespace

bool ParseNumber(std::string_view text, float* value) { return ParseFloat(text, value); }
bool ParseNumber(std::string_view text, double* value) { return ParseFloat(text, value); }
bool ParseNumber(std::string_view text, int32_t* value) { return ParseInteger(text, value); }
bool ParseNumber(std::string_view text, int64_t* value) { return ParseInteger(text, value); }
bool ParseNumber(std::string_view text, uint32_t* value) { return ParseInteger(text, value); }
bool ParseNumber(std::string_view text, uint64_t* value) { return ParseInteger(text, value); }

}  // namespace weir
