#include "weir/graph/lower_functional_ops.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "weir/graph/function_inline.h"
#include "weir/graph/function_library.h"
#include "weir/graph/functional_test_util.h"
#include "weir/graph/graph_constructor.h"
#include "weir/ops/all_ops.h"

namespace weir {
namespace {

using test::BodyNode;

class LowerFunctionalOpsTest : public ::testing::Test {
 protected:
  void SetUp() override { RegisterAllOps(); }

  Status Import(std::vector<NodeDef> nodes, std::vector<FunctionDef> extra = {}) {
    GraphDef def;
    def.nodes = std::move(nodes);
    def.library.functions = test::FunctionalTestFunctions();
    for (FunctionDef& f : extra) def.library.functions.push_back(std::move(f));
    return ImportGraphDef(def, &graph_);
  }

  Status Lower(const std::string& name) {
    Node* node = graph_.FindNode(name);
    EXPECT_NE(node, nullptr) << name;
    if (node == nullptr) return errors::NotFound(name);
    EXPECT_TRUE(IsFunctionalControlFlow(*node));
    return LowerFunctionalControlFlow(&graph_, node);
  }

  std::map<std::string, int> OpCounts() const {
    std::map<std::string, int> counts;
    for (Node* node : graph_.nodes()) ++counts[node->type_string()];
    return counts;
  }

  Node* Find(const std::string& name) const {
    Node* node = graph_.FindNode(name);
    EXPECT_NE(node, nullptr) << name;
    return node;
  }

  static std::vector<std::string> ControlSources(const Node* node) {
    std::vector<std::string> out;
    for (const Edge* e : node->control_inputs()) out.push_back(e->src()->name());
    std::sort(out.begin(), out.end());
    return out;
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

NodeDef Placeholder(const std::string& name, DType dtype, PartialShape shape = PartialShape({})) {
  return BodyNode(name, "Placeholder", {}, {{"dtype", dtype}, {"shape", shape}});
}

TEST_F(LowerFunctionalOpsTest, RecognizesTheFunctionalOps) {
  ASSERT_TRUE(Import({Placeholder("p", DT_BOOL), Placeholder("x", DT_FLOAT),
                      test::IfNode("if", "If", {"p", "x"}, DT_BOOL, {DT_FLOAT}, {DT_FLOAT},
                                   "scale_2", "negate")})
                  .ok());
  EXPECT_TRUE(IsFunctionalControlFlow(*Find("if")));
  EXPECT_FALSE(IsFunctionalControlFlow(*Find("x")));
}

TEST_F(LowerFunctionalOpsTest, IfBecomesSwitchesBranchesAndMerges) {
  ASSERT_TRUE(Import({Placeholder("p", DT_BOOL), Placeholder("x", DT_FLOAT), BodyNode("dep", "NoOp", {}),
                      test::IfNode("if", "StatelessIf", {"p", "x", "^dep"}, DT_BOOL, {DT_FLOAT},
                                   {DT_FLOAT}, "scale_2", "negate"),
                      BodyNode("use", "Neg", {"if"}, {{"T", DT_FLOAT}}),
                      BodyNode("after", "NoOp", {"^if"})})
                  .ok());
  ASSERT_TRUE(Lower("if").ok());
  std::map<std::string, int> counts = OpCounts();
  EXPECT_EQ(counts["StatelessIf"], 0);
  EXPECT_EQ(counts["Switch"], 2);  // the predicate's and x's
  EXPECT_EQ(counts["Merge"], 1);
  EXPECT_EQ(counts["ToBool"], 0) << "a bool scalar predicate is used as is";

  // The node's name now holds the results; its consumers read them.
  Node* lowered = Find("if");
  EXPECT_EQ(lowered->type_string(), "IdentityN");
  EXPECT_EQ(Find("use")->input_edge(0)->src(), lowered);
  EXPECT_EQ(ControlSources(Find("after")), std::vector<std::string>{"if"});
  Node* merge = lowered->input_edge(0)->src();
  ASSERT_EQ(merge->type_string(), "Merge");
  // Merge(else, then): the else branch's Neg, the then branch's Mul.
  EXPECT_EQ(merge->input_edge(0)->src()->name(), "if/else/neg");
  EXPECT_EQ(merge->input_edge(1)->src()->name(), "if/then/mul");
  Node* x_switch = Find("if/then/mul")->input_edge(0)->src();
  EXPECT_EQ(x_switch->type_string(), "Switch");
  EXPECT_EQ(Find("if/then/mul")->input_edge(0)->src_output(), 1);
  EXPECT_EQ(Find("if/else/neg")->input_edge(0)->src_output(), 0);
  EXPECT_EQ(x_switch->input_edge(0)->src()->name(), "x");
  EXPECT_EQ(x_switch->input_edge(1)->src()->name(), "p");
  // The If's control input gates every Switch; the branch's constant waits
  // on the then pivot.
  EXPECT_EQ(ControlSources(x_switch), std::vector<std::string>{"dep"});
  EXPECT_EQ(ControlSources(Find("if/switch_pred")), std::vector<std::string>{"dep"});
  EXPECT_EQ(ControlSources(Find("if/then/factor")), std::vector<std::string>{"if/pivot_t"});
  EXPECT_EQ(Find("if/pivot_t")->input_edge(0)->src_output(), 1);
}

TEST_F(LowerFunctionalOpsTest, NonBoolOrNonScalarPredicateGoesThroughToBool) {
  ASSERT_TRUE(Import({Placeholder("p", DT_INT32), Placeholder("b", DT_BOOL, PartialShape({2})),
                      Placeholder("x", DT_FLOAT),
                      test::IfNode("int_if", "If", {"p", "x"}, DT_INT32, {DT_FLOAT}, {DT_FLOAT},
                                   "scale_2", "negate"),
                      test::IfNode("vector_if", "If", {"b", "x"}, DT_BOOL, {DT_FLOAT}, {DT_FLOAT},
                                   "scale_2", "negate")})
                  .ok());
  ASSERT_TRUE(Lower("int_if").ok());
  ASSERT_TRUE(Lower("vector_if").ok());
  EXPECT_EQ(OpCounts()["ToBool"], 2);
  EXPECT_EQ(Find("int_if/switch_pred")->input_edge(0)->src()->type_string(), "ToBool");
}

TEST_F(LowerFunctionalOpsTest, IfWithoutOutputsBecomesANoOpThatWaitsForTheBranch) {
  FunctionDef effect;
  effect.signature.name = "effect";
  effect.signature.inputs = {test::Arg("x", DT_FLOAT)};
  effect.node_def = {BodyNode("noop", "NoOp", {"^x"})};
  effect.control_ret["noop"] = "noop";
  ASSERT_TRUE(Import({Placeholder("p", DT_BOOL), Placeholder("x", DT_FLOAT),
                      test::IfNode("if", "If", {"p", "x"}, DT_BOOL, {DT_FLOAT}, {}, "effect",
                                   "effect")},
                     {effect})
                  .ok());
  ASSERT_TRUE(Lower("if").ok());
  Node* lowered = Find("if");
  EXPECT_EQ(lowered->type_string(), "NoOp");
  ASSERT_EQ(ControlSources(lowered), std::vector<std::string>{"if/branch_executed"});
  EXPECT_EQ(Find("if/branch_executed")->type_string(), "Merge");
  EXPECT_EQ(ControlSources(Find("if/then_done")), std::vector<std::string>{"if/then/noop"});
  EXPECT_EQ(ControlSources(Find("if/else_done")), std::vector<std::string>{"if/else/noop"});
}

TEST_F(LowerFunctionalOpsTest, WhileBecomesALoopFrame) {
  ASSERT_TRUE(Import({test::IntConst("zero", 0), Placeholder("n", DT_INT32), Placeholder("acc", DT_FLOAT),
                      BodyNode("dep", "NoOp", {}),
                      test::WhileNode("loop", "StatelessWhile", {"zero", "n", "acc", "^dep"},
                                      {DT_INT32, DT_INT32, DT_FLOAT}, "i_less_than_n",
                                      "double_acc", 7),
                      BodyNode("use", "Neg", {"loop:2"}, {{"T", DT_FLOAT}})})
                  .ok());
  ASSERT_TRUE(Lower("loop").ok());
  std::map<std::string, int> counts = OpCounts();
  EXPECT_EQ(counts["StatelessWhile"], 0);
  EXPECT_EQ(counts["Enter"], 3);
  EXPECT_EQ(counts["Merge"], 3);
  EXPECT_EQ(counts["Switch"], 3);
  EXPECT_EQ(counts["Exit"], 3);
  EXPECT_EQ(counts["NextIteration"], 3);
  EXPECT_EQ(counts["LoopCond"], 1);
  for (Node* node : graph_.nodes()) {
    if (node->type_string() != "Enter") continue;
    EXPECT_EQ(node->def().attrs.at("frame_name").s(), "loop");
    EXPECT_EQ(node->def().attrs.at("parallel_iterations").i(), 7);
    EXPECT_FALSE(node->def().attrs.at("is_constant").b());
    EXPECT_EQ(ControlSources(node), std::vector<std::string>{"dep"});
  }
  Node* lowered = Find("loop");
  EXPECT_EQ(lowered->type_string(), "IdentityN");
  EXPECT_EQ(Find("use")->input_edge(0)->src(), lowered);
  EXPECT_EQ(Find("use")->input_edge(0)->src_output(), 2);
  // acc: Exit <- Switch(Merge(Enter, NextIteration(body's mul)), LoopCond).
  Node* exit = lowered->input_edge(2)->src();
  ASSERT_EQ(exit->type_string(), "Exit");
  Node* sw = exit->input_edge(0)->src();
  ASSERT_EQ(sw->type_string(), "Switch");
  EXPECT_EQ(exit->input_edge(0)->src_output(), 0);
  EXPECT_EQ(sw->input_edge(1)->src()->type_string(), "LoopCond");
  Node* merge = sw->input_edge(0)->src();
  ASSERT_EQ(merge->type_string(), "Merge");
  EXPECT_EQ(merge->input_edge(0)->src()->type_string(), "Enter");
  Node* next = merge->input_edge(1)->src();
  ASSERT_EQ(next->type_string(), "NextIteration");
  EXPECT_EQ(next->input_edge(0)->src()->name(), "loop/body/mul");
  // The body reads the Switch's true side through an Identity; its
  // constants wait on the first variable's Identity, the cond's on its Merge.
  Node* identity = Find("loop/body/mul")->input_edge(0)->src();
  EXPECT_EQ(identity->type_string(), "Identity");
  EXPECT_EQ(identity->input_edge(0)->src_output(), 1);
  ASSERT_EQ(ControlSources(Find("loop/body/two")).size(), 1u);
  EXPECT_EQ(Find(ControlSources(Find("loop/body/two"))[0])->type_string(), "Identity");
  EXPECT_EQ(Find("loop/cond/less")->input_edge(0)->src()->type_string(), "Merge");
}

TEST_F(LowerFunctionalOpsTest, WhileConditionThatIsNotBoolGoesThroughToBool) {
  ASSERT_TRUE(Import({test::IntConst("zero", 0), Placeholder("n", DT_INT32), Placeholder("acc", DT_FLOAT),
                      test::WhileNode("loop", "While", {"zero", "n", "acc"},
                                      {DT_INT32, DT_INT32, DT_FLOAT}, "remaining", "double_acc")})
                  .ok());
  ASSERT_TRUE(Lower("loop").ok());
  Node* to_bool = Find("loop/to_bool");
  EXPECT_EQ(to_bool->type_string(), "ToBool");
  EXPECT_EQ(to_bool->input_edge(0)->src()->name(), "loop/cond/sub");
}

TEST_F(LowerFunctionalOpsTest, CaseBecomesAChainOfConds) {
  ASSERT_TRUE(Import({Placeholder("k", DT_INT32), Placeholder("x", DT_FLOAT),
                      test::CaseNode("case", "StatelessCase", {"k", "x"}, {DT_FLOAT}, {DT_FLOAT},
                                     {"scale_2", "scale_3", "negate"})})
                  .ok());
  ASSERT_TRUE(Lower("case").ok());
  std::map<std::string, int> counts = OpCounts();
  // Two levels, each switching x, the index and the predicate.
  EXPECT_EQ(counts["Switch"], 6);
  EXPECT_EQ(counts["Merge"], 2);
  EXPECT_EQ(counts["Equal"], 2);
  for (const char* body : {"case/branch0/mul", "case/branch1/mul", "case/branch2/neg"}) {
    EXPECT_NE(graph_.FindNode(body), nullptr) << body;
  }
  EXPECT_EQ(Find("case")->type_string(), "IdentityN");
}

TEST_F(LowerFunctionalOpsTest, CaseWithOneBranchIsACall) {
  ASSERT_TRUE(Import({Placeholder("k", DT_INT32), Placeholder("x", DT_FLOAT),
                      test::CaseNode("case", "Case", {"k", "x"}, {DT_FLOAT}, {DT_FLOAT}, {"negate"})})
                  .ok());
  ASSERT_TRUE(Lower("case").ok());
  EXPECT_EQ(OpCounts()["Switch"], 0);
  EXPECT_EQ(Find("case")->input_edge(0)->src()->name(), "case/branch0/neg");
}

TEST_F(LowerFunctionalOpsTest, BodyNamesThatClashGetAnotherPrefix) {
  ASSERT_TRUE(Import({Placeholder("p", DT_BOOL), Placeholder("x", DT_FLOAT),
                      BodyNode("if/then/mul", "Neg", {"x"}, {{"T", DT_FLOAT}}),
                      test::IfNode("if", "If", {"p", "x"}, DT_BOOL, {DT_FLOAT}, {DT_FLOAT},
                                   "scale_2", "negate")})
                  .ok());
  ASSERT_TRUE(Lower("if").ok());
  EXPECT_EQ(Find("if/then/mul")->type_string(), "Neg");
  EXPECT_EQ(Find("if/then_1/mul")->type_string(), "Mul");
}

TEST_F(LowerFunctionalOpsTest, ErrorsNameTheNodeAndFunctionAndLeaveTheGraph) {
  FunctionDef two_outputs;
  two_outputs.signature.name = "two_outputs";
  two_outputs.signature.inputs = {test::Arg("x", DT_FLOAT)};
  two_outputs.signature.outputs = {test::Arg("a", DT_FLOAT), test::Arg("b", DT_FLOAT)};
  two_outputs.ret["a"] = "x";
  two_outputs.ret["b"] = "x";
  FunctionDef to_int;
  to_int.signature.name = "to_int";
  to_int.signature.inputs = {test::Arg("x", DT_FLOAT)};
  to_int.signature.outputs = {test::Arg("y", DT_INT32)};
  to_int.node_def = {BodyNode("cast", "Cast", {"x"}, {{"SrcT", DT_FLOAT}, {"DstT", DT_INT32}})};
  to_int.ret["y"] = "cast:y:0";
  // A function missing from the library is refused at import already.
  ExpectError(Import({Placeholder("p", DT_BOOL), Placeholder("x", DT_FLOAT),
                      test::IfNode("missing", "If", {"p", "x"}, DT_BOOL, {DT_FLOAT}, {DT_FLOAT},
                                   "scale_2", "no_such_function")}),
              Code::kInvalidArgument, {"'missing'", "no_such_function"});
  ASSERT_TRUE(
      Import({Placeholder("p", DT_BOOL), Placeholder("x", DT_FLOAT), test::IntConst("zero", 0),
              test::IfNode("arity", "If", {"p", "x"}, DT_BOOL, {DT_FLOAT}, {DT_FLOAT},
                           "scale_2", "two_outputs"),
              test::IfNode("dtype", "If", {"p", "x"}, DT_BOOL, {DT_FLOAT}, {DT_FLOAT}, "to_int",
                           "negate"),
              test::WhileNode("bad_body", "While", {"zero", "zero", "x"},
                              {DT_INT32, DT_INT32, DT_FLOAT}, "i_less_than_n", "scale_2")},
             {two_outputs, to_int})
          .ok());
  const int before = graph_.num_nodes();
  ExpectError(Lower("arity"), Code::kInvalidArgument,
              {"'arity'", "else_branch 'two_outputs'", "returns 2 values", "1 outputs"});
  ExpectError(Lower("dtype"), Code::kInvalidArgument,
              {"'dtype'", "then_branch 'to_int'", "int32", "float"});
  ExpectError(Lower("bad_body"), Code::kInvalidArgument, {"'bad_body'", "body", "scale_2"});
  EXPECT_EQ(graph_.num_nodes(), before) << "a failed lowering leaves the graph as it was";
  EXPECT_EQ(Find("arity")->type_string(), "If");
  // The compiler's pass says which node it was expanding, as for calls.
  ExpectError(ExpandFunctions(&graph_), Code::kInvalidArgument,
              {"expanding call node 'arity' (If)", "returns 2 values"});
}

TEST_F(LowerFunctionalOpsTest, CaseWithManyBranchesIsBuiltWithoutRecursion) {
  // One level per branch; built by recursion, 12000 levels took three
  // stack frames each (tens of MB of stack).
  constexpr int kBranches = 12000;
  std::vector<std::string> branches(kBranches, "negate");
  branches.back() = "scale_2";
  ASSERT_TRUE(Import({Placeholder("k", DT_INT32), Placeholder("x", DT_FLOAT),
                      test::CaseNode("case", "Case", {"k", "x"}, {DT_FLOAT}, {DT_FLOAT}, branches)})
                  .ok());
  Status status = Lower("case");
  ASSERT_TRUE(status.ok()) << status;
  std::map<std::string, int> counts = OpCounts();
  EXPECT_EQ(counts["Equal"], kBranches - 1);
  EXPECT_EQ(counts["Merge"], kBranches - 1);
  EXPECT_EQ(counts["Switch"], 3 * (kBranches - 1));
  EXPECT_EQ(counts["Neg"], kBranches - 1);
  EXPECT_NE(graph_.FindNode(StrCat("case/branch", kBranches - 1, "/mul")), nullptr);
  // The outermost Merge joins branch 0 with the rest of the chain.
  const Node* merge = Find("case")->input_edge(0)->src();
  ASSERT_EQ(merge->type_string(), "Merge");
  EXPECT_EQ(merge->input_edge(1)->src()->name(), "case/branch0/neg");
  EXPECT_EQ(Find("case")->output_shape(0), PartialShape({}));
}

TEST_F(LowerFunctionalOpsTest, ExpandFunctionsLowersNestedControlFlow) {
  ASSERT_TRUE(Import({test::IntConst("zero", 0), Placeholder("n", DT_INT32), Placeholder("acc", DT_FLOAT),
                      test::WhileNode("loop", "While", {"zero", "n", "acc"},
                                      {DT_INT32, DT_INT32, DT_FLOAT}, "i_less_than_n",
                                      "triple_or_negate_acc")})
                  .ok());
  ASSERT_TRUE(ExpandFunctions(&graph_).ok());
  for (Node* node : graph_.nodes()) {
    EXPECT_FALSE(IsFunctionalControlFlow(*node)) << node->name();
    EXPECT_FALSE(IsFunctionCall(graph_, *node)) << node->name();
  }
  // The If of the body's call, lowered inside the loop's frame.
  EXPECT_EQ(Find("loop/body/step/if")->type_string(), "IdentityN");
  EXPECT_EQ(OpCounts()["Merge"], 3 + 1);
}

}  // namespace
}  // namespace weir
