// ConcatV2, Pack, Split, SplitV and Unpack against index references.
#include <gtest/gtest.h>

#include <random>

#include "weir/kernels/array_test_util.h"

namespace weir {
namespace {

using namespace array_test;

// Inputs joined along `axis` by walking the output.
template <typename T>
Tensor ReferenceConcat(const std::vector<Tensor>& inputs, int axis) {
  std::vector<int64_t> dims(inputs[0].shape().dim_sizes().begin(),
                            inputs[0].shape().dim_sizes().end());
  dims[axis] = 0;
  for (const Tensor& t : inputs) dims[axis] += t.dim_size(axis);
  TensorShape shape(dims);
  Tensor out(inputs[0].dtype(), shape);
  for (int64_t o = 0; o < out.NumElements(); ++o) {
    std::vector<int64_t> index = Unravel(o, shape);
    size_t k = 0;
    while (index[axis] >= inputs[k].dim_size(axis)) index[axis] -= inputs[k++].dim_size(axis);
    out.data<T>()[o] = inputs[k].data<T>()[Ravel(index, inputs[k].shape())];
  }
  return out;
}

Tensor Concat(std::vector<Tensor> inputs, int32_t axis) {
  DType dtype = inputs[0].dtype();
  int n = static_cast<int>(inputs.size());
  inputs.push_back(I32Scalar(axis));
  return Run1("ConcatV2", {{"T", dtype}, {"N", n}}, inputs);
}

TEST(ConcatV2OpTest, HandComputed) {
  Tensor a = Iota<float>(TensorShape({2, 2}));      // 0 1 / 2 3
  Tensor b = Iota<float>(TensorShape({2, 1}), 10);  // 10 / 11
  ExpectTensor<float>(Concat({a, b}, 1), TensorShape({2, 3}), {0, 1, 10, 2, 3, 11});
  ExpectTensor<float>(Concat({a, b}, -1), TensorShape({2, 3}), {0, 1, 10, 2, 3, 11});
  Tensor c = Iota<float>(TensorShape({1, 2}), 20);
  ExpectTensor<float>(Concat({a, c}, 0), TensorShape({3, 2}), {0, 1, 2, 3, 20, 21});
  ExpectTensor<int64_t>(Concat({Iota<int64_t>(TensorShape({2})), Iota<int64_t>(TensorShape({1})),
                                Iota<int64_t>(TensorShape({3}), 5)},
                               0),
                        TensorShape({6}), {0, 1, 0, 5, 6, 7});
  Tensor y = Run1("ConcatV2", {{"T", DT_FLOAT}, {"N", 2}, {"Tidx", DT_INT64}},
                  {a, b, Tensor::Scalar<int64_t>(1)});
  ExpectTensor<float>(y, TensorShape({2, 3}), {0, 1, 10, 2, 3, 11});
}

TEST(ConcatV2OpTest, RandomShapesMatchReference) {
  std::mt19937 rng(3);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 100; ++trial) {
    const int rank = uniform(1, 4);
    const int axis = uniform(0, rank - 1);
    std::vector<int64_t> dims;
    for (int k = 0; k < rank; ++k) dims.push_back(uniform(1, 4));
    std::vector<Tensor> inputs;
    int start = 0;
    for (int i = uniform(2, 4); i > 0; --i) {
      dims[axis] = uniform(0, 3);
      inputs.push_back(Iota<int32_t>(TensorShape(dims), start));
      start += 1000;
    }
    Tensor y = Concat(inputs, axis - (trial % 2) * rank);
    ASSERT_TRUE(y.ContentEquals(ReferenceConcat<int32_t>(inputs, axis))) << "trial " << trial;
  }
}

TEST(ConcatV2OpTest, LargeInputsOnEveryAxis) {
  std::vector<Tensor> inputs = {Iota<float>(TensorShape({300, 200})),
                                Iota<float>(TensorShape({300, 200}), 1 << 20),
                                Iota<float>(TensorShape({300, 200}), 1 << 21)};
  EXPECT_TRUE(Concat(inputs, 0).ContentEquals(ReferenceConcat<float>(inputs, 0)));
  EXPECT_TRUE(Concat(inputs, 1).ContentEquals(ReferenceConcat<float>(inputs, 1)));
}

TEST(ConcatV2OpTest, StringsEmptyInputsAndSizeOneDims) {
  std::vector<Tensor> s = {StringIota(TensorShape({1, 2})), StringIota(TensorShape({1, 1}))};
  ExpectTensor<std::string>(Concat(s, 1), TensorShape({1, 3}), {"s0", "s1", "s0"});
  // With every other input empty, the result is the non-empty one.
  Tensor x = Iota<float>(TensorShape({2, 3}));
  Tensor y = Concat({Tensor(DT_FLOAT, TensorShape({2, 0})), x}, 1);
  EXPECT_TRUE(y.SharesBufferWith(x));
  EXPECT_TRUE(y.ContentEquals(x));
  ExpectTensor<float>(Concat({Tensor(DT_FLOAT, TensorShape({0, 3})),
                              Tensor(DT_FLOAT, TensorShape({0, 3}))},
                             0),
                      TensorShape({0, 3}), {});
  ExpectTensor<float>(Concat({Tensor(DT_FLOAT, TensorShape({0, 3})),
                              Tensor(DT_FLOAT, TensorShape({0, 2}))},
                             1),
                      TensorShape({0, 5}), {});
}

TEST(ConcatV2OpTest, Errors) {
  Tensor a = Iota<float>(TensorShape({2, 2}));
  RunError("ConcatV2", {{"T", DT_FLOAT}, {"N", 2}}, {a, Iota<float>(TensorShape({3, 3})),
                                                     I32Scalar(0)},
           {"ConcatV2", "dim 1", "[2,2]", "[3,3]"});
  RunError("ConcatV2", {{"T", DT_FLOAT}, {"N", 2}}, {a, Iota<float>(TensorShape({2})),
                                                     I32Scalar(0)},
           {"ConcatV2", "rank", "[2,2]", "[2]"});
  RunError("ConcatV2", {{"T", DT_FLOAT}, {"N", 2}}, {a, a, I32Scalar(2)},
           {"ConcatV2", "axis 2", "[-2, 2)"});
  RunError("ConcatV2", {{"T", DT_FLOAT}, {"N", 2}},
           {Tensor::Scalar<float>(1), Tensor::Scalar<float>(2), I32Scalar(0)},
           {"ConcatV2", "scalars"});
  RunError("ConcatV2", {{"T", DT_FLOAT}, {"N", 2}}, {a, a, I32({0})},
           {"ConcatV2", "axis", "scalar", "[1]"});
}

Tensor Pack(std::vector<Tensor> inputs, int64_t axis) {
  DType dtype = inputs[0].dtype();
  int n = static_cast<int>(inputs.size());
  return Run1("Pack", {{"T", dtype}, {"N", n}, {"axis", axis}}, inputs);
}

TEST(PackOpTest, EveryAxis) {
  Tensor a = Iota<int32_t>(TensorShape({2, 2}));
  Tensor b = Iota<int32_t>(TensorShape({2, 2}), 10);
  ExpectTensor<int32_t>(Pack({a, b}, 0), TensorShape({2, 2, 2}), {0, 1, 2, 3, 10, 11, 12, 13});
  ExpectTensor<int32_t>(Pack({a, b}, 1), TensorShape({2, 2, 2}), {0, 1, 10, 11, 2, 3, 12, 13});
  ExpectTensor<int32_t>(Pack({a, b}, 2), TensorShape({2, 2, 2}), {0, 10, 1, 11, 2, 12, 3, 13});
  ExpectTensor<int32_t>(Pack({a, b}, -1), TensorShape({2, 2, 2}), {0, 10, 1, 11, 2, 12, 3, 13});
  ExpectTensor<int32_t>(Pack({a, b}, -3), TensorShape({2, 2, 2}), {0, 1, 2, 3, 10, 11, 12, 13});
}

TEST(PackOpTest, ScalarsStringsOneInputAndEmpty) {
  ExpectTensor<double>(Pack({Tensor::Scalar<double>(1), Tensor::Scalar<double>(2)}, 0),
                       TensorShape({2}), {1, 2});
  ExpectTensor<std::string>(Pack({StringIota(TensorShape({2})), StringIota(TensorShape({2}))}, 1),
                            TensorShape({2, 2}), {"s0", "s0", "s1", "s1"});
  Tensor x = Iota<float>(TensorShape({3}));
  ExpectTensor<float>(Pack({x}, 1), TensorShape({3, 1}), {0, 1, 2});
  ExpectTensor<float>(Pack({Tensor(DT_FLOAT, TensorShape({0})), Tensor(DT_FLOAT, TensorShape({0}))},
                           1),
                      TensorShape({0, 2}), {});
}

TEST(PackOpTest, Errors) {
  Tensor a = Iota<float>(TensorShape({2}));
  RunError("Pack", {{"T", DT_FLOAT}, {"N", 2}}, {a, Iota<float>(TensorShape({3}))},
           {"Pack", "[2]", "[3]", "input 1"});
  RunError("Pack", {{"T", DT_FLOAT}, {"N", 2}, {"axis", 2}}, {a, a},
           {"Pack", "axis 2", "[-2, 2)"});
}

StatusOr<std::vector<Tensor>> Split(const Tensor& x, int32_t axis, int num) {
  return RunKernel("Split", {{"T", x.dtype()}, {"num_split", num}}, {I32Scalar(axis), x});
}

TEST(SplitOpTest, AlongTheFirstDimSharesTheBuffer) {
  Tensor x = Iota<float>(TensorShape({4, 3}));
  auto out = Split(x, 0, 2);
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensor<float>((*out)[0], TensorShape({2, 3}), {0, 1, 2, 3, 4, 5});
  ExpectTensor<float>((*out)[1], TensorShape({2, 3}), {6, 7, 8, 9, 10, 11});
  EXPECT_TRUE((*out)[0].SharesBufferWith(x));
  EXPECT_TRUE((*out)[1].SharesBufferWith(x));
  // Leading dims of 1 do not break the sharing.
  Tensor y = Iota<float>(TensorShape({1, 4, 3}));
  out = Split(y, 1, 4);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE((*out)[3].SharesBufferWith(y));
  ExpectTensor<float>((*out)[3], TensorShape({1, 1, 3}), {9, 10, 11});
}

TEST(SplitOpTest, InnerAxesCopy) {
  Tensor x = Iota<int32_t>(TensorShape({2, 4}));
  auto out = Split(x, -1, 2);
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensor<int32_t>((*out)[0], TensorShape({2, 2}), {0, 1, 4, 5});
  ExpectTensor<int32_t>((*out)[1], TensorShape({2, 2}), {2, 3, 6, 7});
  Tensor big = Iota<float>(TensorShape({500, 300}));
  out = Split(big, 1, 3);
  ASSERT_TRUE(out.ok()) << out.status();
  for (int k = 0; k < 3; ++k) {
    for (int64_t i = 0; i < 500; ++i) {
      for (int64_t j = 0; j < 100; ++j) {
        ASSERT_EQ((*out)[k].data<float>()[i * 100 + j], big.data<float>()[i * 300 + k * 100 + j]);
      }
    }
  }
}

TEST(SplitOpTest, StringsEmptyAndErrors) {
  auto out = Split(StringIota(TensorShape({2, 2})), 1, 2);
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensor<std::string>((*out)[1], TensorShape({2, 1}), {"s1", "s3"});
  out = Split(Tensor(DT_FLOAT, TensorShape({0, 4})), 1, 2);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[1].shape(), TensorShape({0, 2}));
  RunError("Split", {{"T", DT_FLOAT}, {"num_split", 3}},
           {I32Scalar(1), Iota<float>(TensorShape({2, 4}))},
           {"Split", "num_split 3", "[2,4]"});
  RunError("Split", {{"T", DT_FLOAT}, {"num_split", 1}},
           {I32Scalar(2), Iota<float>(TensorShape({2, 4}))}, {"Split", "split_dim 2", "[2,4]"});
  RunError("Split", {{"T", DT_FLOAT}, {"num_split", 1}}, {I32Scalar(0), Tensor::Scalar<float>(1)},
           {"Split", "split_dim 0"});
}

StatusOr<std::vector<Tensor>> SplitV(const Tensor& x, std::vector<int64_t> sizes, int32_t axis) {
  int n = static_cast<int>(sizes.size());
  return RunKernel("SplitV", {{"T", x.dtype()}, {"num_split", n}}, {x, I64(sizes), I32Scalar(axis)});
}

TEST(SplitVOpTest, SizesWithMinusOne) {
  Tensor x = Iota<float>(TensorShape({2, 5}));
  auto out = SplitV(x, {1, -1, 0, 2}, 1);
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensor<float>((*out)[0], TensorShape({2, 1}), {0, 5});
  ExpectTensor<float>((*out)[1], TensorShape({2, 2}), {1, 2, 6, 7});
  ExpectTensor<float>((*out)[2], TensorShape({2, 0}), {});
  ExpectTensor<float>((*out)[3], TensorShape({2, 2}), {3, 4, 8, 9});
  out = SplitV(x, {-1, 1}, -2);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE((*out)[1].SharesBufferWith(x));
  ExpectTensor<float>((*out)[1], TensorShape({1, 5}), {5, 6, 7, 8, 9});
  auto out32 = RunKernel("SplitV", {{"T", DT_FLOAT}, {"num_split", 2}, {"Tlen", DT_INT32}},
                         {x, I32({3, 2}), I32Scalar(1)});
  ASSERT_TRUE(out32.ok()) << out32.status();
  ExpectTensor<float>((*out32)[1], TensorShape({2, 2}), {3, 4, 8, 9});
}

TEST(SplitVOpTest, Errors) {
  Tensor x = Iota<float>(TensorShape({2, 5}));
  RunError("SplitV", {{"T", DT_FLOAT}, {"num_split", 2}}, {x, I64({-1, -1}), I32Scalar(1)},
           {"SplitV", "more than one -1"});
  RunError("SplitV", {{"T", DT_FLOAT}, {"num_split", 2}}, {x, I64({2, 2}), I32Scalar(1)},
           {"SplitV", "add up to 4", "5", "[2,5]"});
  RunError("SplitV", {{"T", DT_FLOAT}, {"num_split", 2}}, {x, I64({7, -1}), I32Scalar(1)},
           {"SplitV", "more than"});
  RunError("SplitV", {{"T", DT_FLOAT}, {"num_split", 3}}, {x, I64({2, 3}), I32Scalar(1)},
           {"SplitV", "num_split is 3"});
  RunError("SplitV", {{"T", DT_FLOAT}, {"num_split", 2}}, {x, I64({2, -3}), I32Scalar(1)},
           {"SplitV", "negative"});
}

TEST(UnpackOpTest, EveryAxis) {
  Tensor x = Iota<int32_t>(TensorShape({2, 3}));
  auto out = RunKernel("Unpack", {{"T", DT_INT32}, {"num", 2}}, {x});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensor<int32_t>((*out)[1], TensorShape({3}), {3, 4, 5});
  EXPECT_TRUE((*out)[1].SharesBufferWith(x));
  out = RunKernel("Unpack", {{"T", DT_INT32}, {"num", 3}, {"axis", -1}}, {x});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensor<int32_t>((*out)[0], TensorShape({2}), {0, 3});
  ExpectTensor<int32_t>((*out)[2], TensorShape({2}), {2, 5});
  out = RunKernel("Unpack", {{"T", DT_STRING}, {"num", 2}, {"axis", 0}},
                  {StringIota(TensorShape({2}))});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensor<std::string>((*out)[1], TensorShape(), {"s1"});
  out = RunKernel("Unpack", {{"T", DT_FLOAT}, {"num", 0}}, {Tensor(DT_FLOAT, TensorShape({0, 2}))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->empty());
  RunError("Unpack", {{"T", DT_INT32}, {"num", 3}}, {x}, {"Unpack", "num is 3", "[2,3]"});
  RunError("Unpack", {{"T", DT_INT32}, {"num", 2}, {"axis", 2}}, {x}, {"Unpack", "axis 2"});
}

}  // namespace
}  // namespace weir
