// Graph mutation: edge bookkeeping under removal, control-edge dedup, slot
// lookups, roll-back, and the linear cost of extreme fan-in and fan-out
// (which were quadratic: a scan per control edge added, a find-and-erase per
// edge removed). The sizes here take seconds with linear code and many
// minutes with quadratic code; the test timeout is the check.
#include "weir/graph/graph.h"

#include <gtest/gtest.h>

#include "weir/ops/all_ops.h"

namespace weir {
namespace {

constexpr int kWide = 200000;

class GraphTest : public ::testing::Test {
 protected:
  void SetUp() override { RegisterAllOps(); }

  Node* Add(const std::string& name, const std::string& op, AttrMap attrs = {}) {
    NodeDef def;
    def.name = name;
    def.op = op;
    def.attrs = std::move(attrs);
    StatusOr<Node*> node = graph_.AddNode(std::move(def));
    EXPECT_TRUE(node.ok()) << node.status();
    return node.ok() ? *node : nullptr;
  }
  Node* Const(const std::string& name) {
    return Add(name, "Const", {{"dtype", DT_FLOAT}, {"value", Tensor::Scalar<float>(1)}});
  }
  Node* Unary(const std::string& name, const std::string& op = "Neg") {
    return Add(name, op, {{"T", DT_FLOAT}});
  }

  // The inputs ToGraphDef writes for `name`.
  std::vector<std::string> Inputs(const std::string& name) const {
    for (const NodeDef& def : graph_.ToGraphDef().nodes) {
      if (def.name == name) return def.inputs;
    }
    return {};
  }

  Graph graph_;
};

TEST_F(GraphTest, ControlEdgesAreDeduplicatedBelowAndAboveTheScanLimit) {
  Node* dst = Add("dst", "NoOp");
  std::vector<Node*> srcs;
  for (int i = 0; i < 40; ++i) srcs.push_back(Add("s" + std::to_string(i), "NoOp"));
  for (int round = 0; round < 2; ++round) {
    for (Node* src : srcs) graph_.AddControlEdge(src, dst);
  }
  EXPECT_EQ(dst->in_edges().size(), 40u);
  EXPECT_EQ(graph_.num_edges(), 40);
  // A removed control edge can be added again, once.
  const Edge* e = dst->in_edges()[3];
  Node* src = e->src();
  graph_.RemoveEdge(e);
  EXPECT_EQ(dst->in_edges().size(), 39u);
  const Edge* again = graph_.AddControlEdge(src, dst);
  EXPECT_EQ(graph_.AddControlEdge(src, dst), again);
  EXPECT_EQ(dst->in_edges().size(), 40u);
}

TEST_F(GraphTest, RemovalKeepsPositionsAndSlotsConsistent) {
  Node* a = Const("a");
  Node* b = Const("b");
  Node* add = Add("add", "Add", {{"T", DT_FLOAT}});
  std::vector<Node*> negs;
  for (int i = 0; i < 10; ++i) {
    negs.push_back(Unary("n" + std::to_string(i)));
    graph_.AddEdge(a, 0, negs.back(), 0);
  }
  graph_.AddEdge(a, 0, add, 0);
  graph_.AddEdge(b, 0, add, 1);
  graph_.AddControlEdge(negs[0], add);
  graph_.AddControlEdge(negs[1], add);
  EXPECT_EQ(add->input_edge(1)->src(), b);
  EXPECT_EQ(add->input_edge(2), nullptr);
  EXPECT_EQ(add->input_edge(-1), nullptr);
  // Remove from the middle of a's out-edges and of add's in-edges.
  graph_.RemoveEdge(negs[4]->input_edge(0));
  graph_.RemoveEdge(add->input_edge(0));
  EXPECT_EQ(a->out_edges().size(), 9u);
  EXPECT_EQ(add->input_edge(0), nullptr);
  EXPECT_EQ(add->input_edge(1)->src(), b);
  for (const Edge* e : a->out_edges()) EXPECT_EQ(e->src(), a);
  // Reconnect slot 0; ToGraphDef lists data by slot, then controls as added.
  graph_.AddEdge(b, 0, add, 0);
  EXPECT_EQ(Inputs("add"), (std::vector<std::string>{"b", "b", "^n0", "^n1"}));
  graph_.RemoveNode(negs[7]);
  EXPECT_EQ(a->out_edges().size(), 8u);
  EXPECT_EQ(graph_.num_edges(), 8 + 2 + 2);
}

TEST_F(GraphTest, RollBackRestoresTheGraphExactly) {
  Node* a = Const("a");
  Node* n = Unary("n");
  graph_.AddEdge(a, 0, n, 0);
  GraphDef before = graph_.ToGraphDef();
  Graph::Mark mark = graph_.GetMark();
  Node* m = Unary("m");
  graph_.AddEdge(a, 0, m, 0);
  Node* noop = Add("noop", "NoOp");
  for (int i = 0; i < 30; ++i) graph_.AddControlEdge(Add("c" + std::to_string(i), "NoOp"), noop);
  graph_.AddControlEdge(a, noop);
  graph_.RollBackTo(mark);
  EXPECT_EQ(graph_.num_nodes(), 2);
  EXPECT_EQ(graph_.num_edges(), 1);
  EXPECT_EQ(graph_.num_node_ids(), 2);
  EXPECT_EQ(graph_.FindNode("m"), nullptr);
  ASSERT_EQ(a->out_edges().size(), 1u);
  EXPECT_EQ(a->out_edges()[0]->dst(), n);
  EXPECT_EQ(graph_.ToGraphDef().nodes.size(), before.nodes.size());
  // The names are free again.
  EXPECT_NE(Unary("m"), nullptr);
}

TEST_F(GraphTest, ToGraphDefFromAnIdHasOnlyTheNewerNodes) {
  Node* a = Const("a");
  Node* n = Unary("n");
  graph_.AddEdge(a, 0, n, 0);
  const int start = graph_.num_node_ids();
  Node* m = Unary("m");
  graph_.AddEdge(n, 0, m, 0);
  graph_.AddControlEdge(a, m);
  GraphDef tail = graph_.ToGraphDef(start);
  ASSERT_EQ(tail.nodes.size(), 1u);
  EXPECT_EQ(tail.nodes[0].name, "m");
  // Inputs still name the older nodes, so the tail extends a session that has them.
  EXPECT_EQ(tail.nodes[0].inputs, (std::vector<std::string>{"n", "^a"}));
  EXPECT_EQ(graph_.ToGraphDef(0).nodes.size(), 3u);
  EXPECT_TRUE(graph_.ToGraphDef(graph_.num_node_ids()).nodes.empty());
}

TEST_F(GraphTest, OneNodeWithManyControlInputsIsLinear) {
  Node* sink = Add("sink", "NoOp");
  std::vector<Node*> srcs;
  srcs.reserve(kWide);
  for (int i = 0; i < kWide; ++i) srcs.push_back(Add("s" + std::to_string(i), "NoOp"));
  for (Node* src : srcs) graph_.AddControlEdge(src, sink);
  for (Node* src : srcs) graph_.AddControlEdge(src, sink);  // duplicates: no-ops
  EXPECT_EQ(graph_.num_edges(), kWide);
  // Remove every other one: the rest keep their insertion order.
  std::vector<const Edge*> odd;
  for (const Edge* e : sink->in_edges()) {
    if (e->src()->id() % 2 == 1) odd.push_back(e);
  }
  for (const Edge* e : odd) graph_.RemoveEdge(e);
  EXPECT_EQ(sink->in_edges().size(), static_cast<size_t>(kWide - odd.size()));
  std::vector<std::string> inputs = Inputs("sink");
  ASSERT_EQ(inputs.size(), sink->in_edges().size());
  EXPECT_EQ(inputs[0], "^s1");  // s0 has id 1
  EXPECT_EQ(inputs[1], "^s3");
  EXPECT_EQ(sink->control_inputs().size(), inputs.size());
  graph_.RemoveNode(sink);
  EXPECT_EQ(graph_.num_edges(), 0);
}

TEST_F(GraphTest, OneOutputWithManyConsumersIsLinear) {
  Node* a = Const("a");
  std::vector<Node*> negs;
  negs.reserve(kWide);
  for (int i = 0; i < kWide; ++i) {
    negs.push_back(Unary("n" + std::to_string(i)));
    graph_.AddEdge(a, 0, negs.back(), 0);
  }
  Node* b = Const("b");
  // What the session does with a fed tensor: move every consumer over.
  std::vector<const Edge*> out(a->out_edges().begin(), a->out_edges().end());
  for (const Edge* e : out) {
    Node* dst = e->dst();
    graph_.RemoveEdge(e);
    graph_.AddEdge(b, 0, dst, 0);
  }
  EXPECT_TRUE(a->out_edges().empty());
  EXPECT_EQ(b->out_edges().size(), static_cast<size_t>(kWide));
  EXPECT_EQ(negs[12345]->input_edge(0)->src(), b);
  Graph copy;
  copy.CopyFrom(graph_);
  EXPECT_EQ(copy.num_edges(), kWide);
  graph_.RemoveNode(b);
  EXPECT_EQ(graph_.num_edges(), 0);
}

}  // namespace
}  // namespace weir

namespace weir {
namespace {

// CopyFrom shares node defs copy-on-write: editing either graph's node must
// leave the other's as it was.
TEST_F(GraphTest, CopiesShareDefsButEditsStayApart) {
  Const("c");
  Graph copy;
  copy.CopyFrom(graph_);
  Node* original = graph_.FindNode("c");
  Node* copied = copy.FindNode("c");
  ASSERT_NE(copied, nullptr);
  EXPECT_EQ(&original->def(), &copied->def()) << "an unedited def is shared";

  (*copied->mutable_attrs())["value"] = Tensor::Scalar<float>(2);
  copied->set_requested_device("/device:CPU:1");
  EXPECT_EQ(original->def().attrs.at("value").tensor().flat<float>()[0], 1.f);
  EXPECT_EQ(original->requested_device(), "");
  EXPECT_EQ(copied->def().attrs.at("value").tensor().flat<float>()[0], 2.f);
  EXPECT_EQ(copied->requested_device(), "/device:CPU:1");

  original->set_requested_device("/device:CPU:2");
  EXPECT_EQ(copied->requested_device(), "/device:CPU:1");
}

}  // namespace
}  // namespace weir
