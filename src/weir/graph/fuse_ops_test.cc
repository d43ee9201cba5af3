// The fusion pass: which chains it rewrites, which it leaves alone, and
// that the rewritten node keeps the chain's name, inputs and consumers.
#include "weir/graph/fuse_ops.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>

#include "weir/graph/graph_constructor.h"
#include "weir/graph/graph_test_util.h"
#include "weir/graph/placer.h"
#include "weir/kernels/all_kernels.h"
#include "weir/ops/all_ops.h"

namespace weir {
namespace {

const std::string kCpu0 = "/job:localhost/replica:0/task:0/device:CPU:0";
const std::string kCpu1 = "/job:localhost/replica:0/task:0/device:CPU:1";

NodeDef Node(const std::string& name, const std::string& op, std::vector<std::string> inputs,
             DType dtype = DT_FLOAT) {
  NodeDef def;
  def.name = name;
  def.op = op;
  def.inputs = std::move(inputs);
  if (op == "Placeholder") {
    def.attrs["dtype"] = dtype;
  } else if (op != "NoOp") {
    def.attrs["T"] = dtype;
  }
  if (op == "Conv2D") {
    def.attrs["strides"] = std::vector<int64_t>{1, 1, 1, 1};
    def.attrs["padding"] = std::string("SAME");
  }
  return def;
}

// x, w, b -> conv -> bias -> relu, plus whatever `extra` adds.
std::vector<NodeDef> Chain(DType dtype = DT_FLOAT) {
  return {Node("x", "Placeholder", {}, dtype),           Node("w", "Placeholder", {}, dtype),
          Node("b", "Placeholder", {}, dtype),           Node("conv", "Conv2D", {"x", "w"}, dtype),
          Node("bias", "BiasAdd", {"conv", "b"}, dtype), Node("relu", "Relu", {"bias"}, dtype),
          Node("out", "Identity", {"relu"}, dtype)};
}

class FuseOpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterAllOps();
    RegisterAllKernels();
  }
  // Imports, places on two CPUs (`cpu1_nodes` on CPU:1) and fuses.
  int BuildAndFuse(std::vector<NodeDef> nodes, const std::vector<std::string>& cpu1_nodes = {},
                   StatusOr<int> (*fuse)(Graph*) = FuseConvBiasRelu) {
    for (NodeDef& def : nodes) {
      for (const std::string& name : cpu1_nodes) {
        if (def.name == name) def.device = kCpu1;
      }
    }
    graph_ = std::make_unique<Graph>();
    GraphDef def;
    def.nodes = std::move(nodes);
    EXPECT_TRUE(ImportGraphDef(def, graph_.get()).ok());
    EXPECT_TRUE(PlaceOnRequestedDevices(graph_.get(), {{kCpu0, "CPU"}, {kCpu1, "CPU"}}).ok());
    StatusOr<int> fused = fuse(graph_.get());
    EXPECT_TRUE(fused.ok()) << fused.status();
    return fused.ok() ? *fused : -1;
  }
  std::unique_ptr<Graph> graph_;
};

TEST_F(FuseOpsTest, ConvBiasReluBecomesOneNodeNamedAfterTheRelu) {
  ASSERT_EQ(BuildAndFuse(Chain()), 1);
  EXPECT_EQ(graph_->FindNode("conv"), nullptr);
  EXPECT_EQ(graph_->FindNode("bias"), nullptr);
  const ::weir::Node* fused = graph_->FindNode("relu");
  ASSERT_NE(fused, nullptr);
  EXPECT_EQ(fused->type_string(), "_FusedConv2D");
  EXPECT_EQ(fused->assigned_device(), kCpu0);
  std::vector<std::string> ops;
  ASSERT_TRUE(GetAttr(fused->def().attrs, "fused_ops", &ops).ok());
  EXPECT_EQ(ops, (std::vector<std::string>{"BiasAdd", "Relu"}));
  std::vector<int64_t> strides;
  ASSERT_TRUE(GetAttr(fused->def().attrs, "strides", &strides).ok());
  EXPECT_EQ(strides, (std::vector<int64_t>{1, 1, 1, 1}));
  ASSERT_EQ(fused->num_inputs(), 3);
  EXPECT_EQ(fused->input_edge(0)->src()->name(), "x");
  EXPECT_EQ(fused->input_edge(1)->src()->name(), "w");
  EXPECT_EQ(fused->input_edge(2)->src()->name(), "b");
  EXPECT_EQ(graph_->FindNode("out")->input_edge(0)->src(), fused);
}

TEST_F(FuseOpsTest, ConvBiasWithoutReluFusesTheBiasOnly) {
  std::vector<NodeDef> nodes = Chain();
  nodes[5] = Node("relu", "Tanh", {"bias"});  // not a Relu
  ASSERT_EQ(BuildAndFuse(nodes), 1);
  const ::weir::Node* fused = graph_->FindNode("bias");
  ASSERT_NE(fused, nullptr);
  EXPECT_EQ(fused->type_string(), "_FusedConv2D");
  EXPECT_EQ(graph_->FindNode("relu")->type_string(), "Tanh");
  EXPECT_EQ(graph_->FindNode("relu")->input_edge(0)->src(), fused);
}

TEST_F(FuseOpsTest, IntermediatesReadElsewhereAreNotFused) {
  // The convolution's own output is also read: fusing would lose it.
  std::vector<NodeDef> nodes = Chain();
  nodes.push_back(Node("peek", "Identity", {"conv"}));
  EXPECT_EQ(BuildAndFuse(nodes), 0);
  EXPECT_EQ(graph_->FindNode("conv")->type_string(), "Conv2D");
}

TEST_F(FuseOpsTest, BiasReadElsewhereFusesConvAndBiasOnly) {
  std::vector<NodeDef> nodes = Chain();
  nodes.push_back(Node("peek", "Identity", {"bias"}));
  ASSERT_EQ(BuildAndFuse(nodes), 1);
  const ::weir::Node* fused = graph_->FindNode("bias");
  EXPECT_EQ(fused->type_string(), "_FusedConv2D");
  EXPECT_EQ(graph_->FindNode("relu")->type_string(), "Relu");
  EXPECT_EQ(graph_->FindNode("peek")->input_edge(0)->src(), fused);
}

TEST_F(FuseOpsTest, ChainsAcrossDevicesStay) {
  EXPECT_EQ(BuildAndFuse(Chain(), /*cpu1_nodes=*/{"bias"}), 0);
  EXPECT_EQ(graph_->FindNode("bias")->type_string(), "BiasAdd");
  // Bias and Relu on one device, the convolution on another: nothing.
  EXPECT_EQ(BuildAndFuse(Chain(), /*cpu1_nodes=*/{"bias", "relu"}), 0);
}

TEST_F(FuseOpsTest, ControlEdgesMoveToTheFusedNode) {
  std::vector<NodeDef> nodes = Chain();
  nodes.push_back(Node("before", "NoOp", {}));
  nodes.push_back(Node("after", "NoOp", {"^relu"}));
  nodes[3].inputs.push_back("^before");  // conv waits for `before`
  ASSERT_EQ(BuildAndFuse(nodes), 1);
  const ::weir::Node* fused = graph_->FindNode("relu");
  bool waits = false, ordered = false;
  for (const Edge* e : fused->in_edges())
    waits |= e->IsControlEdge() && e->src()->name() == "before";
  for (const Edge* e : fused->out_edges())
    ordered |= e->IsControlEdge() && e->dst()->name() == "after";
  EXPECT_TRUE(waits);
  EXPECT_TRUE(ordered);
}

// Placeholder `name` of `shape` (known at import).
NodeDef ShapedPlaceholder(const std::string& name, const PartialShape& shape) {
  NodeDef def = Node(name, "Placeholder", {});
  def.attrs["shape"] = shape;
  return def;
}

// The chain with `add_op` (Add or AddV2) adding `b` of `b_shape` to the
// convolution of a [?, 8, 8, 3] image by a [3, 3, 3, 4] filter, `b` first
// if `bias_first`.
std::vector<NodeDef> AddChain(const std::string& add_op, const PartialShape& b_shape,
                              bool bias_first = false) {
  std::vector<NodeDef> nodes = Chain();
  nodes[0] = ShapedPlaceholder("x", PartialShape({-1, 8, 8, 3}));
  nodes[1] = ShapedPlaceholder("w", PartialShape({3, 3, 3, 4}));
  nodes[2] = ShapedPlaceholder("b", b_shape);
  nodes[4] = Node(
      "bias", add_op,
      bias_first ? std::vector<std::string>{"b", "conv"} : std::vector<std::string>{"conv", "b"});
  return nodes;
}

TEST_F(FuseOpsTest, ConvPlusABiasShapedTensorFusesLikeBiasAdd) {
  for (const char* op : {"AddV2", "Add"}) {
    for (bool bias_first : {false, true}) {
      SCOPED_TRACE(StrCat(op, bias_first ? " b + conv" : " conv + b"));
      ASSERT_EQ(BuildAndFuse(AddChain(op, PartialShape({4}), bias_first)), 1);
      const ::weir::Node* fused = graph_->FindNode("relu");
      ASSERT_NE(fused, nullptr);
      EXPECT_EQ(fused->type_string(), "_FusedConv2D");
      EXPECT_EQ(graph_->FindNode("bias"), nullptr);
      ASSERT_EQ(fused->num_inputs(), 3);
      EXPECT_EQ(fused->input_edge(0)->src()->name(), "x");
      EXPECT_EQ(fused->input_edge(1)->src()->name(), "w");
      EXPECT_EQ(fused->input_edge(2)->src()->name(), "b");
    }
  }
}

TEST_F(FuseOpsTest, ConvPlusOtherShapesIsNotFused) {
  // Each of these broadcasts differently from BiasAdd, or might: a scalar,
  // [1], [cols, channels], an unknown length or rank.
  for (const PartialShape& shape : {PartialShape({}), PartialShape({1}), PartialShape({8, 4}),
                                    PartialShape({-1}), PartialShape()}) {
    SCOPED_TRACE(shape.DebugString());
    EXPECT_EQ(BuildAndFuse(AddChain("AddV2", shape)), 0);
    EXPECT_EQ(graph_->FindNode("conv")->type_string(), "Conv2D");
    EXPECT_EQ(graph_->FindNode("bias")->type_string(), "AddV2");
  }
  // A sum of two convolutions is not a bias either.
  std::vector<NodeDef> nodes = AddChain("AddV2", PartialShape({4}));
  nodes.push_back(Node("conv2", "Conv2D", {"x", "w"}));
  nodes[4].inputs = {"conv", "conv2"};
  EXPECT_EQ(BuildAndFuse(nodes), 0);
}

// x -> MaxPoolGrad(x, pooled, g) -> ReluGrad(·, features).
std::vector<NodeDef> PoolGradChain(const std::string& features) {
  NodeDef pool_grad = Node("pool_grad", "MaxPoolGrad", {"x", "pooled", "g"});
  pool_grad.attrs["ksize"] = std::vector<int64_t>{1, 2, 2, 1};
  pool_grad.attrs["strides"] = std::vector<int64_t>{1, 2, 2, 1};
  pool_grad.attrs["padding"] = std::string("VALID");
  return {Node("x", "Placeholder", {}),
          Node("other", "Placeholder", {}),
          Node("pooled", "Placeholder", {}),
          Node("g", "Placeholder", {}),
          pool_grad,
          Node("relu_grad", "ReluGrad", {"pool_grad", features}),
          Node("out", "Identity", {"relu_grad"})};
}

TEST_F(FuseOpsTest, MaxPoolGradThenReluGradOfItsInputFuse) {
  ASSERT_EQ(BuildAndFuse(PoolGradChain("x"), {}, FuseMaxPoolGradReluGrad), 1);
  const ::weir::Node* fused = graph_->FindNode("relu_grad");
  ASSERT_NE(fused, nullptr);
  EXPECT_EQ(fused->type_string(), "_FusedMaxPoolGrad");
  EXPECT_EQ(graph_->FindNode("pool_grad"), nullptr);
  ASSERT_EQ(fused->num_inputs(), 3);
  EXPECT_EQ(fused->input_edge(0)->src()->name(), "x");
  EXPECT_EQ(fused->input_edge(1)->src()->name(), "pooled");
  EXPECT_EQ(fused->input_edge(2)->src()->name(), "g");
  std::vector<int64_t> ksize;
  ASSERT_TRUE(GetAttr(fused->def().attrs, "ksize", &ksize).ok());
  EXPECT_EQ(ksize, (std::vector<int64_t>{1, 2, 2, 1}));
  EXPECT_EQ(graph_->FindNode("out")->input_edge(0)->src(), fused);
}

TEST_F(FuseOpsTest, ReluGradOfAnotherTensorDoesNotFuse) {
  // The mask would come from `other`, which the pool never reads.
  EXPECT_EQ(BuildAndFuse(PoolGradChain("other"), {}, FuseMaxPoolGradReluGrad), 0);
  EXPECT_EQ(graph_->FindNode("relu_grad")->type_string(), "ReluGrad");
}

// acc + x^T * dy, a while loop's running sum of a weight's gradient:
// x [5, 3] (or ConcatV2(x1 [5, 1], x2 [5, 2]) along `axis`), dy [5, 4].
std::vector<NodeDef> AccumulateChain(bool concat = false, int axis = 1, DType dtype = DT_FLOAT) {
  std::vector<NodeDef> nodes = {Node("acc", "Placeholder", {}, dtype),
                                Node("dy", "Placeholder", {}, dtype)};
  if (concat) {
    NodeDef axis_def;
    axis_def.name = "axis";
    axis_def.op = "Const";
    axis_def.attrs["dtype"] = DT_INT32;
    axis_def.attrs["value"] = Tensor::Scalar<int32_t>(axis);
    nodes.push_back(axis_def);
    nodes.push_back(Node("x1", "Placeholder", {}, dtype));
    nodes.push_back(Node("x2", "Placeholder", {}, dtype));
    NodeDef concat_def = Node("x", "ConcatV2", {"x1", "x2", "axis"}, dtype);
    concat_def.attrs["N"] = int64_t{2};
    nodes.push_back(concat_def);
  } else {
    nodes.push_back(Node("x", "Placeholder", {}, dtype));
  }
  NodeDef product = Node("product", "MatMul", {"x", "dy"}, dtype);
  product.attrs["transpose_a"] = true;
  nodes.push_back(product);
  nodes.push_back(Node("sum", "AddV2", {"acc", "product"}, dtype));
  nodes.push_back(Node("out", "Identity", {"sum"}, dtype));
  return nodes;
}

// The names of `node`'s data inputs, in order.
std::vector<std::string> InputNames(const ::weir::Node* node) {
  std::vector<std::string> names;
  for (int i = 0; i < node->num_inputs(); ++i) names.push_back(node->input_edge(i)->src()->name());
  return names;
}

TEST_F(FuseOpsTest, AccPlusXTransposedTimesDyBecomesOneMatMulAccumulate) {
  for (bool product_first : {false, true}) {
    SCOPED_TRACE(product_first ? "product + acc" : "acc + product");
    std::vector<NodeDef> nodes = AccumulateChain();
    if (product_first) nodes[4].inputs = {"product", "acc"};
    ASSERT_EQ(BuildAndFuse(nodes, {}, FuseMatMulAccumulate), 1);
    EXPECT_EQ(graph_->FindNode("product"), nullptr);
    const ::weir::Node* fused = graph_->FindNode("sum");
    ASSERT_NE(fused, nullptr);
    EXPECT_EQ(fused->type_string(), "_MatMulAccumulate");
    EXPECT_EQ(fused->assigned_device(), kCpu0);
    EXPECT_EQ(InputNames(fused), (std::vector<std::string>{"acc", "x", "dy"}));
    EXPECT_EQ(graph_->FindNode("out")->input_edge(0)->src(), fused);
  }
}

TEST_F(FuseOpsTest, AConcatAlongAxisOneBecomesThePiecesOfX) {
  for (int axis : {1, -1}) {
    SCOPED_TRACE(axis);
    ASSERT_EQ(BuildAndFuse(AccumulateChain(true, axis), {}, FuseMatMulAccumulate), 1);
    EXPECT_EQ(graph_->FindNode("x"), nullptr);
    const ::weir::Node* fused = graph_->FindNode("sum");
    ASSERT_NE(fused, nullptr);
    EXPECT_EQ(fused->type_string(), "_MatMulAccumulate");
    EXPECT_EQ(InputNames(fused), (std::vector<std::string>{"acc", "x1", "x2", "dy"}));
    int64_t pieces = 0;
    ASSERT_TRUE(GetAttr(fused->def().attrs, "N", &pieces).ok());
    EXPECT_EQ(pieces, 2);
  }
}

TEST_F(FuseOpsTest, AConcatAlongAxisZeroOrReadElsewhereStaysWhole) {
  ASSERT_EQ(BuildAndFuse(AccumulateChain(true, 0), {}, FuseMatMulAccumulate), 1);
  EXPECT_EQ(graph_->FindNode("x")->type_string(), "ConcatV2");
  EXPECT_EQ(InputNames(graph_->FindNode("sum")), (std::vector<std::string>{"acc", "x", "dy"}));

  std::vector<NodeDef> nodes = AccumulateChain(true, 1);
  nodes.push_back(Node("peek", "Identity", {"x"}));
  ASSERT_EQ(BuildAndFuse(nodes, {}, FuseMatMulAccumulate), 1);
  EXPECT_EQ(graph_->FindNode("x")->type_string(), "ConcatV2");
  EXPECT_EQ(InputNames(graph_->FindNode("sum")), (std::vector<std::string>{"acc", "x", "dy"}));
}

TEST_F(FuseOpsTest, OtherProductsAndSumsAreNotFused) {
  struct Case {
    const char* what;
    std::function<void(std::vector<NodeDef>*)> change;
  };
  auto product = [](std::vector<NodeDef>* nodes) -> NodeDef& { return (*nodes)[3]; };
  const std::vector<Case> cases = {
      {"x * dy", [&](auto* n) { product(n).attrs["transpose_a"] = false; }},
      {"x^T * dy^T", [&](auto* n) { product(n).attrs["transpose_b"] = true; }},
      {"the product read elsewhere",
       [](auto* n) { n->push_back(Node("peek", "Identity", {"product"})); }},
      {"Add, not AddV2", [](auto* n) { (*n)[4].op = "Add"; }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    std::vector<NodeDef> nodes = AccumulateChain();
    ASSERT_EQ(nodes[3].name, "product");
    c.change(&nodes);
    EXPECT_EQ(BuildAndFuse(nodes, {}, FuseMatMulAccumulate), 0);
    EXPECT_EQ(graph_->FindNode("product")->type_string(), "MatMul");
  }
  SCOPED_TRACE("double (the kernel is float)");
  EXPECT_EQ(BuildAndFuse(AccumulateChain(false, 1, DT_DOUBLE), {}, FuseMatMulAccumulate), 0);
  SCOPED_TRACE("the sum on another device");
  EXPECT_EQ(BuildAndFuse(AccumulateChain(), {"sum"}, FuseMatMulAccumulate), 0);
}

TEST_F(FuseOpsTest, FuseKernelsRunsEveryRewrite) {
  std::vector<NodeDef> nodes = Chain();
  for (NodeDef& def : PoolGradChain("x")) {
    if (def.name == "x") continue;  // both chains read the same x
    if (def.name == "out") def.name = "pool_out";
    nodes.push_back(def);
  }
  for (NodeDef& def : AccumulateChain()) {  // renamed apart from the others
    def.name = "m/" + def.name;
    for (std::string& input : def.inputs) input = "m/" + input;
    nodes.push_back(def);
  }
  EXPECT_EQ(BuildAndFuse(nodes, {}, FuseKernels), 3);
}

}  // namespace
}  // namespace weir
