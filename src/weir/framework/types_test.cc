#include "weir/framework/types.h"

#include <gtest/gtest.h>

#include <Eigen/Core>
#include <set>
#include <sstream>
#include <string>

#include "weir/framework/resource_handle.h"

namespace weir {
namespace {

constexpr DType kAllDTypes[] = {
    DT_FLOAT,  DT_DOUBLE, DT_INT32,  DT_UINT8,      DT_INT16, DT_INT8,     DT_STRING,
    DT_COMPLEX64, DT_INT64, DT_BOOL, DT_BFLOAT16, DT_UINT16, DT_COMPLEX128, DT_HALF,
    DT_RESOURCE, DT_UINT32, DT_UINT64,
};

TEST(TypesTest, EnumNumbersMatchTensorFlow) {
  EXPECT_EQ(DT_INVALID, 0);
  EXPECT_EQ(DT_FLOAT, 1);
  EXPECT_EQ(DT_DOUBLE, 2);
  EXPECT_EQ(DT_INT32, 3);
  EXPECT_EQ(DT_UINT8, 4);
  EXPECT_EQ(DT_INT16, 5);
  EXPECT_EQ(DT_INT8, 6);
  EXPECT_EQ(DT_STRING, 7);
  EXPECT_EQ(DT_COMPLEX64, 8);
  EXPECT_EQ(DT_INT64, 9);
  EXPECT_EQ(DT_BOOL, 10);
  EXPECT_EQ(DT_BFLOAT16, 14);
  EXPECT_EQ(DT_UINT16, 17);
  EXPECT_EQ(DT_COMPLEX128, 18);
  EXPECT_EQ(DT_HALF, 19);
  EXPECT_EQ(DT_RESOURCE, 20);
  EXPECT_EQ(DT_UINT32, 22);
  EXPECT_EQ(DT_UINT64, 23);
}

TEST(TypesTest, EveryNameRoundTrips) {
  std::set<std::string_view> names;
  for (DType dtype : kAllDTypes) {
    std::string_view name = DTypeName(dtype);
    EXPECT_NE(name, "invalid") << static_cast<int>(dtype);
    names.insert(name);
    DType parsed = DT_INVALID;
    ASSERT_TRUE(DTypeFromName(name, &parsed)) << name;
    EXPECT_EQ(parsed, dtype) << name;
    EXPECT_TRUE(IsValidDType(dtype)) << name;
  }
  EXPECT_EQ(names.size(), std::size(kAllDTypes));  // names are distinct
}

TEST(TypesTest, TensorFlowSpellings) {
  EXPECT_EQ(DTypeName(DT_FLOAT), "float");
  EXPECT_EQ(DTypeName(DT_HALF), "half");
  EXPECT_EQ(DTypeName(DT_BFLOAT16), "bfloat16");
  EXPECT_EQ(DTypeName(DT_COMPLEX64), "complex64");
  EXPECT_EQ(DTypeName(DT_RESOURCE), "resource");
  EXPECT_EQ(DTypeName(DT_VARIANT), "variant");
  EXPECT_TRUE(IsValidDType(21));
  std::ostringstream os;
  os << DT_INT64 << "," << DT_BOOL;
  EXPECT_EQ(os.str(), "int64,bool");
}

TEST(TypesTest, UnknownNamesAndNumbers) {
  DType d = DT_FLOAT;
  for (const char* bad : {"", "float32", "Float", "DT_FLOAT", "invalid", "int"}) {
    EXPECT_FALSE(DTypeFromName(bad, &d)) << bad;
  }
  EXPECT_EQ(d, DT_FLOAT);  // untouched
  EXPECT_EQ(DTypeName(DT_INVALID), "invalid");
  EXPECT_EQ(DTypeName(static_cast<DType>(11)), "invalid");  // TF's qint8: not supported
  for (int bad : {0, 11, 12, 13, 15, 16, 24, -1, 101, 1000}) {
    EXPECT_FALSE(IsValidDType(bad)) << bad;
  }
  EXPECT_EQ(DTypeSize(DT_INVALID), 0u);
}

TEST(TypesTest, SizesMatchCppTypes) {
  EXPECT_EQ(DTypeSize(DT_FLOAT), sizeof(float));
  EXPECT_EQ(DTypeSize(DT_DOUBLE), sizeof(double));
  EXPECT_EQ(DTypeSize(DT_INT32), 4u);
  EXPECT_EQ(DTypeSize(DT_UINT8), 1u);
  EXPECT_EQ(DTypeSize(DT_INT16), 2u);
  EXPECT_EQ(DTypeSize(DT_INT8), 1u);
  EXPECT_EQ(DTypeSize(DT_COMPLEX64), sizeof(complex64));
  EXPECT_EQ(DTypeSize(DT_INT64), 8u);
  EXPECT_EQ(DTypeSize(DT_BOOL), sizeof(bool));
  EXPECT_EQ(DTypeSize(DT_BFLOAT16), sizeof(Eigen::bfloat16));
  EXPECT_EQ(DTypeSize(DT_UINT16), 2u);
  EXPECT_EQ(DTypeSize(DT_COMPLEX128), sizeof(complex128));
  EXPECT_EQ(DTypeSize(DT_COMPLEX128), 16u);
  EXPECT_EQ(DTypeSize(DT_HALF), sizeof(Eigen::half));
  EXPECT_EQ(DTypeSize(DT_HALF), 2u);
  EXPECT_EQ(DTypeSize(DT_UINT32), 4u);
  EXPECT_EQ(DTypeSize(DT_UINT64), 8u);
  EXPECT_EQ(DTypeSize(DT_STRING), 0u);
  EXPECT_EQ(DTypeSize(DT_RESOURCE), 0u);
}

TEST(TypesTest, Classification) {
  for (DType dtype : kAllDTypes) {
    int classes = IsFloatingDType(dtype) + IsIntegerDType(dtype) + IsComplexDType(dtype);
    bool other = dtype == DT_BOOL || dtype == DT_STRING || dtype == DT_RESOURCE;
    EXPECT_EQ(classes, other ? 0 : 1) << DTypeName(dtype);  // exactly one class
  }
  EXPECT_TRUE(IsFloatingDType(DT_HALF));
  EXPECT_TRUE(IsFloatingDType(DT_BFLOAT16));
  EXPECT_TRUE(IsFloatingDType(DT_DOUBLE));
  EXPECT_TRUE(IsIntegerDType(DT_UINT64));
  EXPECT_TRUE(IsIntegerDType(DT_INT8));
  EXPECT_FALSE(IsIntegerDType(DT_BOOL));
  EXPECT_TRUE(IsComplexDType(DT_COMPLEX128));
  EXPECT_FALSE(IsComplexDType(DT_FLOAT));
}

TEST(TypesTest, DTypeOfMapsCppTypes) {
  static_assert(kDTypeOf<float> == DT_FLOAT);
  static_assert(kDTypeOf<double> == DT_DOUBLE);
  static_assert(kDTypeOf<int32_t> == DT_INT32);
  static_assert(kDTypeOf<int64_t> == DT_INT64);
  static_assert(kDTypeOf<uint8_t> == DT_UINT8);
  static_assert(kDTypeOf<bool> == DT_BOOL);
  static_assert(kDTypeOf<std::string> == DT_STRING);
  static_assert(kDTypeOf<Eigen::half> == DT_HALF);
  static_assert(kDTypeOf<Eigen::bfloat16> == DT_BFLOAT16);
  static_assert(kDTypeOf<complex64> == DT_COMPLEX64);
  static_assert(kDTypeOf<complex128> == DT_COMPLEX128);
  static_assert(kDTypeOf<ResourceHandle> == DT_RESOURCE);
  static_assert(kDTypeOf<uint64_t> == DT_UINT64);
  SUCCEED();
}

}  // namespace
}  // namespace weir
