// L2Loss and InTopKV2 against their definitions.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "weir/kernels/kernel_test_util.h"
#include "weir/kernels/nn_test_util.h"

namespace weir {
namespace {

TEST(L2LossTest, HalfTheSumOfSquares) {
  for (DType dtype : {DT_FLOAT, DT_DOUBLE}) {
    for (const TensorShape& shape :
         {TensorShape({}), TensorShape({0}), TensorShape({7, 3}), TensorShape({100, 28, 28, 4})}) {
      const Tensor t = RandomTensor(dtype, shape, 3);
      double want = 0;
      for (double v : ToDoubles(t)) want += v * v / 2;
      auto out = RunKernel("L2Loss", {{"T", dtype}}, {t});
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ((*out)[0].shape(), TensorShape());
      // Summed in double: one float rounding at the end.
      ExpectAllNear((*out)[0], {want}, dtype == DT_FLOAT ? 1e-7 : 1e-13,
                    StrCat("L2Loss ", shape, " ", dtype));
    }
  }
}

template <typename Index>
std::vector<double> RunInTopK(const Tensor& predictions, const std::vector<Index>& targets,
                              Index k) {
  auto out = RunKernel("InTopKV2", {{"T", kDTypeOf<Index>}},
                       {predictions, Tensor::FromVector(targets), Tensor::Scalar(k)});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? ToDoubles((*out)[0]) : std::vector<double>();
}

TEST(InTopKTest, TiesCountAsInAndBadRowsAreFalse) {
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor predictions =
      Tensor::FromVector<float>({0.1f, 0.5f, 0.5f, 0.2f,   // target 2 ties for first
                                 0.4f, 0.3f, 0.2f, 0.1f,   // target 3 is last
                                 0.1f, NAN,  0.3f, 0.2f,   // a NaN: unknown
                                 0.1f, 0.2f, inf,  0.3f,   // an infinity: unknown
                                 0.9f, 0.1f, 0.1f, 0.1f},  // target out of range
                                TensorShape({5, 4}));
  EXPECT_EQ(RunInTopK<int32_t>(predictions, {2, 3, 2, 1, 4}, 1),
            (std::vector<double>{1, 0, 0, 0, 0}));
  EXPECT_EQ(RunInTopK<int64_t>(predictions, {2, 3, 2, 1, -1}, 4),
            (std::vector<double>{1, 1, 0, 0, 0}));
  EXPECT_EQ(RunInTopK<int32_t>(predictions, {0, 0, 0, 0, 0}, 0),
            (std::vector<double>{0, 0, 0, 0, 0}));
  EXPECT_EQ(RunInTopK<int32_t>(predictions, {0, 1, 0, 0, 0}, 3),
            (std::vector<double>{0, 1, 0, 0, 1}));
}

TEST(InTopKTest, Errors) {
  auto out = RunKernel("InTopKV2", {{"T", DT_INT32}},
                       {Tensor(DT_FLOAT, TensorShape({2, 3})), Tensor::FromVector<int32_t>({1}),
                        Tensor::Scalar<int32_t>(1)});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(out.status()));
  EXPECT_NE(out.status().message().find("InTopKV2"), std::string::npos) << out.status();
  out = RunKernel("InTopKV2", {{"T", DT_INT32}},
                  {Tensor(DT_FLOAT, TensorShape({1, 3})), Tensor::FromVector<int32_t>({1}),
                   Tensor::FromVector<int32_t>({1})});
  EXPECT_TRUE(errors::IsInvalidArgument(out.status())) << out.status();
}

}  // namespace
}  // namespace weir
