#include "weir/runtime/standard_registration.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "weir/framework/kernel_registry.h"
#include "weir/framework/op_def.h"

namespace weir {
namespace {

// Kernels register without their ops (kernels/ doesn't see ops/), so a
// kernel registered under a misspelt op name is caught here, not there.
TEST(StandardRegistrationTest, EveryKernelIsForADeclaredOp) {
  RegisterStandardOpsAndKernels();
  std::vector<std::string> kernel_ops = KernelRegistry::Global()->ListOps();
  ASSERT_GT(kernel_ops.size(), 100u);
  for (const std::string& op : kernel_ops) {
    EXPECT_TRUE(OpRegistry::Global()->LookUp(op).ok()) << "kernel for undeclared op " << op;
  }
}

TEST(StandardRegistrationTest, ConcurrentCallsRegisterOnce) {
  RegisterStandardOpsAndKernels();
  const size_t ops = OpRegistry::Global()->ListOps().size();
  const size_t kernel_ops = KernelRegistry::Global()->ListOps().size();
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back([] { RegisterStandardOpsAndKernels(); });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(OpRegistry::Global()->ListOps().size(), ops);
  EXPECT_EQ(KernelRegistry::Global()->ListOps().size(), kernel_ops);
  EXPECT_TRUE(OpRegistry::Global()->LookUp("MatMul").ok());
  EXPECT_FALSE(KernelRegistry::Global()->DescribeKernels("MatMul").empty());
}

}  // namespace
}  // namespace weir
