// Small string helpers: concatenation of mixed values, joining, splitting.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace weir {

// Concatenates the stream representation of each argument.
template <typename... Args>
std::string StrCat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

// Joins the elements of `items` (anything streamable) with `separator`.
template <typename Container>
std::string StrJoin(const Container& items, std::string_view separator) {
  std::ostringstream os;
  bool first = true;
  for (const auto& item : items) {
    if (!first) os << separator;
    os << item;
    first = false;
  }
  return os.str();
}

std::vector<std::string> StrSplit(std::string_view text, char separator);

bool StartsWith(std::string_view text, std::string_view prefix);
bool EndsWith(std::string_view text, std::string_view suffix);

// Parses a decimal integer covering all of `text`; false on anything else.
bool ParseInt64(std::string_view text, int64_t* value);
// The same for an unsigned value: no sign, at most 2^64 - 1.
bool ParseUint64(std::string_view text, uint64_t* value);

}  // namespace weir
