// The math family's declarations: TensorFlow's argument names and types
// (so imported graphs validate), and the shape functions of the
// elementwise, selection and AddN ops.
#include <gtest/gtest.h>

#include "weir/framework/op_def.h"
#include "weir/ops/all_ops.h"
#include "weir/ops/op_test_util.h"

namespace weir {
namespace {

constexpr int64_t kUnknown = PartialShape::kUnknown;
const PartialShape kScalar = PartialShape(std::vector<int64_t>{});

PartialShape Shape1(const std::string& op, AttrMap attrs, std::vector<PartialShape> inputs) {
  StatusOr<std::vector<PartialShape>> out = InferShapes(op, std::move(attrs), std::move(inputs));
  EXPECT_TRUE(out.ok()) << op << ": " << out.status();
  if (!out.ok() || out->empty()) return PartialShape();
  return (*out)[0];
}

Status ShapeError(const std::string& op, AttrMap attrs, std::vector<PartialShape> inputs) {
  StatusOr<std::vector<PartialShape>> out = InferShapes(op, std::move(attrs), std::move(inputs));
  EXPECT_FALSE(out.ok()) << op;
  return out.ok() ? Status::OK() : out.status();
}

struct Signature {
  std::vector<const char*> ops;
  std::vector<std::string> inputs;  // "name:type"
  std::string output;               // "name:type"
};

std::string Describe(const ArgDef& arg) {
  return arg.name + ":" +
         (arg.type_attr.empty() ? std::string(DTypeName(arg.type)) : arg.type_attr);
}

TEST(MathOpsTest, ArgumentsFollowTensorFlow) {
  RegisterAllOps();
  const std::vector<Signature> signatures = {
      {{"Add", "AddV2", "Sub", "Mul", "RealDiv", "Div", "FloorDiv", "FloorMod", "Maximum",
        "Minimum", "Pow", "SquaredDifference"},
       {"x:T", "y:T"},
       "z:T"},
      {{"Neg", "Abs", "Sign", "Square", "Reciprocal", "Exp", "Expm1", "Log", "Log1p", "Sqrt",
        "Rsqrt", "Floor", "Ceil", "Round", "Sin", "Cos", "Tanh", "Sigmoid", "Erf"},
       {"x:T"},
       "y:T"},
      {{"IsNan", "IsInf", "IsFinite"}, {"x:T"}, "y:bool"},
      {{"Relu", "Relu6", "Elu", "Selu", "Softplus"}, {"features:T"}, "activations:T"},
      {{"ReluGrad", "Relu6Grad", "SoftplusGrad"}, {"gradients:T", "features:T"}, "backprops:T"},
      {{"EluGrad", "SeluGrad"}, {"gradients:T", "outputs:T"}, "backprops:T"},
      {{"SigmoidGrad", "TanhGrad", "RsqrtGrad", "SqrtGrad", "ReciprocalGrad"},
       {"y:T", "dy:T"},
       "z:T"},
      {{"Less", "LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual"},
       {"x:T", "y:T"},
       "z:bool"},
      {{"LogicalAnd", "LogicalOr"}, {"x:bool", "y:bool"}, "z:bool"},
      {{"LogicalNot"}, {"x:bool"}, "y:bool"},
      {{"Select", "SelectV2"}, {"condition:bool", "t:T", "e:T"}, "output:T"},
      {{"AddN"}, {"inputs:T"}, "sum:T"},
  };
  for (const Signature& signature : signatures) {
    for (const char* name : signature.ops) {
      StatusOr<const OpDef*> op = OpRegistry::Global()->LookUp(name);
      ASSERT_TRUE(op.ok()) << op.status();
      std::vector<std::string> inputs;
      for (const ArgDef& arg : (*op)->inputs) inputs.push_back(Describe(arg));
      EXPECT_EQ(inputs, signature.inputs) << name;
      ASSERT_EQ((*op)->outputs.size(), 1u) << name;
      EXPECT_EQ(Describe((*op)->outputs[0]), signature.output) << name;
      EXPECT_FALSE((*op)->is_stateful) << name;
      EXPECT_FALSE((*op)->doc.empty()) << name;
    }
  }
  const OpDef* add_n = *OpRegistry::Global()->LookUp("AddN");
  EXPECT_EQ(add_n->inputs[0].number_attr, "N");
  StatusOr<NodeDef> equal = MakeTestNode("Equal", {{"T", DT_STRING}}, 2);
  ASSERT_TRUE(equal.ok()) << equal.status();
  EXPECT_TRUE(equal->attrs.at("incompatible_shape_error").b());
  EXPECT_FALSE(MakeTestNode("Exp", {{"T", DT_INT32}}, 1).ok());
  EXPECT_FALSE(MakeTestNode("Less", {{"T", DT_BOOL}}, 2).ok());
  EXPECT_FALSE(MakeTestNode("AddN", {{"T", DT_FLOAT}, {"N", 0}}, 0).ok());
}

TEST(MathOpsTest, ElementwiseShapes) {
  for (const char* op : {"Div", "FloorDiv", "FloorMod", "Maximum", "Minimum", "Pow",
                         "SquaredDifference", "Less", "Equal", "NotEqual"}) {
    EXPECT_EQ(Shape1(op, {{"T", DT_FLOAT}}, {{kUnknown, 1, 3}, {4, 1}}),
              PartialShape({kUnknown, 4, 3}))
        << op;
    Status s = ShapeError(op, {{"T", DT_FLOAT}}, {{2, 3}, {4}});
    EXPECT_NE(s.message().find("Incompatible shapes: [2,3] vs. [4]"), std::string::npos) << s;
  }
  EXPECT_EQ(Shape1("LogicalOr", {}, {{2, 1}, kScalar}), PartialShape({2, 1}));
  EXPECT_EQ(Shape1("IsNan", {{"T", DT_DOUBLE}}, {{kUnknown, 2}}), PartialShape({kUnknown, 2}));
  EXPECT_EQ(Shape1("LogicalNot", {}, {{5}}), PartialShape({5}));
  // Equal and NotEqual may leave incompatible shapes to the kernel.
  for (const char* op : {"Equal", "NotEqual"}) {
    EXPECT_EQ(Shape1(op, {{"T", DT_INT32}, {"incompatible_shape_error", false}}, {{2, 3}, {4}}),
              PartialShape::UnknownRank());
  }
}

TEST(MathOpsTest, SameShapeOps) {
  AttrMap attrs = {{"T", DT_FLOAT}};
  EXPECT_EQ(Shape1("ReluGrad", attrs, {{kUnknown, 3}, {2, kUnknown}}), PartialShape({2, 3}));
  EXPECT_EQ(Shape1("SigmoidGrad", attrs, {PartialShape::UnknownRank(), {4}}), PartialShape({4}));
  Status s = ShapeError("TanhGrad", attrs, {{2, 3}, {3}});
  EXPECT_TRUE(errors::IsInvalidArgument(s));
  EXPECT_NE(s.message().find("input 1 has shape [3]"), std::string::npos) << s;
  attrs["N"] = 3;
  EXPECT_EQ(Shape1("AddN", attrs, {{kUnknown, 3}, PartialShape::UnknownRank(), {2, kUnknown}}),
            PartialShape({2, 3}));
  s = ShapeError("AddN", attrs, {{2, 3}, {2, 3}, {3}});
  EXPECT_TRUE(errors::IsInvalidArgument(s));
  EXPECT_NE(s.message().find("input 2 has shape [3]"), std::string::npos) << s;
  EXPECT_NE(s.message().find("'test_node' (AddN)"), std::string::npos) << s;
}

TEST(MathOpsTest, SelectShapes) {
  AttrMap attrs = {{"T", DT_FLOAT}};
  EXPECT_EQ(Shape1("Select", attrs, {kScalar, {2, 3}, {2, kUnknown}}), PartialShape({2, 3}));
  EXPECT_EQ(Shape1("Select", attrs, {{2, 3}, {kUnknown, 3}, {kUnknown, kUnknown}}),
            PartialShape({2, 3}));
  EXPECT_EQ(Shape1("Select", attrs, {{4}, {kUnknown, 3}, {kUnknown, 3}}), PartialShape({4, 3}));
  EXPECT_EQ(Shape1("Select", attrs, {{4}, {kUnknown}, {kUnknown}}), PartialShape({4}));
  EXPECT_EQ(Shape1("Select", attrs, {{4}, PartialShape::UnknownRank(), {kUnknown, 2}}),
            PartialShape({4, 2}));
  Status s = ShapeError("Select", attrs, {{2}, {3, 2}, {3, 2}});
  EXPECT_NE(s.message().find("condition [2] must have one element per row"), std::string::npos)
      << s;
  s = ShapeError("Select", attrs, {{3, 1}, {3, 2}, {3, 2}});
  EXPECT_NE(s.message().find("condition [3,1] must be a scalar"), std::string::npos) << s;
  s = ShapeError("Select", attrs, {kScalar, {3, 2}, {2, 3}});
  EXPECT_NE(s.message().find("t and e must have the same shape, not [3,2] and [2,3]"),
            std::string::npos)
      << s;

  EXPECT_EQ(Shape1("SelectV2", attrs, {{2, 1, 1}, {3, 1}, {4}}), PartialShape({2, 3, 4}));
  EXPECT_EQ(Shape1("SelectV2", attrs, {kScalar, {kUnknown, 3}, {2, 1}}), PartialShape({2, 3}));
  EXPECT_EQ(Shape1("SelectV2", attrs, {{3}, PartialShape::UnknownRank(), kScalar}),
            PartialShape::UnknownRank());
  s = ShapeError("SelectV2", attrs, {{2}, {3}, {1}});
  EXPECT_NE(s.message().find("Incompatible shapes"), std::string::npos) << s;
}

}  // namespace
}  // namespace weir
