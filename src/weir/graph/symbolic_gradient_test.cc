// The expansion of SymbolicGradient that needs no gradient builder (a
// gradient function registered in the library), and its errors: missing
// function, arity and dtype mismatches, a registered gradient function of
// the wrong signature, no builder installed (train/ is not linked here).
#include "weir/graph/symbolic_gradient.h"

#include <gtest/gtest.h>

#include "weir/graph/function_inline.h"
#include "weir/graph/function_library.h"
#include "weir/graph/function_test_util.h"
#include "weir/graph/graph_constructor.h"
#include "weir/ops/all_ops.h"

namespace weir {
namespace {

using test::Arg;
using test::BodyNode;

// add_one_grad(x, dy) = dy * 3 (a deliberately wrong gradient, so the tests
// see it was used).
FunctionDef AddOneGradient(const std::string& name = "add_one_grad", DType dy = DT_FLOAT) {
  FunctionDef g;
  g.signature.name = name;
  g.signature.inputs = {Arg("x", DT_FLOAT), Arg("dy", dy)};
  g.signature.outputs = {Arg("dx", dy)};
  g.node_def = {
      BodyNode("three", "Const", {},
               {{"dtype", dy},
                {"value", dy == DT_FLOAT ? Tensor::Scalar<float>(3) : Tensor::Scalar<double>(3)}}),
      BodyNode("m", "Mul", {"dy", "three:output:0"}, {{"T", dy}})};
  g.ret["dx"] = "m:z:0";
  return g;
}

NodeDef Gradient(const std::string& name, const std::string& function,
                 std::vector<std::string> inputs, std::vector<DType> in, std::vector<DType> out) {
  NodeDef def = BodyNode(name, "SymbolicGradient", std::move(inputs),
                         {{"Tin", std::move(in)}, {"Tout", std::move(out)}});
  NameAttrList f;
  f.name = function;
  def.attrs["f"] = AttrValue(f);
  return def;
}

NodeDef Placeholder(const std::string& name, DType dtype = DT_FLOAT) {
  return BodyNode(name, "Placeholder", {}, {{"dtype", dtype}, {"shape", PartialShape({2})}});
}

class SymbolicGradientTest : public ::testing::Test {
 protected:
  void SetUp() override { RegisterAllOps(); }

  // graph_ with `nodes`, add_one and `functions`, and `gradients`.
  Status Import(std::vector<NodeDef> nodes, std::vector<FunctionDef> functions = {},
                std::vector<GradientDef> gradients = {}) {
    GraphDef def;
    def.nodes = std::move(nodes);
    def.library.functions = std::move(functions);
    def.library.functions.push_back(test::AddOneFunction());
    def.library.gradients = std::move(gradients);
    return ImportGraphDef(def, &graph_);
  }

  Graph graph_;
};

void ExpectError(const Status& status, Code code, const std::vector<std::string>& fragments) {
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), code) << status;
  for (const std::string& fragment : fragments) {
    EXPECT_NE(status.message().find(fragment), std::string::npos)
        << "'" << fragment << "' not in: " << status.message();
  }
}

GradientDef AddOneGradientDef(const std::string& gradient = "add_one_grad") {
  GradientDef g;
  g.function_name = "add_one";
  g.gradient_func = gradient;
  return g;
}

TEST_F(SymbolicGradientTest, DeclaredAsTensorFlowDeclaresIt) {
  const OpDef* op = OpRegistry::Global()->Find("SymbolicGradient");
  ASSERT_NE(op, nullptr);
  EXPECT_FALSE(op->is_stateful);
  ASSERT_EQ(op->inputs.size(), 1u);
  EXPECT_EQ(op->inputs[0].type_list_attr, "Tin");
  EXPECT_EQ(op->outputs[0].type_list_attr, "Tout");
  // Each gradient has its input's shape.
  ASSERT_TRUE(Import({Placeholder("x"), Placeholder("dy"),
                      Gradient("grad", "add_one", {"x", "dy"}, {DT_FLOAT, DT_FLOAT}, {DT_FLOAT})})
                  .ok());
  EXPECT_EQ(graph_.FindNode("grad")->output_shape(0), PartialShape({2}));
}

TEST_F(SymbolicGradientTest, RegisteredGradientFunctionReplacesTheNodeWithoutABuilder) {
  ASSERT_FALSE(HasGraphGradientBuilder()) << "train/ is not linked into this test";
  ASSERT_TRUE(Import({Placeholder("x"), Placeholder("dy"),
                      Gradient("grad", "add_one", {"x", "dy"}, {DT_FLOAT, DT_FLOAT}, {DT_FLOAT}),
                      BodyNode("out", "Identity", {"grad"}, {{"T", DT_FLOAT}})},
                     {AddOneGradient()}, {AddOneGradientDef()})
                  .ok());
  Status s = ExpandFunctions(&graph_);
  ASSERT_TRUE(s.ok()) << s;
  for (Node* node : graph_.nodes()) EXPECT_NE(node->type_string(), "SymbolicGradient");
  // The gradient function's body took its place: out reads dy * 3.
  const Node* out = graph_.FindNode("out");
  const Node* mul = out->input_edge(0)->src();
  EXPECT_EQ(mul->type_string(), "Mul");
  EXPECT_EQ(mul->input_edge(0)->src()->name(), "dy");
}

TEST_F(SymbolicGradientTest, NoBuilderIsFailedPreconditionSayingWhatToCall) {
  ASSERT_TRUE(Import({Placeholder("x"), Placeholder("dy"),
                      Gradient("grad", "add_one", {"x", "dy"}, {DT_FLOAT, DT_FLOAT}, {DT_FLOAT})})
                  .ok());
  ExpectError(ExpandFunctions(&graph_), Code::kFailedPrecondition,
              {"'grad'", "'add_one'", "RegisterFunctionGradients"});
}

TEST_F(SymbolicGradientTest, MissingFunction) {
  // Refused when the node is made (import, or AddNode), before any
  // expansion: the func attr names no function of the library.
  Status s = Import({Placeholder("x"), Placeholder("dy"),
                     Gradient("grad", "nope", {"x", "dy"}, {DT_FLOAT, DT_FLOAT}, {DT_FLOAT})});
  ExpectError(s, Code::kInvalidArgument,
              {"'grad'", "'nope'", "not in the graph's function library"});
}

TEST_F(SymbolicGradientTest, ArityMismatch) {
  // add_one takes one float and returns one: its gradient takes two.
  ASSERT_TRUE(Import({Placeholder("x"), Placeholder("dy"), Placeholder("d", DT_DOUBLE),
                      Gradient("three", "add_one", {"x", "dy", "dy"},
                               {DT_FLOAT, DT_FLOAT, DT_FLOAT}, {DT_FLOAT})})
                  .ok());
  ExpectError(ExpandFunctions(&graph_), Code::kInvalidArgument,
              {"'three'", "'add_one'", "(float, float)", "(float, float, float)"});
}

TEST_F(SymbolicGradientTest, DtypeMismatch) {
  ASSERT_TRUE(Import({Placeholder("x"), Placeholder("d", DT_DOUBLE),
                      Gradient("typed", "add_one", {"x", "d"}, {DT_FLOAT, DT_DOUBLE}, {DT_FLOAT})})
                  .ok());
  ExpectError(ExpandFunctions(&graph_), Code::kInvalidArgument, {"'typed'", "(float, double)"});
}

TEST_F(SymbolicGradientTest, OutputsThatAreNotTheInputsGradients) {
  ASSERT_TRUE(Import({Placeholder("x"), Placeholder("dy"),
                      Gradient("two_out", "add_one", {"x", "dy"}, {DT_FLOAT, DT_FLOAT},
                               {DT_FLOAT, DT_FLOAT})})
                  .ok());
  ExpectError(ExpandFunctions(&graph_), Code::kInvalidArgument, {"'two_out'", "Tout"});
}

TEST_F(SymbolicGradientTest, RegisteredGradientOfTheWrongSignature) {
  ASSERT_TRUE(Import({Placeholder("x"), Placeholder("dy"),
                      Gradient("grad", "add_one", {"x", "dy"}, {DT_FLOAT, DT_FLOAT}, {DT_FLOAT})},
                     {AddOneGradient("bad_grad", DT_DOUBLE)}, {AddOneGradientDef("bad_grad")})
                  .ok());
  ExpectError(ExpandFunctions(&graph_), Code::kInvalidArgument,
              {"'grad'", "'bad_grad'", "'add_one'", "(float, double)", "(float, float)"});
}

}  // namespace
}  // namespace weir
