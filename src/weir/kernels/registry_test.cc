// Walks the registries: every op this branch declares has a CPU kernel for
// each type its kernels are meant to cover.
#include <gtest/gtest.h>

#include "weir/framework/kernel_registry.h"
#include "weir/framework/op_def.h"
#include "weir/kernels/all_kernels.h"
#include "weir/kernels/kernel_test_util.h"

namespace weir {
namespace {

TEST(RegistryTest, EveryArrayAndMathOpHasACpuKernel) {
  RegisterAllKernels();
  for (const char* op : {"Const", "Placeholder", "Identity", "Shape", "Reshape", "Add", "AddV2",
                         "Sub", "Mul", "RealDiv", "Neg", "Relu", "MatMul", "Sum", "Cast"}) {
    ASSERT_TRUE(OpRegistry::Global()->LookUp(op).ok()) << op;
    EXPECT_FALSE(KernelRegistry::Global()->DescribeKernels(op).empty()) << op;
  }
}

TEST(RegistryTest, EveryArrayOpHasACpuKernel) {
  RegisterAllKernels();
  for (const char* op :
       {"Transpose", "ConcatV2", "Split", "SplitV", "Slice", "StridedSlice", "Pack", "Unpack",
        "Tile", "Pad", "PadV2", "MirrorPad", "ExpandDims", "Squeeze", "Fill", "ZerosLike",
        "OnesLike", "ShapeN", "Size", "Rank", "GatherV2", "GatherNd", "ScatterNd", "OneHot",
        "Range", "IdentityN", "StopGradient", "PreventGradient", "DynamicPartition",
        "DynamicStitch", "Unique", "Where", "BroadcastTo", "BroadcastArgs", "ReverseV2",
        "Reverse"}) {
    ASSERT_TRUE(OpRegistry::Global()->LookUp(op).ok()) << op;
    EXPECT_FALSE(KernelRegistry::Global()->DescribeKernels(op).empty()) << op;
  }
}

TEST(RegistryTest, ArrayKernelsCoverTheirTypes) {
  // Element-moving kernels take any dtype.
  for (DType dtype : {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64, DT_BOOL, DT_UINT8, DT_STRING,
                      DT_HALF, DT_COMPLEX128}) {
    EXPECT_TRUE(CreateTestKernel("Transpose", {{"T", dtype}}, 2).ok()) << dtype;
    EXPECT_TRUE(CreateTestKernel("ConcatV2", {{"T", dtype}, {"N", 2}}, 3).ok()) << dtype;
    EXPECT_TRUE(CreateTestKernel("StridedSlice", {{"T", dtype}, {"Index", DT_INT64}}, 4).ok())
        << dtype;
    EXPECT_TRUE(CreateTestKernel("GatherV2", {{"Tparams", dtype}, {"Tindices", DT_INT64},
                                              {"Taxis", DT_INT32}},
                                 3)
                    .ok())
        << dtype;
    EXPECT_TRUE(CreateTestKernel("ZerosLike", {{"T", dtype}}, 1).ok()) << dtype;
  }
  for (DType dtype : {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64, DT_BOOL, DT_UINT8}) {
    EXPECT_TRUE(CreateTestKernel("ScatterNd", {{"T", dtype}, {"Tindices", DT_INT32}}, 3).ok())
        << dtype;
    EXPECT_TRUE(CreateTestKernel("Unique", {{"T", dtype}}, 1).ok()) << dtype;
    EXPECT_TRUE(CreateTestKernel("Where", {{"T", dtype}}, 1).ok()) << dtype;
    EXPECT_TRUE(CreateTestKernel("OnesLike", {{"T", dtype}}, 1).ok()) << dtype;
  }
  EXPECT_TRUE(CreateTestKernel("Unique", {{"T", DT_STRING}}, 1).ok());
  for (DType dtype : {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64}) {
    EXPECT_TRUE(CreateTestKernel("Range", {{"Tidx", dtype}}, 3).ok()) << dtype;
  }
}

TEST(RegistryTest, TypedKernelsCoverFloatDoubleInt32Int64) {
  for (const char* op : {"Add", "AddV2", "Sub", "Mul", "RealDiv", "Neg", "Relu", "Sum"}) {
    for (DType dtype : {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64}) {
      const int inputs = std::string(op) == "Neg" || std::string(op) == "Relu" ? 1 : 2;
      EXPECT_TRUE(CreateTestKernel(op, {{"T", dtype}}, inputs).ok()) << op << " " << dtype;
    }
  }
  for (DType dtype : {DT_FLOAT, DT_DOUBLE}) {
    EXPECT_TRUE(CreateTestKernel("MatMul", {{"T", dtype}}, 2).ok()) << dtype;
  }
  for (DType dtype : {DT_STRING, DT_RESOURCE, DT_HALF}) {
    EXPECT_TRUE(CreateTestKernel("Identity", {{"T", dtype}}, 1).ok()) << dtype;
    EXPECT_TRUE(CreateTestKernel("Reshape", {{"T", dtype}, {"Tshape", DT_INT64}}, 2).ok())
        << dtype;
  }
}

}  // namespace
}  // namespace weir
