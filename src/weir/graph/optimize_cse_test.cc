// CSE: which nodes merge, which stay apart, who survives, and that consumers
// (data and control) end up on the survivor.
#include "weir/graph/optimize_cse.h"

#include <gtest/gtest.h>

#include <memory>

#include "weir/base/str_util.h"
#include "weir/graph/graph_constructor.h"
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
  if (op != "Const" && op != "Placeholder" && op != "NoOp" && op != "Cast" &&
      !def.attrs.count("T") && !op.starts_with("Random") && op != "VarHandleOp") {
    def.attrs["T"] = DT_FLOAT;
  }
  return def;
}

NodeDef Input(const std::string& name) {
  return Node(name, "Placeholder", {}, {{"dtype", DT_FLOAT}});
}

NodeDef Constant(const std::string& name, Tensor value) {
  DType dtype = value.dtype();
  return Node(name, "Const", {}, {{"dtype", dtype}, {"value", std::move(value)}});
}

class CseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterAllOps();
    RegisterAllKernels();
  }

  // Imports `nodes` and runs CSE; the number of nodes it removed.
  int Cse(std::vector<NodeDef> nodes, const std::unordered_set<std::string>* protect = nullptr) {
    graph_ = std::make_unique<Graph>();
    GraphDef def;
    def.nodes = std::move(nodes);
    Status imported = ImportGraphDef(def, graph_.get());
    EXPECT_TRUE(imported.ok()) << imported;
    changes_.clear();
    StatusOr<int> merged =
        EliminateCommonSubexpressions(graph_.get(), {.protected_nodes = protect}, &changes_);
    EXPECT_TRUE(merged.ok()) << merged.status();
    return merged.ok() ? *merged : -1;
  }

  // The name of the node feeding data input `slot` of `name`.
  std::string InputOf(const std::string& name, int slot) {
    const ::weir::Node* node = graph_->FindNode(name);
    if (node == nullptr || node->input_edge(slot) == nullptr) return "<none>";
    return node->input_edge(slot)->src()->name();
  }

  bool Has(const std::string& name) { return graph_->FindNode(name) != nullptr; }

  std::unique_ptr<Graph> graph_;
  std::vector<std::string> changes_;
};

TEST_F(CseTest, DuplicateChainsMergeInOnePass) {
  ASSERT_EQ(Cse({Input("x"), Input("y"), Node("a1", "Add", {"x", "y"}),
                 Node("a2", "Add", {"x", "y"}), Node("r1", "Relu", {"a1"}),
                 Node("r2", "Relu", {"a2"}), Node("out", "Sub", {"r1", "r2"})}),
            2);
  EXPECT_TRUE(Has("a1"));
  EXPECT_TRUE(Has("r1"));
  EXPECT_FALSE(Has("a2"));
  EXPECT_FALSE(Has("r2"));
  EXPECT_EQ(InputOf("r1", 0), "a1");
  EXPECT_EQ(InputOf("out", 0), "r1");
  EXPECT_EQ(InputOf("out", 1), "r1");
  EXPECT_EQ(graph_->num_nodes(), 5);
  ASSERT_EQ(changes_.size(), 2u);
  EXPECT_NE(changes_[0].find("'a2'"), std::string::npos) << changes_[0];
}

TEST_F(CseTest, TheSurvivorIsTheLowestIdWhateverTheVisitOrder) {
  // Three equal nodes; whichever the topological walk meets first, the
  // one created first (lowest id) is kept.
  for (int rotate = 0; rotate < 3; ++rotate) {
    std::vector<NodeDef> adds = {Node("p", "Add", {"x", "y"}), Node("q", "Add", {"x", "y"}),
                                 Node("r", "Add", {"x", "y"})};
    std::rotate(adds.begin(), adds.begin() + rotate, adds.end());
    std::vector<NodeDef> nodes = {Input("x"), Input("y")};
    nodes.insert(nodes.end(), adds.begin(), adds.end());
    nodes.push_back(Node("n", "AddN", {"p", "q", "r"}, {{"N", int64_t{3}}}));
    ASSERT_EQ(Cse(nodes), 2);
    const std::string first = adds[0].name;
    EXPECT_TRUE(Has(first)) << "rotation " << rotate;
    for (int i = 0; i < 3; ++i) EXPECT_EQ(InputOf("n", i), first);
  }
}

TEST_F(CseTest, DifferentAttrsInputsOrDevicesStayApart) {
  NodeDef d1 = Node("d1", "Neg", {"x"});
  d1.device = "/device:CPU:0";
  NodeDef d2 = Node("d2", "Neg", {"x"});
  d2.device = "/device:CPU:1";
  EXPECT_EQ(Cse({Input("x"), Input("y"),
                 // Add is commutative; CSE does not try to know that.
                 Node("a1", "Add", {"x", "y"}), Node("a2", "Add", {"y", "x"}),
                 Node("n1", "Neg", {"x"}), Node("n2", "Neg", {"y"}), d1, d2,
                 Node("c1", "Cast", {"x"}, {{"SrcT", DT_FLOAT}, {"DstT", DT_INT32}}),
                 Node("c2", "Cast", {"x"}, {{"SrcT", DT_FLOAT}, {"DstT", DT_DOUBLE}}),
                 Constant("axis", Tensor::Scalar<int32_t>(0)),
                 Node("s1", "Sum", {"x", "axis"}, {{"keep_dims", true}}),
                 Node("s2", "Sum", {"x", "axis"}, {{"keep_dims", false}})}),
            0);
}

TEST_F(CseTest, AssignedDevicesMustMatchToo) {
  graph_ = std::make_unique<Graph>();
  GraphDef def;
  def.nodes = {Input("x"), Node("n1", "Neg", {"x"}), Node("n2", "Neg", {"x"})};
  ASSERT_TRUE(ImportGraphDef(def, graph_.get()).ok());
  graph_->FindNode("n1")->set_assigned_device("/job:localhost/replica:0/task:0/device:CPU:0");
  graph_->FindNode("n2")->set_assigned_device("/job:localhost/replica:0/task:0/device:CPU:1");
  StatusOr<int> merged = EliminateCommonSubexpressions(graph_.get());
  ASSERT_TRUE(merged.ok());
  EXPECT_EQ(*merged, 0);
}

TEST_F(CseTest, ConstantsMergeOnlyWithBitIdenticalValues) {
  std::vector<float> big(10000, 1.5f);
  std::vector<float> big_last_differs = big;
  big_last_differs.back() = 2.5f;
  std::vector<float> big_middle_differs = big;
  big_middle_differs[5000] = 2.5f;  // outside the hashed sample: equality decides
  EXPECT_EQ(
      Cse({Constant("one", Tensor::Scalar<float>(1)),
           Constant("one_again", Tensor::Scalar<float>(1)),
           Constant("zero", Tensor::Scalar<float>(0.f)),
           Constant("minus_zero", Tensor::Scalar<float>(-0.f)),
           Constant("one_int", Tensor::Scalar<int32_t>(1)),
           Constant("one_vector", Tensor::FromVector<float>({1})),
           Constant("big", Tensor::FromVector(big)), Constant("big_again", Tensor::FromVector(big)),
           Constant("big_last", Tensor::FromVector(big_last_differs)),
           Constant("big_middle", Tensor::FromVector(big_middle_differs))}),
      2);
  EXPECT_FALSE(Has("one_again"));
  EXPECT_FALSE(Has("big_again"));
  EXPECT_TRUE(Has("zero") && Has("minus_zero") && Has("one_int") && Has("one_vector") &&
              Has("big_last") && Has("big_middle"));
}

TEST_F(CseTest, ControlInputsMustBeTheSameSetAndControlConsumersMove) {
  NodeDef n1 = Node("n1", "Neg", {"x", "^g1", "^g2"});
  NodeDef n2 = Node("n2", "Neg", {"x", "^g2", "^g1"});  // same set, other order
  NodeDef n3 = Node("n3", "Neg", {"x", "^g1"});
  NodeDef after = Node("after", "NoOp", {"^n2"});
  ASSERT_EQ(Cse({Input("x"), Node("g1", "NoOp", {}), Node("g2", "NoOp", {}), n1, n2, n3,
                 Node("use2", "Relu", {"n2"}), Node("use3", "Relu", {"n3"}), after}),
            1);
  EXPECT_FALSE(Has("n2"));
  EXPECT_TRUE(Has("n3"));
  EXPECT_EQ(InputOf("use2", 0), "n1");
  std::vector<const Edge*> control = graph_->FindNode("after")->control_inputs();
  ASSERT_EQ(control.size(), 1u);
  EXPECT_EQ(control[0]->src()->name(), "n1");
}

TEST_F(CseTest, StatefulRandomPlaceholderAndProtectedNodesNeverMerge) {
  const Tensor shape = Tensor::FromVector<int32_t>({2});
  AttrMap random = {
      {"dtype", DT_FLOAT}, {"T", DT_INT32}, {"seed", int64_t{1}}, {"seed2", int64_t{2}}};
  AttrMap var = {{"dtype", DT_FLOAT}, {"shape", PartialShape({2})}, {"shared_name", "v"}};
  std::unordered_set<std::string> protect = {"p2"};
  EXPECT_EQ(
      Cse({Constant("shape", shape), Node("r1", "RandomUniform", {"shape"}, random),
           Node("r2", "RandomUniform", {"shape"}, random), Node("v1", "VarHandleOp", {}, var),
           Node("v2", "VarHandleOp", {}, var), Input("x1"), Input("x2"), Node("p1", "Neg", {"x1"}),
           Node("p2", "Neg", {"x1"}), Node("g1", "NoOp", {"^p1"}), Node("g2", "NoOp", {"^p1"})},
          &protect),
      0);
  EXPECT_EQ(graph_->num_nodes(), 11);
}

TEST_F(CseTest, EveryRandomOpIsDeclaredStateful) {
  RegisterAllOps();
  RegisterAllKernels();
  int random_ops = 0;
  for (const OpDef* op : OpRegistry::Global()->ListOps()) {
    const std::string& name = op->name;
    if (name.starts_with("Stateless")) continue;  // seeded by an input: a pure function
    // The derivative of a gamma sample with respect to its alpha: a pure
    // function of both (TensorFlow's is not stateful either).
    if (name == "RandomGammaGrad") continue;
    if (name.starts_with("Random") || name.starts_with("Truncated") ||
        name.starts_with("Multinomial") || name.find("Random") != std::string::npos) {
      ++random_ops;
      EXPECT_TRUE(op->is_stateful) << name << " draws random numbers but is not stateful";
    }
  }
  EXPECT_GE(random_ops, 5);
}

TEST_F(CseTest, ChangesAreCapped) {
  std::vector<NodeDef> nodes;
  for (int i = 0; i < 80; ++i) {
    nodes.push_back(Constant(StrCat("c", i), Tensor::Scalar<float>(7)));
  }
  ASSERT_EQ(Cse(nodes), 79);
  ASSERT_EQ(changes_.size(), 51u);
  EXPECT_EQ(changes_.back(), "... and 29 more merges");
  EXPECT_TRUE(Has("c0"));
}

TEST_F(CseTest, LongDuplicateChainsStayLinear) {
  // Two copies of a 20000-node chain collapse into one; a quadratic pass
  // would be visibly slow here (no timing asserted).
  std::vector<NodeDef> nodes = {Input("x")};
  for (int copy = 0; copy < 2; ++copy) {
    std::string last = "x";
    for (int i = 0; i < 20000; ++i) {
      std::string name = StrCat("n", copy, "_", i);
      nodes.push_back(Node(name, i % 2 ? "Neg" : "Relu", {last}));
      last = name;
    }
  }
  EXPECT_EQ(Cse(nodes), 20000);
  EXPECT_EQ(graph_->num_nodes(), 20001);
}

}  // namespace
}  // namespace weir
