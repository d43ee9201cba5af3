// Checked integer arithmetic for every dim, element count and byte size that
// is computed from user input (attrs, shapes, tensor values, file headers).
//
// The rule: a size derived from input is never computed with a bare `+`,
// `-` or `*`. Use these helpers; an overflow becomes InvalidArgument naming
// what was being computed and the operands, never a wrapped value, a CHECK or
// an allocation of the wrong size. They are branch-light (one overflow flag
// test) and belong outside per-element loops.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string_view>

#include "weir/base/status.h"

namespace weir {

// The largest element count a tensor may have (as TensorFlow: 2^63 - 1).
inline constexpr int64_t kMaxTensorElements = std::numeric_limits<int64_t>::max();
// The largest tensor, in bytes, that may come from an attr, a constant or a
// TensorProto (protobuf itself stops at 2 GiB for a whole message).
inline constexpr int64_t kMaxAttrTensorBytes = int64_t{1} << 31;

// a + b, a - b, a * b, or nullopt when the exact result does not fit int64.
inline std::optional<int64_t> AddWithoutOverflow(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<int64_t> SubtractWithoutOverflow(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<int64_t> MultiplyWithoutOverflow(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// Status forms for shape code. `what` names the quantity ("Conv2D output
// height"); the message carries it and both operands:
//   InvalidArgument: Conv2D output height: 9223372036854775807 + 1 overflows int64
Status CheckedAdd(int64_t a, int64_t b, int64_t* out, std::string_view what);
Status CheckedSubtract(int64_t a, int64_t b, int64_t* out, std::string_view what);
Status CheckedMultiply(int64_t a, int64_t b, int64_t* out, std::string_view what);

// The product of `dims`: InvalidArgument if a dim is negative or the product
// exceeds kMaxTensorElements. `what` names the shape's owner for the message.
StatusOr<int64_t> CheckedElementCount(std::span<const int64_t> dims, std::string_view what);

// `count` elements of `element_size` bytes each: InvalidArgument when the
// byte size overflows int64 or exceeds `max_bytes`.
StatusOr<int64_t> CheckedByteSize(int64_t count, int64_t element_size, int64_t max_bytes,
                                  std::string_view what);

}  // namespace weir
