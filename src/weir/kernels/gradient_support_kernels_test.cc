// InvertPermutation and ConcatOffset: values, and TensorFlow's errors for
// inputs that are not a permutation or shapes that do not concatenate.
#include <gtest/gtest.h>

#include "weir/kernels/kernel_test_util.h"

namespace weir {
namespace {

void ExpectError(const StatusOr<std::vector<Tensor>>& out, const std::string& part) {
  ASSERT_FALSE(out.ok()) << part;
  EXPECT_EQ(out.status().code(), Code::kInvalidArgument) << out.status();
  EXPECT_NE(out.status().message().find(part), std::string::npos) << out.status();
}

TEST(InvertPermutationTest, InverseOfEveryPermutationOfFour) {
  std::vector<int64_t> perm = {0, 1, 2, 3};
  do {
    auto out = RunKernel("InvertPermutation", {{"T", DT_INT64}}, {Tensor::FromVector(perm)});
    ASSERT_TRUE(out.ok()) << out.status();
    const int64_t* inverse = (*out)[0].data<int64_t>();
    for (int i = 0; i < 4; ++i) EXPECT_EQ(inverse[perm[i]], i);
  } while (std::next_permutation(perm.begin(), perm.end()));
  auto out = RunKernel("InvertPermutation", {}, {Tensor::FromVector<int32_t>({2, 0, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToDoubles((*out)[0]), (std::vector<double>{1, 2, 0}));
  out = RunKernel("InvertPermutation", {}, {Tensor(DT_INT32, TensorShape({0}))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].NumElements(), 0);
}

TEST(InvertPermutationTest, NotAPermutation) {
  ExpectError(RunKernel("InvertPermutation", {}, {Tensor::FromVector<int32_t>({2, 0, 0})}),
              "x[2] = 0 appears twice");
  ExpectError(RunKernel("InvertPermutation", {}, {Tensor::FromVector<int32_t>({2, 0, 3})}),
              "x[2] = 3 is not in [0, 3)");
  ExpectError(RunKernel("InvertPermutation", {}, {Tensor::FromVector<int32_t>({-1, 0})}),
              "x[0] = -1 is not in [0, 2)");
  ExpectError(
      RunKernel("InvertPermutation", {}, {Tensor::FromVector<int32_t>({0}, TensorShape({1, 1}))}),
      "must be a vector");
}

TEST(ConcatOffsetTest, OffsetsAlongTheAxis) {
  for (int axis : {1, -2}) {
    auto out =
        RunKernel("ConcatOffset", {{"N", 3}},
                  {Tensor::Scalar<int32_t>(axis), Tensor::FromVector<int32_t>({2, 3, 5}),
                   Tensor::FromVector<int32_t>({2, 7, 5}), Tensor::FromVector<int32_t>({2, 1, 5})});
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), 3u);
    EXPECT_EQ(ToDoubles((*out)[0]), (std::vector<double>{0, 0, 0}));
    EXPECT_EQ(ToDoubles((*out)[1]), (std::vector<double>{0, 3, 0}));
    EXPECT_EQ(ToDoubles((*out)[2]), (std::vector<double>{0, 10, 0}));
  }
  auto out = RunKernel("ConcatOffset", {{"N", 2}, {"shape_type", DT_INT64}},
                       {Tensor::Scalar<int32_t>(0), Tensor::FromVector<int64_t>({4}),
                        Tensor::FromVector<int64_t>({6})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToDoubles((*out)[1]), (std::vector<double>{4}));
}

TEST(ConcatOffsetTest, ShapesThatDoNotConcatenate) {
  auto run = [](int axis, std::vector<int32_t> a, std::vector<int32_t> b) {
    return RunKernel("ConcatOffset", {{"N", 2}},
                     {Tensor::Scalar<int32_t>(axis), Tensor::FromVector(a), Tensor::FromVector(b)});
  };
  ExpectError(run(1, {2, 3, 5}, {2, 7, 6}), "differs from shape 0 [2,3,5] in dim 2");
  ExpectError(run(1, {2, 3, 5}, {2, 7}), "shape 1 has shape [2]");
  ExpectError(run(3, {2, 3, 5}, {2, 7, 5}), "concat_dim 3 is not in [-3, 3)");
  // The last piece's end is no offset: only a third piece overflows.
  EXPECT_TRUE(run(0, {2147483647}, {1}).ok());
  ExpectError(RunKernel("ConcatOffset", {{"N", 3}},
                        {Tensor::Scalar<int32_t>(0), Tensor::FromVector<int32_t>({2147483647}),
                         Tensor::FromVector<int32_t>({1}), Tensor::FromVector<int32_t>({1})}),
              "overflows");
}

}  // namespace
}  // namespace weir
