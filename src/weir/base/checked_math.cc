#include "weir/base/checked_math.h"

namespace weir {
namespace {

Status Overflow(std::string_view what, int64_t a, char op, int64_t b) {
  return errors::InvalidArgument(what, ": ", a, " ", std::string(1, op), " ", b,
                                 " overflows int64");
}

}  // namespace

Status CheckedAdd(int64_t a, int64_t b, int64_t* out, std::string_view what) {
  if (__builtin_add_overflow(a, b, out)) return Overflow(what, a, '+', b);
  return Status::OK();
}

Status CheckedSubtract(int64_t a, int64_t b, int64_t* out, std::string_view what) {
  if (__builtin_sub_overflow(a, b, out)) return Overflow(what, a, '-', b);
  return Status::OK();
}

Status CheckedMultiply(int64_t a, int64_t b, int64_t* out, std::string_view what) {
  if (__builtin_mul_overflow(a, b, out)) return Overflow(what, a, '*', b);
  return Status::OK();
}

StatusOr<int64_t> CheckedElementCount(std::span<const int64_t> dims, std::string_view what) {
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0) {
      return errors::InvalidArgument(what, ": shape [", StrJoin(dims, ","),
                                     "] has a negative dimension");
    }
    // A zero dim makes the count 0 whatever follows, but the later dims are
    // still checked for sign above; the product itself cannot overflow then.
    if (__builtin_mul_overflow(count, d, &count)) {
      return errors::InvalidArgument(what, ": shape [", StrJoin(dims, ","),
                                     "] has more than 2^63 - 1 elements");
    }
  }
  return count;
}

StatusOr<int64_t> CheckedByteSize(int64_t count, int64_t element_size, int64_t max_bytes,
                                  std::string_view what) {
  int64_t bytes;
  if (count < 0 || element_size < 0 || __builtin_mul_overflow(count, element_size, &bytes)) {
    return errors::InvalidArgument(what, ": ", count, " elements of ", element_size,
                                   " bytes overflow int64");
  }
  if (bytes > max_bytes) {
    return errors::InvalidArgument(what, ": ", count, " elements of ", element_size,
                                   " bytes need ", bytes, " bytes, more than the limit of ",
                                   max_bytes);
  }
  return bytes;
}

}  // namespace weir
