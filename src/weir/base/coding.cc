#include "weir/base/coding.h"

namespace weir {

void PutFixed32(std::string* out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>(value >> (8 * i)));
}

void PutFixed64(std::string* out, uint64_t value) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>(value >> (8 * i)));
}

void PutVarint32(std::string* out, uint32_t value) { PutVarint64(out, value); }

void PutVarint64(std::string* out, uint64_t value) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

uint32_t DecodeFixed32(const char* p) {
  const auto* b = reinterpret_cast<const unsigned char*>(p);
  return uint32_t{b[0]} | (uint32_t{b[1]} << 8) | (uint32_t{b[2]} << 16) |
         (uint32_t{b[3]} << 24);
}

uint64_t DecodeFixed64(const char* p) {
  return uint64_t{DecodeFixed32(p)} | (uint64_t{DecodeFixed32(p + 4)} << 32);
}

bool GetFixed32(std::string_view* input, uint32_t* value) {
  if (input->size() < 4) return false;
  *value = DecodeFixed32(input->data());
  input->remove_prefix(4);
  return true;
}

bool GetFixed64(std::string_view* input, uint64_t* value) {
  if (input->size() < 8) return false;
  *value = DecodeFixed64(input->data());
  input->remove_prefix(8);
  return true;
}

namespace {

// Decodes a varint of at most `max_bits` significant bits.
bool GetVarint(std::string_view* input, int max_bits, uint64_t* value) {
  uint64_t result = 0;
  for (size_t i = 0; i < input->size(); ++i) {
    const int shift = static_cast<int>(7 * i);
    if (shift >= max_bits) return false;
    const uint64_t group = static_cast<unsigned char>((*input)[i]) & 0x7f;
    // The last group may only use the bits left below max_bits.
    if (max_bits - shift < 7 && (group >> (max_bits - shift)) != 0) return false;
    result |= group << shift;
    if (((*input)[i] & 0x80) == 0) {
      input->remove_prefix(i + 1);
      *value = result;
      return true;
    }
  }
  return false;  // ran off the end
}

}  // namespace

bool GetVarint32(std::string_view* input, uint32_t* value) {
  uint64_t wide;
  if (!GetVarint(input, 32, &wide)) return false;
  *value = static_cast<uint32_t>(wide);
  return true;
}

bool GetVarint64(std::string_view* input, uint64_t* value) {
  return GetVarint(input, 64, value);
}

}  // namespace weir
