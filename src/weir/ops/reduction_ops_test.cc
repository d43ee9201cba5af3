// Shape functions of the reduction and batched matmul declarations with
// partly known inputs (kernel tests check them with every input known).
#include <gtest/gtest.h>

#include "weir/framework/tensor.h"
#include "weir/ops/op_test_util.h"

namespace weir {
namespace {

constexpr int64_t kUnknown = PartialShape::kUnknown;
const PartialShape kScalar = PartialShape(std::vector<int64_t>{});

StatusOr<PartialShape> Infer(const std::string& op, AttrMap attrs,
                             std::vector<PartialShape> inputs,
                             std::vector<const Tensor*> values = {}) {
  WEIR_ASSIGN_OR_RETURN(std::vector<PartialShape> out,
                        InferShapes(op, std::move(attrs), std::move(inputs), std::move(values)));
  return out.at(0);
}

TEST(ReductionOpsShapeTest, MeanMaxAllUseTheReductionShape) {
  Tensor axes = Tensor::FromVector<int32_t>({-1});
  EXPECT_EQ(*Infer("Mean", {{"T", DT_FLOAT}}, {{2, kUnknown, 4}, {1}}, {nullptr, &axes}),
            PartialShape({2, kUnknown}));
  EXPECT_EQ(*Infer("Max", {{"T", DT_INT32}, {"keep_dims", true}}, {{2, 3}, {1}}),
            PartialShape({kUnknown, kUnknown}));
  EXPECT_EQ(*Infer("All", {}, {{2, 3, 4}, {2}}), PartialShape({kUnknown}));
  EXPECT_FALSE(Infer("Any", {}, {{2, 3}, {1, 1}}).ok());
  // All and Any take bool only.
  EXPECT_FALSE(MakeTestNode("All", {{"T", DT_FLOAT}}, 2).ok());
}

TEST(ReductionOpsShapeTest, ArgMaxRemovesTheAxis) {
  Tensor axis = Tensor::Scalar<int32_t>(-2);
  EXPECT_EQ(*Infer("ArgMax", {{"T", DT_FLOAT}}, {{2, kUnknown, 4}, kScalar}, {nullptr, &axis}),
            PartialShape({2, 4}));
  EXPECT_EQ(*Infer("ArgMin", {{"T", DT_FLOAT}}, {{2, 3, 4}, kScalar}),
            PartialShape({kUnknown, kUnknown}));
  EXPECT_EQ(*Infer("ArgMin", {{"T", DT_FLOAT}}, {PartialShape(), kScalar}), PartialShape());
  EXPECT_FALSE(Infer("ArgMax", {{"T", DT_FLOAT}}, {kScalar, kScalar}).ok());
  EXPECT_FALSE(Infer("ArgMax", {{"T", DT_FLOAT}}, {{2, 3}, {1}}).ok());
  Tensor bad = Tensor::Scalar<int32_t>(2);
  Status s = Infer("ArgMax", {{"T", DT_FLOAT}}, {{2, 3}, kScalar}, {nullptr, &bad}).status();
  EXPECT_TRUE(errors::IsInvalidArgument(s)) << s;
  StatusOr<NodeDef> node = MakeTestNode("ArgMax", {{"T", DT_FLOAT}}, 2);
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->attrs.at("output_type").type(), DT_INT64);
  EXPECT_EQ(node->attrs.at("Tidx").type(), DT_INT32);
}

TEST(ReductionOpsShapeTest, BatchMatMulV2BroadcastsBatchDims) {
  EXPECT_EQ(*Infer("BatchMatMulV2", {{"T", DT_FLOAT}}, {{2, 1, 3, 4}, {5, 4, 6}}),
            PartialShape({2, 5, 3, 6}));
  EXPECT_EQ(*Infer("BatchMatMulV2", {{"T", DT_FLOAT}, {"adj_x", true}, {"adj_y", true}},
                   {{kUnknown, 4, 3}, {6, 4}}),
            PartialShape({kUnknown, 3, 6}));
  EXPECT_EQ(*Infer("BatchMatMulV2", {{"T", DT_DOUBLE}}, {{3, 4}, PartialShape()}),
            PartialShape());
  EXPECT_FALSE(Infer("BatchMatMulV2", {{"T", DT_FLOAT}}, {{3, 4}, {5, 6}}).ok());
  EXPECT_FALSE(Infer("BatchMatMulV2", {{"T", DT_FLOAT}}, {{2, 3, 4}, {3, 4, 6}}).ok());
  EXPECT_FALSE(Infer("BatchMatMulV2", {{"T", DT_FLOAT}}, {{4}, {4, 6}}).ok());
}

}  // namespace
}  // namespace weir
