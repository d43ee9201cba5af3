// DType: the element type of a tensor. Numbers and names match TensorFlow's
// DataType enum so graphs and checkpoints interoperate.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace Eigen {
struct half;
struct bfloat16;
}  // namespace Eigen

namespace weir {

enum DType : int {
  DT_INVALID = 0,
  DT_FLOAT = 1,
  DT_DOUBLE = 2,
  DT_INT32 = 3,
  DT_UINT8 = 4,
  DT_INT16 = 5,
  DT_INT8 = 6,
  DT_STRING = 7,
  DT_COMPLEX64 = 8,
  DT_INT64 = 9,
  DT_BOOL = 10,
  DT_BFLOAT16 = 14,
  DT_UINT16 = 17,
  DT_COMPLEX128 = 18,
  DT_HALF = 19,
  DT_RESOURCE = 20,
  DT_VARIANT = 21,
  DT_UINT32 = 22,
  DT_UINT64 = 23,
};

using complex64 = std::complex<float>;
using complex128 = std::complex<double>;

// "float", "int32", ... (TensorFlow's spellings); "invalid" for unknown values.
std::string_view DTypeName(DType dtype);
// Inverse of DTypeName; false if `name` is not a dtype.
bool DTypeFromName(std::string_view name, DType* dtype);
// True for the numbers listed in the enum above (proto input is untrusted).
bool IsValidDType(int value);
// Bytes per element; 0 for string, resource and variant (not plain old data).
size_t DTypeSize(DType dtype);
bool IsFloatingDType(DType dtype);  // half, bfloat16, float, double
bool IsIntegerDType(DType dtype);
bool IsComplexDType(DType dtype);
// String, resource and variant: elements with constructors, never memcpy'd.
bool IsNonPodDType(DType dtype);

std::ostream& operator<<(std::ostream& os, DType dtype);

class ResourceHandle;
class Variant;

// Maps a C++ element type to its DType at compile time.
template <typename T>
struct DTypeOf;
#define WEIR_DTYPE_OF(Type, Enum) \
  template <>                     \
  struct DTypeOf<Type> {          \
    static constexpr DType value = Enum; \
  }
WEIR_DTYPE_OF(float, DT_FLOAT);
WEIR_DTYPE_OF(double, DT_DOUBLE);
WEIR_DTYPE_OF(int32_t, DT_INT32);
WEIR_DTYPE_OF(uint8_t, DT_UINT8);
WEIR_DTYPE_OF(int16_t, DT_INT16);
WEIR_DTYPE_OF(int8_t, DT_INT8);
WEIR_DTYPE_OF(std::string, DT_STRING);
WEIR_DTYPE_OF(complex64, DT_COMPLEX64);
WEIR_DTYPE_OF(int64_t, DT_INT64);
WEIR_DTYPE_OF(bool, DT_BOOL);
WEIR_DTYPE_OF(Eigen::bfloat16, DT_BFLOAT16);
WEIR_DTYPE_OF(uint16_t, DT_UINT16);
WEIR_DTYPE_OF(complex128, DT_COMPLEX128);
WEIR_DTYPE_OF(Eigen::half, DT_HALF);
WEIR_DTYPE_OF(ResourceHandle, DT_RESOURCE);
WEIR_DTYPE_OF(Variant, DT_VARIANT);
WEIR_DTYPE_OF(uint32_t, DT_UINT32);
WEIR_DTYPE_OF(uint64_t, DT_UINT64);
#undef WEIR_DTYPE_OF

template <typename T>
inline constexpr DType kDTypeOf = DTypeOf<T>::value;

}  // namespace weir
