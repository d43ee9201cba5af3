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

TEST_F(ImportTest, ReadVariableOpHasItsHandlesDeclaredShape) {
  GraphDef def;
  NodeDef handle;
  handle.name = "v";
  handle.op = "VarHandleOp";
  handle.attrs["dtype"] = DT_FLOAT;
  handle.attrs["shape"] = PartialShape({3, 4});
  NodeDef read;
  read.name = "read";
  read.op = "ReadVariableOp";
  read.inputs = {"v"};
  read.attrs["dtype"] = DT_FLOAT;
  NodeDef square = Binary("Mul", "square", "read", "read");
  def.nodes = {handle, read, square};
  Graph graph;
  ASSERT_TRUE(ImportGraphDef(def, &graph).ok());
  EXPECT_EQ(graph.FindNode("read")->output_shape(0), PartialShape({3, 4}));
  EXPECT_EQ(graph.FindNode("square")->output_shape(0), PartialShape({3, 4}));
}

TEST_F(ImportTest, UnknownOp) {
  NodeDef bad;
  bad.name = "m";
  bad.op = "Matmul";
  ExpectError({bad}, Code::kNotFound, {"'m'", "Matmul", "did you mean MatMul"});
  // An op Weir lacks: what Weir has of its family.
  bad.name = "pool";
  bad.op = "MaxPoolWithArgmax";
  ExpectError({bad}, Code::kNotFound,
              {"'pool'", "'MaxPoolWithArgmax' is not registered",
               "of its family (MaxPool*) that Weir has: MaxPool, MaxPool3D, MaxPool3DGrad, "
               "MaxPool3DGradGrad, MaxPoolGrad"});
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

// A failed Extend rolls back the edges it added to existing nodes too.
TEST_F(ImportTest, FailedExtendLeavesExistingNodesUntouched) {
  Graph graph;
  GraphDef first;
  first.nodes = {Const("a", 1), Binary("Add", "c", "a", "a")};
  ASSERT_TRUE(ImportGraphDef(first, &graph).ok());
  GraphDef bad;
  NodeDef late = Binary("Add", "late", "a", "c");
  late.inputs.push_back("^a");
  bad.nodes = {late, Binary("Add", "broken", "a", "missing")};
  EXPECT_FALSE(ImportGraphDef(bad, &graph).ok());
  EXPECT_EQ(graph.num_nodes(), 2);
  EXPECT_EQ(graph.num_edges(), 2);
  EXPECT_EQ(graph.FindNode("a")->out_edges().size(), 2u);
  EXPECT_EQ(graph.FindNode("late"), nullptr);
  GraphDef retry;
  retry.nodes = {late};
  EXPECT_TRUE(ImportGraphDef(retry, &graph).ok()) << "the names of a failed import are free";
}

// 200k control inputs on one node (with duplicates), 200k data inputs of
// one AddN, all reading one tensor: quadratic before (a scan per control
// edge), linear now. No timing assert: the test timeout catches a
// regression.
TEST_F(ImportTest, ExtremeFanInAndFanOutImport) {
  constexpr int kWide = 200000;
  GraphDef def;
  def.nodes.reserve(kWide + 3);
  def.nodes.push_back(Const("c", 2));
  NodeDef sink;
  sink.name = "sink";
  sink.op = "NoOp";
  NodeDef sum;
  sum.name = "sum";
  sum.op = "AddN";
  sum.attrs["T"] = DT_FLOAT;
  sum.attrs["N"] = int64_t{kWide};
  for (int i = 0; i < kWide; ++i) {
    NodeDef n;
    n.name = "n" + std::to_string(i);
    n.op = "NoOp";
    def.nodes.push_back(std::move(n));
    sink.inputs.push_back("^n" + std::to_string(i));
    sum.inputs.push_back("c");
  }
  sink.inputs.push_back("^n0");  // a duplicate control input is one edge
  def.nodes.push_back(std::move(sink));
  def.nodes.push_back(std::move(sum));
  Graph graph;
  Status status = ImportGraphDef(def, &graph);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(graph.num_edges(), 2 * kWide);
  EXPECT_EQ(graph.FindNode("sink")->in_edges().size(), static_cast<size_t>(kWide));
  EXPECT_EQ(graph.FindNode("c")->out_edges().size(), static_cast<size_t>(kWide));
  GraphDef back = graph.ToGraphDef();
  EXPECT_EQ(back.nodes[kWide + 1].inputs.size(), static_cast<size_t>(kWide));
  EXPECT_EQ(back.nodes[kWide + 1].inputs[kWide - 1], "^n" + std::to_string(kWide - 1));
}

NodeDef Internal(const std::string& name, const std::string& op) {
  NodeDef def;
  def.name = name;
  def.op = op;
  def.attrs["T"] = DT_FLOAT;
  def.attrs["index"] = int64_t{0};
  return def;
}

// A user's _Retval could overwrite a fetch's slot; _Arg could read another
// feed; _Send/_Recv could talk to the runtime's rendezvous.
TEST_F(ImportTest, InternalOpsAreRefusedUnlessAllowed) {
  NodeDef retval = Internal("r", "_Retval");
  retval.inputs = {"a"};
  ExpectError({Const("a", 1), retval}, Code::kInvalidArgument, {"'r'", "_Retval", "internal"});
  ExpectError({Internal("x", "_Arg")}, Code::kInvalidArgument, {"'x'", "_Arg"});
  NodeDef send;
  send.name = "s";
  send.op = "_Send";
  send.inputs = {"a"};
  ExpectError({Const("a", 1), send}, Code::kInvalidArgument, {"'s'", "_Send"});
  NodeDef recv;
  recv.name = "v";
  recv.op = "_Recv";
  ExpectError({recv}, Code::kInvalidArgument, {"'v'", "_Recv"});
  NodeDef fused;
  fused.name = "f";
  fused.op = "_FusedConv2D";
  ExpectError({fused}, Code::kInvalidArgument, {"'f'", "_FusedConv2D"});
  // An unregistered underscore op is refused the same way, before lookup.
  ExpectError({Internal("u", "_NoSuchOp")}, Code::kInvalidArgument, {"'u'", "_NoSuchOp"});
  // Names starting with '_' are the runtime's (_arg/..., _send/...).
  ExpectError({Const("_arg/x_0", 1)}, Code::kInvalidArgument, {"_arg/x_0", "reserved"});

  GraphDef def;
  def.nodes = {Const("_a", 1), retval};
  def.nodes[1].inputs = {"_a"};
  Graph graph;
  Status status = ImportGraphDef(def, &graph, {.allow_internal_ops = true});
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_EQ(graph.num_nodes(), 2);
}

TEST_F(ImportTest, VersionsAreChecked) {
  auto import = [](int producer, int min_consumer, std::vector<int> bad_consumers) {
    GraphDef def;
    def.nodes = {Const("a", 1)};
    def.producer = producer;
    def.min_consumer = min_consumer;
    def.bad_consumers = std::move(bad_consumers);
    Graph graph;
    Status status = ImportGraphDef(def, &graph);
    if (!status.ok()) {
      EXPECT_EQ(graph.num_nodes(), 0);
    }
    return status;
  };
  // What TensorFlow 2.x writes.
  EXPECT_TRUE(import(1994, 12, {}).ok());
  EXPECT_TRUE(import(0, 0, {}).ok());
  EXPECT_TRUE(import(kGraphDefVersion + 500, kGraphDefVersion, {kGraphDefVersion - 1}).ok());

  Status future = import(kGraphDefVersion + 10, kGraphDefVersion + 1, {});
  EXPECT_EQ(future.code(), Code::kInvalidArgument);
  EXPECT_NE(future.message().find(StrCat("GraphDef min consumer version ", kGraphDefVersion + 1,
                                         " above current version ", kGraphDefVersion)),
            std::string::npos)
      << future;
  Status bad = import(kGraphDefVersion + 1, 0, {7, kGraphDefVersion});
  EXPECT_EQ(bad.code(), Code::kInvalidArgument);
  EXPECT_NE(bad.message().find(StrCat("disallows consumer version ", kGraphDefVersion)),
            std::string::npos)
      << bad;
  Status negative = import(-1, 0, {});
  EXPECT_EQ(negative.code(), Code::kInvalidArgument);
  EXPECT_NE(negative.message().find("producer version -1 below min producer 0"),
            std::string::npos)
      << negative;
}

// TensorFlow's forward-compatibility rule: a newer producer's MatMul with an
// attr "fast_path: bool = false" that Weir's MatMul lacks.
class ProducerOpListTest : public ImportTest {
 protected:
  void SetUp() override {
    ImportTest::SetUp();
    OpDef matmul = **OpRegistry::Global()->LookUp("MatMul");
    AttrDef extra;
    extra.name = "fast_path";
    extra.type = "bool";
    extra.has_default = true;
    extra.default_value = AttrValue(false);
    matmul.attrs.push_back(extra);
    matmul.shape_fn = nullptr;
    producer_.push_back(matmul);
    producer_.push_back(**OpRegistry::Global()->LookUp("Const"));
  }
  // Two constants and their MatMul, which has fast_path = `value`.
  static GraphDef MatMulGraph(const AttrValue& value) {
    GraphDef def;
    NodeDef a = Const("a", 1), b = Const("b", 2);
    a.attrs["value"] = Tensor(DT_FLOAT, TensorShape({2, 2}));
    b.attrs["value"] = Tensor(DT_FLOAT, TensorShape({2, 2}));
    NodeDef mm = Binary("MatMul", "mm", "a", "b");
    mm.attrs["fast_path"] = value;
    mm.attrs["_class"] = AttrValue(std::vector<std::string>{"loc:@a"});  // internal: kept
    def.nodes = {a, b, mm};
    return def;
  }
  static Status Import(const GraphDef& def, const std::vector<OpDef>* producer,
                       weir::Graph* graph) {
    ImportGraphDefOptions options;
    options.producer_op_list = producer;
    return ImportGraphDef(def, graph, options);
  }
  static void ExpectRefused(const Status& status, const weir::Graph& graph,
                            std::vector<std::string> mentions) {
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.code(), Code::kInvalidArgument) << status;
    for (std::string m : {"'mm'", "MatMul", "'fast_path'", "newer producer"}) mentions.push_back(m);
    for (const std::string& m : mentions) {
      EXPECT_NE(status.message().find(m), std::string::npos)
          << "'" << m << "' not in: " << status.message();
    }
    EXPECT_EQ(graph.num_nodes(), 0);
  }
  std::vector<OpDef> producer_;
};

TEST_F(ProducerOpListTest, AttrWithTheProducersDefaultIsDropped) {
  weir::Graph graph;
  Status status = Import(MatMulGraph(AttrValue(false)), &producer_, &graph);
  ASSERT_TRUE(status.ok()) << status;
  Node* mm = graph.FindNode("mm");
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->def().attrs.count("fast_path"), 0u);
  EXPECT_EQ(mm->def().attrs.count("_class"), 1u);
  EXPECT_EQ(mm->def().attrs.count("transpose_a"), 1u);  // Weir's own defaults still added
  EXPECT_EQ(mm->output_shape(0), PartialShape({2, 2}));
}

TEST_F(ProducerOpListTest, RemoveNewDefaultAttrsRewritesTheGraphDef) {
  GraphDef def = MatMulGraph(AttrValue(false));
  ASSERT_TRUE(RemoveNewDefaultAttrs(producer_, &def).ok());
  EXPECT_EQ(def.nodes[2].attrs.count("fast_path"), 0u);
  EXPECT_EQ(def.nodes[2].attrs.count("_class"), 1u);
  weir::Graph graph;
  EXPECT_TRUE(Import(def, nullptr, &graph).ok());  // nothing left to drop
  // Function bodies too, as TensorFlow does for a library.
  FunctionDef body;
  body.signature.name = "f";
  NodeDef inner = MatMulGraph(AttrValue(false)).nodes[2];
  body.node_def = {inner};
  def.library.functions = {body};
  ASSERT_TRUE(RemoveNewDefaultAttrs(producer_, &def).ok());
  EXPECT_EQ(def.library.functions[0].node_def[0].attrs.count("fast_path"), 0u);
  GraphDef other = MatMulGraph(AttrValue(true));
  weir::Graph unused;
  ExpectRefused(RemoveNewDefaultAttrs(producer_, &other), unused,
                {"differs from the producer's default"});
}

TEST_F(ProducerOpListTest, AttrWithAnotherValueIsRefused) {
  weir::Graph graph;
  ExpectRefused(Import(MatMulGraph(AttrValue(true)), &producer_, &graph), graph,
                {"differs from the producer's default"});
  // Equal means equal kind too: an int 0 is not the bool default false.
  ExpectRefused(Import(MatMulGraph(AttrValue(int64_t{0})), &producer_, &graph), graph,
                {"differs from the producer's default"});
}

TEST_F(ProducerOpListTest, WithoutAProducerListTheAttrIsRefused) {
  weir::Graph graph;
  ExpectRefused(Import(MatMulGraph(AttrValue(false)), nullptr, &graph), graph,
                {"no producer op list"});
}

TEST_F(ProducerOpListTest, AProducerListWithoutTheOpOrAttrOrDefaultRefuses) {
  weir::Graph graph;
  std::vector<OpDef> no_matmul = {producer_[1]};
  ExpectRefused(Import(MatMulGraph(AttrValue(false)), &no_matmul, &graph), graph,
                {"the producer's op list has no op MatMul"});
  std::vector<OpDef> no_attr = {**OpRegistry::Global()->LookUp("MatMul")};
  ExpectRefused(Import(MatMulGraph(AttrValue(false)), &no_attr, &graph), graph,
                {"does not declare it either"});
  std::vector<OpDef> no_default = producer_;
  no_default[0].attrs.back().has_default = false;
  ExpectRefused(Import(MatMulGraph(AttrValue(false)), &no_default, &graph), graph,
                {"gives it no default"});
}

TEST_F(ProducerOpListTest, UnknownOpIsStillNotFound) {
  GraphDef def = MatMulGraph(AttrValue(false));
  def.nodes[2].op = "MatMulV9";
  weir::Graph graph;
  Status status = Import(def, &producer_, &graph);
  EXPECT_EQ(status.code(), Code::kNotFound) << status;
  EXPECT_NE(status.message().find("MatMulV9"), std::string::npos) << status;
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
