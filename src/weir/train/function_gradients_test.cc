// Gradients through function calls and functional control flow (If, Case,
// While, PartitionedCall, a call by the function's name), expanded in place
// before differentiating: values against central finite differences, with
// data-dependent trip counts, an If nested in a While, a call whose body
// reads a variable, and the names of the expanded nodes kept.
#include <gtest/gtest.h>

#include <cmath>

#include "weir/graph/function_test_util.h"
#include "weir/graph/functional_test_util.h"
#include "weir/graph/graph_constructor.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"
#include "weir/runtime/standard_registration.h"
#include "weir/train/gradient_checker.h"
#include "weir/train/gradients.h"

namespace weir {
namespace {

using test::Arg;
using test::BodyNode;

NodeDef DoubleConst(const std::string& name, double v) {
  return BodyNode(name, "Const", {}, {{"dtype", DT_DOUBLE}, {"value", Tensor::Scalar<double>(v)}});
}
NodeDef Binary(const std::string& name, const std::string& op, std::vector<std::string> in,
               DType t = DT_DOUBLE) {
  return BodyNode(name, op, std::move(in), {{"T", t}});
}

// f(args: double...) -> y: double.
FunctionDef Function(const std::string& name, std::vector<std::string> args,
                     std::vector<NodeDef> nodes, const std::string& ret) {
  FunctionDef f;
  f.signature.name = name;
  for (const std::string& a : args) f.signature.inputs.push_back(Arg(a, DT_DOUBLE));
  f.signature.outputs = {Arg("y", DT_DOUBLE)};
  f.node_def = std::move(nodes);
  f.ret["y"] = ret;
  return f;
}

std::vector<FunctionDef> Library() {
  std::vector<FunctionDef> fs;
  // cube(x) = x * x * x; sine(x) = sin(x); negate(x) = -x.
  fs.push_back(Function("cube", {"x"},
                        {Binary("sq", "Mul", {"x", "x"}), Binary("cu", "Mul", {"sq:z:0", "x"})},
                        "cu:z:0"));
  fs.push_back(Function("sine", {"x"}, {BodyNode("s", "Sin", {"x"}, {{"T", DT_DOUBLE}})}, "s:y:0"));
  fs.push_back(
      Function("negate", {"x"}, {BodyNode("n", "Neg", {"x"}, {{"T", DT_DOUBLE}})}, "n:y:0"));
  // cube_or_sine(x) = x > 0 ? cube(x) : sine(x), through a StatelessIf.
  fs.push_back(Function("cube_or_sine", {"x"},
                        {DoubleConst("zero", 0), Binary("pos", "Greater", {"x", "zero:output:0"}),
                         test::IfNode("if", "StatelessIf", {"pos:z:0", "x"}, DT_BOOL, {DT_DOUBLE},
                                      {DT_DOUBLE}, "cube", "sine")},
                        "if:output:0"));
  // Two-argument branches: a * b and a + sin(b).
  fs.push_back(Function("mul_ab", {"a", "b"}, {Binary("m", "Mul", {"a", "b"})}, "m:z:0"));
  fs.push_back(Function(
      "add_sin", {"a", "b"},
      {BodyNode("s", "Sin", {"b"}, {{"T", DT_DOUBLE}}), Binary("p", "AddV2", {"a", "s:y:0"})},
      "p:z:0"));
  // Loop (acc, x) while acc < 10: (acc * x, x); the trip count depends on x.
  {
    FunctionDef cond;
    cond.signature.name = "acc_below_10";
    cond.signature.inputs = {Arg("acc", DT_DOUBLE), Arg("x", DT_DOUBLE)};
    cond.signature.outputs = {Arg("ok", DT_BOOL)};
    cond.node_def = {DoubleConst("ten", 10), Binary("less", "Less", {"acc", "ten:output:0"})};
    cond.ret["ok"] = "less:z:0";
    fs.push_back(cond);
    FunctionDef body;
    body.signature.name = "times_x";
    body.signature.inputs = {Arg("acc", DT_DOUBLE), Arg("x", DT_DOUBLE)};
    body.signature.outputs = {Arg("acc_next", DT_DOUBLE), Arg("x_same", DT_DOUBLE)};
    body.node_def = {Binary("mul", "Mul", {"acc", "x"})};
    body.ret["acc_next"] = "mul:z:0";
    body.ret["x_same"] = "x";
    fs.push_back(body);
  }
  // Loop (i, acc, x) while i < 4: (i + 1, acc < 2 ? acc * x : acc + sin(x), x).
  {
    FunctionDef cond;
    cond.signature.name = "i_below_4";
    cond.signature.inputs = {Arg("i", DT_INT32), Arg("acc", DT_DOUBLE), Arg("x", DT_DOUBLE)};
    cond.signature.outputs = {Arg("ok", DT_BOOL)};
    cond.node_def = {test::IntConst("four", 4),
                     Binary("less", "Less", {"i", "four:output:0"}, DT_INT32)};
    cond.ret["ok"] = "less:z:0";
    fs.push_back(cond);
    FunctionDef body;
    body.signature.name = "step_with_if";
    body.signature.inputs = cond.signature.inputs;
    body.signature.outputs = {Arg("i_next", DT_INT32), Arg("acc_next", DT_DOUBLE),
                              Arg("x_same", DT_DOUBLE)};
    body.node_def = {test::IntConst("one", 1),
                     Binary("inc", "AddV2", {"i", "one:output:0"}, DT_INT32), DoubleConst("two", 2),
                     Binary("small", "Less", {"acc", "two:output:0"}),
                     test::IfNode("if", "If", {"small:z:0", "acc", "x"}, DT_BOOL,
                                  {DT_DOUBLE, DT_DOUBLE}, {DT_DOUBLE}, "mul_ab", "add_sin")};
    body.ret["i_next"] = "inc:z:0";
    body.ret["acc_next"] = "if:output:0";
    body.ret["x_same"] = "x";
    fs.push_back(body);
  }
  // scaled_by_variable(x, v: resource) = x * read(v) * x.
  {
    FunctionDef f;
    f.signature.name = "scaled_by_variable";
    f.signature.inputs = {Arg("x", DT_DOUBLE), Arg("v", DT_RESOURCE)};
    f.signature.outputs = {Arg("y", DT_DOUBLE)};
    f.node_def = {BodyNode("read", "ReadVariableOp", {"v"}, {{"dtype", DT_DOUBLE}}),
                  Binary("m", "Mul", {"x", "read:value:0"}), Binary("m2", "Mul", {"m:z:0", "x"})};
    f.ret["y"] = "m2:z:0";
    fs.push_back(f);
  }
  // forever(x) = forever(x): recursion.
  fs.push_back(Function("forever", {"x"}, {BodyNode("again", "forever", {"x"})}, "again:y:0"));
  return fs;
}

class FunctionGradientsTest : public ::testing::Test {
 protected:
  void SetUp() override { RegisterStandardOpsAndKernels(); }

  // The root scope of a graph of `nodes` (and a Placeholder "x" of doubles)
  // with Library() as its functions.
  Scope Build(std::vector<NodeDef> nodes) {
    GraphDef def;
    def.nodes.push_back(
        BodyNode("x", "Placeholder", {}, {{"dtype", DT_DOUBLE}, {"shape", PartialShape({})}}));
    for (NodeDef& n : nodes) def.nodes.push_back(std::move(n));
    def.library.functions = Library();
    Scope root = Scope::NewRootScope();
    Status s = ImportGraphDef(def, root.graph());
    EXPECT_TRUE(s.ok()) << s;
    return root;
  }
  static Output Get(const Scope& root, const std::string& name, int index = 0) {
    Node* node = root.graph()->FindNode(name);
    EXPECT_NE(node, nullptr) << name;
    return Output(node, index);
  }
  // The largest error of d y / d x against central differences at x (y a
  // scalar: reshaped to one, since a call's output shape may be unknown).
  static double Error(const Scope& root, const std::string& y, double x) {
    Output scalar = ops::Reshape(root.WithOpName(y + "_scalar"), Get(root, y),
                                 Tensor::FromVector<int32_t>({}, TensorShape({0})));
    StatusOr<double> error =
        MaxGradientError(root, {Get(root, "x")}, {Tensor::Scalar<double>(x)}, scalar, 1e-6);
    EXPECT_TRUE(error.ok()) << error.status();
    return error.ok() ? *error : 1e9;
  }
};

TEST_F(FunctionGradientsTest, PartitionedCallAndCallByName) {
  for (double x : {0.7, -1.3}) {
    Scope root =
        Build({test::CallNode("call", "cube", {"x"}, {DT_DOUBLE}, {DT_DOUBLE}),
               test::CallNode("stateful", "sine", {"call"}, {DT_DOUBLE}, {DT_DOUBLE}, true),
               BodyNode("by_name", "negate", {"stateful:0"})});
    EXPECT_LT(Error(root, "by_name", x), 1e-6) << x;
    // The expanded nodes keep their names, now IdentityNs of the outputs.
    for (const char* name : {"call", "stateful", "by_name"}) {
      ASSERT_NE(root.graph()->FindNode(name), nullptr) << name;
      EXPECT_EQ(root.graph()->FindNode(name)->type_string(), "IdentityN") << name;
    }
  }
}

TEST_F(FunctionGradientsTest, FedInputOfACallWhoseBodyHasConstants) {
  // The body's constants wait for the call's inputs; x is fed, so its
  // Placeholder must not have to run.
  for (double x : {0.4, -2.0}) {
    Scope root = Build({test::CallNode("call", "cube_or_sine", {"x"}, {DT_DOUBLE}, {DT_DOUBLE})});
    EXPECT_LT(Error(root, "call", x), 1e-6) << x;
  }
}

TEST_F(FunctionGradientsTest, IfBothBranchesAndCaseWithEveryIndex) {
  for (double x : {0.9, -0.6}) {
    Scope root = Build({DoubleConst("zero", 0), Binary("pos", "Greater", {"x", "zero"}),
                        test::IfNode("if", "If", {"pos", "x"}, DT_BOOL, {DT_DOUBLE}, {DT_DOUBLE},
                                     "cube", "sine")});
    EXPECT_LT(Error(root, "if", x), 1e-6) << x;
  }
  // Index 3 is out of range: the last branch, as in TensorFlow.
  for (int index : {0, 1, 2, 3}) {
    Scope root = Build({test::IntConst("index", index),
                        test::CaseNode("case", "StatelessCase", {"index", "x"}, {DT_DOUBLE},
                                       {DT_DOUBLE}, {"cube", "sine", "negate"})});
    EXPECT_LT(Error(root, "case", 0.8), 1e-6) << index;
  }
}

TEST_F(FunctionGradientsTest, WhileWithADataDependentTripCount) {
  // acc = 1; while acc < 10: acc *= x. x = 1.5 runs 6 times (acc = x^6),
  // x = 3.3 twice (x^2), x = 12 once.
  for (double x : {1.5, 3.3, 12.0}) {
    Scope root = Build({DoubleConst("one", 1),
                        test::WhileNode("while", "StatelessWhile", {"one", "x"},
                                        {DT_DOUBLE, DT_DOUBLE}, "acc_below_10", "times_x"),
                        BodyNode("y", "Identity", {"while:0"}, {{"T", DT_DOUBLE}})});
    EXPECT_LT(Error(root, "y", x), 1e-5 * std::pow(x, 6)) << x;
  }
  // The loop's output itself as y.
  Scope root = Build(
      {DoubleConst("one", 1), test::WhileNode("while", "While", {"one", "x"},
                                              {DT_DOUBLE, DT_DOUBLE}, "acc_below_10", "times_x")});
  EXPECT_LT(Error(root, "while", 1.5), 1e-4);
}

TEST_F(FunctionGradientsTest, IfNestedInWhileAndInACall) {
  // acc goes through both branches of the If across the iterations.
  for (double x : {0.5, 1.7}) {
    Scope root =
        Build({test::IntConst("zero", 0), DoubleConst("acc", 0.3),
               test::WhileNode("while", "While", {"zero", "acc", "x"},
                               {DT_INT32, DT_DOUBLE, DT_DOUBLE}, "i_below_4", "step_with_if"),
               test::CallNode("call", "cube_or_sine", {"while:1"}, {DT_DOUBLE}, {DT_DOUBLE})});
    EXPECT_LT(Error(root, "call", x), 1e-5) << x;
  }
}

TEST_F(FunctionGradientsTest, CallWhoseBodyReadsAVariable) {
  Scope root =
      Build({BodyNode("v", "VarHandleOp", {}, {{"dtype", DT_DOUBLE}, {"shape", PartialShape({})}}),
             DoubleConst("init_value", 2.5),
             BodyNode("init", "AssignVariableOp", {"v", "init_value"}, {{"dtype", DT_DOUBLE}}),
             test::CallNode("call", "scaled_by_variable", {"x", "v"}, {DT_DOUBLE, DT_RESOURCE},
                            {DT_DOUBLE}, true)});
  std::vector<Output> grads;
  ASSERT_TRUE(
      AddSymbolicGradients(root, {Get(root, "call")}, {Get(root, "x"), Get(root, "v")}, &grads)
          .ok());
  auto session = Session::New(SessionOptions());
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE((*session)->Run({}, {}, {"init"}, &out).ok());
  const double x = 1.2, v = 2.5;
  Status s = (*session)->Run({{"x", Tensor::Scalar<double>(x)}},
                             {"call", grads[0].name(), grads[1].name()}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  // y = v x^2: dy/dx = 2 v x, dy/dv = x^2; and central differences in x.
  EXPECT_NEAR(out[0].scalar<double>(), v * x * x, 1e-12);
  EXPECT_NEAR(out[1].scalar<double>(), 2 * v * x, 1e-12);
  EXPECT_NEAR(out[2].scalar<double>(), x * x, 1e-12);
  std::vector<Tensor> plus, minus;
  ASSERT_TRUE((*session)->Run({{"x", Tensor::Scalar<double>(x + 1e-6)}}, {"call"}, {}, &plus).ok());
  ASSERT_TRUE(
      (*session)->Run({{"x", Tensor::Scalar<double>(x - 1e-6)}}, {"call"}, {}, &minus).ok());
  EXPECT_NEAR((plus[0].scalar<double>() - minus[0].scalar<double>()) / 2e-6,
              out[1].scalar<double>(), 1e-6);
}

TEST_F(FunctionGradientsTest, ControlInputsAndControlConsumersKeepTheirOrder) {
  // The call waits for ^assign (so its body reads 4.0, never the first
  // value), and ^call orders a later assign after the body's read.
  Scope root = Build(
      {BodyNode("v", "VarHandleOp", {}, {{"dtype", DT_DOUBLE}, {"shape", PartialShape({})}}),
       DoubleConst("first", 1.0), DoubleConst("second", 4.0), DoubleConst("third", 9.0),
       BodyNode("init", "AssignVariableOp", {"v", "first"}, {{"dtype", DT_DOUBLE}}),
       BodyNode("assign", "AssignVariableOp", {"v", "second", "^init"}, {{"dtype", DT_DOUBLE}}),
       test::CallNode("call", "scaled_by_variable", {"x", "v", "^assign"}, {DT_DOUBLE, DT_RESOURCE},
                      {DT_DOUBLE}, true),
       BodyNode("later", "AssignVariableOp", {"v", "third", "^call"}, {{"dtype", DT_DOUBLE}})});
  std::vector<Output> grads;
  Status s = AddSymbolicGradients(root, {Get(root, "call")}, {Get(root, "x")}, &grads);
  ASSERT_TRUE(s.ok()) << s;
  auto session = Session::New(SessionOptions());
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  const double x = 1.5;
  for (int step = 0; step < 3; ++step) {
    std::vector<Tensor> out;
    s = (*session)->Run({{"x", Tensor::Scalar<double>(x)}}, {"call", grads[0].name()}, {"later"},
                        &out);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(out[0].scalar<double>(), 4.0 * x * x) << step;
    EXPECT_EQ(out[1].scalar<double>(), 2 * 4.0 * x) << step;
  }
}

TEST_F(FunctionGradientsTest, GradientsWithRespectToAFunctionalNodesOutput) {
  // y = sq(if(x)) + if(x): d y / d if = 2 if + 1, with "if:0" as x.
  Scope root = Build(
      {DoubleConst("zero", 0), Binary("pos", "Greater", {"x", "zero"}),
       test::IfNode("if", "If", {"pos", "x"}, DT_BOOL, {DT_DOUBLE}, {DT_DOUBLE}, "cube", "sine"),
       Binary("sq", "Mul", {"if", "if"}), Binary("y", "AddV2", {"sq", "if"})});
  std::vector<Output> grads;
  Status s =
      AddSymbolicGradients(root, {Get(root, "y")}, {Get(root, "if"), Get(root, "x")}, &grads);
  ASSERT_TRUE(s.ok()) << s;
  auto session = Session::New(SessionOptions());
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  std::vector<Tensor> out;
  const double x = 0.8;
  s = (*session)->Run({{"x", Tensor::Scalar<double>(x)}},
                      {"if:0", grads[0].name(), grads[1].name()}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  const double f = x * x * x;
  EXPECT_NEAR(out[0].scalar<double>(), f, 1e-12);
  EXPECT_NEAR(out[1].scalar<double>(), 2 * f + 1, 1e-12);
  EXPECT_NEAR(out[2].scalar<double>(), (2 * f + 1) * 3 * x * x, 1e-12);
  // "if:0" can still be fed: its consumers and their gradients see the feed.
  s = (*session)->Run({{"x", Tensor::Scalar<double>(x)}, {"if:0", Tensor::Scalar<double>(2.0)}},
                      {"y", grads[0].name()}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].scalar<double>(), 2.0 * 2.0 + 2.0);
  EXPECT_EQ(out[1].scalar<double>(), 2 * 2.0 + 1);
}

TEST_F(FunctionGradientsTest, NodesOffThePathAreLeftAlone) {
  // A call and a While that y does not depend on through x, and one that
  // only feeds x.
  Scope root = Build({test::CallNode("before", "cube", {"x"}, {DT_DOUBLE}, {DT_DOUBLE}),
                      BodyNode("z", "Identity", {"before"}, {{"T", DT_DOUBLE}}),
                      test::CallNode("aside", "sine", {"x"}, {DT_DOUBLE}, {DT_DOUBLE}),
                      Binary("y", "Mul", {"z", "z"})});
  const int before_id = root.graph()->FindNode("before")->id();
  const int aside_id = root.graph()->FindNode("aside")->id();
  std::vector<Output> grads;
  std::vector<std::pair<std::string, int>> expanded;
  SymbolicGradientsOptions options;
  options.expanded_nodes = &expanded;
  std::vector<Gradient> g;
  Status s = AddSymbolicGradients(root, {Get(root, "y")}, {Get(root, "z")}, {}, options, &g);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_TRUE(expanded.empty());
  EXPECT_EQ(root.graph()->FindNode("before")->id(), before_id);
  EXPECT_EQ(root.graph()->FindNode("before")->type_string(), "PartitionedCall");
  EXPECT_EQ(root.graph()->FindNode("aside")->id(), aside_id);
  // Through x: only the call on the path is expanded.
  s = AddSymbolicGradients(root, {Get(root, "y")}, {Get(root, "x")}, {}, options, &g);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(expanded.size(), 1u);
  EXPECT_EQ(expanded[0].first, "before");
  EXPECT_EQ(expanded[0].second, before_id);
  EXPECT_EQ(root.graph()->FindNode("before")->type_string(), "IdentityN");
  EXPECT_EQ(root.graph()->FindNode("aside")->type_string(), "PartitionedCall");
}

TEST_F(FunctionGradientsTest, RecursiveFunctionIsAnError) {
  Scope root = Build({test::CallNode("call", "forever", {"x"}, {DT_DOUBLE}, {DT_DOUBLE})});
  const int nodes = root.graph()->num_nodes();
  std::vector<Output> grads;
  Status s = AddSymbolicGradients(root, {Get(root, "call")}, {Get(root, "x")}, &grads);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("forever"), std::string::npos) << s;
  EXPECT_NE(s.message().find("call"), std::string::npos) << s;
  // The graph is as it was.
  EXPECT_EQ(root.graph()->num_nodes(), nodes);
  EXPECT_EQ(root.graph()->FindNode("call")->type_string(), "PartitionedCall");
}

}  // namespace
}  // namespace weir
