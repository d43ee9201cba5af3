// Walks the registries: every nn op has a CPU kernel for float and double.
#include <gtest/gtest.h>

#include "weir/framework/op_kernel.h"
#include "weir/kernels/kernel_test_util.h"

namespace weir {
namespace {

TEST(NnKernelsTest, EveryNnOpHasFloatAndDoubleCpuKernels) {
  const AttrMap none;
  const AttrMap conv = {{"strides", std::vector<int64_t>{1, 1, 1, 1}}, {"padding", "SAME"}};
  AttrMap pool = conv;
  pool["ksize"] = std::vector<int64_t>{1, 2, 2, 1};
  struct OpCase {
    const char* op;
    int inputs;
    const AttrMap& attrs;
  };
  const OpCase cases[] = {{"BiasAdd", 2, none},
                          {"BiasAddGrad", 1, none},
                          {"Conv2D", 2, conv},
                          {"Conv2DBackpropInput", 3, conv},
                          {"Conv2DBackpropFilter", 3, conv},
                          {"MaxPool", 1, pool},
                          {"AvgPool", 1, pool},
                          {"MaxPoolGrad", 3, pool},
                          {"AvgPoolGrad", 2, pool},
                          {"Softmax", 1, none},
                          {"LogSoftmax", 1, none},
                          {"SoftmaxCrossEntropyWithLogits", 2, none},
                          {"SparseSoftmaxCrossEntropyWithLogits", 2, none},
                          {"L2Loss", 1, none},
                          {"FusedBatchNormV3", 5, none},
                          {"FusedBatchNormGradV3", 6, none}};
  for (const OpCase& c : cases) {
    for (DType dtype : {DT_FLOAT, DT_DOUBLE}) {
      AttrMap attrs = c.attrs;
      attrs["T"] = dtype;
      if (std::string(c.op).find("BatchNorm") != std::string::npos) attrs["U"] = dtype;
      auto kernel = CreateTestKernel(c.op, attrs, c.inputs);
      EXPECT_TRUE(kernel.ok()) << c.op << " " << dtype << ": " << kernel.status();
    }
  }
  for (DType index : {DT_INT32, DT_INT64}) {
    EXPECT_TRUE(CreateTestKernel("InTopKV2", {{"T", index}}, 3).ok()) << index;
  }
}

}  // namespace
}  // namespace weir
