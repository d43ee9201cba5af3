// The sparse kernels on hand-computed cases (RunKernel also checks each
// op's shape function against the outputs), and hostile indices, shapes and
// segment ids reported as InvalidArgument naming the op and the entry.
// Values and gradients against TensorFlow: python/tests/test_sparse_ops.py.
#include <gtest/gtest.h>

#include "weir/kernels/array_test_util.h"

namespace weir {
namespace {

using namespace array_test;

Tensor Matrix(std::vector<int64_t> values, int64_t cols) {
  const int64_t rows = static_cast<int64_t>(values.size()) / cols;
  return Tensor::FromVector(values, TensorShape({rows, cols}));
}

Tensor F32(std::vector<float> values) { return Tensor::FromVector(values); }

TEST(SparseToDenseOpTest, FillsAndValidates) {
  AttrMap attrs = {{"T", DT_FLOAT}, {"Tindices", DT_INT64}};
  ExpectTensor<float>(
      Run1("SparseToDense", attrs,
           {Matrix({0, 1, 1, 0}, 2), I64({2, 2}), F32({3, 4}), Tensor::Scalar<float>(-1)}),
      TensorShape({2, 2}), {-1, 3, 4, -1});
  // A scalar value serves every index.
  ExpectTensor<float>(
      Run1("SparseToDense", attrs,
           {Matrix({0, 2}, 1), I64({3}), Tensor::Scalar<float>(5), Tensor::Scalar<float>(0)}),
      TensorShape({3}), {5, 0, 5});
  RunError("SparseToDense", attrs,
           {Matrix({0, 1, 9, 0}, 2), I64({2, 2}), F32({3, 4}), Tensor::Scalar<float>(0)},
           {"sparse_indices[1] = [9, 0]", "out of bounds"});
  RunError("SparseToDense", attrs,
           {Matrix({1, 0, 0, 1}, 2), I64({2, 2}), F32({3, 4}), Tensor::Scalar<float>(0)},
           {"out of order"});
  RunError("SparseToDense", attrs,
           {Matrix({0, 0}, 2), I64({int64_t{1} << 62, int64_t{1} << 62}), F32({1}),
            Tensor::Scalar<float>(0)},
           {"2^63"});
  RunError("SparseToDense", attrs,
           {Matrix({0, 0}, 2), I64({2, 2}), F32({1, 2}), Tensor::Scalar<float>(0)},
           {"one value per index"});
}

TEST(SparseTensorDenseMatMulOpTest, AdjointsAndBounds) {
  // A = [[0, 2], [3, 0]] as entries, b = [[1, 2], [3, 4]].
  Tensor indices = Matrix({0, 1, 1, 0}, 2), values = F32({2, 3}), shape = I64({2, 2});
  Tensor b = Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2}));
  ExpectTensor<float>(
      Run1("SparseTensorDenseMatMul", {{"T", DT_FLOAT}}, {indices, values, shape, b}),
      TensorShape({2, 2}), {6, 8, 3, 6});
  ExpectTensor<float>(Run1("SparseTensorDenseMatMul", {{"T", DT_FLOAT}, {"adjoint_a", true}},
                           {indices, values, shape, b}),
                      TensorShape({2, 2}), {9, 12, 2, 4});
  ExpectTensor<float>(Run1("SparseTensorDenseMatMul", {{"T", DT_FLOAT}, {"adjoint_b", true}},
                           {indices, values, shape, b}),
                      TensorShape({2, 2}), {4, 8, 3, 9});
  RunError("SparseTensorDenseMatMul", {{"T", DT_FLOAT}}, {Matrix({0, 5}, 2), F32({1}), shape, b},
           {"a_indices[0] = [0, 5]", "out of bounds"});
  RunError("SparseTensorDenseMatMul", {{"T", DT_FLOAT}}, {indices, values, I64({2, 3}), b},
           {"inner dims 3 and 2 differ"});
}

TEST(SparseReorderOpTest, SortsRowMajor) {
  StatusOr<std::vector<Tensor>> out =
      RunKernel("SparseReorder", {{"T", DT_FLOAT}},
                {Matrix({1, 0, 0, 2, 0, 1}, 2), F32({1, 2, 3}), I64({2, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensor<int64_t>((*out)[0], TensorShape({3, 2}), {0, 1, 0, 2, 1, 0});
  ExpectTensor<float>((*out)[1], TensorShape({3}), {3, 2, 1});
  RunError("SparseReorder", {{"T", DT_FLOAT}}, {Matrix({0, -1}, 2), F32({1}), I64({2, 3})},
           {"indices[0] = [0, -1]"});
  RunError("SparseReorder", {{"T", DT_FLOAT}}, {Matrix({0, 0}, 2), F32({1}), I64({2, -3})},
           {"negative"});
}

TEST(SparseReshapeOpTest, InfersAndRefusesOverflow) {
  StatusOr<std::vector<Tensor>> out =
      RunKernel("SparseReshape", {}, {Matrix({0, 1, 1, 2}, 2), I64({2, 3}), I64({-1, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensor<int64_t>((*out)[0], TensorShape({2, 2}), {0, 1, 2, 1});
  ExpectTensor<int64_t>((*out)[1], TensorShape({2}), {3, 2});
  RunError("SparseReshape", {},
           {Matrix({0, 0}, 2), I64({int64_t{1} << 62, int64_t{1} << 62}), I64({-1})}, {"2^63"});
  RunError("SparseReshape", {}, {Matrix({0, 0}, 2), I64({2, 3}), I64({-1, -1})},
           {"more than one -1"});
}

TEST(SparseSegmentOpTest, SumsMeansAndChecksIds) {
  Tensor data = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({3, 2}));
  ExpectTensor<float>(
      Run1("SparseSegmentSum", {{"T", DT_FLOAT}}, {data, I32({0, 2, 1}), I32({0, 0, 2})}),
      TensorShape({3, 2}), {6, 8, 0, 0, 3, 4});
  ExpectTensor<float>(Run1("SparseSegmentMeanWithNumSegments", {{"T", DT_FLOAT}},
                           {data, I32({0, 2}), I32({1, 1}), I32Scalar(3)}),
                      TensorShape({3, 2}), {0, 0, 3, 4, 0, 0});
  ExpectTensor<float>(Run1("SparseSegmentSumGrad", {{"T", DT_FLOAT}},
                           {Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2})),
                            I32({0, 2, 0}), I32({0, 1, 1}), I32Scalar(3)}),
                      TensorShape({3, 2}), {4, 6, 0, 0, 3, 4});
  // GradV2: the rows of the sorted unique indices only, and those indices.
  StatusOr<std::vector<Tensor>> v2 =
      RunKernel("SparseSegmentSumGradV2", {{"T", DT_FLOAT}},
                {Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2})), I32({2, 0, 2}),
                 I32({0, 1, 1}), I32Scalar(3)});
  ASSERT_TRUE(v2.ok()) << v2.status();
  ExpectTensor<float>((*v2)[0], TensorShape({2, 2}), {3, 4, 4, 6});
  ExpectTensor<int32_t>((*v2)[1], TensorShape({2}), {0, 2});
  RunError(
      "SparseSegmentMeanGradV2", {{"T", DT_FLOAT}},
      {Tensor::FromVector<float>({1, 2}, TensorShape({1, 2})), I32({5}), I32({0}), I32Scalar(3)},
      {"indices[0] = 5 is out of range [0, 3)"});
  RunError("SparseSegmentSum", {{"T", DT_FLOAT}}, {data, I32({0, 3}), I32({0, 0})},
           {"indices[1] = 3 is out of range [0, 3)"});
  RunError("SparseSegmentSum", {{"T", DT_FLOAT}}, {data, I32({0, 1}), I32({1, 0})}, {"not sorted"});
  RunError("SparseSegmentSumWithNumSegments", {{"T", DT_FLOAT}},
           {data, I32({0, 1}), I32({0, 4}), I32Scalar(2)}, {"segment_ids[1] = 4"});
}

TEST(SparseAddOpTest, MergesAndThresholds) {
  StatusOr<std::vector<Tensor>> out =
      RunKernel("SparseAdd", {{"T", DT_FLOAT}, {"Treal", DT_FLOAT}},
                {Matrix({0, 0, 1, 1}, 2), F32({1, 2}), I64({2, 2}), Matrix({0, 0, 1, 0}, 2),
                 F32({-0.5, 4}), I64({2, 2}), Tensor::Scalar<float>(0.6)});
  ASSERT_TRUE(out.ok()) << out.status();
  // 1 + -0.5 is below the threshold: dropped.
  ExpectTensor<int64_t>((*out)[0], TensorShape({2, 2}), {1, 0, 1, 1});
  ExpectTensor<float>((*out)[1], TensorShape({2}), {4, 2});
  RunError("SparseAdd", {{"T", DT_FLOAT}, {"Treal", DT_FLOAT}},
           {Matrix({0, 0}, 2), F32({1}), I64({2, 2}), Matrix({0, 0}, 2), F32({1}), I64({2, 3}),
            Tensor::Scalar<float>(0)},
           {"must be equal"});
}

TEST(SparseFillEmptyRowsOpTest, FillsAndMapsBack) {
  StatusOr<std::vector<Tensor>> out =
      RunKernel("SparseFillEmptyRows", {{"T", DT_FLOAT}},
                {Matrix({0, 1, 2, 0}, 2), F32({5, 6}), I64({4, 2}), Tensor::Scalar<float>(-1)});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensor<int64_t>((*out)[0], TensorShape({4, 2}), {0, 1, 1, 0, 2, 0, 3, 0});
  ExpectTensor<float>((*out)[1], TensorShape({4}), {5, -1, 6, -1});
  ExpectTensor<bool>((*out)[2], TensorShape({4}), {false, true, false, true});
  ExpectTensor<int64_t>((*out)[3], TensorShape({2}), {0, 2});
  RunError("SparseFillEmptyRows", {{"T", DT_FLOAT}},
           {Matrix({7, 0}, 2), F32({1}), I64({4, 2}), Tensor::Scalar<float>(0)},
           {"row out of bounds"});
}

TEST(SparseDenseCwiseOpTest, BroadcastsAndRefusesIntegerDivisionByZero) {
  ExpectTensor<float>(Run1("SparseDenseCwiseMul", {{"T", DT_FLOAT}},
                           {Matrix({0, 1, 1, 0}, 2), F32({2, 3}), I64({2, 2}), F32({10, 100})}),
                      TensorShape({2}), {200, 30});
  RunError("SparseDenseCwiseDiv", {{"T", DT_INT32}},
           {Matrix({0, 1}, 2), I32({4}), I64({2, 2}), I32({1, 0})}, {"division by zero"});
  RunError("SparseDenseCwiseMul", {{"T", DT_FLOAT}},
           {Matrix({0, 1}, 2), F32({4}), I64({2, 2}), F32({1, 2, 3})}, {"does not broadcast"});
}

// Sizes from hostile values go through the allocator (a Status), never a
// std::vector of 2^62 elements.
TEST(SparseKernelsTest, HugeSizesAreStatusesNotCrashes) {
  StatusOr<std::vector<Tensor>> out =
      RunKernel("SparseFillEmptyRows", {{"T", DT_FLOAT}},
                {Matrix({}, 2), F32({}), I64({int64_t{1} << 62, 1}), Tensor::Scalar<float>(0)});
  EXPECT_FALSE(out.ok());
  // 2^62 empty segments of no columns: an empty result.
  Tensor no_columns(DT_FLOAT, TensorShape({2, 0}));
  out = RunKernel("SparseSegmentSumWithNumSegments", {{"T", DT_FLOAT}, {"Tnumsegments", DT_INT64}},
                  {no_columns, I32({1}), I32({0}), Tensor::Scalar<int64_t>(int64_t{1} << 62)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({int64_t{1} << 62, 0}));
  // A gradient with 2^40 segments of no columns.
  out = RunKernel("SparseSegmentMeanGrad", {{"T", DT_FLOAT}},
                  {Tensor(DT_FLOAT, TensorShape({int64_t{1} << 40, 0})), I32({0}), I32({(1 << 30)}),
                   I32Scalar(1)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({1, 0}));
}

}  // namespace
}  // namespace weir
