// Placement and partitioning of a placed graph.
#include "weir/graph/partition.h"

#include <gtest/gtest.h>

#include <set>

#include "weir/graph/graph_constructor.h"
#include "weir/graph/graph_test_util.h"
#include "weir/graph/placer.h"
#include "weir/kernels/all_kernels.h"
#include "weir/ops/all_ops.h"

namespace weir {
namespace {

const std::string kCpu0 = "/job:localhost/replica:0/task:0/device:CPU:0";
const std::string kCpu1 = "/job:localhost/replica:0/task:0/device:CPU:1";
const std::string kCpu2 = "/job:localhost/replica:0/task:0/device:CPU:2";

const NodeDef* FindDef(const GraphDef& g, const std::string& name) {
  for (const NodeDef& n : g.nodes) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

int CountOp(const GraphDef& g, const std::string& op) {
  return static_cast<int>(
      std::count_if(g.nodes.begin(), g.nodes.end(), [&](const NodeDef& n) { return n.op == op; }));
}

void ExpectImports(const std::map<std::string, GraphDef>& parts) {
  for (const auto& [device, def] : parts) {
    Graph g;
    Status imported = ImportGraphDef(def, &g, {.allow_internal_ops = true});
    EXPECT_TRUE(imported.ok()) << device << ": " << imported;
  }
}

class PartitionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterAllOps();
    RegisterAllKernels();
  }
  Status Build(std::vector<NodeDef> nodes, int num_devices = 2) {
    GraphDef def;
    def.nodes = std::move(nodes);
    WEIR_RETURN_IF_ERROR(ImportGraphDef(def, &graph_));
    std::vector<DeviceInfo> devices = {{kCpu0, "CPU"}, {kCpu1, "CPU"}};
    if (num_devices > 2) devices.push_back({kCpu2, "CPU"});
    return PlaceOnRequestedDevices(&graph_, devices);
  }
  Graph graph_;
};

TEST_F(PartitionTest, PlacementHonoursRequestsAndDefaults) {
  ASSERT_TRUE(Build({FloatNode("a", "Const", {}), FloatNode("b", "Neg", {"a"}, "/device:CPU:1"),
                     FloatNode("c", "Neg", {"b"}, "/cpu:0")})
                  .ok());
  EXPECT_EQ(graph_.FindNode("a")->assigned_device(), kCpu0);
  EXPECT_EQ(graph_.FindNode("b")->assigned_device(), kCpu1);
  EXPECT_EQ(graph_.FindNode("c")->assigned_device(), kCpu0);
}

TEST_F(PartitionTest, ColocationConflictListsTheConstraints) {
  NodeDef b = FloatNode("b", "Neg", {"a"}, "/device:CPU:1");
  b.attrs["_class"] = std::vector<std::string>{"loc:@a"};
  Status s = Build({FloatNode("a", "Const", {}, "/device:CPU:0"), b});
  ASSERT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("'a'"), std::string::npos) << s;
  EXPECT_NE(s.message().find("'b'"), std::string::npos) << s;
  EXPECT_NE(s.message().find("CPU:1"), std::string::npos) << s;
}

TEST_F(PartitionTest, MalformedDeviceRequestIsAnError) {
  Status s = Build({FloatNode("a", "Const", {}, "/gpu:zero")});
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("/gpu:zero"), std::string::npos) << s;
}

TEST_F(PartitionTest, OneSendRecvPairPerTensorPerDevice) {
  // a (CPU:0) feeds two consumers on CPU:1: one transfer, not two.
  ASSERT_TRUE(Build({FloatNode("a", "Const", {}), FloatNode("b", "Neg", {"a"}, "/device:CPU:1"),
                     FloatNode("c", "Neg", {"a"}, "/device:CPU:1"),
                     FloatNode("d", "NoOp", {"^a"}, "/device:CPU:1")})
                  .ok());
  std::map<std::string, GraphDef> parts;
  PartitionOptions options;
  options.incarnation = [](const std::string&) { return uint64_t{42}; };
  ASSERT_TRUE(PartitionGraph(graph_, options, &parts).ok());
  ASSERT_EQ(parts.size(), 2u);
  auto count = [](const GraphDef& g, const std::string& op) {
    return std::count_if(g.nodes.begin(), g.nodes.end(),
                         [&](const NodeDef& n) { return n.op == op; });
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

// One tensor sent to two devices: two sends with distinct names (the name
// carries the destination), each partition imports.
TEST_F(PartitionTest, SendsOfOneTensorToTwoDevicesHaveDistinctNames) {
  ASSERT_TRUE(Build({FloatNode("a", "Const", {}), FloatNode("b", "Neg", {"a"}, "/device:CPU:1"),
                     FloatNode("c", "Neg", {"a"}, "/device:CPU:2")},
                    3)
                  .ok());
  std::map<std::string, GraphDef> parts;
  ASSERT_TRUE(PartitionGraph(graph_, PartitionOptions{}, &parts).ok());
  ASSERT_EQ(CountOp(parts[kCpu0], "_Send"), 2);
  std::set<std::string> names;
  for (const NodeDef& n : parts[kCpu0].nodes) names.insert(n.name);
  EXPECT_EQ(names.size(), parts[kCpu0].nodes.size());
  ExpectImports(parts);
  // The pair shares its name past the prefix, for traces.
  const NodeDef* b = FindDef(parts[kCpu1], "b");
  ASSERT_NE(b, nullptr);
  std::string recv = b->inputs[0];
  EXPECT_TRUE(FindDef(parts[kCpu0], "_send/" + std::string(TransferPairName(recv))) != nullptr)
      << recv;
  EXPECT_FALSE(IsSendName(recv));
  EXPECT_TRUE(TransferPairName("b").empty());
}

// Lossy transfers: a float32 tensor is narrowed to bfloat16 before its Send
// and widened after its Recv; an int32 tensor and a control edge travel as
// before.
TEST_F(PartitionTest, LossyTransfersNarrowOnlyFloat32) {
  NodeDef ints = FloatNode("i", "Const", {});
  ints.attrs["dtype"] = DT_INT32;
  ints.attrs["value"] = Tensor::Scalar<int32_t>(7);
  NodeDef ints_neg = FloatNode("j", "Neg", {"i"}, "/device:CPU:1");
  ints_neg.attrs["T"] = DT_INT32;
  ASSERT_TRUE(Build({FloatNode("a", "Const", {}), FloatNode("b", "Neg", {"a"}, "/device:CPU:1"),
                     FloatNode("c", "Neg", {"a"}, "/device:CPU:1"), ints, ints_neg,
                     FloatNode("d", "NoOp", {"^a"}, "/device:CPU:1")})
                  .ok());
  PartitionOptions options;
  options.lossy_float_transfers = true;
  std::map<std::string, GraphDef> parts;
  std::vector<std::string> changes;
  ASSERT_TRUE(PartitionGraph(graph_, options, &parts, &changes).ok());
  ExpectImports(parts);
  EXPECT_EQ(changes, std::vector<std::string>{"1 float32 transfers sent as bfloat16"});
  EXPECT_EQ(CountOp(parts[kCpu0], "Cast"), 1);
  EXPECT_EQ(CountOp(parts[kCpu1], "Cast"), 1);
  for (const NodeDef& n : parts[kCpu0].nodes) {
    if (n.op == "Cast") {
      EXPECT_EQ(n.inputs, std::vector<std::string>{"a"});
      EXPECT_EQ(n.attrs.at("DstT").type(), DT_BFLOAT16);
    }
    if (n.op != "_Send") continue;
    if (n.inputs[0] == "i") {
      EXPECT_EQ(n.attrs.at("T").type(), DT_INT32);
    } else if (n.inputs[0].starts_with("_control/")) {
      EXPECT_EQ(n.attrs.at("T").type(), DT_FLOAT);
    } else {
      EXPECT_EQ(n.attrs.at("T").type(), DT_BFLOAT16) << n.name;
    }
  }
  // Both float consumers read the one widening Cast.
  const NodeDef* b = FindDef(parts[kCpu1], "b");
  const NodeDef* c = FindDef(parts[kCpu1], "c");
  ASSERT_TRUE(b != nullptr && c != nullptr);
  EXPECT_EQ(b->inputs, c->inputs);
  const NodeDef* widen = FindDef(parts[kCpu1], b->inputs[0]);
  ASSERT_NE(widen, nullptr);
  EXPECT_EQ(widen->op, "Cast");
  EXPECT_EQ(widen->attrs.at("SrcT").type(), DT_BFLOAT16);
  EXPECT_EQ(widen->attrs.at("DstT").type(), DT_FLOAT);
  const NodeDef* j = FindDef(parts[kCpu1], "j");
  ASSERT_NE(j, nullptr);
  EXPECT_TRUE(j->inputs[0].starts_with("_recv/")) << j->inputs[0];
}

}  // namespace
}  // namespace weir
