#include "weir/kernels/dnnl_util.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace weir {
namespace {

// A primitive oneDNN lacks on this CPU is the user's Unimplemented, not a
// crash or an Internal error.
TEST(DnnlUtilTest, MissingImplementationsAreUnimplemented) {
  Status status = DnnlErrorStatus(dnnl::error(dnnl_unimplemented, "no bf16"), "bfloat16 matmul");
  EXPECT_TRUE(errors::IsUnimplemented(status)) << status;
  EXPECT_NE(status.message().find("bfloat16 matmul"), std::string::npos) << status;
  status = DnnlErrorStatus(dnnl::error(dnnl_invalid_arguments, "bad"), "convolution");
  EXPECT_TRUE(errors::IsInternal(status)) << status;
  status = DnnlErrorStatus(std::runtime_error("other"), "convolution");
  EXPECT_TRUE(errors::IsInternal(status)) << status;
}

}  // namespace
}  // namespace weir
