#include "weir/framework/types.h"

#include <ostream>

namespace weir {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  size_t size;
};

constexpr DTypeInfo kDTypes[] = {
    {DT_FLOAT, "float", 4},        {DT_DOUBLE, "double", 8},
    {DT_INT32, "int32", 4},        {DT_UINT8, "uint8", 1},
    {DT_INT16, "int16", 2},        {DT_INT8, "int8", 1},
    {DT_STRING, "string", 0},      {DT_COMPLEX64, "complex64", 8},
    {DT_INT64, "int64", 8},        {DT_BOOL, "bool", 1},
    {DT_BFLOAT16, "bfloat16", 2},  {DT_UINT16, "uint16", 2},
    {DT_COMPLEX128, "complex128", 16}, {DT_HALF, "half", 2},
    {DT_RESOURCE, "resource", 0},  {DT_UINT32, "uint32", 4},
    {DT_UINT64, "uint64", 8},      {DT_VARIANT, "variant", 0},
};

const DTypeInfo* Find(DType dtype) {
  for (const DTypeInfo& info : kDTypes) {
    if (info.dtype == dtype) return &info;
  }
  return nullptr;
}

}  // namespace

std::string_view DTypeName(DType dtype) {
  const DTypeInfo* info = Find(dtype);
  return info ? info->name : "invalid";
}

bool DTypeFromName(std::string_view name, DType* dtype) {
  for (const DTypeInfo& info : kDTypes) {
    if (info.name == name) {
      *dtype = info.dtype;
      return true;
    }
  }
  return false;
}

bool IsValidDType(int value) { return Find(static_cast<DType>(value)) != nullptr; }

size_t DTypeSize(DType dtype) {
  const DTypeInfo* info = Find(dtype);
  return info ? info->size : 0;
}

bool IsFloatingDType(DType dtype) {
  return dtype == DT_FLOAT || dtype == DT_DOUBLE || dtype == DT_HALF || dtype == DT_BFLOAT16;
}

bool IsIntegerDType(DType dtype) {
  switch (dtype) {
    case DT_INT8: case DT_INT16: case DT_INT32: case DT_INT64:
    case DT_UINT8: case DT_UINT16: case DT_UINT32: case DT_UINT64:
      return true;
    default:
      return false;
  }
}

bool IsNonPodDType(DType dtype) {
  return dtype == DT_STRING || dtype == DT_RESOURCE || dtype == DT_VARIANT;
}

bool IsComplexDType(DType dtype) { return dtype == DT_COMPLEX64 || dtype == DT_COMPLEX128; }

std::ostream& operator<<(std::ostream& os, DType dtype) { return os << DTypeName(dtype); }

}  // namespace weir
