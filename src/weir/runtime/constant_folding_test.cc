// Constant folding: folded graphs compute bit-identical values, what folds
// and what is left alone (stateful, protected, too large, failing, dead
// ends), the naming of the new Consts, and CSE keeping values through an
// executor.
#include "weir/runtime/constant_folding.h"

#include <gtest/gtest.h>

#include <memory>

#include "weir/base/cancellation.h"
#include "weir/base/str_util.h"
#include "weir/framework/call_frame.h"
#include "weir/framework/kernel_registry.h"
#include "weir/graph/graph_constructor.h"
#include "weir/graph/optimize_cse.h"
#include "weir/runtime/cpu_device.h"
#include "weir/runtime/executor.h"
#include "weir/runtime/standard_registration.h"

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

NodeDef Float(const std::string& name, const std::string& op, std::vector<std::string> inputs) {
  return Node(name, op, std::move(inputs), {{"T", DT_FLOAT}});
}

NodeDef Constant(const std::string& name, Tensor value) {
  DType dtype = value.dtype();
  return Node(name, "Const", {}, {{"dtype", dtype}, {"value", std::move(value)}});
}

NodeDef Retval(const std::string& input, int index, DType dtype = DT_FLOAT) {
  return Node(StrCat("_retval", index), "_Retval", {input},
              {{"T", dtype}, {"index", int64_t{index}}});
}

NodeDef Arg(const std::string& name, int index, DType dtype = DT_FLOAT) {
  return Node(name, "_Arg", {}, {{"T", dtype}, {"index", int64_t{index}}});
}

NodeDef FloatInput(const std::string& name, PartialShape shape) {
  return Node(name, "Placeholder", {}, {{"dtype", DT_FLOAT}, {"shape", std::move(shape)}});
}

class ConstantFoldingTest : public ::testing::Test {
 protected:
  void SetUp() override { RegisterStandardOpsAndKernels(); }

  std::unique_ptr<Graph> Import(const std::vector<NodeDef>& nodes) {
    auto graph = std::make_unique<Graph>();
    GraphDef def;
    def.nodes = nodes;
    Status s = ImportGraphDef(def, graph.get(), {.allow_internal_ops = true});
    EXPECT_TRUE(s.ok()) << s;
    return graph;
  }

  // Runs `graph` once with `args`; its _Retval values.
  StatusOr<std::vector<Tensor>> RunGraph(const Graph& graph, int num_retvals,
                                         std::vector<Tensor> args = {}) {
    WEIR_ASSIGN_OR_RETURN(std::unique_ptr<Executor> executor,
                          Executor::Create(graph, &cpu_, *KernelRegistry::Global()));
    CancellationManager cancellation;
    CallFrame frame(std::move(args), num_retvals);
    Executor::Args run;
    run.call_frame = &frame;
    run.cancellation = &cancellation;
    WEIR_RETURN_IF_ERROR(executor->Run(run));
    return frame.retvals();
  }

  int Fold(Graph* graph, const ConstantFoldingOptions& options = {}) {
    changes_.clear();
    StatusOr<int> folded =
        FoldConstants(graph, &cpu_, *KernelRegistry::Global(), options, &changes_);
    EXPECT_TRUE(folded.ok()) << folded.status();
    return folded.ok() ? *folded : -1;
  }

  // Folds a copy of `nodes` and checks that both graphs give bit-identical
  // retvals; returns the folded graph.
  std::unique_ptr<Graph> FoldAndCompare(const std::vector<NodeDef>& nodes, int num_retvals,
                                        std::vector<Tensor> args = {},
                                        const ConstantFoldingOptions& options = {}) {
    std::unique_ptr<Graph> plain = Import(nodes);
    std::unique_ptr<Graph> folded = Import(nodes);
    Fold(folded.get(), options);
    StatusOr<std::vector<Tensor>> want = RunGraph(*plain, num_retvals, args);
    StatusOr<std::vector<Tensor>> got = RunGraph(*folded, num_retvals, args);
    EXPECT_TRUE(want.ok()) << want.status();
    EXPECT_TRUE(got.ok()) << got.status();
    if (want.ok() && got.ok()) {
      for (int i = 0; i < num_retvals; ++i) {
        EXPECT_TRUE((*want)[i].ContentEquals((*got)[i]))
            << "retval " << i << ": " << (*want)[i].DebugString() << " vs "
            << (*got)[i].DebugString();
      }
    }
    return folded;
  }

  std::string OpOf(const Graph& graph, const std::string& name) {
    const ::weir::Node* node = graph.FindNode(name);
    return node == nullptr ? "<none>" : node->type_string();
  }

  CpuDevice cpu_{"/job:localhost/replica:0/task:0/device:CPU:0", 2};
  std::vector<std::string> changes_;
};

Tensor Floats(std::vector<float> values, TensorShape shape) {
  return Tensor::FromVector(values, shape);
}

TEST_F(ConstantFoldingTest, FoldedValuesAreBitIdenticalToRunningUnfolded) {
  const int64_t big = (int64_t{1} << 59) + 12345;  // not exact in a double
  std::vector<NodeDef> nodes = {
      Constant("a", Floats({0.1f, -2.5f, 3.25f, 1e-3f, 7.f, -0.f}, TensorShape({2, 3}))),
      Constant("b", Floats({1.5f, 0.3f, -1.f, 2.f, 1e4f, 0.7f}, TensorShape({3, 2}))),
      Constant("axis", Tensor::Scalar<int32_t>(1)),
      Node("mm", "MatMul", {"a", "b"}, {{"T", DT_FLOAT}}),
      Float("e", "Exp", {"mm"}),
      Float("sq", "Square", {"a"}),
      Node("sum", "Sum", {"sq", "axis"}, {{"T", DT_FLOAT}}),
      Arg("x", 0),
      Float("scaled", "Mul", {"e", "x"}),  // x is fed: stays
      Constant("i", Tensor::FromVector<int64_t>({big, -big, 3})),
      Constant("j", Tensor::FromVector<int64_t>({7, 3, -5})),
      Node("ij", "Mul", {"i", "j"}, {{"T", DT_INT64}}),
      Node("floor", "FloorDiv", {"ij", "j"}, {{"T", DT_INT64}}),
      Node("cast", "Cast", {"floor"}, {{"SrcT", DT_INT64}, {"DstT", DT_DOUBLE}}),
      Retval("scaled", 0),
      Retval("sum", 1),
      Retval("floor", 2, DT_INT64),
      Retval("cast", 3, DT_DOUBLE)};
  std::unique_ptr<Graph> folded = FoldAndCompare(nodes, 4, {Tensor::Scalar<float>(0.5f)});
  // e, sum, floor and cast are the frontier; mm, sq, ij and the constants
  // only they read are gone.
  EXPECT_EQ(OpOf(*folded, "e"), "Const");
  EXPECT_EQ(OpOf(*folded, "sum"), "Const");
  EXPECT_EQ(OpOf(*folded, "floor"), "Const");
  EXPECT_EQ(OpOf(*folded, "cast"), "Const");
  EXPECT_EQ(OpOf(*folded, "scaled"), "Mul");
  EXPECT_EQ(OpOf(*folded, "mm"), "<none>");
  EXPECT_EQ(OpOf(*folded, "ij"), "<none>");
  EXPECT_EQ(OpOf(*folded, "a"), "<none>");
  // e, sum, floor, cast, x, scaled and four retvals.
  EXPECT_EQ(folded->num_nodes(), 10);
  const ::weir::Node* e = folded->FindNode("e");
  EXPECT_EQ(e->output_shape(0), PartialShape({2, 2}));
}

TEST_F(ConstantFoldingTest, ShapesOfKnownShapesFoldAndFreeTheirInput) {
  std::vector<NodeDef> nodes = {
      FloatInput("x", PartialShape({2, 3})),
      FloatInput("y", PartialShape({4})),
      FloatInput("partial", PartialShape({PartialShape::kUnknown, 3})),
      Node("shape", "Shape", {"x"}, {{"T", DT_FLOAT}}),
      Node("size", "Size", {"x"}, {{"T", DT_FLOAT}, {"out_type", DT_INT64}}),
      Node("rank", "Rank", {"x"}, {{"T", DT_FLOAT}}),
      Node("both", "ShapeN", {"x", "y"}, {{"T", DT_FLOAT}, {"N", int64_t{2}}}),
      Node("unknown", "Shape", {"partial"}, {{"T", DT_FLOAT}}),
      Retval("shape", 0, DT_INT32),
      Retval("size", 1, DT_INT64),
      Retval("rank", 2, DT_INT32),
      Retval("both:0", 3, DT_INT32),
      Retval("both:1", 4, DT_INT32),
      Retval("unknown", 5, DT_INT32)};
  std::unique_ptr<Graph> graph = Import(nodes);
  EXPECT_EQ(Fold(graph.get()), 4 + 2);  // four replaced, x and y removed
  EXPECT_EQ(graph->FindNode("x"), nullptr) << "only folded nodes read it";
  EXPECT_EQ(graph->FindNode("y"), nullptr);
  EXPECT_EQ(OpOf(*graph, "unknown"), "Shape");
  EXPECT_EQ(OpOf(*graph, "partial"), "Placeholder");
  EXPECT_EQ(OpOf(*graph, "shape"), "Const");
  EXPECT_EQ(OpOf(*graph, "both/output_0"), "Const");
  EXPECT_EQ(OpOf(*graph, "both/output_1"), "Const");
  EXPECT_TRUE(graph->FindNode("shape")->def().attrs.at("value").tensor().ContentEquals(
      Tensor::FromVector<int32_t>({2, 3})));
  EXPECT_TRUE(graph->FindNode("size")->def().attrs.at("value").tensor().ContentEquals(
      Tensor::Scalar<int64_t>(6)));
  EXPECT_TRUE(graph->FindNode("rank")->def().attrs.at("value").tensor().ContentEquals(
      Tensor::Scalar<int32_t>(2)));
  EXPECT_TRUE(graph->FindNode("both/output_1")
                  ->def()
                  .attrs.at("value")
                  .tensor()
                  .ContentEquals(Tensor::FromVector<int32_t>({4})));
}

// In a branch (or a loop) a folded Shape keeps a control input from the
// value it measured: the Const must be dead when that branch is not taken
// and in the value's frame, not a root of the whole graph.
TEST_F(ConstantFoldingTest, ShapesFoldedUnderControlFlowKeepTheirProducer) {
  std::vector<NodeDef> nodes = {
      FloatInput("x", PartialShape({2, 3})),
      Node("pred", "Placeholder", {}, {{"dtype", DT_BOOL}, {"shape", PartialShape(std::vector<int64_t>{})}}),
      Node("switch", "Switch", {"x", "pred"}, {{"T", DT_FLOAT}}),
      Node("shape", "Shape", {"switch:1"}, {{"T", DT_FLOAT}}),
      Retval("shape", 0, DT_INT32)};
  std::unique_ptr<Graph> graph = Import(nodes);
  Fold(graph.get());
  const ::weir::Node* shape = graph->FindNode("shape");
  ASSERT_NE(shape, nullptr);
  EXPECT_EQ(shape->type_string(), "Const");
  std::vector<std::string> controls;
  for (const Edge* e : shape->in_edges()) {
    if (e->IsControlEdge()) controls.push_back(e->src()->name());
  }
  EXPECT_EQ(controls, std::vector<std::string>{"switch"});
}

TEST_F(ConstantFoldingTest, ShapeFoldsMatchTheKernels) {
  // `use` is computed at run time from a feed, but its static shape is
  // known ([3,1,2], from the constant Reshape target): its Shape, Size and
  // Rank fold, and must equal what their kernels compute unfolded. ShapeN
  // folds only when every input's shape is known.
  std::vector<NodeDef> nodes = {
      Arg("x", 0),
      Constant("target", Tensor::FromVector<int32_t>({3, 1, 2})),
      Node("use", "Reshape", {"x", "target"}, {{"T", DT_FLOAT}}),
      Node("shape", "Shape", {"use"}, {{"T", DT_FLOAT}, {"out_type", DT_INT64}}),
      Node("size", "Size", {"use"}, {{"T", DT_FLOAT}}),
      Node("rank", "Rank", {"use"}, {{"T", DT_FLOAT}}),
      Node("shapes", "ShapeN", {"use", "x"}, {{"T", DT_FLOAT}, {"N", int64_t{2}}}),
      Retval("shape", 0, DT_INT64),
      Retval("size", 1, DT_INT32),
      Retval("rank", 2, DT_INT32),
      Retval("shapes:0", 3, DT_INT32),
      Retval("use", 4)};
  std::unique_ptr<Graph> folded =
      FoldAndCompare(nodes, 5, {Floats({1, 2, 3, 4, 5, 6}, TensorShape({6}))});
  EXPECT_EQ(OpOf(*folded, "shape"), "Const");
  EXPECT_EQ(OpOf(*folded, "size"), "Const");
  EXPECT_EQ(OpOf(*folded, "rank"), "Const");
  EXPECT_EQ(OpOf(*folded, "shapes"), "ShapeN") << "x's shape is unknown, so not all outputs are";
  EXPECT_EQ(OpOf(*folded, "use"), "Reshape");
}

TEST_F(ConstantFoldingTest, ResultsOverTheCapStayUnfolded) {
  ConstantFoldingOptions small;
  small.max_constant_bytes = 1 << 20;
  std::vector<NodeDef> nodes = {
      // Statically [512, 1024] floats: 2 MiB, never evaluated.
      Constant("dims", Tensor::FromVector<int32_t>({512, 1024})),
      Constant("one", Tensor::Scalar<float>(1)), Float("big", "Fill", {"dims", "one"}),
      Constant("axes", Tensor::FromVector<int32_t>({0, 1})),
      Node("total", "Sum", {"big", "axes"}, {{"T", DT_FLOAT}}),
      // Shape known only once evaluated: [256, 2048] floats, 2 MiB.
      Constant("half", Tensor::FromVector<int32_t>({128, 1024})),
      Node("dims2", "Add", {"half", "half"}, {{"T", DT_INT32}}),
      Float("big2", "Fill", {"dims2", "one"}),
      Node("total2", "Sum", {"big2", "axes"}, {{"T", DT_FLOAT}}),
      // Small enough.
      Constant("small_dims", Tensor::FromVector<int32_t>({4, 4})),
      Float("small", "Fill", {"small_dims", "one"}), Retval("total", 0), Retval("total2", 1),
      Retval("small", 2), Retval("big2", 3)};
  std::unique_ptr<Graph> folded = FoldAndCompare(nodes, 4, {}, small);
  EXPECT_EQ(OpOf(*folded, "big"), "Fill");
  EXPECT_EQ(OpOf(*folded, "total"), "Sum");
  EXPECT_EQ(OpOf(*folded, "big2"), "Fill");
  EXPECT_EQ(OpOf(*folded, "dims2"), "Const") << "the frontier moved before the large node";
  EXPECT_EQ(OpOf(*folded, "small"), "Const");
  bool noted = false;
  for (const std::string& line : changes_) noted |= line.find("'big2'") != std::string::npos;
  EXPECT_TRUE(noted) << StrJoin(changes_, "\n");

  // With the default cap, everything folds.
  std::unique_ptr<Graph> all = FoldAndCompare(nodes, 4);
  EXPECT_EQ(OpOf(*all, "total"), "Const");
  EXPECT_EQ(OpOf(*all, "big2"), "Const");
  EXPECT_EQ(OpOf(*all, "big"), "<none>");
}

TEST_F(ConstantFoldingTest, ProtectedNodesAreNeitherFoldedNorReadAsConstants) {
  std::unordered_set<std::string> protect = {"sum", "fed_const"};
  ConstantFoldingOptions options;
  options.protected_nodes = &protect;
  std::vector<NodeDef> nodes = {Constant("a", Tensor::Scalar<float>(2)),
                                Constant("fed_const", Tensor::Scalar<float>(3)),
                                Float("sum", "Add", {"a", "a"}),
                                Float("after_sum", "Neg", {"sum"}),
                                Float("after_fed", "Neg", {"fed_const"}),
                                Retval("after_sum", 0),
                                Retval("after_fed", 1)};
  std::unique_ptr<Graph> graph = Import(nodes);
  EXPECT_EQ(Fold(graph.get(), options), 0);
  EXPECT_EQ(OpOf(*graph, "sum"), "Add");
  EXPECT_EQ(OpOf(*graph, "after_sum"), "Neg");
  EXPECT_EQ(OpOf(*graph, "after_fed"), "Neg");
}

TEST_F(ConstantFoldingTest, StatefulAndRandomNodesAreNotFolded) {
  std::vector<NodeDef> nodes = {
      Constant("shape", Tensor::FromVector<int32_t>({3})),
      Node("random", "RandomUniform", {"shape"},
           {{"dtype", DT_FLOAT}, {"T", DT_INT32}, {"seed", int64_t{1}}, {"seed2", int64_t{2}}}),
      Float("neg", "Neg", {"random"}), Retval("neg", 0)};
  std::unique_ptr<Graph> graph = Import(nodes);
  EXPECT_EQ(Fold(graph.get()), 0);
  EXPECT_EQ(OpOf(*graph, "random"), "RandomUniform");
  EXPECT_EQ(OpOf(*graph, "neg"), "Neg");
  // Two runs of the unfolded node continue the sequence: different values.
  StatusOr<std::vector<Tensor>> first = RunGraph(*graph, 1);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ((*first)[0].NumElements(), 3);
}

TEST_F(ConstantFoldingTest, AnEvaluationErrorLeavesTheNodeForTheStepToReport) {
  std::vector<NodeDef> nodes = {Constant("x", Floats({1, 2, 3, 4, 5, 6}, TensorShape({2, 3}))),
                                Constant("wrong", Tensor::FromVector<int32_t>({4, 4})),
                                // Through Identity, shape inference does not see the constant.
                                Node("shape", "Identity", {"wrong"}, {{"T", DT_INT32}}),
                                Node("reshaped", "Reshape", {"x", "shape"}, {{"T", DT_FLOAT}}),
                                Float("fine", "Neg", {"x"}), Retval("reshaped", 0),
                                Retval("fine", 1)};
  std::unique_ptr<Graph> plain = Import(nodes);
  std::unique_ptr<Graph> folded = Import(nodes);
  Fold(folded.get());
  EXPECT_EQ(OpOf(*folded, "reshaped"), "Reshape");
  EXPECT_EQ(OpOf(*folded, "shape"), "Const") << "its input folds on the next round";
  EXPECT_EQ(OpOf(*folded, "fine"), "Const") << "one failure does not stop the others";
  StatusOr<std::vector<Tensor>> want = RunGraph(*plain, 2);
  StatusOr<std::vector<Tensor>> got = RunGraph(*folded, 2);
  ASSERT_FALSE(want.ok());
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), want.status().code());
  EXPECT_EQ(got.status().message(), want.status().message());
  EXPECT_NE(got.status().message().find("'reshaped'"), std::string::npos) << got.status();
}

TEST_F(ConstantFoldingTest, DeadEndsAreNotEvaluatedAndControlOrderIsKept) {
  std::vector<NodeDef> nodes = {
      Constant("c", Tensor::Scalar<float>(1)), Float("dead1", "Neg", {"c"}),
      Float("dead2", "Neg", {"dead1"}), Node("guard", "NoOp", {}),
      // A control input from a node that runs at run time: not folded.
      Float("ordered", "Neg", {"c", "^guard"}), Float("folds", "Neg", {"c"}),
      // A control consumer of a folded node moves to its Const.
      Node("after", "NoOp", {"^folds"}), Retval("ordered", 0), Retval("folds", 1)};
  std::unique_ptr<Graph> graph = Import(nodes);
  EXPECT_EQ(Fold(graph.get()), 1);
  EXPECT_EQ(OpOf(*graph, "dead1"), "Neg");
  EXPECT_EQ(OpOf(*graph, "dead2"), "Neg");
  EXPECT_EQ(OpOf(*graph, "ordered"), "Neg");
  EXPECT_EQ(OpOf(*graph, "folds"), "Const");
  std::vector<const Edge*> control = graph->FindNode("after")->control_inputs();
  ASSERT_EQ(control.size(), 1u);
  EXPECT_EQ(control[0]->src()->name(), "folds");
}

TEST_F(ConstantFoldingTest, MultiOutputNodesBecomeOneConstPerOutput) {
  std::vector<NodeDef> nodes = {
      Constant("c", Floats({1, 2, 3, 4}, TensorShape({2, 2}))),
      Node("rows", "Unpack", {"c"}, {{"T", DT_FLOAT}, {"num", int64_t{2}}}), Retval("rows:0", 0),
      Retval("rows:1", 1)};
  std::unique_ptr<Graph> folded = FoldAndCompare(nodes, 2);
  EXPECT_EQ(OpOf(*folded, "rows"), "<none>");
  EXPECT_EQ(OpOf(*folded, "rows/output_0"), "Const");
  EXPECT_EQ(OpOf(*folded, "rows/output_1"), "Const");
  EXPECT_EQ(folded->num_nodes(), 4);
}

TEST_F(ConstantFoldingTest, CseKeepsValuesThroughAnExecutor) {
  std::vector<NodeDef> nodes = {Arg("x", 0),
                                Arg("y", 1),
                                Float("a1", "Add", {"x", "y"}),
                                Float("a2", "Add", {"x", "y"}),
                                Float("r1", "Relu", {"a1"}),
                                Float("r2", "Relu", {"a2"}),
                                Float("swapped", "Sub", {"y", "x"}),
                                Float("straight", "Sub", {"x", "y"}),
                                Float("out", "Mul", {"r1", "r2"}),
                                Retval("out", 0),
                                Retval("swapped", 1),
                                Retval("straight", 2),
                                Retval("r2", 3)};
  std::vector<Tensor> args = {Floats({1.5f, -2.f, 3.f}, TensorShape({3})),
                              Floats({0.25f, 1.f, -4.f}, TensorShape({3}))};
  std::unique_ptr<Graph> plain = Import(nodes);
  std::unique_ptr<Graph> merged = Import(nodes);
  StatusOr<int> removed = EliminateCommonSubexpressions(merged.get());
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, 2);
  StatusOr<std::vector<Tensor>> want = RunGraph(*plain, 4, args);
  StatusOr<std::vector<Tensor>> got = RunGraph(*merged, 4, args);
  ASSERT_TRUE(want.ok() && got.ok());
  for (int i = 0; i < 4; ++i) EXPECT_TRUE((*want)[i].ContentEquals((*got)[i])) << i;
}

TEST_F(ConstantFoldingTest, ChangesAreCapped) {
  std::vector<NodeDef> nodes = {Constant("c", Tensor::Scalar<float>(1))};
  for (int i = 0; i < 70; ++i) {
    nodes.push_back(Float(StrCat("n", i), "Neg", {"c"}));
    nodes.push_back(Retval(StrCat("n", i), i));
  }
  std::unique_ptr<Graph> graph = Import(nodes);
  EXPECT_EQ(Fold(graph.get()), 71);  // 70 replaced, then c is unused
  ASSERT_EQ(changes_.size(), 51u);
  EXPECT_EQ(changes_.back(), "... and 21 more changes");
}

}  // namespace
}  // namespace weir
