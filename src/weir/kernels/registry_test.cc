// Walks the registries: every op this branch declares has a CPU kernel for
// each type its kernels are meant to cover.
#include <gtest/gtest.h>

#include "weir/framework/kernel_registry.h"
#include "weir/framework/op_def.h"
#include "weir/kernels/all_kernels.h"
#include "weir/kernels/kernel_test_util.h"
#include "weir/ops/all_ops.h"

namespace weir {
namespace {

TEST(RegistryTest, EveryArrayAndMathOpHasACpuKernel) {
  RegisterAllOps();
  RegisterAllKernels();
  for (const char* op :
       {"Const", "Placeholder", "Identity", "Shape", "Reshape", "MatMul", "Sum", "Cast",
        "Add", "AddV2", "Sub", "Mul", "RealDiv", "Div", "FloorDiv", "FloorMod", "Maximum",
        "Minimum", "Pow", "SquaredDifference", "Neg", "Abs", "Sign", "Square", "Reciprocal",
        "Exp", "Expm1", "Log", "Log1p", "Sqrt", "Rsqrt", "Floor", "Ceil", "Round", "Sin", "Cos",
        "Tanh", "Sigmoid", "Erf", "IsNan", "IsInf", "IsFinite", "Relu", "Relu6", "Elu", "Selu",
        "Softplus", "ReluGrad", "Relu6Grad", "EluGrad", "SeluGrad", "SoftplusGrad",
        "SigmoidGrad", "TanhGrad", "RsqrtGrad", "SqrtGrad", "ReciprocalGrad", "Less",
        "LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual", "LogicalAnd", "LogicalOr",
        "LogicalNot", "Select", "SelectV2", "AddN"}) {
    ASSERT_TRUE(OpRegistry::Global()->LookUp(op).ok()) << op;
    EXPECT_FALSE(KernelRegistry::Global()->DescribeKernels(op).empty()) << op;
  }
}

TEST(RegistryTest, EveryArrayOpHasACpuKernel) {
  RegisterAllOps();
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

struct Coverage {
  std::vector<const char*> ops;
  int inputs;
  std::vector<DType> dtypes;
  AttrMap attrs = {};  // required attrs besides T
};

TEST(RegistryTest, TypedKernelsCoverTheirDtypes) {
  const std::vector<DType> kReal = {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64};
  const std::vector<DType> kFloat = {DT_FLOAT, DT_DOUBLE};
  const AttrMap kConvAttrs = {{"strides", std::vector<int64_t>{1, 1, 1, 1}},
                              {"padding", std::string("SAME")}};
  const std::vector<Coverage> coverage = {
      {{"Add", "AddV2", "Sub", "Mul", "RealDiv", "Div", "FloorDiv", "FloorMod", "Maximum",
        "Minimum", "Pow", "SquaredDifference", "Less", "LessEqual", "Greater", "GreaterEqual",
        "Equal", "NotEqual"},
       2,
       kReal},
      {{"Equal", "NotEqual"}, 2, {DT_BOOL}},
      {{"Neg", "Abs", "Sign", "Square", "Relu", "Relu6"}, 1, kReal},
      {{"Reciprocal", "Exp", "Expm1", "Log", "Log1p", "Sqrt", "Rsqrt", "Floor", "Ceil", "Round",
        "Sin", "Cos", "Tanh", "Sigmoid", "Erf", "IsNan", "IsInf", "IsFinite", "Elu", "Selu",
        "Softplus"},
       1,
       kFloat},
      {{"ReluGrad", "Relu6Grad", "EluGrad", "SeluGrad", "SoftplusGrad", "SigmoidGrad",
        "TanhGrad", "RsqrtGrad", "SqrtGrad", "ReciprocalGrad"},
       2,
       kFloat},
      {{"Select", "SelectV2"}, 3, {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64, DT_BOOL, DT_HALF}},
      {{"Sum"}, 2, kReal},
      {{"MatMul", "BatchMatMulV2"}, 2, {DT_FLOAT, DT_DOUBLE, DT_BFLOAT16}},
      {{"Conv2D"}, 2, {DT_FLOAT, DT_DOUBLE, DT_BFLOAT16}, kConvAttrs},
      {{"Conv2DBackpropInput", "Conv2DBackpropFilter"},
       3,
       {DT_FLOAT, DT_DOUBLE, DT_BFLOAT16},
       kConvAttrs},
  };
  for (const Coverage& c : coverage) {
    for (const char* op : c.ops) {
      for (DType dtype : c.dtypes) {
        AttrMap attrs = c.attrs;
        attrs["T"] = dtype;
        auto kernel = CreateTestKernel(op, attrs, c.inputs);
        EXPECT_TRUE(kernel.ok()) << op << " " << dtype << ": " << kernel.status();
      }
    }
  }
  for (DType dtype : kReal) {
    EXPECT_TRUE(CreateTestKernel("AddN", {{"T", dtype}, {"N", 3}}, 3).ok()) << dtype;
  }
  for (const char* op : {"LogicalAnd", "LogicalOr"}) {
    EXPECT_TRUE(CreateTestKernel(op, {}, 2).ok()) << op;
  }
  EXPECT_TRUE(CreateTestKernel("LogicalNot", {}, 1).ok());
  for (DType dtype : {DT_STRING, DT_RESOURCE, DT_HALF}) {
    EXPECT_TRUE(CreateTestKernel("Identity", {{"T", dtype}}, 1).ok()) << dtype;
    EXPECT_TRUE(CreateTestKernel("Reshape", {{"T", dtype}, {"Tshape", DT_INT64}}, 2).ok())
        << dtype;
  }
}

}  // namespace
}  // namespace weir
