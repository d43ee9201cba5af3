// Hostile sizes against the kernels: shape, multiples, paddings, sizes and
// index tensors whose arithmetic overflows int64, and tensors that are
// empty but have huge dims. Each case crashed, aborted on std::bad_alloc,
// or returned a wrongly shaped result before the kernels checked their
// output shapes (shape_util.h) and allocated before building per-element
// helpers; now each is an InvalidArgument / ResourceExhausted naming the
// op, or the right (often empty) answer.
#include <gtest/gtest.h>

#include <limits>

#include "weir/kernels/array_test_util.h"

namespace weir {
namespace {

using namespace array_test;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t k2to62 = int64_t{1} << 62;
constexpr int64_t k2to40 = int64_t{1} << 40;

// An empty float tensor (no memory) of `dims`.
Tensor Empty(std::initializer_list<int64_t> dims, DType dtype = DT_FLOAT) {
  return Tensor(dtype, TensorShape(dims));
}

// Runs `op` expecting ResourceExhausted whose message has every part.
void RunOutOfMemory(const std::string& op, AttrMap attrs, std::vector<Tensor> inputs,
                    std::initializer_list<std::string> parts) {
  StatusOr<std::vector<Tensor>> out = RunKernel(op, std::move(attrs), std::move(inputs));
  ASSERT_FALSE(out.ok()) << op << " succeeded but should run out of memory";
  EXPECT_TRUE(errors::IsResourceExhausted(out.status())) << out.status();
  for (const std::string& part : parts) {
    EXPECT_NE(out.status().message().find(part), std::string::npos)
        << "'" << part << "' not in: " << out.status();
  }
}

// Runs `op` expecting success; returns output `i`'s shape.
TensorShape RunShape(const std::string& op, AttrMap attrs, std::vector<Tensor> inputs, int i = 0) {
  StatusOr<std::vector<Tensor>> out = RunKernel(op, std::move(attrs), std::move(inputs));
  EXPECT_TRUE(out.ok()) << op << ": " << out.status();
  return out.ok() ? (*out)[i].shape() : TensorShape();
}

TEST(KernelOverflowTest, AllocationFailureIsResourceExhausted) {
  // 2^50 bytes: more than any machine, refused by the allocator.
  RunOutOfMemory("Fill", {{"T", DT_FLOAT}, {"index_type", DT_INT64}},
                 {I64({int64_t{1} << 48}), Tensor::Scalar<float>(1)},
                 {"Fill", "test_node", "float", "[281474976710656]"});
  // 2^62 complex128 elements: 2^66 bytes, a byte count past size_t.
  RunOutOfMemory("Fill", {{"T", DT_COMPLEX128}, {"index_type", DT_INT64}},
                 {I64({k2to62}), Tensor(DT_COMPLEX128, TensorShape())},
                 {"Fill", "complex128", "[4611686018427387904]"});
}

TEST(KernelOverflowTest, TileWhoseDimWrapsIsAnError) {
  // 3 * 6148914691236517206 = 2^64 + 2: wrapped, a 2-element output that
  // the copy then overran by 2^64 elements (SIGSEGV).
  Tensor x = Iota<float>(TensorShape({3}));
  RunError("Tile", {{"T", DT_FLOAT}, {"Tmultiples", DT_INT64}}, {x, I64({6148914691236517206})},
           {"Tile", "6148914691236517206"});
  RunError("Tile", {{"T", DT_FLOAT}, {"Tmultiples", DT_INT64}},
           {Iota<float>(TensorShape({2, 3})), I64({int64_t{1} << 31, int64_t{1} << 32})}, {"Tile"});
  // An empty input tiles to an empty output whatever the multiple.
  EXPECT_EQ(RunShape("Tile", {{"T", DT_FLOAT}, {"Tmultiples", DT_INT64}},
                     {Empty({0, 3}), I64({kMax, 1})}),
            TensorShape({0, 3}));
}

TEST(KernelOverflowTest, PadSizesTheOutputBeforeItsIndexMaps) {
  // A padding of 2^40: the index maps alone were 8 TiB (std::bad_alloc).
  Tensor x = Iota<float>(TensorShape({2}));
  Tensor paddings = Tensor::FromVector<int64_t>({0, k2to40}, TensorShape({1, 2}));
  RunOutOfMemory("Pad", {{"T", DT_FLOAT}, {"Tpaddings", DT_INT64}}, {x, paddings},
                 {"Pad", "float", "[1099511627778]"});
  // The same padding of an empty tensor is an empty result, built without
  // a map per output index.
  Tensor wide = Tensor::FromVector<int64_t>({0, 0, k2to40, 0}, TensorShape({2, 2}));
  EXPECT_EQ(RunShape("Pad", {{"T", DT_FLOAT}, {"Tpaddings", DT_INT64}}, {Empty({0, 2}), wide}),
            TensorShape({0, k2to40 + 2}));
  // Paddings whose sum with the dim passes int64: an error, not a wrapped
  // dim (INT64_MAX twice around 3 wrapped to a 1-element output).
  RunError("Pad", {{"T", DT_FLOAT}, {"Tpaddings", DT_INT64}},
           {Iota<float>(TensorShape({3})),
            Tensor::FromVector<int64_t>({kMax, kMax}, TensorShape({1, 2}))},
           {"Pad", "overflows"});
  RunError("PadV2", {{"T", DT_FLOAT}, {"Tpaddings", DT_INT64}},
           {Iota<float>(TensorShape({3})),
            Tensor::FromVector<int64_t>({k2to62, k2to62}, TensorShape({1, 2})),
            Tensor::Scalar<float>(1)},
           {"PadV2"});
}

TEST(KernelOverflowTest, RangeCountPastInt64) {
  // [INT64_MIN, INT64_MAX) by 1 has 2^64 - 1 elements: the count wrapped
  // to -1 and reached the shape.
  RunError(
      "Range", {{"Tidx", DT_INT64}},
      {Tensor::Scalar<int64_t>(kMin), Tensor::Scalar<int64_t>(kMax), Tensor::Scalar<int64_t>(1)},
      {"Range"});
  // A range wider than 2^63 whose values are all representable: i * delta
  // alone passes int64 at the last element.
  ExpectTensor<int64_t>(Run1("Range", {{"Tidx", DT_INT64}},
                             {Tensor::Scalar<int64_t>(kMin), Tensor::Scalar<int64_t>(kMax),
                              Tensor::Scalar<int64_t>(k2to62)}),
                        TensorShape({4}), {kMin, -k2to62, 0, k2to62});
}

TEST(KernelOverflowTest, ShapesFromValuesAreChecked) {
  RunError("Fill", {{"T", DT_FLOAT}, {"index_type", DT_INT64}},
           {I64({k2to62, 4}), Tensor::Scalar<float>(1)}, {"Fill", "2^63"});
  RunError("Fill", {{"T", DT_FLOAT}, {"index_type", DT_INT64}},
           {I64({3, -1}), Tensor::Scalar<float>(1)}, {"Fill", "negative"});
  RunError("BroadcastTo", {{"T", DT_FLOAT}, {"Tidx", DT_INT64}},
           {Iota<float>(TensorShape({1})), I64({k2to62, 4})}, {"BroadcastTo"});
  RunError("RandomUniform", {{"dtype", DT_FLOAT}, {"T", DT_INT64}}, {I64({k2to62, k2to62})},
           {"RandomUniform"});
  RunError("ScatterNd", {{"T", DT_FLOAT}, {"Tindices", DT_INT32}},
           {Tensor::FromVector<int32_t>({0}, TensorShape({1, 1})), Iota<float>(TensorShape({1})),
            I64({k2to62, 4})},
           {"ScatterNd"});
  // More dims than a shape may have.
  Tensor one = Iota<float>(TensorShape({1}));
  RunError("Reshape", {{"T", DT_FLOAT}, {"Tshape", DT_INT64}},
           {one, I64(std::vector<int64_t>(300, 1))}, {"Reshape", "rank"});
  Tensor deep(DT_FLOAT, TensorShape(std::vector<int64_t>(TensorShape::kMaxRank, 1)));
  RunError("ExpandDims", {{"T", DT_FLOAT}}, {deep, I32Scalar(0)}, {"ExpandDims", "rank"});
}

TEST(KernelOverflowTest, SlicesStayInsideTheInput) {
  Tensor x = Iota<float>(TensorShape({5}));
  RunError("Slice", {{"T", DT_FLOAT}, {"Index", DT_INT64}}, {x, I64({1}), I64({kMax})}, {"Slice"});
  // Strides near +-2^63 take one element; their counts overflowed to 0.
  AttrMap masks = {
      {"T", DT_FLOAT}, {"Index", DT_INT64}, {"begin_mask", int64_t{1}}, {"end_mask", int64_t{1}}};
  ExpectTensor<float>(Run1("StridedSlice", masks, {x, I64({0}), I64({0}), I64({kMin})}),
                      TensorShape({1}), {4});
  ExpectTensor<float>(Run1("StridedSlice", masks, {x, I64({0}), I64({0}), I64({kMax})}),
                      TensorShape({1}), {0});
  Tensor m = Iota<float>(TensorShape({4, 4}));
  ExpectTensor<float>(Run1("StridedSlice", masks, {m, I64({0, 0}), I64({0, 4}), I64({k2to62, 1})}),
                      TensorShape({1, 4}), {0, 1, 2, 3});
}

TEST(KernelOverflowTest, JoinsAndCutsCheckTheirSums) {
  // Four [2^62, 0] along axis 0: 2^64 wrapped to an empty [0, 0].
  Tensor e = Empty({k2to62, 0});
  RunError("ConcatV2", {{"T", DT_FLOAT}, {"N", int64_t{4}}}, {e, e, e, e, I32Scalar(0)},
           {"ConcatV2"});
  RunError("ConcatV2", {{"T", DT_FLOAT}, {"N", int64_t{2}}}, {e, e, I32Scalar(0)}, {"ConcatV2"});
  RunError("Pack", {{"T", DT_FLOAT}, {"N", int64_t{4}}}, {e, e, e, e}, {"Pack"});
  // Sizes whose sum wraps to the dim: pieces past the input's end (a
  // CHECK in the buffer slicing).
  RunError("SplitV", {{"T", DT_FLOAT}, {"Tlen", DT_INT64}, {"num_split", int64_t{3}}},
           {Iota<float>(TensorShape({2})), I64({kMax, kMax, 4}), I32Scalar(0)}, {"SplitV"});
}

TEST(KernelOverflowTest, GathersCheckTheirOutputs) {
  // [8] indices into [3, 2^60, 0]: an output of [8, 2^60, 0].
  RunError("GatherV2", {{"Tparams", DT_FLOAT}, {"Tindices", DT_INT32}, {"Taxis", DT_INT32}},
           {Empty({3, int64_t{1} << 60, 0}), I32(std::vector<int32_t>(8, 0)), I32Scalar(0)},
           {"GatherV2"});
  // Index depth 0 over 2^40 empty index tuples: an offset per output slice
  // was 8 TiB before the output was sized.
  Tensor no_depth = Empty({k2to40, 0}, DT_INT32);
  RunOutOfMemory("GatherNd", {{"Tparams", DT_FLOAT}, {"Tindices", DT_INT32}},
                 {Iota<float>(TensorShape({1})), no_depth}, {"GatherNd", "[1099511627776,1]"});
  EXPECT_EQ(
      RunShape("GatherNd", {{"Tparams", DT_FLOAT}, {"Tindices", DT_INT32}}, {Empty({0}), no_depth}),
      TensorShape({k2to40, 0}));
  RunError("OneHot", {{"T", DT_FLOAT}, {"TI", DT_INT32}, {"axis", int64_t{0}}},
           {Empty({k2to62, 0}, DT_INT32), I32Scalar(4), Tensor::Scalar<float>(1),
            Tensor::Scalar<float>(0)},
           {"OneHot"});
  RunError("DynamicStitch", {{"T", DT_FLOAT}, {"N", int64_t{1}}},
           {I32({1000}), Empty({1, k2to62, 0})}, {"DynamicStitch"});
  // The slice of an empty partitioned tensor is [1, 2^62, 2^62]; the
  // outputs are fine.
  EXPECT_EQ(RunShape("DynamicPartition", {{"T", DT_FLOAT}, {"num_partitions", int64_t{2}}},
                     {Empty({0, k2to62, k2to62}), Empty({0}, DT_INT32)}, 1),
            TensorShape({0, k2to62, k2to62}));
}

TEST(KernelOverflowTest, IndicesOutOfRange) {
  Tensor params = Iota<float>(TensorShape({3, 2}));
  AttrMap gather = {{"Tparams", DT_FLOAT}, {"Tindices", DT_INT64}, {"Taxis", DT_INT32}};
  RunError("GatherV2", gather, {params, I64({0, -1}), I32Scalar(0)}, {"GatherV2", "-1"});
  RunError("GatherV2", gather, {params, I64({kMax}), I32Scalar(0)}, {"GatherV2"});
  RunError("GatherNd", {{"Tparams", DT_FLOAT}, {"Tindices", DT_INT64}},
           {params, Tensor::FromVector<int64_t>({0, kMin}, TensorShape({1, 2}))}, {"GatherNd"});
  RunError("ScatterNd", {{"T", DT_FLOAT}, {"Tindices", DT_INT64}},
           {Tensor::FromVector<int64_t>({kMax}, TensorShape({1, 1})), Iota<float>(TensorShape({1})),
            I64({4})},
           {"ScatterNd"});
  RunError("DynamicStitch", {{"T", DT_FLOAT}, {"N", int64_t{1}}},
           {I32({-1}), Iota<float>(TensorShape({1}))}, {"DynamicStitch", "negative"});
  RunError("DynamicPartition", {{"T", DT_FLOAT}, {"num_partitions", int64_t{2}}},
           {Iota<float>(TensorShape({2})), I32({0, 2})}, {"DynamicPartition"});
}

TEST(KernelOverflowTest, EmptyOperandsWithHugeDims) {
  // [2^35, 1, 0, 0] x [1, 2^20, 0, 0]: an empty [2^35, 2^20, 0, 0], but the
  // batch plan had an entry per output matrix (2^55, std::bad_alloc).
  EXPECT_EQ(RunShape("BatchMatMulV2", {{"T", DT_FLOAT}},
                     {Empty({int64_t{1} << 35, 1, 0, 0}), Empty({1, int64_t{1} << 20, 0, 0})}),
            TensorShape({int64_t{1} << 35, int64_t{1} << 20, 0, 0}));
  RunError("BatchMatMulV2", {{"T", DT_FLOAT}}, {Empty({k2to40, 1, 3, 0}), Empty({1, k2to40, 0, 2})},
           {"BatchMatMulV2"});
  RunError("MatMul", {{"T", DT_FLOAT}}, {Empty({k2to40, 0}), Empty({0, k2to40})}, {"MatMul"});
  RunError("Add", {{"T", DT_FLOAT}}, {Empty({k2to40, 1, 0}), Empty({1, k2to40, 0})}, {"broadcast"});
  Tensor empty = Empty({0, k2to62, k2to62});
  RunError("Sum", {{"T", DT_FLOAT}}, {empty, I32Scalar(0)}, {"Sum"});
  EXPECT_EQ(RunShape("Mean", {{"T", DT_FLOAT}}, {empty, I32({1, 2})}), TensorShape({0}));
  RunError("Transpose", {{"T", DT_FLOAT}}, {empty, I32({1, 2, 0})}, {"Transpose"});
  EXPECT_EQ(RunShape("Transpose", {{"T", DT_FLOAT}}, {empty, I32({0, 2, 1})}),
            TensorShape({0, k2to62, k2to62}));
}

}  // namespace
}  // namespace weir
