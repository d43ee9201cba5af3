#include "weir/graph/function_inline.h"

#include <gtest/gtest.h>

#include "weir/graph/function_library.h"
#include "weir/graph/function_test_util.h"
#include "weir/graph/graph_constructor.h"
#include "weir/ops/all_ops.h"

namespace weir {
namespace {

using test::BodyNode;

class FunctionInlineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterAllOps();
    FunctionDefLibrary lib;
    lib.functions = {test::AddOneFunction(), test::SquareFunction(), test::PlusTwoFunction(),
                     test::BumpFunction()};
    ASSERT_TRUE(graph_.mutable_function_library()->AddLibrary(lib).ok());
  }

  Node* Add(NodeDef def) {
    StatusOr<Node*> node = graph_.AddNode(std::move(def));
    EXPECT_TRUE(node.ok()) << node.status();
    return node.ok() ? *node : nullptr;
  }

  // Imports `nodes` (with `functions` added to the library) into graph_.
  Status Import(std::vector<NodeDef> nodes, std::vector<FunctionDef> functions = {}) {
    GraphDef def;
    def.nodes = std::move(nodes);
    def.library.functions = std::move(functions);
    return ImportGraphDef(def, &graph_);
  }

  static std::vector<std::string> ControlSources(const Node* node) {
    std::vector<std::string> out;
    for (const Edge* e : node->control_inputs()) out.push_back(e->src()->name());
    std::sort(out.begin(), out.end());
    return out;
  }

  int CountCalls() const {
    int calls = 0;
    for (Node* node : graph_.nodes()) calls += IsFunctionCall(graph_, *node);
    return calls;
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

TEST_F(FunctionInlineTest, InlinesTheBodyUnderThePrefix) {
  Node* c = Add(test::FloatConst("c", 2));
  ASSERT_TRUE(InferShapes(c).ok());
  Node* gate = Add(BodyNode("gate", "NoOp", {}));
  InlinedFunction result;
  Status status = InlineFunctionBody({"add_one", {}}, {{c, 0}}, {gate}, "f", &graph_, &result);
  ASSERT_TRUE(status.ok()) << status;
  Node* add = graph_.FindNode("f/add");
  Node* one = graph_.FindNode("f/one");
  ASSERT_NE(add, nullptr);
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(add->input_edge(0)->src(), c);
  EXPECT_EQ(add->input_edge(1)->src(), one);
  // Only the node without data inputs waits for the gate.
  EXPECT_EQ(ControlSources(one), std::vector<std::string>{"gate"});
  EXPECT_TRUE(ControlSources(add).empty());
  ASSERT_EQ(result.outputs.size(), 1u);
  EXPECT_EQ(result.outputs[0], std::make_pair(add, 0));
  EXPECT_TRUE(result.control_outputs.empty());
  EXPECT_EQ(add->output_shape(0), PartialShape({}));
}

TEST_F(FunctionInlineTest, BindsPlaceholdersFromTheCallsAttrs) {
  Node* c = Add(BodyNode("c", "Const", {}, {{"dtype", DT_INT32}, {"value", Tensor::Scalar<int32_t>(3)}}));
  InlinedFunction result;
  Status status =
      InlineFunctionBody({"square", {{"T", DT_INT32}}}, {{c, 0}}, {}, "sq", &graph_, &result);
  ASSERT_TRUE(status.ok()) << status;
  Node* mul = graph_.FindNode("sq/mul");
  ASSERT_NE(mul, nullptr);
  EXPECT_EQ(mul->def().attrs.at("T").type(), DT_INT32);
  EXPECT_EQ(mul->input_type(0), DT_INT32);
  // Unbound, and bound to the wrong dtype.
  const int before = graph_.num_nodes();
  ExpectError(InlineFunctionBody({"square", {}}, {{c, 0}}, {}, "sq2", &graph_, &result),
              Code::kInvalidArgument, {"function 'square'", "missing attr 'T'"});
  ExpectError(
      InlineFunctionBody({"square", {{"T", DT_FLOAT}}}, {{c, 0}}, {}, "sq3", &graph_, &result),
      Code::kInvalidArgument, {"function 'square'", "argument 0 must be float", "int32"});
  EXPECT_EQ(graph_.num_nodes(), before) << "a failed inline leaves the graph as it was";
}

TEST_F(FunctionInlineTest, ErrorsNameTheFunctionAndBodyNode) {
  FunctionDef unknown = test::AddOneFunction("uses_unknown_op");
  unknown.node_def[1].op = "NoSuchOp";
  FunctionDef bad_attr = test::AddOneFunction("bad_attr");
  bad_attr.node_def[1].attrs["T"] = DT_BOOL;
  FunctionDef unbound = test::AddOneFunction("unbound");
  unbound.node_def[1].attrs["T"] = AttrValue(AttrValue::Placeholder{"U"});
  FunctionDef arity = test::AddOneFunction("arity");
  arity.node_def[1].inputs = {"x"};
  FunctionDefLibrary lib;
  lib.functions = {unknown, bad_attr, unbound, arity};
  ASSERT_TRUE(graph_.mutable_function_library()->AddLibrary(lib).ok());
  Node* c = Add(test::FloatConst("c", 2));
  InlinedFunction result;
  const int before = graph_.num_nodes();
  ExpectError(InlineFunctionBody({"uses_unknown_op", {}}, {{c, 0}}, {}, "u", &graph_, &result),
              Code::kNotFound, {"function 'uses_unknown_op'", "body node 'add'", "NoSuchOp"});
  ExpectError(InlineFunctionBody({"bad_attr", {}}, {{c, 0}}, {}, "b", &graph_, &result),
              Code::kInvalidArgument, {"function 'bad_attr'", "body node 'add'", "attr 'T'"});
  ExpectError(InlineFunctionBody({"unbound", {}}, {{c, 0}}, {}, "p", &graph_, &result),
              Code::kInvalidArgument, {"function 'unbound'", "body node 'add'", "$U"});
  ExpectError(InlineFunctionBody({"arity", {}}, {{c, 0}}, {}, "a", &graph_, &result),
              Code::kInvalidArgument, {"function 'arity'", "body node 'add'", "1 data inputs"});
  ExpectError(InlineFunctionBody({"add_one", {}}, {{c, 0}, {c, 0}}, {}, "a", &graph_, &result),
              Code::kInvalidArgument, {"function 'add_one'", "1 arguments", "given 2"});
  ExpectError(InlineFunctionBody({"nothing", {}}, {}, {}, "n", &graph_, &result),
              Code::kInvalidArgument, {"'nothing'", "not in the graph's function library"});
  EXPECT_EQ(graph_.num_nodes(), before);
}

TEST_F(FunctionInlineTest, ACycleInTheBodyIsAnError) {
  FunctionDef f = test::AddOneFunction("loops");
  f.node_def[1].inputs = {"x", "again:z:0"};
  f.node_def.push_back(BodyNode("again", "Add", {"add:z:0", "x"}, {{"T", DT_FLOAT}}));
  ASSERT_TRUE(graph_.mutable_function_library()->AddFunction(f).ok());
  Node* c = Add(test::FloatConst("c", 2));
  InlinedFunction result;
  ExpectError(InlineFunctionBody({"loops", {}}, {{c, 0}}, {}, "l", &graph_, &result),
              Code::kInvalidArgument, {"function 'loops'", "cycle"});
  EXPECT_EQ(graph_.FindNode("l/add"), nullptr);
}

TEST_F(FunctionInlineTest, ExpandsCallsByNameAndNestedCallsKeepingTheCallsNames) {
  ASSERT_TRUE(Import({test::FloatConst("c", 2),
                      test::CallNode("call", "add_one", {"c"}, {DT_FLOAT}, {DT_FLOAT}),
                      BodyNode("by_name", "plus_two", {"c"}),
                      BodyNode("sum", "Add", {"call:0", "by_name:1"}, {{"T", DT_FLOAT}})})
                  .ok());
  EXPECT_EQ(CountCalls(), 2);
  Status status = ExpandFunctions(&graph_);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(CountCalls(), 0);
  Node* call = graph_.FindNode("call");
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->type_string(), "IdentityN");
  EXPECT_EQ(call->input_edge(0)->src()->name(), "call/add");
  Node* by_name = graph_.FindNode("by_name");
  ASSERT_EQ(by_name->type_string(), "IdentityN");
  ASSERT_EQ(by_name->num_outputs(), 2);
  // The nested add_one calls were expanded too, under their own prefixes.
  EXPECT_EQ(by_name->input_edge(0)->src()->name(), "by_name/second/add");
  EXPECT_EQ(graph_.FindNode("by_name/second")->type_string(), "IdentityN");
  EXPECT_EQ(graph_.FindNode("by_name/second/add")->input_edge(0)->src()->name(),
            "by_name/first/add");
  // The argument returned as is.
  EXPECT_EQ(by_name->input_edge(1)->src()->name(), "c");
  // Consumers of pure calls read the bodies' outputs.
  Node* sum = graph_.FindNode("sum");
  EXPECT_EQ(sum->input_edge(0)->src()->name(), "call/add");
  EXPECT_EQ(sum->input_edge(1)->src()->name(), "c");
  // Constants of the body wait for the call's input.
  EXPECT_EQ(ControlSources(graph_.FindNode("call/one")),
            std::vector<std::string>{"call/input_control_node"});
  EXPECT_EQ(ControlSources(graph_.FindNode("call/input_control_node")),
            std::vector<std::string>{"c"});
}

TEST_F(FunctionInlineTest, ControlEdgesOfTheCallGateTheBodyAndWaitForIt) {
  ASSERT_TRUE(Import({test::FloatConst("c", 2), BodyNode("before", "NoOp", {}),
                      test::CallNode("call", "add_one", {"c", "^before"}, {DT_FLOAT}, {DT_FLOAT}),
                      BodyNode("after", "NoOp", {"^call"})})
                  .ok());
  ASSERT_TRUE(ExpandFunctions(&graph_).ok());
  EXPECT_EQ(ControlSources(graph_.FindNode("call/input_control_node")),
            (std::vector<std::string>{"before", "c"}));
  EXPECT_EQ(ControlSources(graph_.FindNode("after")), std::vector<std::string>{"call"});
}

TEST_F(FunctionInlineTest, AStatefulCallWaitsForItsControlOutputsAndSideEffects) {
  FunctionDef quiet = test::BumpFunction();
  quiet.signature.name = "bump_quietly";
  quiet.control_ret.clear();  // a body that lists no control outputs
  quiet.node_def[1].inputs = {"v"};
  FunctionDef effects_only = test::BumpFunction();
  effects_only.signature.name = "effects_only";
  effects_only.signature.outputs.clear();
  effects_only.ret.clear();
  NodeDef var = BodyNode("v", "VarHandleOp", {}, {{"dtype", DT_FLOAT}, {"shape", PartialShape({})}});
  ASSERT_TRUE(Import({var, test::FloatConst("d", 1),
                      test::CallNode("bump", "bump", {"v", "d"}, {DT_RESOURCE, DT_FLOAT},
                                     {DT_FLOAT}, true),
                      test::CallNode("quiet", "bump_quietly", {"v", "d"},
                                     {DT_RESOURCE, DT_FLOAT}, {DT_FLOAT}, true),
                      test::CallNode("effects", "effects_only", {"v", "d"},
                                     {DT_RESOURCE, DT_FLOAT}, {}, true)},
                     {quiet, effects_only})
                  .ok());
  Status status = ExpandFunctions(&graph_);
  ASSERT_TRUE(status.ok()) << status;
  // The control output, and the stateful body nodes.
  EXPECT_EQ(ControlSources(graph_.FindNode("bump")),
            (std::vector<std::string>{"bump/assign", "bump/read"}));
  EXPECT_EQ(ControlSources(graph_.FindNode("quiet")),
            (std::vector<std::string>{"quiet/assign", "quiet/read"}));
  Node* effects = graph_.FindNode("effects");
  EXPECT_EQ(effects->type_string(), "NoOp");
  EXPECT_EQ(ControlSources(effects), (std::vector<std::string>{"effects/assign", "effects/read"}));
}

TEST_F(FunctionInlineTest, RecursionIsAnErrorNamingTheCycle) {
  FunctionDef self = test::AddOneFunction("self");
  self.node_def[1] = BodyNode("again", "self", {"x"});
  self.ret["y"] = "again:y:0";
  FunctionDef ping = test::AddOneFunction("ping");
  ping.node_def[1] = test::CallNode("to_pong", "pong", {"x"}, {DT_FLOAT}, {DT_FLOAT});
  ping.ret["y"] = "to_pong:output:0";
  FunctionDef pong = test::AddOneFunction("pong");
  pong.node_def[1] = BodyNode("to_ping", "ping", {"x"});
  pong.ret["y"] = "to_ping:y:0";
  ASSERT_TRUE(Import({test::FloatConst("c", 2), BodyNode("call", "self", {"c"})}, {self}).ok());
  ExpectError(ExpandFunctions(&graph_), Code::kInvalidArgument,
              {"'self' calls itself", "self -> self"});
  Graph other;
  GraphDef def;
  def.library.functions = {ping, pong};
  def.nodes = {test::FloatConst("c", 2), BodyNode("call", "ping", {"c"})};
  ASSERT_TRUE(ImportGraphDef(def, &other).ok());
  ExpectError(ExpandFunctions(&other), Code::kInvalidArgument,
              {"'ping' calls itself", "ping -> pong -> ping", "call/to_pong/to_ping"});
}

TEST_F(FunctionInlineTest, BodyNodesTakeTheCallsDeviceUnlessTheyNameOne) {
  FunctionDef pinned = test::AddOneFunction("pinned");
  pinned.node_def[0].device = "/device:CPU:1";
  NodeDef call = test::CallNode("call", "pinned", {"c"}, {DT_FLOAT}, {DT_FLOAT});
  call.device = "/device:CPU:2";
  ASSERT_TRUE(Import({test::FloatConst("c", 2), call}, {pinned}).ok());
  ASSERT_TRUE(ExpandFunctions(&graph_).ok());
  EXPECT_EQ(graph_.FindNode("call/one")->requested_device(), "/device:CPU:1");
  EXPECT_EQ(graph_.FindNode("call/add")->requested_device(), "/device:CPU:2");
  EXPECT_EQ(graph_.FindNode("call")->requested_device(), "/device:CPU:2");
}

TEST_F(FunctionInlineTest, ANameClashPicksAnotherPrefix) {
  ASSERT_TRUE(Import({test::FloatConst("c", 2),
                      test::CallNode("call", "add_one", {"c"}, {DT_FLOAT}, {DT_FLOAT}),
                      test::FloatConst("call/one", 5)})
                  .ok());
  ASSERT_TRUE(ExpandFunctions(&graph_).ok());
  EXPECT_EQ(graph_.FindNode("call/one")->def().attrs.at("value").tensor().scalar<float>(), 5.f);
  ASSERT_NE(graph_.FindNode("call_inlined_1/add"), nullptr);
  EXPECT_EQ(graph_.FindNode("call")->input_edge(0)->src()->name(), "call_inlined_1/add");
}

TEST_F(FunctionInlineTest, CallShapesComeFromTheBody) {
  NodeDef x = BodyNode("x", "Placeholder", {}, {{"dtype", DT_FLOAT}, {"shape", PartialShape({2, 3})}});
  ASSERT_TRUE(Import({x, BodyNode("sq", "square", {"x"}, {{"T", DT_FLOAT}}),
                      test::CallNode("call", "plus_two", {"sq"}, {DT_FLOAT}, {DT_FLOAT, DT_FLOAT})})
                  .ok());
  EXPECT_EQ(graph_.FindNode("sq")->output_shape(0), PartialShape({2, 3}));
  EXPECT_EQ(graph_.FindNode("call")->output_shape(0), PartialShape({2, 3}));
  EXPECT_EQ(graph_.FindNode("call")->output_shape(1), PartialShape({2, 3}));
}

// f_k(x) = f_{k+1}(f_{k+1}(x)) for k < depth; f_depth = add_one: f_0
// expands to 2^depth calls of add_one.
std::vector<FunctionDef> DoublingChain(int depth) {
  std::vector<FunctionDef> chain;
  for (int k = 0; k < depth; ++k) {
    const std::string callee = k + 1 == depth ? "add_one" : StrCat("f", k + 1);
    FunctionDef f = test::AddOneFunction(StrCat("f", k));
    f.node_def = {BodyNode("first", callee, {"x"}), BodyNode("second", callee, {"first:y:0"})};
    f.ret["y"] = "second:y:0";
    chain.push_back(std::move(f));
  }
  return chain;
}

// w_k(x): `width` calls of w_{k-1} (add_one below w_1), each on x, the last
// returned: w_depth expands to width^depth calls.
std::vector<FunctionDef> WideNesting(int depth, int width) {
  std::vector<FunctionDef> nest;
  for (int k = 1; k <= depth; ++k) {
    const std::string callee = k == 1 ? "add_one" : StrCat("w", k - 1);
    FunctionDef f = test::AddOneFunction(StrCat("w", k));
    f.node_def.clear();
    for (int i = 0; i < width; ++i) f.node_def.push_back(BodyNode(StrCat("c", i), callee, {"x"}));
    f.ret["y"] = StrCat("c", width - 1, ":y:0");
    nest.push_back(std::move(f));
  }
  return nest;
}

TEST_F(FunctionInlineTest, NestingThatDoublesFailsBeforeExpandingAnything) {
  // 2^40 nodes: counted, not built. Import instantiates each body once for
  // its shapes (the memo), not 2^depth times.
  NodeDef x = BodyNode("x", "Placeholder", {}, {{"dtype", DT_FLOAT}, {"shape", PartialShape({2})}});
  ASSERT_TRUE(Import({x, BodyNode("call", "f0", {"x"})}, DoublingChain(40)).ok());
  const int before = graph_.num_nodes();
  ExpectError(ExpandFunctions(&graph_), Code::kResourceExhausted,
              {"'call'", "'f0'", "kMaxExpandedNodes", StrCat(kMaxExpandedNodes), "too deep"});
  EXPECT_EQ(graph_.num_nodes(), before) << "the budget is checked before expanding";
  EXPECT_EQ(graph_.FindNode("call")->type_string(), "f0");
}

TEST_F(FunctionInlineTest, SymbolicGradientOfADoublingChainIsCountedBeforeExpanding) {
  // The gradient of f0 holds its 2^40-node body (and more): counted, so it
  // fails at once with the budget's error, not after building.
  NodeDef x = BodyNode("x", "Placeholder", {}, {{"dtype", DT_FLOAT}, {"shape", PartialShape({2})}});
  NodeDef grad = BodyNode(
      "grad", "SymbolicGradient", {"x", "x"},
      {{"Tin", std::vector<DType>{DT_FLOAT, DT_FLOAT}}, {"Tout", std::vector<DType>{DT_FLOAT}}});
  NameAttrList f;
  f.name = "f0";
  grad.attrs["f"] = AttrValue(f);
  ASSERT_TRUE(Import({x, grad}, DoublingChain(40)).ok());
  const int before = graph_.num_nodes();
  ExpectError(ExpandFunctions(&graph_), Code::kResourceExhausted,
              {"'grad'", "'f0'", "kMaxExpandedNodes"});
  EXPECT_EQ(graph_.num_nodes(), before);
}

TEST_F(FunctionInlineTest, WideNestingImportsQuicklyAndFailsToExpand) {
  // 4096 calls of 4096 calls of ... four deep: ~2^48 nodes if expanded; the
  // import's shape inference instantiates each body once per input shape,
  // within its budget.
  NodeDef x = BodyNode("x", "Placeholder", {}, {{"dtype", DT_FLOAT}, {"shape", PartialShape({3})}});
  ASSERT_TRUE(Import({x, BodyNode("call", "w4", {"x"}), BodyNode("small", "w1", {"x"})},
                     WideNesting(4, 4096))
                  .ok());
  EXPECT_EQ(graph_.FindNode("small")->output_shape(0), PartialShape({3}));
  const int before = graph_.num_nodes();
  ExpectError(ExpandFunctions(&graph_), Code::kResourceExhausted,
              {"'call'", "'w4'", "kMaxExpandedNodes"});
  EXPECT_EQ(graph_.num_nodes(), before);
}

TEST_F(FunctionInlineTest, LegitimateNestedCallsWithinTheBudgetExpand) {
  // 2^10 calls of add_one, and w2 of 64 x 64: well inside the budget.
  std::vector<FunctionDef> functions = DoublingChain(10);
  for (FunctionDef& f : WideNesting(2, 64)) functions.push_back(std::move(f));
  NodeDef x = BodyNode("x", "Placeholder", {}, {{"dtype", DT_FLOAT}, {"shape", PartialShape({4})}});
  ASSERT_TRUE(
      Import({x, BodyNode("deep", "f0", {"x"}), BodyNode("wide", "w2", {"x"})}, functions).ok());
  Status status = ExpandFunctions(&graph_);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(CountCalls(), 0);
  int adds = 0;
  for (Node* node : graph_.nodes()) adds += node->type_string() == "Add";
  EXPECT_EQ(adds, 1024 + 64 * 64);
  EXPECT_EQ(graph_.FindNode("wide")->type_string(), "IdentityN");
}

TEST_F(FunctionInlineTest, CallShapesAreMemoizedPerInputShape) {
  // The same function on two shapes in one import: each call gets its own.
  NodeDef x =
      BodyNode("x", "Placeholder", {}, {{"dtype", DT_FLOAT}, {"shape", PartialShape({2, 3})}});
  NodeDef y = BodyNode("y", "Placeholder", {}, {{"dtype", DT_FLOAT}, {"shape", PartialShape({5})}});
  NodeDef z = BodyNode("z", "Placeholder", {}, {{"dtype", DT_INT32}, {"shape", PartialShape({7})}});
  ASSERT_TRUE(Import({x, y, z, BodyNode("on_x", "plus_two", {"x"}),
                      BodyNode("on_y", "plus_two", {"y"}), BodyNode("again_x", "plus_two", {"x"}),
                      BodyNode("sq_y", "square", {"y"}, {{"T", DT_FLOAT}}),
                      BodyNode("sq_z", "square", {"z"}, {{"T", DT_INT32}})})
                  .ok());
  EXPECT_EQ(graph_.FindNode("on_x")->output_shape(0), PartialShape({2, 3}));
  EXPECT_EQ(graph_.FindNode("on_y")->output_shape(0), PartialShape({5}));
  EXPECT_EQ(graph_.FindNode("again_x")->output_shape(1), PartialShape({2, 3}));
  EXPECT_EQ(graph_.FindNode("sq_y")->output_shape(0), PartialShape({5}));
  EXPECT_EQ(graph_.FindNode("sq_z")->output_shape(0), PartialShape({7}));
}

}  // namespace
}  // namespace weir
