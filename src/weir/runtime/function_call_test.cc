// Running graphs that call library functions: calls are expanded when a step
// is compiled, so feeds, fetches and targets of a call, nested calls, calls
// in loops and stateful calls behave as TensorFlow runs them.
#include <gtest/gtest.h>

#include "weir/graph/function_inline.h"
#include "weir/graph/function_library.h"
#include "weir/graph/function_test_util.h"
#include "weir/graph/graph_constructor.h"
#include "weir/ops/control_flow_builder.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/device_mgr.h"
#include "weir/runtime/graph_compiler.h"
#include "weir/runtime/session.h"
#include "weir/runtime/standard_registration.h"

namespace weir {
namespace {

using test::BodyNode;
using test::CallNode;

class FunctionCallTest : public ::testing::Test {
 protected:
  void SetUp() override { RegisterStandardOpsAndKernels(); }

  std::unique_ptr<Session> NewSession(const GraphDef& def) {
    SessionOptions options;
    auto session = Session::New(options);
    EXPECT_TRUE(session.ok()) << session.status();
    Status created = (*session)->Create(def);
    EXPECT_TRUE(created.ok()) << created;
    return std::move(session).value();
  }
};

FunctionDefLibrary Library() {
  FunctionDefLibrary lib;
  lib.functions = {test::AddOneFunction(), test::SquareFunction(), test::PlusTwoFunction(),
                   test::BumpFunction()};
  // plus_four(x) = plus_two(plus_two(x)), through PartitionedCall.
  FunctionDef four;
  four.signature.name = "plus_four";
  four.signature.inputs = {test::Arg("x", DT_FLOAT)};
  four.signature.outputs = {test::Arg("y", DT_FLOAT)};
  four.node_def = {CallNode("a", "plus_two", {"x"}, {DT_FLOAT}, {DT_FLOAT, DT_FLOAT}),
                   CallNode("b", "plus_two", {"a:output:0"}, {DT_FLOAT}, {DT_FLOAT, DT_FLOAT})};
  four.ret["y"] = "b:output:0";
  lib.functions.push_back(four);
  return lib;
}

GraphDef CallGraph() {
  GraphDef g;
  g.library = Library();
  g.nodes = {BodyNode("x", "Placeholder", {}, {{"dtype", DT_FLOAT}, {"shape", PartialShape({2})}}),
             CallNode("call", "add_one", {"x"}, {DT_FLOAT}, {DT_FLOAT}),
             BodyNode("by_name", "plus_two", {"x"}),
             CallNode("nested", "plus_four", {"x"}, {DT_FLOAT}, {DT_FLOAT}),
             BodyNode("sq", "square", {"call:0"}, {{"T", DT_FLOAT}}),
             BodyNode("sum", "Add", {"sq:0", "by_name:1"}, {{"T", DT_FLOAT}})};
  return g;
}

std::vector<float> Values(const Tensor& t) { return {t.flat<float>().begin(), t.flat<float>().end()}; }

Tensor Vec(std::vector<float> v) {
  Tensor t(DT_FLOAT, TensorShape({static_cast<int64_t>(v.size())}));
  std::copy(v.begin(), v.end(), t.flat<float>().begin());
  return t;
}

TEST_F(FunctionCallTest, FetchesCallOutputsAndNestedCalls) {
  auto session = NewSession(CallGraph());
  std::vector<Tensor> out;
  Status status = session->Run({{"x", Vec({1, -3})}},
                               {"call:0", "by_name:0", "by_name:1", "nested", "sq", "sum"}, {}, &out);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(Values(out[0]), (std::vector<float>{2, -2}));
  EXPECT_EQ(Values(out[1]), (std::vector<float>{3, -1}));
  EXPECT_EQ(Values(out[2]), (std::vector<float>{1, -3}));
  EXPECT_EQ(Values(out[3]), (std::vector<float>{5, 1}));
  EXPECT_EQ(Values(out[4]), (std::vector<float>{4, 4}));
  EXPECT_EQ(Values(out[5]), (std::vector<float>{5, 1}));
}

TEST_F(FunctionCallTest, FeedsACallOutput) {
  auto session = NewSession(CallGraph());
  std::vector<Tensor> out;
  // The call is not run: its output is given.
  Status status = session->Run({{"call:0", Vec({10, 20})}, {"x", Vec({0, 0})}}, {"sq", "call"}, {},
                               &out);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(Values(out[0]), (std::vector<float>{100, 400}));
  EXPECT_EQ(Values(out[1]), (std::vector<float>{10, 20}));
}

TEST_F(FunctionCallTest, CompilingRecordsTheExpansionAndPrunesTheBodies) {
  Graph graph;
  ASSERT_TRUE(ImportGraphDef(CallGraph(), &graph).ok());
  auto devices = DeviceMgr::NewCpuDevices(1, 1);
  CompileEnv env;
  env.devices = devices->Infos();
  env.kernels = KernelRegistry::Global();
  env.host_device = devices->devices().front().get();
  CompileOptions options;
  options.record_passes = true;
  options.fold_constants = false;
  // Only the argument output of plus_two: none of its body is needed.
  StatusOr<CompiledGraph> compiled = CompileGraph(graph, {{"x"}, {"by_name:1"}, {}}, env, options);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  bool recorded = false;
  for (const PassRecord& pass : compiled->passes) recorded |= pass.pass == "expand functions";
  EXPECT_TRUE(recorded) << DescribePasses(compiled->passes);
  const Graph& part = *compiled->partitions[0].graph;
  EXPECT_EQ(part.FindNode("by_name/first/add"), nullptr);
  EXPECT_EQ(part.FindNode("by_name"), nullptr);
  EXPECT_EQ(part.num_nodes(), 2) << "_Arg and _Retval";
  for (Node* node : part.nodes()) EXPECT_FALSE(IsFunctionCall(part, *node)) << node->name();
  EXPECT_EQ(graph.FindNode("by_name")->type_string(), "plus_two") << "the source graph is kept";
}

TEST_F(FunctionCallTest, AStatefulCallUpdatesAVariableWhenTargetedOrFetched) {
  GraphDef g;
  g.library = Library();
  g.nodes = {BodyNode("v", "VarHandleOp", {}, {{"dtype", DT_FLOAT}, {"shape", PartialShape({})}}),
             test::FloatConst("one", 1), test::FloatConst("two", 2),
             BodyNode("init", "AssignVariableOp", {"v", "one"}, {{"dtype", DT_FLOAT}}),
             CallNode("bump", "bump", {"v", "two"}, {DT_RESOURCE, DT_FLOAT}, {DT_FLOAT}, true),
             BodyNode("read", "ReadVariableOp", {"v"}, {{"dtype", DT_FLOAT}}),
             BodyNode("read_after", "ReadVariableOp", {"v", "^bump"}, {{"dtype", DT_FLOAT}})};
  auto session = NewSession(g);
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {}, {"init"}, &out).ok());
  // Targeted: no output is fetched, the body's update still runs.
  Status status = session->Run({}, {}, {"bump"}, &out);
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_TRUE(session->Run({}, {"read"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), 3.f);
  // Fetched: the value after the update.
  ASSERT_TRUE(session->Run({}, {"bump:0"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), 5.f);
  // A control dependency on the call waits for its side effects.
  ASSERT_TRUE(session->Run({}, {"read_after"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), 7.f);
}

// A call's control inputs order its whole body, not only its sources: the
// read inside `read_var` sees the assignment the call waits for.
TEST_F(FunctionCallTest, ControlInputsOfACallOrderTheBodysReads) {
  FunctionDef read;
  read.signature.name = "read_var";
  read.signature.inputs = {test::Arg("v", DT_RESOURCE)};
  read.signature.outputs = {test::Arg("y", DT_FLOAT)};
  read.signature.is_stateful = true;
  read.node_def = {BodyNode("r", "ReadVariableOp", {"v"}, {{"dtype", DT_FLOAT}})};
  read.ret["y"] = "r:value:0";
  GraphDef g;
  g.library.functions = {read};
  g.nodes = {BodyNode("v", "VarHandleOp", {}, {{"dtype", DT_FLOAT}, {"shape", PartialShape({})}}),
             test::FloatConst("nine", 9),
             BodyNode("assign", "AssignVariableOp", {"v", "nine"}, {{"dtype", DT_FLOAT}}),
             CallNode("call", "read_var", {"v", "^assign"}, {DT_RESOURCE}, {DT_FLOAT}, true)};
  auto session = NewSession(g);
  std::vector<Tensor> out;
  Status status = session->Run({}, {"call:0"}, {}, &out);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(out[0].scalar<float>(), 9.f);
}

TEST_F(FunctionCallTest, ACallInsideAWhileLoopBody) {
  // i, acc = 0, x; while i < n: acc = plus_two(acc)[0], i += 1.
  Scope root = Scope::NewRootScope();
  FunctionDefLibrary lib = Library();
  ASSERT_TRUE(root.graph()->mutable_function_library()->AddLibrary(lib).ok());
  auto n = ops::Placeholder(root.WithOpName("n"), DT_INT32);
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  std::vector<Output> outputs;
  Status built = ops::WhileLoop(
      root, {ops::Const(root, 0), x},
      [&](const Scope& c, const std::vector<Output>& v, Output* pred) {
        *pred = ops::Less(c, v[0], n);
        return Status::OK();
      },
      [&](const Scope& b, const std::vector<Output>& v, std::vector<Output>* next) {
        Operation call = AddOp(b.WithOpName("call"), "PartitionedCall", {InputList{v[1]}},
                               {{"Tout", std::vector<DType>{DT_FLOAT, DT_FLOAT}},
                                {"f", AttrValue(NameAttrList{"plus_two", {}})}});
        next->push_back(ops::Add(b, v[0], 1));
        next->push_back(call.output(0));
        return b.status();
      },
      &outputs);
  ASSERT_TRUE(built.ok()) << built;
  ops::Identity(root.WithOpName("acc"), outputs[1]);
  ASSERT_TRUE(root.ok()) << root.status();
  auto session = NewSession(root.ToGraphDef());
  for (int32_t trips : {0, 1, 5}) {
    std::vector<Tensor> out;
    Status status = session->Run({{"n", Tensor::Scalar<int32_t>(trips)}, {"x", Tensor::Scalar<float>(0.5f)}},
                                 {"acc"}, {}, &out);
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_EQ(out[0].scalar<float>(), 0.5f + 2.f * trips) << trips;
  }
}

TEST_F(FunctionCallTest, ACallInACondBranchRunsOnlyWhenTaken) {
  // pred ? add_one(x) : -x, where add_one's constant must not make the
  // untaken branch live.
  Scope root = Scope::NewRootScope();
  ASSERT_TRUE(root.graph()->mutable_function_library()->AddLibrary(Library()).ok());
  auto pred = ops::Placeholder(root.WithOpName("pred"), DT_BOOL);
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  std::vector<Output> y;
  Status built = ops::Cond(
      root, pred,
      [&](const Scope& s, std::vector<Output>* out) {
        Operation call = AddOp(s.WithOpName("call"), "PartitionedCall", {InputList{x}},
                               {{"Tout", std::vector<DType>{DT_FLOAT}},
                                {"f", AttrValue(NameAttrList{"add_one", {}})}});
        out->push_back(call.output(0));
        return s.status();
      },
      [&](const Scope& s, std::vector<Output>* out) {
        out->push_back(ops::Neg(s, x));
        return Status::OK();
      },
      &y);
  ASSERT_TRUE(built.ok()) << built;
  ops::Identity(root.WithOpName("y"), y[0]);
  auto session = NewSession(root.ToGraphDef());
  for (bool p : {true, false}) {
    std::vector<Tensor> out;
    Status status = session->Run({{"pred", Tensor::Scalar<bool>(p)}, {"x", Tensor::Scalar<float>(3)}},
                                 {"y"}, {}, &out);
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_EQ(out[0].scalar<float>(), p ? 4.f : -3.f);
  }
}

TEST_F(FunctionCallTest, AnErrorInsideABodyNamesTheBodyNodeAndTheCall) {
  // reshape_to_3(x): Reshape(x, [3]), which fails at run time for other sizes.
  FunctionDef f;
  f.signature.name = "reshape_to_3";
  f.signature.inputs = {test::Arg("x", DT_FLOAT)};
  f.signature.outputs = {test::Arg("y", DT_FLOAT)};
  Tensor shape(DT_INT32, TensorShape({1}));
  shape.flat<int32_t>()[0] = 3;
  f.node_def = {BodyNode("shape", "Const", {}, {{"dtype", DT_INT32}, {"value", shape}}),
                BodyNode("reshape", "Reshape", {"x", "shape:output:0"},
                         {{"T", DT_FLOAT}, {"Tshape", DT_INT32}})};
  f.ret["y"] = "reshape:output:0";
  FunctionDef broken = test::AddOneFunction("broken");
  broken.node_def[1].op = "AddTwoThings";
  GraphDef g;
  g.library.functions = {f, broken};
  g.nodes = {BodyNode("x", "Placeholder", {}, {{"dtype", DT_FLOAT}}),
             CallNode("call", "reshape_to_3", {"x"}, {DT_FLOAT}, {DT_FLOAT}),
             CallNode("bad_call", "broken", {"x"}, {DT_FLOAT}, {DT_FLOAT})};
  auto session = NewSession(g);
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({{"x", Vec({1, 2, 3})}}, {"call"}, {}, &out).ok());
  Status status = session->Run({{"x", Vec({1, 2})}}, {"call"}, {}, &out);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), Code::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("call/reshape"), std::string::npos) << status;
  // An op Weir lacks, found when the step is compiled.
  status = session->Run({{"x", Vec({1})}}, {"bad_call"}, {}, &out);
  ASSERT_FALSE(status.ok());
  for (const char* fragment : {"'bad_call'", "function 'broken'", "body node 'add'",
                               "AddTwoThings"}) {
    EXPECT_NE(status.message().find(fragment), std::string::npos) << fragment << ": " << status;
  }
}

TEST_F(FunctionCallTest, ExtendAddsFunctionsAndARecursiveCallIsAnError) {
  GraphDef first;
  first.library.functions = {test::AddOneFunction()};
  first.nodes = {test::FloatConst("c", 1), CallNode("call", "add_one", {"c"}, {DT_FLOAT}, {DT_FLOAT})};
  auto session = NewSession(first);
  GraphDef more;
  FunctionDef self = test::AddOneFunction("self");
  self.node_def[1] = BodyNode("again", "self", {"x"});
  self.ret["y"] = "again:y:0";
  more.library.functions = {test::AddOneFunction(), test::SquareFunction(), self};
  more.nodes = {BodyNode("sq", "square", {"call:0"}, {{"T", DT_FLOAT}}),
                BodyNode("forever", "self", {"c"})};
  Status status = session->Extend(more);
  ASSERT_TRUE(status.ok()) << status;
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {"sq"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), 4.f);
  status = session->Run({}, {"forever"}, {}, &out);
  EXPECT_EQ(status.code(), Code::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("self -> self"), std::string::npos) << status;
  // A different definition of a function the graph has.
  GraphDef clash;
  clash.library.functions = {test::AddOneFunction()};
  clash.library.functions[0].ret["y"] = "x";
  EXPECT_EQ(session->Extend(clash).code(), Code::kAlreadyExists);
}

}  // namespace
}  // namespace weir
