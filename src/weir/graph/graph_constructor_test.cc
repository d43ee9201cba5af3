// The import test matrix: every malformed GraphDef is an error with the
// right code that names the offending node.
#include "weir/graph/graph_constructor.h"

#include <gtest/gtest.h>

#include "weir/graph/algorithm.h"
#include "weir/ops/all_ops.h"

namespace weir {
namespace {

class ImportTest : public ::testing::Test {
 protected:
  void SetUp() override { RegisterAllOps(); }

  static NodeDef Const(const std::string& name, float value) {
    NodeDef def;
    def.name = name;
    def.op = "Const";
    def.attrs["dtype"] = DT_FLOAT;
    def.attrs["value"] = Tensor::Scalar<float>(value);
    return def;
  }
  static NodeDef Binary(const std::string& op, const std::string& name, const std::string& a,
                        const std::string& b, DType dtype = DT_FLOAT) {
    NodeDef def;
    def.name = name;
    def.op = op;
    def.inputs = {a, b};
    def.attrs["T"] = dtype;
    return def;
  }

  // Imports `nodes` and expects `code` with every string of `mentions` in
  // the message.
  static void ExpectError(std::vector<NodeDef> nodes, Code code,
                          std::vector<std::string> mentions) {
    GraphDef def;
    def.nodes = std::move(nodes);
    Graph graph;
    Status status = ImportGraphDef(def, &graph);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.code(), code) << status;
    for (const std::string& m : mentions) {
      EXPECT_NE(status.message().find(m), std::string::npos)
          << "'" << m << "' not in: " << status.message();
    }
    EXPECT_EQ(graph.num_nodes(), 0) << "a failed import must leave the graph unchanged";
  }
};

TEST_F(ImportTest, ValidGraphImportsWithEdgesAndShapes) {
  GraphDef def;
  def.nodes = {Const("a", 1), Const("b", 2), Binary("Add", "c", "a", "b:0")};
  def.nodes[2].inputs.push_back("^a");
  Graph graph;
  ASSERT_TRUE(ImportGraphDef(def, &graph).ok());
  EXPECT_EQ(graph.num_nodes(), 3);
  Node* c = graph.FindNode("c");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->in_edges().size(), 3u);
  EXPECT_EQ(c->output_shape(0), PartialShape({}));
  GraphDef round = graph.ToGraphDef();
  ASSERT_EQ(round.nodes.size(), 3u);
  EXPECT_EQ(round.nodes[2].inputs, (std::vector<std::string>{"a", "b", "^a"}));
}

TEST_F(ImportTest, UnknownOp) {
  NodeDef bad;
  bad.name = "m";
  bad.op = "Matmul";
  ExpectError({bad}, Code::kNotFound, {"'m'", "Matmul", "did you mean MatMul"});
}

TEST_F(ImportTest, MissingAttr) {
  NodeDef bad = Const("k", 1);
  bad.attrs.erase("dtype");
  ExpectError({bad}, Code::kInvalidArgument, {"'k'", "missing attr 'dtype'"});
}

TEST_F(ImportTest, IllTypedAttr) {
  NodeDef bad = Binary("Add", "c", "a", "b");
  bad.attrs["T"] = int64_t{3};
  ExpectError({Const("a", 1), Const("b", 1), bad}, Code::kInvalidArgument,
              {"'c'", "attr 'T'", "type", "int"});
}

TEST_F(ImportTest, AttrValueNotAllowed) {
  NodeDef bad;
  bad.name = "m";
  bad.op = "MatMul";
  bad.inputs = {"a", "b"};
  bad.attrs["T"] = DT_STRING;
  ExpectError({Const("a", 1), Const("b", 1), bad}, Code::kInvalidArgument,
              {"'m'", "string", "allowed"});
}

TEST_F(ImportTest, UnknownAttr) {
  NodeDef bad = Const("k", 1);
  bad.attrs["colour"] = int64_t{1};
  ExpectError({bad}, Code::kInvalidArgument, {"'k'", "colour"});
}

TEST_F(ImportTest, MissingInputNode) {
  ExpectError({Const("a", 1), Binary("Add", "c", "a", "nowhere")}, Code::kInvalidArgument,
              {"'c'", "nowhere"});
}

TEST_F(ImportTest, BadPortSyntax) {
  ExpectError({Const("a", 1), Binary("Add", "c", "a", "a:x")}, Code::kInvalidArgument,
              {"'c'", "a:x"});
  ExpectError({Const("a", 1), Binary("Add", "c", "a", "a:-1")}, Code::kInvalidArgument,
              {"'c'", "a:-1"});
}

TEST_F(ImportTest, PortOutOfRange) {
  ExpectError({Const("a", 1), Binary("Add", "c", "a", "a:1")}, Code::kInvalidArgument,
              {"'c'", "a:1", "only 1 outputs"});
}

TEST_F(ImportTest, InputDtypeMismatch) {
  NodeDef int_const;
  int_const.name = "i";
  int_const.op = "Const";
  int_const.attrs["dtype"] = DT_INT32;
  int_const.attrs["value"] = Tensor::Scalar<int32_t>(1);
  ExpectError({Const("a", 1), int_const, Binary("Add", "c", "a", "i")}, Code::kInvalidArgument,
              {"'c'", "int32", "float"});
}

TEST_F(ImportTest, WrongNumberOfInputs) {
  NodeDef bad = Binary("Add", "c", "a", "a");
  bad.inputs.push_back("a");
  ExpectError({Const("a", 1), bad}, Code::kInvalidArgument, {"'c'", "3 data inputs", "expects 2"});
}

TEST_F(ImportTest, ControlInputBeforeDataInput) {
  NodeDef bad = Binary("Add", "c", "^a", "a");
  bad.inputs.push_back("a");
  ExpectError({Const("a", 1), bad}, Code::kInvalidArgument, {"'c'", "after a control input"});
}

TEST_F(ImportTest, DuplicateNodeName) {
  ExpectError({Const("a", 1), Const("a", 2)}, Code::kInvalidArgument, {"duplicate", "'a'"});
}

TEST_F(ImportTest, InvalidNodeName) {
  ExpectError({Const("bad name!", 1)}, Code::kInvalidArgument, {"bad name!"});
  ExpectError({Const("", 1)}, Code::kInvalidArgument, {"not valid"});
}

TEST_F(ImportTest, CycleNotThroughNextIteration) {
  NodeDef x = Binary("Add", "x", "a", "y");
  NodeDef y = Binary("Add", "y", "a", "x");
  ExpectError({Const("a", 1), x, y}, Code::kInvalidArgument, {"cycle", "'x'", "'y'"});
}

TEST_F(ImportTest, ShapeFunctionError) {
  NodeDef a;
  a.name = "a";
  a.op = "Const";
  a.attrs["dtype"] = DT_FLOAT;
  a.attrs["value"] = Tensor(DT_FLOAT, TensorShape({2, 3}));
  NodeDef b = a;
  b.name = "b";
  b.attrs["value"] = Tensor(DT_FLOAT, TensorShape({4, 5}));
  NodeDef m;
  m.name = "m";
  m.op = "MatMul";
  m.inputs = {"a", "b"};
  m.attrs["T"] = DT_FLOAT;
  ExpectError({a, b, m}, Code::kInvalidArgument, {"'m'", "[2,3]", "[4,5]"});
}

TEST_F(ImportTest, ExtendAddsToExistingGraphAndChecksNames) {
  Graph graph;
  GraphDef first;
  first.nodes = {Const("a", 1)};
  ASSERT_TRUE(ImportGraphDef(first, &graph).ok());
  GraphDef second;
  second.nodes = {Binary("Add", "c", "a", "a")};
  ASSERT_TRUE(ImportGraphDef(second, &graph).ok());
  EXPECT_EQ(graph.num_nodes(), 2);
  GraphDef clash;
  clash.nodes = {Const("a", 3)};
  Status status = ImportGraphDef(clash, &graph);
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  EXPECT_EQ(graph.num_nodes(), 2);
}

TEST(AlgorithmTest, PruneKeepsOnlyAncestorsOfRoots) {
  RegisterAllOps();
  GraphDef def;
  auto constant = [](const std::string& name) {
    NodeDef d;
    d.name = name;
    d.op = "Const";
    d.attrs["dtype"] = DT_FLOAT;
    d.attrs["value"] = Tensor::Scalar<float>(1);
    return d;
  };
  NodeDef add;
  add.name = "sum";
  add.op = "Add";
  add.inputs = {"a", "b", "^c"};
  add.attrs["T"] = DT_FLOAT;
  def.nodes = {constant("a"), constant("b"), constant("c"), constant("unused"), add};
  Graph graph;
  ASSERT_TRUE(ImportGraphDef(def, &graph).ok());
  EXPECT_EQ(PruneToRoots(&graph, {graph.FindNode("sum")}), 1);
  EXPECT_EQ(graph.FindNode("unused"), nullptr);
  EXPECT_NE(graph.FindNode("c"), nullptr);
  StatusOr<std::vector<Node*>> order = TopologicalOrder(graph);
  ASSERT_TRUE(order.ok());
  EXPECT_EQ(order->back()->name(), "sum");
}

}  // namespace
}  // namespace weir
