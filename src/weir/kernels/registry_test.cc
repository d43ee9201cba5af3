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
