// Byte-level encodings of on-disk formats (LevelDB tables, checkpoints,
// TFRecord): little-endian fixed-width integers and base-128 varints.
//
// Decoders read from the front of a string_view and advance it; they return
// false, leaving the view unchanged, when the input is too short or a varint
// is malformed, so callers can turn bad input into a DataLoss status.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace weir {

void PutFixed32(std::string* out, uint32_t value);
void PutFixed64(std::string* out, uint64_t value);
// Seven bits per byte, least significant group first, high bit = "more".
void PutVarint32(std::string* out, uint32_t value);
void PutVarint64(std::string* out, uint64_t value);

// REQUIRES: 4 (8) readable bytes at `p`.
uint32_t DecodeFixed32(const char* p);
uint64_t DecodeFixed64(const char* p);

bool GetFixed32(std::string_view* input, uint32_t* value);
bool GetFixed64(std::string_view* input, uint64_t* value);
// False for more than 5 (10) bytes or a value that overflows 32 (64) bits.
bool GetVarint32(std::string_view* input, uint32_t* value);
bool GetVarint64(std::string_view* input, uint64_t* value);

}  // namespace weir
