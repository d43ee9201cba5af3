#include "weir/ops/shape_fns.h"

#include <gtest/gtest.h>

#include "weir/framework/broadcast_shape.h"
#include "weir/framework/tensor.h"
#include "weir/ops/op_test_util.h"

namespace weir {
namespace {

constexpr int64_t kUnknown = PartialShape::kUnknown;
// A scalar; note that `{}` alone would be the unknown-rank default.
const PartialShape kScalar = PartialShape(std::vector<int64_t>{});

PartialShape Shape1(const std::string& op, AttrMap attrs, std::vector<PartialShape> inputs,
                    std::vector<const Tensor*> values = {}) {
  StatusOr<std::vector<PartialShape>> out =
      InferShapes(op, std::move(attrs), std::move(inputs), std::move(values));
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok() || out->empty()) return PartialShape();
  return (*out)[0];
}

Status ShapeError(const std::string& op, AttrMap attrs, std::vector<PartialShape> inputs,
                  std::vector<const Tensor*> values = {}) {
  StatusOr<std::vector<PartialShape>> out =
      InferShapes(op, std::move(attrs), std::move(inputs), std::move(values));
  EXPECT_FALSE(out.ok());
  return out.ok() ? Status::OK() : out.status();
}

TEST(BroadcastShapesTest, KnownShapes) {
  EXPECT_EQ(*BroadcastShapes({2, 3}, {2, 3}), PartialShape({2, 3}));
  EXPECT_EQ(*BroadcastShapes(kScalar, {2, 3}), PartialShape({2, 3}));
  EXPECT_EQ(*BroadcastShapes({2, 3}, {3}), PartialShape({2, 3}));
  EXPECT_EQ(*BroadcastShapes({4, 1}, {1, 5}), PartialShape({4, 5}));
  EXPECT_EQ(*BroadcastShapes({2, 1, 3}, {4, 1}), PartialShape({2, 4, 3}));
  EXPECT_EQ(*BroadcastShapes({0, 3}, {1, 3}), PartialShape({0, 3}));
  EXPECT_EQ(*BroadcastShapes({0}, {1}), PartialShape({0}));
}

TEST(BroadcastShapesTest, PartialShapes) {
  EXPECT_EQ(*BroadcastShapes({kUnknown, 3}, {2, 1}), PartialShape({2, 3}));
  EXPECT_EQ(*BroadcastShapes({kUnknown}, {4}), PartialShape({4}));
  EXPECT_EQ(*BroadcastShapes({1}, {kUnknown}), PartialShape({kUnknown}));
  EXPECT_EQ(*BroadcastShapes({kUnknown}, {kUnknown}), PartialShape({kUnknown}));
  EXPECT_EQ(*BroadcastShapes({kUnknown, 1}, {5}), PartialShape({kUnknown, 5}));
  EXPECT_EQ(*BroadcastShapes(PartialShape::UnknownRank(), {2, 3}), PartialShape::UnknownRank());
  EXPECT_EQ(*BroadcastShapes({2, 3}, PartialShape::UnknownRank()), PartialShape::UnknownRank());
}

TEST(BroadcastShapesTest, IncompatibleShapesAreAnError) {
  StatusOr<PartialShape> s = BroadcastShapes({2, 3}, {4});
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(s.status()));
  EXPECT_EQ(s.status().message(), "Incompatible shapes: [2,3] vs. [4]");
  EXPECT_FALSE(BroadcastShapes({kUnknown, 3}, {kUnknown, 4}).ok());
  EXPECT_FALSE(BroadcastShapes({0}, {2}).ok());
}

TEST(BinaryOpShapeTest, ErrorNamesNodeAndShapes) {
  Status s = ShapeError("Add", {{"T", DT_FLOAT}}, {{2, 3}, {4}});
  EXPECT_TRUE(errors::IsInvalidArgument(s));
  EXPECT_NE(s.message().find("'test_node' (Add)"), std::string::npos) << s;
  EXPECT_NE(s.message().find("Incompatible shapes: [2,3] vs. [4]"), std::string::npos) << s;
  for (const char* op : {"Add", "AddV2", "Sub", "Mul", "RealDiv"}) {
    EXPECT_EQ(Shape1(op, {{"T", DT_INT64}}, {{kUnknown, 1, 3}, {4, 1}}),
              PartialShape({kUnknown, 4, 3}))
        << op;
  }
}

TEST(UnchangedShapeTest, UnaryOpsKeepTheirShape) {
  EXPECT_EQ(Shape1("Neg", {{"T", DT_FLOAT}}, {{kUnknown, 3}}), PartialShape({kUnknown, 3}));
  EXPECT_EQ(Shape1("Relu", {{"T", DT_FLOAT}}, {PartialShape::UnknownRank()}),
            PartialShape::UnknownRank());
  EXPECT_EQ(Shape1("Identity", {{"T", DT_STRING}}, {{5}}), PartialShape({5}));
  EXPECT_EQ(Shape1("Cast", {{"SrcT", DT_FLOAT}, {"DstT", DT_INT32}}, {{2, kUnknown}}),
            PartialShape({2, kUnknown}));
}

TEST(MatMulShapeTest, AllTransposes) {
  AttrMap attrs = {{"T", DT_FLOAT}};
  EXPECT_EQ(Shape1("MatMul", attrs, {{2, 3}, {3, 4}}), PartialShape({2, 4}));
  attrs["transpose_a"] = true;
  EXPECT_EQ(Shape1("MatMul", attrs, {{3, 2}, {3, 4}}), PartialShape({2, 4}));
  attrs["transpose_b"] = true;
  EXPECT_EQ(Shape1("MatMul", attrs, {{3, 2}, {4, 3}}), PartialShape({2, 4}));
  attrs["transpose_a"] = false;
  EXPECT_EQ(Shape1("MatMul", attrs, {{2, 3}, {4, 3}}), PartialShape({2, 4}));
}

TEST(MatMulShapeTest, PartialShapes) {
  AttrMap attrs = {{"T", DT_FLOAT}};
  EXPECT_EQ(Shape1("MatMul", attrs, {{kUnknown, 3}, {kUnknown, 4}}), PartialShape({kUnknown, 4}));
  EXPECT_EQ(Shape1("MatMul", attrs, {PartialShape::UnknownRank(), {3, kUnknown}}),
            PartialShape({kUnknown, kUnknown}));
}

TEST(MatMulShapeTest, Errors) {
  Status s = ShapeError("MatMul", {{"T", DT_FLOAT}}, {{2, 3}, {4, 5}});
  EXPECT_TRUE(errors::IsInvalidArgument(s));
  EXPECT_NE(s.message().find("[2,3]"), std::string::npos) << s;
  EXPECT_NE(s.message().find("[4,5]"), std::string::npos) << s;
  s = ShapeError("MatMul", {{"T", DT_FLOAT}}, {{2, 3, 4}, {4, 5}});
  EXPECT_TRUE(errors::IsInvalidArgument(s));
  EXPECT_NE(s.message().find("[2,3,4]"), std::string::npos) << s;
}

TEST(ReductionShapeTest, KnownAxes) {
  Tensor axes = Tensor::FromVector<int32_t>({0, -1});
  AttrMap attrs = {{"T", DT_FLOAT}};
  EXPECT_EQ(Shape1("Sum", attrs, {{2, 3, 4}, {2}}, {nullptr, &axes}), PartialShape({3}));
  EXPECT_EQ(Shape1("Sum", attrs, {{2, kUnknown, 4}, {2}}, {nullptr, &axes}),
            PartialShape({kUnknown}));
  attrs["keep_dims"] = true;
  EXPECT_EQ(Shape1("Sum", attrs, {{2, 3, 4}, {2}}, {nullptr, &axes}), PartialShape({1, 3, 1}));
  Tensor scalar_axis = Tensor::Scalar<int64_t>(1);
  attrs["Tidx"] = DT_INT64;
  EXPECT_EQ(Shape1("Sum", attrs, {{2, 3, 4}, kScalar}, {nullptr, &scalar_axis}),
            PartialShape({2, 1, 4}));
  Tensor no_axes = Tensor::FromVector<int64_t>({});
  EXPECT_EQ(Shape1("Sum", attrs, {{2, 3}, {0}}, {nullptr, &no_axes}), PartialShape({2, 3}));
}

TEST(ReductionShapeTest, UnknownAxes) {
  AttrMap attrs = {{"T", DT_FLOAT}};
  EXPECT_EQ(Shape1("Sum", attrs, {{2, 3, 4}, {2}}), PartialShape({kUnknown}));
  EXPECT_EQ(Shape1("Sum", attrs, {{2, 3, 4}, {kUnknown}}), PartialShape::UnknownRank());
  EXPECT_EQ(Shape1("Sum", attrs, {{2, 3, 4}, {0}}), PartialShape({2, 3, 4}));
  EXPECT_EQ(Shape1("Sum", attrs, {PartialShape::UnknownRank(), {2}}), PartialShape::UnknownRank());
  attrs["keep_dims"] = true;
  EXPECT_EQ(Shape1("Sum", attrs, {{2, 3, 4}, {kUnknown}}),
            PartialShape({kUnknown, kUnknown, kUnknown}));
}

TEST(ReductionShapeTest, BadAxes) {
  AttrMap attrs = {{"T", DT_FLOAT}};
  Tensor out_of_range = Tensor::FromVector<int32_t>({3});
  Status s = ShapeError("Sum", attrs, {{2, 3, 4}, {1}}, {nullptr, &out_of_range});
  EXPECT_TRUE(errors::IsInvalidArgument(s));
  EXPECT_NE(s.message().find("axis 3 is out of range"), std::string::npos) << s;
  EXPECT_NE(s.message().find("[2,3,4]"), std::string::npos) << s;
  Tensor duplicate = Tensor::FromVector<int32_t>({1, -2});
  s = ShapeError("Sum", attrs, {{2, 3, 4}, {2}}, {nullptr, &duplicate});
  EXPECT_TRUE(errors::IsInvalidArgument(s));
  EXPECT_NE(s.message().find("twice"), std::string::npos) << s;
  s = ShapeError("Sum", attrs, {{2, 3}, {3}});  // three distinct axes of rank 2
  EXPECT_TRUE(errors::IsInvalidArgument(s));
  s = ShapeError("Sum", attrs, {{2, 3}, {1, 1}});
  EXPECT_TRUE(errors::IsInvalidArgument(s));
}

TEST(ReshapeShapeTest, ConstantShape) {
  AttrMap attrs = {{"T", DT_FLOAT}};
  Tensor dims = Tensor::FromVector<int32_t>({-1, 2});
  EXPECT_EQ(Shape1("Reshape", attrs, {{3, 4}, {2}}, {nullptr, &dims}), PartialShape({6, 2}));
  EXPECT_EQ(Shape1("Reshape", attrs, {{kUnknown, 4}, {2}}, {nullptr, &dims}),
            PartialShape({kUnknown, 2}));
  EXPECT_EQ(Shape1("Reshape", attrs, {PartialShape::UnknownRank(), {2}}, {nullptr, &dims}),
            PartialShape({kUnknown, 2}));
  Tensor full = Tensor::FromVector<int64_t>({2, 6});
  attrs["Tshape"] = DT_INT64;
  EXPECT_EQ(Shape1("Reshape", attrs, {{kUnknown, 4}, {2}}, {nullptr, &full}), PartialShape({2, 6}));
  Tensor scalar = Tensor::FromVector<int64_t>({});
  EXPECT_EQ(Shape1("Reshape", attrs, {{1, 1}, {0}}, {nullptr, &scalar}), kScalar);
}

TEST(ReshapeShapeTest, UnknownShapeInput) {
  AttrMap attrs = {{"T", DT_FLOAT}};
  EXPECT_EQ(Shape1("Reshape", attrs, {{3, 4}, {3}}), PartialShape({kUnknown, kUnknown, kUnknown}));
  EXPECT_EQ(Shape1("Reshape", attrs, {{3, 4}, {kUnknown}}), PartialShape::UnknownRank());
}

TEST(ReshapeShapeTest, Errors) {
  AttrMap attrs = {{"T", DT_FLOAT}};
  Tensor wrong = Tensor::FromVector<int32_t>({4});
  Status s = ShapeError("Reshape", attrs, {{2, 3}, {1}}, {nullptr, &wrong});
  EXPECT_TRUE(errors::IsInvalidArgument(s));
  EXPECT_NE(s.message().find("[2,3]"), std::string::npos) << s;
  EXPECT_NE(s.message().find("[4]"), std::string::npos) << s;
  Tensor two_unknown = Tensor::FromVector<int32_t>({-1, -1});
  EXPECT_TRUE(errors::IsInvalidArgument(
      ShapeError("Reshape", attrs, {{2, 3}, {2}}, {nullptr, &two_unknown})));
  Tensor not_multiple = Tensor::FromVector<int32_t>({-1, 4});
  EXPECT_TRUE(errors::IsInvalidArgument(
      ShapeError("Reshape", attrs, {{2, 3}, {2}}, {nullptr, &not_multiple})));
  EXPECT_TRUE(errors::IsInvalidArgument(ShapeError("Reshape", attrs, {{2, 3}, {2, 1}})));
}

TEST(ArrayOpShapeTest, ConstPlaceholderShape) {
  Tensor value = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3}));
  EXPECT_EQ(Shape1("Const", {{"value", value}, {"dtype", DT_FLOAT}}, {}), PartialShape({2, 3}));
  EXPECT_TRUE(
      errors::IsInvalidArgument(ShapeError("Const", {{"value", value}, {"dtype", DT_INT32}}, {})));
  EXPECT_EQ(Shape1("Placeholder", {{"dtype", DT_FLOAT}}, {}), PartialShape::UnknownRank());
  EXPECT_EQ(
      Shape1("Placeholder", {{"dtype", DT_FLOAT}, {"shape", PartialShape({kUnknown, 784})}}, {}),
      PartialShape({kUnknown, 784}));
  EXPECT_EQ(Shape1("Shape", {{"T", DT_FLOAT}}, {{2, kUnknown, 4}}), PartialShape({3}));
  EXPECT_EQ(Shape1("Shape", {{"T", DT_FLOAT}}, {PartialShape::UnknownRank()}),
            PartialShape({kUnknown}));
}

TEST(OpDeclarationTest, DefaultsMatchTensorFlow) {
  StatusOr<NodeDef> sum = MakeTestNode("Sum", {{"T", DT_FLOAT}}, 2);
  ASSERT_TRUE(sum.ok()) << sum.status();
  EXPECT_EQ(sum->attrs.at("Tidx").type(), DT_INT32);
  EXPECT_FALSE(sum->attrs.at("keep_dims").b());
  StatusOr<NodeDef> matmul = MakeTestNode("MatMul", {{"T", DT_FLOAT}}, 2);
  ASSERT_TRUE(matmul.ok()) << matmul.status();
  EXPECT_FALSE(matmul->attrs.at("transpose_a").b());
  EXPECT_FALSE(matmul->attrs.at("transpose_b").b());
  StatusOr<NodeDef> shape = MakeTestNode("Shape", {{"T", DT_FLOAT}}, 1);
  ASSERT_TRUE(shape.ok()) << shape.status();
  EXPECT_EQ(shape->attrs.at("out_type").type(), DT_INT32);
  StatusOr<NodeDef> cast = MakeTestNode("Cast", {{"SrcT", DT_FLOAT}, {"DstT", DT_HALF}}, 1);
  ASSERT_TRUE(cast.ok()) << cast.status();
  EXPECT_FALSE(cast->attrs.at("Truncate").b());
  EXPECT_FALSE(MakeTestNode("Shape", {{"T", DT_FLOAT}, {"out_type", DT_FLOAT}}, 1).ok());
  EXPECT_FALSE(MakeTestNode("Relu", {{"T", DT_STRING}}, 1).ok());
}

}  // namespace
}  // namespace weir
