// TensorFlow 1 reference-variable graphs, rewritten on import: names kept,
// handles colocated with what used them, errors for what has no resource
// form. (Running such graphs against TensorFlow: tests/tf_compat.)
#include "weir/graph/ref_variables.h"

#include <gtest/gtest.h>

#include "weir/base/str_util.h"
#include "weir/framework/kernel_registry.h"
#include "weir/graph/graph_constructor.h"
#include "weir/graph/placer.h"
#include "weir/graph/subgraph.h"
#include "weir/kernels/all_kernels.h"
#include "weir/ops/all_ops.h"

namespace weir {
namespace {

NodeDef Node(const std::string& name, const std::string& op, std::vector<std::string> inputs,
             AttrMap attrs = {}) {
  NodeDef def;
  def.name = name;
  def.op = op;
  def.inputs = std::move(inputs);
  def.attrs = std::move(attrs);
  return def;
}

NodeDef Variable(const std::string& name, const std::string& device = "") {
  NodeDef def = Node(name, "VariableV2", {},
                     {{"dtype", DT_FLOAT},
                      {"shape", PartialShape({2})},
                      {"container", ""},
                      {"shared_name", ""},
                      {"_class", std::vector<std::string>{"loc:@" + name}}});
  def.device = device;
  return def;
}

NodeDef Const(const std::string& name, float value = 1) {
  return Node(name, "Const", {}, {{"dtype", DT_FLOAT}, {"value", Tensor::Scalar<float>(value)}});
}

NodeDef Assign(const std::string& name, const std::string& ref, const std::string& value) {
  return Node(name, "Assign", {ref, value},
              {{"T", DT_FLOAT}, {"use_locking", true}, {"validate_shape", true}});
}

std::vector<std::string> Inputs(const Graph& graph, const std::string& name) {
  const weir::Node* node = graph.FindNode(name);
  std::vector<std::string> inputs;
  for (const Edge* e : node->data_inputs()) {
    inputs.push_back(StrCat(e->src()->name(), ":", e->src_output()));
  }
  for (const Edge* e : node->control_inputs()) inputs.push_back("^" + e->src()->name());
  return inputs;
}

class RefVariablesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterAllOps();
    RegisterAllKernels();
  }

  Status Import(std::vector<NodeDef> nodes) {
    GraphDef def;
    def.nodes = std::move(nodes);
    return ImportGraphDef(def, &graph_);
  }
  const std::string& Op(const std::string& name) {
    const weir::Node* node = graph_.FindNode(name);
    EXPECT_NE(node, nullptr) << name;
    static const std::string kMissing = "(missing)";
    return node == nullptr ? kMissing : node->type_string();
  }
  void ExpectError(std::vector<NodeDef> nodes, std::vector<std::string> mentions) {
    Status status = Import(std::move(nodes));
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.code(), Code::kInvalidArgument) << status;
    for (const std::string& m : mentions) {
      EXPECT_NE(status.message().find(m), std::string::npos)
          << "'" << m << "' not in: " << status.message();
    }
    EXPECT_EQ(graph_.num_nodes(), 0);
  }

  Graph graph_;
};

TEST_F(RefVariablesTest, VariableAssignAndReadKeepTheirNames) {
  NodeDef read = Node("v/read", "Identity", {"v"}, {{"T", DT_FLOAT}});
  ASSERT_TRUE(Import({Variable("v"), Const("init"), Assign("v/Assign", "v", "init"), read,
                      Node("init_all", "NoOp", {"^v/Assign"})})
                  .ok());
  EXPECT_EQ(Op("v/_handle"), "VarHandleOp");
  EXPECT_EQ(graph_.FindNode("v/_handle")->def().attrs.at("shared_name").s(), "v");
  EXPECT_EQ(graph_.FindNode("v/_handle")->def().attrs.at("shape").shape(), PartialShape({2}));
  EXPECT_EQ(Op("v"), "ReadVariableOp");
  EXPECT_EQ(Inputs(graph_, "v"), std::vector<std::string>{"v/_handle:0"});
  EXPECT_EQ(graph_.FindNode("v")->output_type(0), DT_FLOAT);
  EXPECT_EQ(graph_.FindNode("v")->output_shape(0), PartialShape({2}));
  EXPECT_EQ(Op("v/Assign/_update"), "AssignVariableOp");
  EXPECT_EQ(Inputs(graph_, "v/Assign/_update"),
            (std::vector<std::string>{"v/_handle:0", "init:0"}));
  EXPECT_EQ(graph_.FindNode("v/Assign/_update")->def().attrs.at("dtype").type(), DT_FLOAT);
  // The Assign's output is the new value: a read after the update.
  EXPECT_EQ(Op("v/Assign"), "ReadVariableOp");
  EXPECT_EQ(Inputs(graph_, "v/Assign"),
            (std::vector<std::string>{"v/_handle:0", "^v/Assign/_update"}));
  EXPECT_EQ(Inputs(graph_, "v/read"), std::vector<std::string>{"v:0"});
  EXPECT_EQ(Inputs(graph_, "init_all"), std::vector<std::string>{"^v/Assign"});
}

TEST_F(RefVariablesTest, ControlInputOnAVariableWaitsForItsHandle) {
  // Running VariableV2 never fails; a read of an uninitialized variable does.
  ASSERT_TRUE(Import({Variable("v"), Node("after", "NoOp", {"^v"})}).ok());
  EXPECT_EQ(Inputs(graph_, "after"), std::vector<std::string>{"^v/_handle"});
}

TEST_F(RefVariablesTest, ApplyScatterAndInitializedCheckUseTheHandle) {
  NodeDef apply = Node("sgd", "ApplyGradientDescent", {"v", "lr", "grad", "^other"},
                       {{"T", DT_FLOAT}, {"use_locking", false}});
  NodeDef scatter = Node("scatter", "ScatterUpdate", {"v", "indices", "updates"},
                         {{"T", DT_FLOAT}, {"Tindices", DT_INT32}, {"use_locking", true}});
  NodeDef indices = Node("indices", "Const", {},
                         {{"dtype", DT_INT32}, {"value", Tensor::FromVector<int32_t>({1})}});
  NodeDef updates = Node("updates", "Const", {},
                         {{"dtype", DT_FLOAT}, {"value", Tensor::FromVector<float>({5})}});
  NodeDef initialized = Node("check", "IsVariableInitialized", {"v"}, {{"dtype", DT_FLOAT}});
  ASSERT_TRUE(Import({Variable("v"), Const("lr"), Const("grad"), Node("other", "NoOp", {}), apply,
                      indices, updates, scatter, initialized})
                  .ok());
  EXPECT_EQ(Op("sgd/_update"), "ResourceApplyGradientDescent");
  EXPECT_EQ(Inputs(graph_, "sgd/_update"),
            (std::vector<std::string>{"v/_handle:0", "lr:0", "grad:0", "^other"}));
  EXPECT_FALSE(graph_.FindNode("sgd/_update")->def().attrs.at("use_locking").b());
  EXPECT_EQ(Op("scatter/_update"), "ResourceScatterUpdate");
  EXPECT_EQ(graph_.FindNode("scatter/_update")->def().attrs.at("dtype").type(), DT_FLOAT);
  EXPECT_EQ(graph_.FindNode("scatter/_update")->def().attrs.count("use_locking"), 0u);
  EXPECT_EQ(Op("check"), "VarIsInitializedOp");
  EXPECT_EQ(Inputs(graph_, "check"), std::vector<std::string>{"v/_handle:0"});
  EXPECT_EQ(graph_.FindNode("check")->output_type(0), DT_BOOL);
}

TEST_F(RefVariablesTest, ReferenceThroughAnUpdateRunsAfterIt) {
  // assign_add(assign(v, 1), 1): the second update takes the first's output.
  NodeDef add = Node("add", "AssignAdd", {"set", "one"}, {{"T", DT_FLOAT}});
  ASSERT_TRUE(Import({Variable("v"), Const("one"), Assign("set", "v", "one"), add}).ok());
  EXPECT_EQ(Op("add/_update"), "AssignAddVariableOp");
  EXPECT_EQ(Inputs(graph_, "add/_update"),
            (std::vector<std::string>{"v/_handle:0", "one:0", "^set"}));
}

TEST_F(RefVariablesTest, LongChainOfUpdatesResolvesEachReferenceOnce) {
  // assign_add(assign_add(...(v))): each update reaches the handle through
  // all those before it; remembered references keep that linear.
  const int n = 20000;
  std::vector<NodeDef> nodes = {Variable("v"), Const("one")};
  for (int i = 0; i < n; ++i) {
    nodes.push_back(Node(StrCat("add", i), "AssignAdd",
                         {i == 0 ? std::string("v") : StrCat("add", i - 1), "one"},
                         {{"T", DT_FLOAT}}));
  }
  ASSERT_TRUE(Import(std::move(nodes)).ok());
  EXPECT_EQ(Inputs(graph_, StrCat("add", n - 1, "/_update")),
            (std::vector<std::string>{"v/_handle:0", "one:0", StrCat("^add", n - 2)}));
}

TEST_F(RefVariablesTest, CarriersForwardTheHandleAndValueConsumersRead) {
  NodeDef enter = Node("loop/RefEnter", "RefEnter", {"v"},
                       {{"T", DT_FLOAT},
                        {"frame_name", "loop"},
                        {"is_constant", true},
                        {"parallel_iterations", 10}});
  NodeDef add =
      Node("loop/AssignAdd", "AssignAdd", {"loop/RefEnter", "loop/one"}, {{"T", DT_FLOAT}});
  NodeDef one = Node("loop/one", "Enter", {"one"},
                     {{"T", DT_FLOAT}, {"frame_name", "loop"}, {"is_constant", true}});
  NodeDef value = Node("loop/value", "Neg", {"loop/RefEnter"}, {{"T", DT_FLOAT}});
  NodeDef identity = Node("same", "RefIdentity", {"v"}, {{"T", DT_FLOAT}});
  NodeDef twice = Node("twice", "Add", {"same", "same:0"}, {{"T", DT_FLOAT}});
  ASSERT_TRUE(Import({Variable("v"), Const("one"), one, enter, add, value, identity, twice}).ok());
  EXPECT_EQ(Op("loop/RefEnter"), "Enter");
  EXPECT_EQ(graph_.FindNode("loop/RefEnter")->output_type(0), DT_RESOURCE);
  EXPECT_EQ(Inputs(graph_, "loop/AssignAdd/_update"),
            (std::vector<std::string>{"loop/RefEnter:0", "loop/one:0"}));
  EXPECT_EQ(Inputs(graph_, "loop/AssignAdd"),
            (std::vector<std::string>{"loop/RefEnter:0", "^loop/AssignAdd/_update"}));
  // A value consumer of a carrier reads the variable through it.
  EXPECT_EQ(Op("loop/RefEnter/_read"), "ReadVariableOp");
  EXPECT_EQ(Inputs(graph_, "loop/value"), std::vector<std::string>{"loop/RefEnter/_read:0"});
  EXPECT_EQ(Op("same"), "Identity");
  EXPECT_EQ(Inputs(graph_, "twice"), (std::vector<std::string>{"same/_read:0", "same/_read:0"}));
}

TEST_F(RefVariablesTest, GeneratedNamesDoNotCollide) {
  ASSERT_TRUE(Import({Variable("v"), Const("v/_handle"), Const("init"),
                      Assign("v/Assign", "v", "init"), Const("v/Assign/_update")})
                  .ok());
  EXPECT_EQ(Op("v/_handle"), "Const");
  EXPECT_EQ(Op("v/_handle_1"), "VarHandleOp");
  EXPECT_EQ(Op("v/Assign/_update"), "Const");
  EXPECT_EQ(Op("v/Assign/_update_1"), "AssignVariableOp");
}

TEST_F(RefVariablesTest, HandleReadAndUpdatesGoWhereTheVariableWas) {
  NodeDef assign = Assign("v/Assign", "v", "init");
  assign.attrs["_class"] = std::vector<std::string>{"loc:@v"};
  NodeDef user = Node("user", "Neg", {"v/Assign"}, {{"T", DT_FLOAT}});
  ASSERT_TRUE(Import({Variable("v", "/device:CPU:1"), Const("init"), assign, user}).ok());
  EXPECT_EQ(graph_.FindNode("v/_handle")->requested_device(), "/device:CPU:1");
  std::vector<DeviceInfo> devices;
  for (int i = 0; i < 3; ++i) {
    devices.push_back({StrCat("/job:localhost/replica:0/task:0/device:CPU:", i), "CPU"});
  }
  PlacementOptions options;
  options.kernels = KernelRegistry::Global();
  options.simulate = false;
  ASSERT_TRUE(PlaceGraph(&graph_, devices, options).ok());
  for (const char* name : {"v/_handle", "v", "v/Assign/_update", "v/Assign"}) {
    EXPECT_EQ(graph_.FindNode(name)->assigned_device(), devices[1].name) << name;
  }
}

TEST_F(RefVariablesTest, ExtendUsesTheHandleOfAnImportedVariable) {
  ASSERT_TRUE(Import({Variable("v"), Const("init")}).ok());
  ASSERT_TRUE(Import({Assign("later", "v", "init")}).ok());
  EXPECT_EQ(Inputs(graph_, "later/_update"), (std::vector<std::string>{"v/_handle:0", "init:0"}));
}

// TF1 programs fetch the global step with the train op and print the
// increment: a fetched variable reads after the step's updates of it.
TEST_F(RefVariablesTest, FetchedVariableReadsAfterTheStepsUpdates) {
  NodeDef inc = Node("inc", "AssignAdd", {"v", "one"}, {{"T", DT_FLOAT}, {"use_locking", false}});
  NodeDef other =
      Node("other", "AssignAdd", {"w", "one"}, {{"T", DT_FLOAT}, {"use_locking", false}});
  NodeDef read = Node("v/read", "Identity", {"v"}, {{"T", DT_FLOAT}});
  ASSERT_TRUE(Import({Variable("v"), Variable("w"), Const("one"), inc, other, read}).ok());

  StepSignature signature;
  signature.fetches = {"v:0", "v/read:0", "inc:0"};
  signature.targets = {"inc", "other"};
  StatusOr<RewrittenStep> step = RewriteForStep(&graph_, signature);
  ASSERT_TRUE(step.ok()) << step.status();
  auto fetched = [&](int index) -> const weir::Node* {
    for (const weir::Node* node : graph_.nodes()) {
      if (node->type_string() == "_Retval" && node->def().attrs.at("index").i() == index) {
        return node->input_edge(0)->src();
      }
    }
    return nullptr;
  };
  const weir::Node* v = fetched(0);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->name(), "v/_at_step_end");
  EXPECT_EQ(v->type_string(), "ReadVariableOp");
  // After v's update only (w's is another variable's).
  EXPECT_EQ(Inputs(graph_, v->name()), (std::vector<std::string>{"v/_handle:0", "^inc/_update"}));
  EXPECT_EQ(fetched(1)->name(), "v/read");  // a value computed from it: TF reads it unordered
  EXPECT_EQ(fetched(2)->name(), "inc/_at_step_end");  // an update's output is the reference too
  EXPECT_TRUE(step->protected_nodes.count("v/_at_step_end"));

  // With no update of the variable in the step, the fetch stays the plain read.
  Graph alone;
  GraphDef def;
  def.nodes = {Variable("v"), Const("one"), Node("x", "Identity", {"v"}, {{"T", DT_FLOAT}})};
  ASSERT_TRUE(ImportGraphDef(def, &alone).ok());
  signature.fetches = {"v:0"};
  signature.targets = {"x"};
  ASSERT_TRUE(RewriteForStep(&alone, signature).ok());
  EXPECT_EQ(alone.FindNode("v/_at_step_end"), nullptr);
}

TEST_F(RefVariablesTest, RefOpsWithoutAResourceFormAreErrors) {
  NodeDef ftrl = Node("ftrl", "ApplyAdagradDA", {"v", "init"}, {{"T", DT_FLOAT}});
  ExpectError({Variable("v"), Const("init"), ftrl},
              {"'ftrl'", "ApplyAdagradDA", "Weir has no ResourceApplyAdagradDA"});
  ExpectError(
      {Node("tmp", "TemporaryVariable", {}, {{"dtype", DT_FLOAT}, {"shape", PartialShape({1})}})},
      {"'tmp'", "TemporaryVariable", "no temporary variables"});
}

TEST_F(RefVariablesTest, ValuesWhereReferencesBelongAreErrors) {
  ExpectError({Const("c"), Const("init"), Assign("a", "c", "init")},
              {"input 0", "'a' (Assign)", "'c' (Const) gives a value"});
  ExpectError({Const("init"), Assign("a", "missing", "init")},
              {"'a' (Assign)", "no node is named 'missing'"});
  // Two carriers forwarding each other reach no variable.
  NodeDef x = Node("x", "RefIdentity", {"y"}, {{"T", DT_FLOAT}});
  NodeDef y = Node("y", "RefIdentity", {"x"}, {{"T", DT_FLOAT}});
  ExpectError({x, y}, {"cycle"});
  ExpectError({Variable("v"), Const("init"), Assign("a", "v:1", "init")},
              {"'a' (Assign)", "has one output"});
}

}  // namespace
}  // namespace weir
