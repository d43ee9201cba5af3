// DynamicPartition, DynamicStitch, Unique and Where.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "weir/kernels/array_test_util.h"

namespace weir {
namespace {

using namespace array_test;

TEST(DynamicPartitionOpTest, RowsGoToTheirPartitionInOrder) {
  Tensor data = Iota<float>(TensorShape({5, 2}));
  auto out = RunKernel("DynamicPartition", {{"T", DT_FLOAT}, {"num_partitions", 3}},
                       {data, I32({2, 0, 2, 2, 0})});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensor<float>((*out)[0], TensorShape({2, 2}), {2, 3, 8, 9});
  ExpectTensor<float>((*out)[1], TensorShape({0, 2}), {});
  ExpectTensor<float>((*out)[2], TensorShape({3, 2}), {0, 1, 4, 5, 6, 7});
  // Partitions of rank 2 over data of rank 2: elements.
  out = RunKernel("DynamicPartition", {{"T", DT_STRING}, {"num_partitions", 2}},
                  {StringIota(TensorShape({2, 2})),
                   Tensor::FromVector<int32_t>({1, 0, 0, 1}, TensorShape({2, 2}))});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensor<std::string>((*out)[0], TensorShape({2}), {"s1", "s2"});
  ExpectTensor<std::string>((*out)[1], TensorShape({2}), {"s0", "s3"});
  // A scalar partition of a scalar.
  out = RunKernel("DynamicPartition", {{"T", DT_INT32}, {"num_partitions", 2}},
                  {I32Scalar(7), I32Scalar(1)});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensor<int32_t>((*out)[1], TensorShape({1}), {7});
}

TEST(DynamicPartitionOpTest, Errors) {
  Tensor data = Iota<float>(TensorShape({3, 2}));
  RunError("DynamicPartition", {{"T", DT_FLOAT}, {"num_partitions", 2}},
           {data, I32({0, 2, 1})}, {"DynamicPartition", "partitions[1] = 2", "[0, 2)", "[3,2]"});
  RunError("DynamicPartition", {{"T", DT_FLOAT}, {"num_partitions", 2}},
           {data, I32({0, -1, 1})}, {"partitions[1] = -1"});
  RunError("DynamicPartition", {{"T", DT_FLOAT}, {"num_partitions", 2}}, {data, I32({0, 1})},
           {"DynamicPartition", "[2]", "[3,2]", "prefix"});
}

TEST(DynamicStitchOpTest, MergesLaterValuesWin) {
  // The inverse of the partition above, plus an overlap at 0.
  auto out = RunKernel("DynamicStitch", {{"T", DT_FLOAT}, {"N", 2}},
                       {I32({1, 4}), I32({0, 2, 3, 0}), Iota<float>(TensorShape({2, 2}), 10),
                        Iota<float>(TensorShape({4, 2}))});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensor<float>((*out)[0], TensorShape({5, 2}), {6, 7, 10, 11, 2, 3, 4, 5, 12, 13});
  // Scalars of indices with vector data; a gap is zero.
  out = RunKernel("DynamicStitch", {{"T", DT_INT32}, {"N", 2}},
                  {I32Scalar(3), Tensor::FromVector<int32_t>({0}, TensorShape({1, 1})),
                   I32({7, 8}), Tensor::FromVector<int32_t>({1, 2}, TensorShape({1, 1, 2}))});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensor<int32_t>((*out)[0], TensorShape({4, 2}), {1, 2, 0, 0, 0, 0, 7, 8});
  out = RunKernel("DynamicStitch", {{"T", DT_STRING}, {"N", 1}},
                  {I32({1, 0}), StringIota(TensorShape({2}))});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensor<std::string>((*out)[0], TensorShape({2}), {"s1", "s0"});
  out = RunKernel("DynamicStitch", {{"T", DT_FLOAT}, {"N", 1}},
                  {I32({}), Tensor(DT_FLOAT, TensorShape({0, 3}))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({0, 3}));
}

TEST(DynamicStitchOpTest, Errors) {
  RunError("DynamicStitch", {{"T", DT_FLOAT}, {"N", 1}},
           {I32({0, -3}), Iota<float>(TensorShape({2}))},
           {"DynamicStitch", "indices[0][1] = -3", "negative"});
  RunError("DynamicStitch", {{"T", DT_FLOAT}, {"N", 2}},
           {I32({0}), I32({1}), Iota<float>(TensorShape({1, 2})), Iota<float>(TensorShape({1, 3}))},
           {"DynamicStitch", "data[1]", "[1,3]", "[2]"});
  RunError("DynamicStitch", {{"T", DT_FLOAT}, {"N", 1}},
           {I32({0, 1}), Iota<float>(TensorShape({3}))}, {"DynamicStitch", "[3]", "[2]"});
}

TEST(UniqueOpTest, FirstOccurrenceOrder) {
  auto out = RunKernel("Unique", {{"T", DT_INT32}}, {I32({1, 1, 2, 4, 4, 4, 7, 8, 8})});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensor<int32_t>((*out)[0], TensorShape({5}), {1, 2, 4, 7, 8});
  ExpectTensor<int32_t>((*out)[1], TensorShape({9}), {0, 0, 1, 2, 2, 2, 3, 4, 4});
  out = RunKernel("Unique", {{"T", DT_STRING}, {"out_idx", DT_INT64}},
                  {Tensor::FromVector<std::string>({"b", "a", "b", "c", "a"})});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensor<std::string>((*out)[0], TensorShape({3}), {"b", "a", "c"});
  ExpectTensor<int64_t>((*out)[1], TensorShape({5}), {0, 1, 0, 2, 1});
  out = RunKernel("Unique", {{"T", DT_FLOAT}}, {Tensor::FromVector<float>({})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({0}));
  EXPECT_EQ((*out)[1].shape(), TensorShape({0}));
}

TEST(UniqueOpTest, FloatsCompareAsNumbers) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto out = RunKernel("Unique", {{"T", DT_FLOAT}}, {Tensor::FromVector<float>({0.f, -0.f, 3, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].NumElements(), 2);
  ExpectTensor<int32_t>((*out)[1], TensorShape({4}), {0, 0, 1, 1});
  out = RunKernel("Unique", {{"T", DT_FLOAT}}, {Tensor::FromVector<float>({nan, nan})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].NumElements(), 2);  // NaN is not equal to itself
  out = RunKernel("Unique", {{"T", DT_BOOL}}, {Tensor::FromVector<bool>({true, false, true})});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensor<bool>((*out)[0], TensorShape({2}), {true, false});
  RunError("Unique", {{"T", DT_INT32}}, {Iota<int32_t>(TensorShape({2, 2}))},
           {"Unique", "vector", "[2,2]"});
}

TEST(WhereOpTest, CoordinatesInRowMajorOrder) {
  Tensor b = Tensor::FromVector<bool>({true, false, false, true, true, false},
                                      TensorShape({2, 3}));
  ExpectTensor<int64_t>(Run1("Where", {{"T", DT_BOOL}}, {b}), TensorShape({3, 2}),
                        {0, 0, 1, 0, 1, 1});
  Tensor f = Tensor::FromVector<float>({0.f, -0.f, 2.5f, std::nanf("")});
  ExpectTensor<int64_t>(Run1("Where", {{"T", DT_FLOAT}}, {f}), TensorShape({2, 1}), {2, 3});
  ExpectTensor<int64_t>(Run1("Where", {{"T", DT_INT32}}, {I32({0, 0})}), TensorShape({0, 1}), {});
  ExpectTensor<int64_t>(Run1("Where", {{"T", DT_INT64}}, {Tensor::Scalar<int64_t>(4)}),
                        TensorShape({1, 0}), {});
  ExpectTensor<int64_t>(Run1("Where", {{"T", DT_INT8}}, {Tensor::Scalar<int8_t>(0)}),
                        TensorShape({0, 0}), {});
  ExpectTensor<int64_t>(Run1("Where", {{"T", DT_DOUBLE}}, {Tensor(DT_DOUBLE, TensorShape({0, 4}))}),
                        TensorShape({0, 2}), {});
}

TEST(WhereOpTest, LargeInputSpansBlocks) {
  Tensor x(DT_UINT8, TensorShape({300, 1000}));
  std::vector<int64_t> expected;
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    x.data<uint8_t>()[i] = (i * 2654435761u) % 7 == 0;
    if (x.data<uint8_t>()[i]) expected.insert(expected.end(), {i / 1000, i % 1000});
  }
  ExpectTensor<int64_t>(Run1("Where", {{"T", DT_UINT8}}, {x}),
                        TensorShape({static_cast<int64_t>(expected.size() / 2), 2}), expected);
}

}  // namespace
}  // namespace weir
