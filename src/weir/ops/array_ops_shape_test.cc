// Shape functions of the array family: full shapes from constant inputs,
// partial shapes propagated when inputs are unknown, errors naming the
// node and shapes.
#include <gtest/gtest.h>

#include "weir/framework/tensor.h"
#include "weir/kernels/all_kernels.h"
#include "weir/ops/all_ops.h"
#include "weir/ops/op_test_util.h"
#include "weir/ops/standard_ops.h"

namespace weir {
namespace {

constexpr int64_t kUnknown = PartialShape::kUnknown;
const PartialShape kScalar = PartialShape(std::vector<int64_t>{});
const PartialShape kUnknownRank = PartialShape::UnknownRank();

std::vector<PartialShape> Shapes(const std::string& op, AttrMap attrs,
                                 std::vector<PartialShape> inputs,
                                 std::vector<const Tensor*> values = {}) {
  StatusOr<std::vector<PartialShape>> out =
      InferShapes(op, std::move(attrs), std::move(inputs), std::move(values));
  EXPECT_TRUE(out.ok()) << op << ": " << out.status();
  return out.ok() ? *out : std::vector<PartialShape>();
}

PartialShape Shape1(const std::string& op, AttrMap attrs, std::vector<PartialShape> inputs,
                    std::vector<const Tensor*> values = {}) {
  std::vector<PartialShape> out =
      Shapes(op, std::move(attrs), std::move(inputs), std::move(values));
  return out.empty() ? PartialShape() : out[0];
}

// Expects the shape function to fail with InvalidArgument mentioning `parts`.
void ExpectError(const std::string& op, AttrMap attrs, std::vector<PartialShape> inputs,
                 std::vector<const Tensor*> values, std::initializer_list<std::string> parts) {
  StatusOr<std::vector<PartialShape>> out =
      InferShapes(op, std::move(attrs), std::move(inputs), std::move(values));
  ASSERT_FALSE(out.ok()) << op << " should fail";
  EXPECT_TRUE(errors::IsInvalidArgument(out.status())) << out.status();
  EXPECT_NE(out.status().message().find("'test_node' (" + op + ")"), std::string::npos)
      << out.status();
  for (const std::string& part : parts) {
    EXPECT_NE(out.status().message().find(part), std::string::npos)
        << "'" << part << "' not in: " << out.status();
  }
}

Tensor I32(std::vector<int32_t> v) { return Tensor::FromVector(v); }
Tensor I32Scalar(int32_t v) { return Tensor::Scalar<int32_t>(v); }

TEST(ConcatV2ShapeTest, PartialShapesPropagate) {
  AttrMap attrs = {{"T", DT_FLOAT}, {"N", 2}};
  Tensor axis0 = I32Scalar(0), axis1 = I32Scalar(1), axis_neg = I32Scalar(-1);
  EXPECT_EQ(Shape1("ConcatV2", attrs, {{kUnknown, 3}, {2, 3}, kScalar}, {nullptr, nullptr, &axis0}),
            PartialShape({kUnknown, 3}));
  EXPECT_EQ(Shape1("ConcatV2", attrs, {{kUnknown, 3}, {2, 3}, kScalar}, {nullptr, nullptr, &axis1}),
            PartialShape({2, 6}));
  EXPECT_EQ(Shape1("ConcatV2", attrs, {{kUnknown, 3}, {2, kUnknown}, kScalar},
                   {nullptr, nullptr, &axis_neg}),
            PartialShape({2, kUnknown}));
  EXPECT_EQ(Shape1("ConcatV2", attrs, {kUnknownRank, {2, 3}, kScalar}, {nullptr, nullptr, &axis1}),
            PartialShape({2, kUnknown}));
  // Axis unknown: only the rank.
  EXPECT_EQ(Shape1("ConcatV2", attrs, {kUnknownRank, {2, 3}, kScalar}),
            PartialShape({kUnknown, kUnknown}));
  EXPECT_EQ(Shape1("ConcatV2", attrs, {kUnknownRank, kUnknownRank, kScalar}), kUnknownRank);
}

TEST(ConcatV2ShapeTest, Errors) {
  AttrMap attrs = {{"T", DT_FLOAT}, {"N", 2}};
  Tensor axis0 = I32Scalar(0), axis2 = I32Scalar(2);
  ExpectError("ConcatV2", attrs, {{2, 3}, {2, 4}, kScalar}, {nullptr, nullptr, &axis0},
              {"dim 1", "[2,3]", "[2,4]"});
  ExpectError("ConcatV2", attrs, {{2, 3}, {2, 3}, kScalar}, {nullptr, nullptr, &axis2},
              {"axis 2", "[-2, 2)"});
  ExpectError("ConcatV2", attrs, {{2, 3}, {2}, kScalar}, {}, {"rank", "[2,3]", "[2]"});
  ExpectError("ConcatV2", attrs, {kScalar, kScalar, kScalar}, {nullptr, nullptr, &axis0},
              {"scalars"});
}

TEST(TransposeShapeTest, ConstantAndUnknownPerm) {
  Tensor perm = I32({2, 0, 1});
  EXPECT_EQ(Shape1("Transpose", {{"T", DT_FLOAT}}, {{2, kUnknown, 4}, {3}}, {nullptr, &perm}),
            PartialShape({4, 2, kUnknown}));
  EXPECT_EQ(Shape1("Transpose", {{"T", DT_FLOAT}}, {kUnknownRank, {3}}, {nullptr, &perm}),
            PartialShape({kUnknown, kUnknown, kUnknown}));
  EXPECT_EQ(Shape1("Transpose", {{"T", DT_FLOAT}}, {{2, 3}, {2}}),
            PartialShape({kUnknown, kUnknown}));
  EXPECT_EQ(Shape1("Transpose", {{"T", DT_FLOAT}}, {kUnknownRank, {kUnknown}}), kUnknownRank);
  Tensor bad = I32({0, 0, 1});
  ExpectError("Transpose", {{"T", DT_FLOAT}}, {{2, 3, 4}, {3}}, {nullptr, &bad}, {"twice"});
  ExpectError("Transpose", {{"T", DT_FLOAT}}, {{2, 3}, {3}}, {}, {"perm has 3", "rank 2"});
}

TEST(SliceShapeTest, ConstantInputsGiveFullShapes) {
  Tensor begin = I32({1, 0}), size = I32({2, -1});
  AttrMap attrs = {{"T", DT_FLOAT}, {"Index", DT_INT32}};
  EXPECT_EQ(Shape1("Slice", attrs, {{4, 5}, {2}, {2}}, {nullptr, &begin, &size}),
            PartialShape({2, 5}));
  EXPECT_EQ(Shape1("Slice", attrs, {{4, kUnknown}, {2}, {2}}, {nullptr, &begin, &size}),
            PartialShape({2, kUnknown}));
  // Only the size known: dims other than -1 are known.
  EXPECT_EQ(Shape1("Slice", attrs, {{4, 5}, {2}, {2}}, {nullptr, nullptr, &size}),
            PartialShape({2, kUnknown}));
  EXPECT_EQ(Shape1("Slice", attrs, {kUnknownRank, {2}, {2}}), PartialShape({kUnknown, kUnknown}));
  Tensor too_big = I32({3, 6});
  ExpectError("Slice", attrs, {{4, 5}, {2}, {2}}, {nullptr, &begin, &too_big},
              {"size[1] = 6", "[4,5]"});
}

TEST(StridedSliceShapeTest, ConstantInputsGiveFullShapes) {
  AttrMap attrs = {{"T", DT_FLOAT},
                   {"Index", DT_INT32},
                   {"shrink_axis_mask", 2},
                   {"new_axis_mask", 4},
                   {"end_mask", 1}};
  // x[1:, 2, newaxis] of [5, 4, 3] -> [4, 1, 3]
  Tensor begin = I32({1, 2, 0}), end = I32({0, 3, 0}), strides = I32({1, 1, 1});
  EXPECT_EQ(
      Shape1("StridedSlice", attrs, {{5, 4, 3}, {3}, {3}, {3}}, {nullptr, &begin, &end, &strides}),
      PartialShape({4, 1, 3}));
  EXPECT_EQ(Shape1("StridedSlice", attrs, {{kUnknown, 4, 3}, {3}, {3}, {3}},
                   {nullptr, &begin, &end, &strides}),
            PartialShape({kUnknown, 1, 3}));
  // Values unknown: the masks still say which dims go, come and pass through.
  EXPECT_EQ(Shape1("StridedSlice", attrs, {{5, 4, 3}, {3}, {3}, {3}}),
            PartialShape({kUnknown, 1, 3}));
  AttrMap ellipsis = {
      {"T", DT_FLOAT}, {"Index", DT_INT32}, {"ellipsis_mask", 1}, {"shrink_axis_mask", 2}};
  EXPECT_EQ(Shape1("StridedSlice", ellipsis, {{2, 7, 3}, {2}, {2}, {2}}), PartialShape({2, 7}));
  EXPECT_EQ(Shape1("StridedSlice", attrs, {kUnknownRank, {3}, {3}, {3}}), kUnknownRank);
  EXPECT_EQ(Shape1("StridedSlice", attrs, {{5, 4, 3}, {kUnknown}, {kUnknown}, {kUnknown}}),
            kUnknownRank);
  Tensor out_of_range = I32({1, 9, 0});
  ExpectError("StridedSlice", attrs, {{5, 4, 3}, {3}, {3}, {3}},
              {nullptr, &out_of_range, &end, &strides}, {"slice index 9 of dimension 1"});
  ExpectError("StridedSlice", attrs, {{5, 4, 3}, {3}, {2}, {3}}, {}, {"same length"});
}

TEST(ReshapeShapeTest, ConstantShapeGivesFullShape) {
  Tensor dims = I32({-1, 6});
  EXPECT_EQ(Shape1("Reshape", {{"T", DT_FLOAT}}, {{4, 3}, {2}}, {nullptr, &dims}),
            PartialShape({2, 6}));
}

TEST(PackUnpackShapeTest, Partial) {
  EXPECT_EQ(
      Shape1("Pack", {{"T", DT_FLOAT}, {"N", 2}, {"axis", 1}}, {{kUnknown, 3}, {2, kUnknown}}),
      PartialShape({2, 2, 3}));
  EXPECT_EQ(Shape1("Pack", {{"T", DT_FLOAT}, {"N", 2}}, {kUnknownRank, kUnknownRank}),
            kUnknownRank);
  ExpectError("Pack", {{"T", DT_FLOAT}, {"N", 2}}, {{2}, {3}}, {}, {"same shape", "[3]"});
  std::vector<PartialShape> out =
      Shapes("Unpack", {{"T", DT_FLOAT}, {"num", 2}, {"axis", -1}}, {{kUnknown, 2}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1], PartialShape({kUnknown}));
  ExpectError("Unpack", {{"T", DT_FLOAT}, {"num", 3}}, {{2, 4}}, {}, {"num is 3", "[2,4]"});
}

TEST(SplitShapeTest, ConstantAndUnknownAxis) {
  Tensor axis = I32Scalar(1);
  std::vector<PartialShape> out = Shapes("Split", {{"T", DT_FLOAT}, {"num_split", 2}},
                                         {kScalar, {kUnknown, 6}}, {&axis, nullptr});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], PartialShape({kUnknown, 3}));
  EXPECT_EQ(Shape1("Split", {{"T", DT_FLOAT}, {"num_split", 2}}, {kScalar, {4, 6}}),
            PartialShape({kUnknown, kUnknown}));
  ExpectError("Split", {{"T", DT_FLOAT}, {"num_split", 4}}, {kScalar, {4, 6}}, {&axis, nullptr},
              {"num_split 4", "[4,6]"});
  Tensor sizes = Tensor::FromVector<int64_t>({2, -1});
  out = Shapes("SplitV", {{"T", DT_FLOAT}, {"num_split", 2}}, {{3, 7}, {2}, kScalar},
               {nullptr, &sizes, &axis});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], PartialShape({3, 2}));
  EXPECT_EQ(out[1], PartialShape({3, 5}));
  out = Shapes("SplitV", {{"T", DT_FLOAT}, {"num_split", 2}}, {{3, kUnknown}, {2}, kScalar},
               {nullptr, &sizes, &axis});
  EXPECT_EQ(out[0], PartialShape({3, 2}));
  EXPECT_EQ(out[1], PartialShape({3, kUnknown}));
}

TEST(TilePadShapeTest, Partial) {
  Tensor multiples = I32({2, 3});
  EXPECT_EQ(Shape1("Tile", {{"T", DT_FLOAT}}, {{kUnknown, 4}, {2}}, {nullptr, &multiples}),
            PartialShape({kUnknown, 12}));
  EXPECT_EQ(Shape1("Tile", {{"T", DT_FLOAT}}, {kUnknownRank, {2}}),
            PartialShape({kUnknown, kUnknown}));
  Tensor paddings = Tensor::FromVector<int32_t>({1, 2, 0, 3}, TensorShape({2, 2}));
  EXPECT_EQ(Shape1("Pad", {{"T", DT_FLOAT}}, {{kUnknown, 4}, {2, 2}}, {nullptr, &paddings}),
            PartialShape({kUnknown, 7}));
  EXPECT_EQ(Shape1("PadV2", {{"T", DT_FLOAT}}, {{1, 4}, {2, 2}, kScalar}, {nullptr, &paddings}),
            PartialShape({4, 7}));
  EXPECT_EQ(Shape1("Pad", {{"T", DT_FLOAT}}, {kUnknownRank, {3, 2}}),
            PartialShape({kUnknown, kUnknown, kUnknown}));
  ExpectError("MirrorPad", {{"T", DT_FLOAT}, {"mode", "REFLECT"}}, {{2, 4}, {2, 2}},
              {nullptr, &paddings}, {"REFLECT", "at most 1"});
  ExpectError("Pad", {{"T", DT_FLOAT}}, {{2, 4, 1}, {2, 2}}, {}, {"rank 3"});
}

TEST(ExpandSqueezeShapeTest, Partial) {
  Tensor dim = I32Scalar(-1);
  EXPECT_EQ(Shape1("ExpandDims", {{"T", DT_FLOAT}}, {{kUnknown, 3}, kScalar}, {nullptr, &dim}),
            PartialShape({kUnknown, 3, 1}));
  EXPECT_EQ(Shape1("ExpandDims", {{"T", DT_FLOAT}}, {{kUnknown, 3}, kScalar}),
            PartialShape({kUnknown, kUnknown, kUnknown}));
  EXPECT_EQ(Shape1("Squeeze", {{"T", DT_FLOAT}}, {{1, 3, 1}}), PartialShape({3}));
  // An unknown dim might be 1: with no dims listed the rank is unknown.
  EXPECT_EQ(Shape1("Squeeze", {{"T", DT_FLOAT}}, {{1, kUnknown}}), kUnknownRank);
  EXPECT_EQ(Shape1("Squeeze", {{"T", DT_FLOAT}, {"squeeze_dims", std::vector<int64_t>{0}}},
                   {{1, kUnknown}}),
            PartialShape({kUnknown}));
  ExpectError("Squeeze", {{"T", DT_FLOAT}, {"squeeze_dims", std::vector<int64_t>{1}}}, {{1, 3}}, {},
              {"size 3"});
}

TEST(FillBroadcastShapeTest, ConstantShapes) {
  Tensor dims = I32({2, 3});
  EXPECT_EQ(Shape1("Fill", {{"T", DT_FLOAT}}, {{2}, kScalar}, {&dims, nullptr}),
            PartialShape({2, 3}));
  EXPECT_EQ(Shape1("Fill", {{"T", DT_FLOAT}}, {{2}, kScalar}), PartialShape({kUnknown, kUnknown}));
  EXPECT_EQ(Shape1("BroadcastTo", {{"T", DT_FLOAT}}, {{3}, {2}}, {nullptr, &dims}),
            PartialShape({2, 3}));
  ExpectError("BroadcastTo", {{"T", DT_FLOAT}}, {{4}, {2}}, {nullptr, &dims}, {"[4]", "[2,3]"});
  Tensor s1 = I32({1});
  EXPECT_EQ(Shape1("BroadcastArgs", {}, {{3}, {2}}, {&dims, &s1}), PartialShape({2}));
  EXPECT_EQ(Shape1("BroadcastArgs", {}, {{3}, {2}}), PartialShape({3}));
}

TEST(IndexingShapeTest, Gather) {
  AttrMap attrs = {{"Tparams", DT_FLOAT}, {"Tindices", DT_INT32}, {"Taxis", DT_INT32}};
  Tensor axis = I32Scalar(1);
  EXPECT_EQ(
      Shape1("GatherV2", attrs, {{5, kUnknown, 7}, {2, 3}, kScalar}, {nullptr, nullptr, &axis}),
      PartialShape({5, 2, 3, 7}));
  EXPECT_EQ(Shape1("GatherV2", attrs, {{5, 6, 7}, {2, 3}, kScalar}),
            PartialShape({kUnknown, kUnknown, kUnknown, kUnknown}));
  Tensor axis3 = I32Scalar(3);
  ExpectError("GatherV2", attrs, {{5, 6, 7}, {2}, kScalar}, {nullptr, nullptr, &axis3},
              {"axis 3", "[5,6,7]"});
  attrs["batch_dims"] = 1;
  EXPECT_EQ(
      Shape1("GatherV2", attrs, {{kUnknown, 6, 7}, {4, 3}, kScalar}, {nullptr, nullptr, &axis}),
      PartialShape({4, 3, 7}));
  EXPECT_EQ(Shape1("GatherNd", {{"Tparams", DT_FLOAT}, {"Tindices", DT_INT32}},
                   {{5, 6, 7}, {kUnknown, 2}}),
            PartialShape({kUnknown, 7}));
  EXPECT_EQ(Shape1("GatherNd", {{"Tparams", DT_FLOAT}, {"Tindices", DT_INT32}},
                   {{5, 6, 7}, {4, kUnknown}}),
            kUnknownRank);
  Tensor shape = I32({4, 5});
  EXPECT_EQ(Shape1("ScatterNd", {{"T", DT_FLOAT}, {"Tindices", DT_INT32}},
                   {{kUnknown, 1}, {kUnknown, 5}, {2}}, {nullptr, nullptr, &shape}),
            PartialShape({4, 5}));
  ExpectError("ScatterNd", {{"T", DT_FLOAT}, {"Tindices", DT_INT32}}, {{3, 1}, {3, 6}, {2}},
              {nullptr, nullptr, &shape}, {"updates has shape [3,6]"});
}

TEST(IndexingShapeTest, OneHotRangeAndDataDependent) {
  Tensor depth = I32Scalar(10);
  EXPECT_EQ(Shape1("OneHot", {{"T", DT_FLOAT}, {"TI", DT_INT32}},
                   {{kUnknown, 3}, kScalar, kScalar, kScalar}, {nullptr, &depth}),
            PartialShape({kUnknown, 3, 10}));
  EXPECT_EQ(Shape1("OneHot", {{"T", DT_FLOAT}, {"TI", DT_INT32}, {"axis", 0}},
                   {{4}, kScalar, kScalar, kScalar}),
            PartialShape({kUnknown, 4}));
  Tensor start = I32Scalar(1), limit = I32Scalar(10), delta = I32Scalar(4);
  EXPECT_EQ(Shape1("Range", {}, {kScalar, kScalar, kScalar}, {&start, &limit, &delta}),
            PartialShape({3}));
  EXPECT_EQ(Shape1("Range", {}, {kScalar, kScalar, kScalar}), PartialShape({kUnknown}));
  Tensor zero = I32Scalar(0);
  ExpectError("Range", {}, {kScalar, kScalar, kScalar}, {&start, &limit, &zero}, {"delta"});
  std::vector<PartialShape> parts =
      Shapes("DynamicPartition", {{"T", DT_FLOAT}, {"num_partitions", 2}}, {{5, 3}, {5}});
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[1], PartialShape({kUnknown, 3}));
  Tensor i0 = I32({0, 2}), i1 = I32({1});
  EXPECT_EQ(
      Shape1("DynamicStitch", {{"T", DT_FLOAT}, {"N", 2}}, {{2}, {1}, {2, 4}, {1, 4}}, {&i0, &i1}),
      PartialShape({3, 4}));
  EXPECT_EQ(Shape1("DynamicStitch", {{"T", DT_FLOAT}, {"N", 2}}, {{2}, {1}, {2, 4}, {1, kUnknown}}),
            PartialShape({kUnknown, 4}));
  std::vector<PartialShape> unique = Shapes("Unique", {{"T", DT_INT32}}, {{7}});
  EXPECT_EQ(unique[0], PartialShape({kUnknown}));
  EXPECT_EQ(unique[1], PartialShape({7}));
  EXPECT_EQ(Shape1("Where", {}, {{2, kUnknown, 3}}), PartialShape({kUnknown, 3}));
}

TEST(DescribingShapeTest, ShapeNSizeRankIdentityN) {
  std::vector<PartialShape> out =
      Shapes("ShapeN", {{"T", DT_FLOAT}, {"N", 2}}, {{2, 3}, kUnknownRank});
  EXPECT_EQ(out[0], PartialShape({2}));
  EXPECT_EQ(out[1], PartialShape({kUnknown}));
  EXPECT_EQ(Shape1("Size", {{"T", DT_FLOAT}}, {{2, 3}}), kScalar);
  EXPECT_EQ(Shape1("Rank", {{"T", DT_FLOAT}}, {kUnknownRank}), kScalar);
  out = Shapes("IdentityN", {{"T", std::vector<DType>{DT_FLOAT, DT_INT32}}}, {{2}, {kUnknown, 1}});
  EXPECT_EQ(out[1], PartialShape({kUnknown, 1}));
  EXPECT_EQ(Shape1("StopGradient", {{"T", DT_FLOAT}}, {{kUnknown, 2}}),
            PartialShape({kUnknown, 2}));
}

// Through the builder, Const inputs reach the shape functions as values.
TEST(ArrayOpsBuilderTest, ConstantInputsFlowIntoShapes) {
  RegisterAllOps();
  RegisterAllKernels();
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_FLOAT, {{"shape", PartialShape({kUnknown, 3})}});
  auto y = ops::Const(root, Tensor(DT_FLOAT, TensorShape({2, 3})));
  auto joined = ops::ConcatV2(root, {x, y}, 0);
  auto sliced = ops::StridedSlice(root, ops::Const(root, Tensor(DT_FLOAT, TensorShape({6, 4}))),
                                  ops::Const(root, I32({1, 0})), ops::Const(root, I32({5, 4})),
                                  ops::Const(root, I32({2, 1})), {{"shrink_axis_mask", 2}});
  auto sized = ops::Slice(root, x, ops::Const(root, I32({0, 1})), ops::Const(root, I32({-1, 2})));
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(joined.shape(), PartialShape({kUnknown, 3}));
  EXPECT_EQ(sliced.shape(), PartialShape({2}));
  EXPECT_EQ(sized.shape(), PartialShape({kUnknown, 2}));
}

}  // namespace
}  // namespace weir
