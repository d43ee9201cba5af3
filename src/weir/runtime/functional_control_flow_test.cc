// Running If, Case and While: lowered when a step is compiled, they give
// the values TensorFlow's semantics define, with data-dependent predicates
// and trip counts, nesting, side effects only in the branch taken, and
// run-time errors that name the body node at fault.
#include <gtest/gtest.h>

#include "weir/graph/functional_test_util.h"
#include "weir/runtime/session.h"
#include "weir/runtime/standard_registration.h"

namespace weir {
namespace {

using test::BodyNode;

class FunctionalControlFlowTest : public ::testing::Test {
 protected:
  void SetUp() override { RegisterStandardOpsAndKernels(); }

  // A session on `nodes` with the test functions (and `extra`) as library.
  std::unique_ptr<Session> NewSession(std::vector<NodeDef> nodes,
                                      std::vector<FunctionDef> extra = {}) {
    GraphDef def;
    def.nodes = std::move(nodes);
    def.library.functions = test::FunctionalTestFunctions();
    for (FunctionDef& f : extra) def.library.functions.push_back(std::move(f));
    auto session = Session::New(SessionOptions());
    EXPECT_TRUE(session.ok()) << session.status();
    Status created = (*session)->Create(def);
    EXPECT_TRUE(created.ok()) << created;
    return std::move(session).value();
  }

  static StatusOr<std::vector<Tensor>> Run(Session* session,
                                           const std::vector<std::pair<std::string, Tensor>>& feeds,
                                           const std::vector<std::string>& fetches,
                                           const std::vector<std::string>& targets = {}) {
    std::vector<Tensor> out;
    WEIR_RETURN_IF_ERROR(session->Run(feeds, fetches, targets, &out));
    return out;
  }
};

NodeDef Placeholder(const std::string& name, DType dtype) {
  return BodyNode(name, "Placeholder", {}, {{"dtype", dtype}});
}

Tensor F(float v) { return Tensor::Scalar<float>(v); }
Tensor I(int32_t v) { return Tensor::Scalar<int32_t>(v); }

TEST_F(FunctionalControlFlowTest, IfTakesTheBranchTheDataSelects) {
  // x > 0 ? x * 2 : -x, the predicate computed in the graph.
  auto session = NewSession(
      {Placeholder("x", DT_FLOAT), test::FloatConst("zero", 0),
       BodyNode("positive", "Greater", {"x", "zero"}, {{"T", DT_FLOAT}}),
       test::IfNode("if", "StatelessIf", {"positive", "x"}, DT_BOOL, {DT_FLOAT}, {DT_FLOAT},
                    "scale_2", "negate"),
       BodyNode("plus_one", "AddV2", {"if", "x"}, {{"T", DT_FLOAT}})});
  for (float x : {3.f, -4.f, 0.f}) {
    auto out = Run(session.get(), {{"x", F(x)}}, {"if:0", "plus_one"});
    ASSERT_TRUE(out.ok()) << out.status();
    const float expected = x > 0 ? 2 * x : -x;
    EXPECT_EQ((*out)[0].scalar<float>(), expected) << x;
    EXPECT_EQ((*out)[1].scalar<float>(), expected + x) << x;
  }
}

TEST_F(FunctionalControlFlowTest, IfPredicateThatIsNotABoolScalar) {
  // TensorFlow's truth: a nonzero scalar, a non-empty tensor.
  auto session = NewSession(
      {Placeholder("k", DT_INT32), Placeholder("f", DT_FLOAT), Placeholder("v", DT_FLOAT),
       Placeholder("x", DT_FLOAT),
       test::IfNode("by_int", "If", {"k", "x"}, DT_INT32, {DT_FLOAT}, {DT_FLOAT}, "scale_2", "negate"),
       test::IfNode("by_float", "If", {"f", "x"}, DT_FLOAT, {DT_FLOAT}, {DT_FLOAT}, "scale_2",
                    "negate"),
       test::IfNode("by_vector", "If", {"v", "x"}, DT_FLOAT, {DT_FLOAT}, {DT_FLOAT}, "scale_2",
                    "negate")});
  struct Case {
    int32_t k;
    float f;
    std::vector<float> v;
    float by_int, by_float, by_vector;
  };
  for (const Case& c : {Case{0, 0.f, {}, -5, -5, -5}, Case{-3, 0.5f, {0.f}, 10, 10, 10},
                        Case{7, 0.f, {0.f, 0.f}, 10, -5, 10}}) {
    Tensor v(DT_FLOAT, TensorShape({static_cast<int64_t>(c.v.size())}));
    std::copy(c.v.begin(), c.v.end(), v.flat<float>().begin());
    auto out = Run(session.get(), {{"k", I(c.k)}, {"f", F(c.f)}, {"v", v}, {"x", F(5)}},
                   {"by_int", "by_float", "by_vector"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].scalar<float>(), c.by_int) << c.k;
    EXPECT_EQ((*out)[1].scalar<float>(), c.by_float) << c.f;
    EXPECT_EQ((*out)[2].scalar<float>(), c.by_vector) << c.v.size();
  }
}

TEST_F(FunctionalControlFlowTest, WhileRunsADataDependentNumberOfTrips) {
  // acc doubles n times; with a ToBool'd int cond (n - i) as well.
  auto session = NewSession(
      {test::IntConst("zero", 0), Placeholder("n", DT_INT32), Placeholder("acc", DT_FLOAT),
       test::WhileNode("loop", "StatelessWhile", {"zero", "n", "acc"},
                       {DT_INT32, DT_INT32, DT_FLOAT}, "i_less_than_n", "double_acc"),
       test::WhileNode("int_cond", "While", {"zero", "n", "acc"}, {DT_INT32, DT_INT32, DT_FLOAT},
                       "remaining", "double_acc", 1)});
  for (int32_t n : {0, 1, 2, 10}) {
    auto out = Run(session.get(), {{"n", I(n)}, {"acc", F(1.5f)}},
                   {"loop:0", "loop:1", "loop:2", "int_cond:2"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].scalar<int32_t>(), n);
    EXPECT_EQ((*out)[1].scalar<int32_t>(), n);
    EXPECT_EQ((*out)[2].scalar<float>(), 1.5f * (1 << n)) << n;
    EXPECT_EQ((*out)[3].scalar<float>(), 1.5f * (1 << n)) << n;
  }
}

TEST_F(FunctionalControlFlowTest, IfNestedInAWhileBody) {
  // acc = acc < 10 ? 3 * acc : -acc, n times.
  auto session = NewSession(
      {test::IntConst("zero", 0), Placeholder("n", DT_INT32), Placeholder("acc", DT_FLOAT),
       test::WhileNode("loop", "While", {"zero", "n", "acc"}, {DT_INT32, DT_INT32, DT_FLOAT},
                       "i_less_than_n", "triple_or_negate_acc")});
  for (int32_t n : {0, 1, 3, 6}) {
    for (float acc : {1.f, 20.f}) {
      float expected = acc;
      for (int i = 0; i < n; ++i) expected = expected < 10 ? 3 * expected : -expected;
      auto out = Run(session.get(), {{"n", I(n)}, {"acc", F(acc)}}, {"loop:2"});
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ((*out)[0].scalar<float>(), expected) << n << " " << acc;
    }
  }
}

TEST_F(FunctionalControlFlowTest, CaseRunsTheIndexedBranchAndTheLastOutOfRange) {
  auto session = NewSession(
      {Placeholder("k", DT_INT32), Placeholder("x", DT_FLOAT),
       test::CaseNode("case", "StatelessCase", {"k", "x"}, {DT_FLOAT}, {DT_FLOAT},
                      {"scale_2", "scale_3", "negate"}),
       test::CaseNode("single", "Case", {"k", "x"}, {DT_FLOAT}, {DT_FLOAT}, {"scale_10"})});
  const std::vector<std::pair<int32_t, float>> cases = {{0, 8}, {1, 12}, {2, -4}, {3, -4},
                                                        {-1, -4}, {100, -4}};
  for (const auto& [k, expected] : cases) {
    auto out = Run(session.get(), {{"k", I(k)}, {"x", F(4)}}, {"case", "single"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].scalar<float>(), expected) << k;
    EXPECT_EQ((*out)[1].scalar<float>(), 40.f) << k;
  }
}

TEST_F(FunctionalControlFlowTest, SideEffectsHappenOnlyInTheBranchTaken) {
  // If(p, bump by 1, bump by 10) on a resource variable; each branch
  // returns the value after its update.
  auto bump = [](const std::string& name, float delta) {
    FunctionDef f;
    f.signature.name = name;
    f.signature.inputs = {test::Arg("v", DT_RESOURCE)};
    f.signature.outputs = {test::Arg("value", DT_FLOAT)};
    f.signature.is_stateful = true;
    f.node_def = {test::FloatConst("delta", delta),
                  BodyNode("assign", "AssignAddVariableOp", {"v", "delta:output:0"},
                           {{"dtype", DT_FLOAT}}),
                  BodyNode("read", "ReadVariableOp", {"v", "^assign"}, {{"dtype", DT_FLOAT}})};
    f.ret["value"] = "read:value:0";
    f.control_ret["assign"] = "assign";
    return f;
  };
  auto session = NewSession(
      {BodyNode("v", "VarHandleOp", {}, {{"dtype", DT_FLOAT}, {"shape", PartialShape({})}}),
       test::FloatConst("zero", 0),
       BodyNode("init", "AssignVariableOp", {"v", "zero"}, {{"dtype", DT_FLOAT}}),
       Placeholder("p", DT_BOOL),
       test::IfNode("if", "If", {"p", "v"}, DT_BOOL, {DT_RESOURCE}, {DT_FLOAT}, "bump_1",
                    "bump_10"),
       BodyNode("read", "ReadVariableOp", {"v"}, {{"dtype", DT_FLOAT}})},
      {bump("bump_1", 1), bump("bump_10", 10)});
  ASSERT_TRUE(Run(session.get(), {}, {}, {"init"}).ok());
  auto out = Run(session.get(), {{"p", Tensor::Scalar<bool>(true)}}, {"if"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<float>(), 1.f);
  out = Run(session.get(), {{"p", Tensor::Scalar<bool>(false)}}, {}, {"if"});
  ASSERT_TRUE(out.ok()) << out.status();
  out = Run(session.get(), {}, {"read"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<float>(), 11.f) << "one update per run, of the branch taken";
}

TEST_F(FunctionalControlFlowTest, AnErrorInTheBranchTakenNamesTheBodyNode) {
  auto session = NewSession(
      {Placeholder("p", DT_BOOL), Placeholder("x", DT_FLOAT),
       test::IfNode("if", "If", {"p", "x"}, DT_BOOL, {DT_FLOAT}, {DT_FLOAT}, "reshape_to_3",
                    "negate")});
  Tensor two(DT_FLOAT, TensorShape({2}));
  two.flat<float>()[0] = 1;
  two.flat<float>()[1] = 2;
  // Not taken: no error.
  auto out = Run(session.get(), {{"p", Tensor::Scalar<bool>(false)}, {"x", two}}, {"if"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].flat<float>()[1], -2.f);
  out = Run(session.get(), {{"p", Tensor::Scalar<bool>(true)}, {"x", two}}, {"if"});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), Code::kInvalidArgument) << out.status();
  EXPECT_NE(out.status().message().find("if/then/reshape"), std::string::npos) << out.status();
}

TEST_F(FunctionalControlFlowTest, FeedingTheNodesOutputSkipsTheBranches) {
  auto session = NewSession(
      {Placeholder("p", DT_BOOL), Placeholder("x", DT_FLOAT),
       test::IfNode("if", "If", {"p", "x"}, DT_BOOL, {DT_FLOAT}, {DT_FLOAT}, "scale_2", "negate"),
       BodyNode("neg", "Neg", {"if"}, {{"T", DT_FLOAT}})});
  auto out = Run(session.get(), {{"if:0", F(7)}}, {"neg"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<float>(), -7.f);
}

}  // namespace
}  // namespace weir
