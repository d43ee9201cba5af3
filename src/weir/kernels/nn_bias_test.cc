// BiasAdd and BiasAddGrad against loops in double. Tolerances: BiasAdd is
// one rounding per element (1e-7 float, 1e-15 double); BiasAddGrad sums in
// double, so both dtypes are within 1e-6 / 1e-13 relative.
#include <gtest/gtest.h>

#include "weir/kernels/kernel_test_util.h"
#include "weir/kernels/nn_test_util.h"

namespace weir {
namespace {

TEST(BiasAddTest, AddsAlongTheLastDim) {
  for (DType dtype : {DT_FLOAT, DT_DOUBLE}) {
    for (const TensorShape& shape :
         {TensorShape({3, 4}), TensorShape({2, 5, 5, 7}), TensorShape({100, 28, 28, 32}),
          TensorShape({0, 6}), TensorShape({2, 3, 1})}) {
      SCOPED_TRACE(StrCat(shape, " ", dtype));
      const int64_t channels = shape.dim_size(shape.rank() - 1);
      const Tensor value = RandomTensor(dtype, shape, 1);
      const Tensor bias = RandomTensor(dtype, TensorShape({channels}), 2);
      const std::vector<double> v = ToDoubles(value), b = ToDoubles(bias);
      std::vector<double> want(v.size());
      for (size_t i = 0; i < v.size(); ++i) want[i] = v[i] + b[i % channels];
      auto out = RunKernel("BiasAdd", {{"T", dtype}}, {value, bias});
      ASSERT_TRUE(out.ok()) << out.status();
      ExpectAllNear((*out)[0], want, dtype == DT_FLOAT ? 1e-7 : 1e-15, "BiasAdd");

      std::vector<double> sums(channels, 0), scale(channels, 0);
      for (size_t i = 0; i < v.size(); ++i) {
        sums[i % channels] += v[i];
        scale[i % channels] += std::abs(v[i]);
      }
      out = RunKernel("BiasAddGrad", {{"T", dtype}}, {value});
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ((*out)[0].shape(), TensorShape({channels}));
      ExpectAllNear((*out)[0], sums, dtype == DT_FLOAT ? 1e-6 : 1e-13, "BiasAddGrad", scale);
    }
  }
}

TEST(BiasAddTest, ReusesAnUnsharedValueBuffer) {
  Tensor value = RandomTensor(DT_FLOAT, TensorShape({4, 3}), 1);
  const std::vector<double> v = ToDoubles(value);
  auto out = RunKernel("BiasAdd", {{"T", DT_FLOAT}},
                       {std::move(value), MakeTensor(DT_FLOAT, TensorShape({3}), {1, 2, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<double> got = ToDoubles((*out)[0]);
  for (size_t i = 0; i < v.size(); ++i) EXPECT_FLOAT_EQ(got[i], v[i] + 1 + i % 3);
}

TEST(BiasAddTest, Errors) {
  auto out = RunKernel("BiasAdd", {{"T", DT_FLOAT}},
                       {Tensor(DT_FLOAT, TensorShape({2, 3})), Tensor(DT_FLOAT, TensorShape({4}))});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(out.status()));
  for (const char* part : {"BiasAdd", "[2,3]", "[4]"}) {
    EXPECT_NE(out.status().message().find(part), std::string::npos) << out.status();
  }
  out = RunKernel("BiasAdd", {{"T", DT_FLOAT}},
                  {Tensor(DT_FLOAT, TensorShape({3})), Tensor(DT_FLOAT, TensorShape({3}))});
  EXPECT_TRUE(errors::IsInvalidArgument(out.status())) << out.status();
  out = RunKernel("BiasAddGrad", {{"T", DT_DOUBLE}}, {Tensor(DT_DOUBLE, TensorShape({3}))});
  EXPECT_TRUE(errors::IsInvalidArgument(out.status())) << out.status();
  // NCHW: the channels are dim 1 (3 here), so a bias of 4 is wrong.
  out = RunKernel("BiasAdd", {{"T", DT_FLOAT}, {"data_format", "NCHW"}},
                  {Tensor(DT_FLOAT, TensorShape({2, 3, 4, 4})), Tensor(DT_FLOAT, TensorShape({4}))});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(out.status())) << out.status();
  EXPECT_NE(out.status().message().find("data_format NCHW"), std::string::npos) << out.status();
}

}  // namespace
}  // namespace weir
