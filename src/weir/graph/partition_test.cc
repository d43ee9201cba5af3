// Placement and partitioning of a placed graph.
#include "weir/graph/partition.h"

#include <gtest/gtest.h>

#include "weir/graph/graph_constructor.h"
#include "weir/graph/placer.h"
#include "weir/kernels/all_kernels.h"

namespace weir {
namespace {

const std::string kCpu0 = "/job:localhost/replica:0/task:0/device:CPU:0";
const std::string kCpu1 = "/job:localhost/replica:0/task:0/device:CPU:1";

NodeDef Node(const std::string& name, const std::string& op, std::vector<std::string> inputs,
             const std::string& device = "") {
  NodeDef def;
  def.name = name;
  def.op = op;
  def.inputs = std::move(inputs);
  def.device = device;
  if (op == "Const") {
    def.attrs["dtype"] = DT_FLOAT;
    def.attrs["value"] = Tensor::Scalar<float>(1);
  } else if (op != "NoOp") {
    def.attrs["T"] = DT_FLOAT;
  }
  return def;
}

class PartitionTest : public ::testing::Test {
 protected:
  void SetUp() override { RegisterAllKernels(); }
  Status Build(std::vector<NodeDef> nodes) {
    GraphDef def;
    def.nodes = std::move(nodes);
    WEIR_RETURN_IF_ERROR(ImportGraphDef(def, &graph_));
    return PlaceGraph(&graph_, {{kCpu0, "CPU"}, {kCpu1, "CPU"}}, 0);
  }
  Graph graph_;
};

TEST_F(PartitionTest, PlacementHonoursRequestsAndDefaults) {
  ASSERT_TRUE(Build({Node("a", "Const", {}), Node("b", "Neg", {"a"}, "/device:CPU:1"),
                     Node("c", "Neg", {"b"}, "/cpu:0")}).ok());
  EXPECT_EQ(graph_.FindNode("a")->assigned_device(), kCpu0);
  EXPECT_EQ(graph_.FindNode("b")->assigned_device(), kCpu1);
  EXPECT_EQ(graph_.FindNode("c")->assigned_device(), kCpu0);
}

TEST_F(PartitionTest, ColocationConflictListsTheConstraints) {
  NodeDef b = Node("b", "Neg", {"a"}, "/device:CPU:1");
  b.attrs["_class"] = std::vector<std::string>{"loc:@a"};
  Status s = Build({Node("a", "Const", {}, "/device:CPU:0"), b});
  ASSERT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("'a'"), std::string::npos) << s;
  EXPECT_NE(s.message().find("'b'"), std::string::npos) << s;
  EXPECT_NE(s.message().find("CPU:1"), std::string::npos) << s;
}

TEST_F(PartitionTest, MalformedDeviceRequestIsAnError) {
  Status s = Build({Node("a", "Const", {}, "/gpu:zero")});
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("/gpu:zero"), std::string::npos) << s;
}

TEST_F(PartitionTest, OneSendRecvPairPerTensorPerDevice) {
  // a (CPU:0) feeds two consumers on CPU:1: one transfer, not two.
  ASSERT_TRUE(Build({Node("a", "Const", {}), Node("b", "Neg", {"a"}, "/device:CPU:1"),
                     Node("c", "Neg", {"a"}, "/device:CPU:1"),
                     Node("d", "NoOp", {"^a"}, "/device:CPU:1")}).ok());
  std::map<std::string, GraphDef> parts;
  ASSERT_TRUE(PartitionGraph(graph_, [](const std::string&) { return uint64_t{42}; }, &parts).ok());
  ASSERT_EQ(parts.size(), 2u);
  auto count = [](const GraphDef& g, const std::string& op) {
    return std::count_if(g.nodes.begin(), g.nodes.end(), [&](const NodeDef& n) { return n.op == op; });
  };
  // One data transfer of a:0 and one for the control edge a -> d.
  EXPECT_EQ(count(parts[kCpu0], "_Send"), 2);
  EXPECT_EQ(count(parts[kCpu1], "_Recv"), 2);
  EXPECT_EQ(count(parts[kCpu1], "_Send"), 0);
  for (const auto& [device, def] : parts) {
    Graph g;
    Status imported = ImportGraphDef(def, &g, {.allow_internal_ops = true});
    EXPECT_TRUE(imported.ok()) << device << ": " << imported;
  }
  // Both consumers read the same _Recv.
  std::string b_input, c_input;
  for (const NodeDef& n : parts[kCpu1].nodes) {
    if (n.name == "b") b_input = n.inputs[0];
    if (n.name == "c") c_input = n.inputs[0];
  }
  EXPECT_EQ(b_input, c_input);
  EXPECT_NE(b_input.find("_recv"), std::string::npos);
}

}  // namespace
}  // namespace weir
