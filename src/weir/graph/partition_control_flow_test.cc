// Partitioning loops whose frames span devices: the frame of every node, the
// control loops each device of a frame gets, and where the transfers of a
// frame wait. Runs are in runtime/control_flow_partition_test.cc.
#include <gtest/gtest.h>

#include <set>

#include "weir/graph/control_flow_info.h"
#include "weir/graph/graph_constructor.h"
#include "weir/graph/graph_test_util.h"
#include "weir/graph/partition.h"
#include "weir/kernels/all_kernels.h"
#include "weir/ops/all_ops.h"

namespace weir {
namespace {

const std::string kCpu0 = "/job:localhost/replica:0/task:0/device:CPU:0";
const std::string kCpu1 = "/job:localhost/replica:0/task:0/device:CPU:1";
const std::string kCpu2 = "/job:localhost/replica:0/task:0/device:CPU:2";
const std::string kLoop0 = "_loop/outer/job_localhost/replica_0/task_0/device_CPU_0/";
const std::string kLoop1 = "_loop/outer/job_localhost/replica_0/task_0/device_CPU_1/";

NodeDef IntNode(const std::string& name, const std::string& op, std::vector<std::string> inputs,
                const std::string& device = "") {
  NodeDef def;
  def.name = name;
  def.op = op;
  def.inputs = std::move(inputs);
  def.device = device;
  if (op == "Const") {
    def.attrs["dtype"] = DT_INT32;
    def.attrs["value"] = Tensor::Scalar<int32_t>(1);
  } else if (op != "LoopCond" && op != "NoOp") {
    def.attrs["T"] = DT_INT32;
  }
  if (op == "Merge") def.attrs["N"] = 2;
  return def;
}

NodeDef EnterNode(const std::string& name, const std::string& input, const std::string& frame,
                  bool is_constant = false, const std::string& device = "") {
  NodeDef def = IntNode(name, "Enter", {input}, device);
  def.attrs["frame_name"] = frame;
  def.attrs["is_constant"] = is_constant;
  def.attrs["parallel_iterations"] = 4;
  return def;
}

// `i = start; while (i < limit) i = body(i)` as TensorFlow's control flow v1
// builds it, names prefixed with `p`; `add_device` places the body's Add.
std::vector<NodeDef> CountingLoop(const std::string& p, const std::string& frame,
                                  const std::string& start, const std::string& limit,
                                  const std::string& add_device = "") {
  return {EnterNode(p + "enter_i", start, frame),
          EnterNode(p + "enter_n", limit, frame, /*is_constant=*/true),
          IntNode(p + "merge", "Merge", {p + "enter_i", p + "next"}),
          IntNode(p + "less", "Less", {p + "merge", p + "enter_n"}),
          IntNode(p + "cond", "LoopCond", {p + "less"}),
          IntNode(p + "switch", "Switch", {p + "merge", p + "cond"}),
          IntNode(p + "body", "Identity", {p + "switch:1"}),
          IntNode(p + "one", "Const", {"^" + p + "body"}),
          IntNode(p + "add", "Add", {p + "body", p + "one"}, add_device),
          IntNode(p + "next", "NextIteration", {p + "add"}),
          IntNode(p + "exit", "Exit", {p + "switch"})};
}

const NodeDef* FindDef(const GraphDef& g, const std::string& name) {
  for (const NodeDef& n : g.nodes) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

int CountPrefix(const GraphDef& g, const std::string& prefix) {
  return static_cast<int>(std::count_if(g.nodes.begin(), g.nodes.end(), [&](const NodeDef& n) {
    return n.name.starts_with(prefix);
  }));
}

class PartitionControlFlowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterAllOps();
    RegisterAllKernels();
  }
  Status Build(std::vector<NodeDef> nodes) {
    GraphDef def;
    def.nodes = std::move(nodes);
    WEIR_RETURN_IF_ERROR(ImportGraphDef(def, &graph_));
    return PlaceOnRequestedDevices(&graph_, {{kCpu0, "CPU"}, {kCpu1, "CPU"}, {kCpu2, "CPU"}});
  }
  Status Partition() {
    Status s = PartitionGraph(graph_, PartitionOptions{}, &parts_, &changes_);
    if (!s.ok()) return s;
    for (const auto& [device, def] : parts_) {
      Graph g;
      WEIR_RETURN_IF_ERROR(ImportGraphDef(def, &g, {.allow_internal_ops = true}));
    }
    return Status::OK();
  }
  // Every _Recv of `part` whose value lives in a frame waits for a Merge of
  // a control loop of that frame; returns how many do.
  int RecvsWaitingForControlLoop(const GraphDef& part, const std::string& loop_prefix) {
    int waiting = 0;
    for (const NodeDef& n : part.nodes) {
      if (n.op != "_Recv") continue;
      for (const std::string& input : n.inputs) {
        if (input == "^" + loop_prefix + "merge") ++waiting;
      }
    }
    return waiting;
  }
  Graph graph_;
  std::map<std::string, GraphDef> parts_;
  std::vector<std::string> changes_;
};

TEST_F(PartitionControlFlowTest, FrameOfEveryNode) {
  std::vector<NodeDef> nodes = {IntNode("start", "Const", {}), IntNode("limit", "Const", {})};
  for (NodeDef& n : CountingLoop("o/", "outer", "start", "limit")) nodes.push_back(std::move(n));
  // An inner loop inside the outer body, counting from the outer counter.
  for (NodeDef& n : CountingLoop("i/", "inner", "o/body", "o/enter_n")) {
    nodes.push_back(std::move(n));
  }
  nodes.push_back(IntNode("after", "Neg", {"o/exit"}));
  ASSERT_TRUE(Build(std::move(nodes)).ok());
  auto info = BuildControlFlowInfo(graph_);
  ASSERT_TRUE(info.ok()) << info.status();
  ASSERT_EQ(info->frames.size(), 3u);
  auto frame_name = [&](const std::string& node) {
    return info->frames[info->FrameOf(graph_.FindNode(node))].name;
  };
  EXPECT_EQ(frame_name("start"), "");
  EXPECT_EQ(frame_name("o/enter_i"), "outer");
  EXPECT_EQ(frame_name("o/one"), "outer");  // by its control input
  EXPECT_EQ(frame_name("o/exit"), "outer");
  EXPECT_EQ(frame_name("after"), "");
  EXPECT_EQ(frame_name("i/enter_i"), "inner");
  EXPECT_EQ(frame_name("i/add"), "inner");
  EXPECT_EQ(info->frames[info->FrameOf(graph_.FindNode("i/add"))].parent,
            info->FrameOf(graph_.FindNode("o/add")));
  EXPECT_EQ(info->OutputFrameOf(graph_.FindNode("o/exit")), 0);
  EXPECT_EQ(info->frames[1].loop_cond->name(), "o/cond");
  EXPECT_EQ(info->frames[1].parallel_iterations, 4);
  // Values in the first iteration only: a non-constant Enter's, until a Merge.
  auto first_only = [&](const std::string& node) {
    return info->OnlyInFirstIteration(graph_.FindNode(node));
  };
  EXPECT_TRUE(first_only("o/enter_i"));
  EXPECT_FALSE(first_only("o/enter_n"));
  EXPECT_FALSE(first_only("o/merge"));
  EXPECT_FALSE(first_only("o/add"));
  EXPECT_FALSE(first_only("o/next"));
  EXPECT_TRUE(first_only("i/enter_i"));
  EXPECT_FALSE(first_only("i/exit"));  // the inner loop runs in every outer iteration
  EXPECT_FALSE(first_only("after"));
}

TEST_F(PartitionControlFlowTest, InputsFromTwoFramesAreAnError) {
  std::vector<NodeDef> nodes = {IntNode("start", "Const", {}), IntNode("limit", "Const", {})};
  for (NodeDef& n : CountingLoop("", "outer", "start", "limit")) nodes.push_back(std::move(n));
  nodes.push_back(IntNode("bad", "Add", {"body", "start"}));  // "start" never entered the loop
  ASSERT_TRUE(Build(std::move(nodes)).ok());
  auto info = BuildControlFlowInfo(graph_);
  ASSERT_EQ(info.status().code(), Code::kInvalidArgument);
  EXPECT_NE(info.status().message().find("'bad'"), std::string::npos) << info.status();
  EXPECT_NE(info.status().message().find("frame 'outer'"), std::string::npos) << info.status();
  EXPECT_NE(info.status().message().find("root frame"), std::string::npos) << info.status();
}

TEST_F(PartitionControlFlowTest, ExitOrNextIterationOutsideALoopIsAnError) {
  for (const char* op : {"Exit", "NextIteration"}) {
    GraphDef def;
    def.nodes = {IntNode("start", "Const", {}), IntNode("stray", op, {"start"})};
    Graph graph;
    ASSERT_TRUE(ImportGraphDef(def, &graph).ok());
    auto info = BuildControlFlowInfo(graph);
    ASSERT_EQ(info.status().code(), Code::kInvalidArgument) << op;
    EXPECT_NE(info.status().message().find("'stray'"), std::string::npos) << info.status();
    EXPECT_NE(info.status().message().find("not inside a loop"), std::string::npos)
        << info.status();
  }
}

TEST_F(PartitionControlFlowTest, LoopOnOneDeviceGetsNoControlLoop) {
  std::vector<NodeDef> nodes = {IntNode("start", "Const", {}), IntNode("limit", "Const", {})};
  for (NodeDef& n : CountingLoop("", "outer", "start", "limit")) nodes.push_back(std::move(n));
  nodes.push_back(IntNode("after", "Neg", {"exit"}, "/device:CPU:1"));
  ASSERT_TRUE(Build(std::move(nodes)).ok());
  ASSERT_TRUE(Partition().ok());
  ASSERT_EQ(parts_.size(), 2u);
  for (const auto& [device, part] : parts_) EXPECT_EQ(CountPrefix(part, "_loop/"), 0) << device;
  // The Exit's value crosses in the root frame: its _Recv waits for nothing.
  const NodeDef* after = FindDef(parts_[kCpu1], "after");
  ASSERT_NE(after, nullptr);
  const NodeDef* recv = FindDef(parts_[kCpu1], after->inputs[0]);
  ASSERT_NE(recv, nullptr);
  EXPECT_EQ(recv->op, "_Recv");
  EXPECT_TRUE(recv->inputs.empty());
  EXPECT_TRUE(changes_.empty());
}

// The body's Add on CPU:1: both devices get a control loop of the frame;
// CPU:1's Switch reads the LoopCond through a _Recv, CPU:0's directly, and
// every _Recv of the frame waits for its device's control loop.
TEST_F(PartitionControlFlowTest, BodyOnTwoDevicesGetsControlLoops) {
  std::vector<NodeDef> nodes = {IntNode("start", "Const", {}), IntNode("limit", "Const", {})};
  for (NodeDef& n : CountingLoop("", "outer", "start", "limit", "/device:CPU:1")) {
    nodes.push_back(std::move(n));
  }
  ASSERT_TRUE(Build(std::move(nodes)).ok());
  Status s = Partition();
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(parts_.size(), 2u);
  EXPECT_EQ(changes_,
            std::vector<std::string>{"2 control loops keep the devices of loop frames in step"});
  for (const auto& [device, part] : parts_) {
    const std::string loop = device == kCpu0 ? kLoop0 : kLoop1;
    EXPECT_EQ(CountPrefix(part, loop), 6) << device;  // start, enter, merge, switch, next, exit
    const NodeDef* enter = FindDef(part, loop + "enter");
    ASSERT_NE(enter, nullptr) << device;
    EXPECT_EQ(enter->attrs.at("frame_name").s(), "outer");
    EXPECT_EQ(enter->attrs.at("parallel_iterations").i(), 4);
    EXPECT_EQ(enter->inputs, std::vector<std::string>{loop + "start"});
    const NodeDef* merge = FindDef(part, loop + "merge");
    ASSERT_NE(merge, nullptr);
    EXPECT_EQ(merge->inputs, (std::vector<std::string>{loop + "enter", loop + "next"}));
    EXPECT_EQ(FindDef(part, loop + "next")->inputs, std::vector<std::string>{loop + "switch:1"});
    EXPECT_EQ(FindDef(part, loop + "exit")->inputs, std::vector<std::string>{loop + "switch"});
  }
  const NodeDef* switch0 = FindDef(parts_[kCpu0], kLoop0 + "switch");
  EXPECT_EQ(switch0->inputs, (std::vector<std::string>{kLoop0 + "merge", "cond"}));
  const NodeDef* switch1 = FindDef(parts_[kCpu1], kLoop1 + "switch");
  ASSERT_EQ(switch1->inputs.size(), 2u);
  const NodeDef* pred = FindDef(parts_[kCpu1], switch1->inputs[1]);
  ASSERT_NE(pred, nullptr);
  EXPECT_EQ(pred->op, "_Recv");
  EXPECT_EQ(pred->attrs.at("tensor_type").type(), DT_BOOL);
  // CPU:1 receives Add's inputs and the predicate; CPU:0 receives add:0.
  int recvs1 = 0;
  for (const NodeDef& n : parts_[kCpu1].nodes) recvs1 += n.op == "_Recv";
  EXPECT_EQ(recvs1, 3);  // body:0, one:0, cond:0
  EXPECT_EQ(RecvsWaitingForControlLoop(parts_[kCpu1], kLoop1), 3);
  EXPECT_EQ(RecvsWaitingForControlLoop(parts_[kCpu0], kLoop0), 1);  // add:0
  // The back edge stays on CPU:0: next reads the _Recv of add.
  const NodeDef* next = FindDef(parts_[kCpu0], "next");
  ASSERT_NE(next, nullptr);
  EXPECT_EQ(FindDef(parts_[kCpu0], next->inputs[0])->op, "_Recv");
}

// NextIteration on CPU:1 feeding the Merge on CPU:0: the value crosses
// before NextIteration, whose copy on CPU:0 feeds the Merge.
TEST_F(PartitionControlFlowTest, BackEdgeCrossesBeforeNextIteration) {
  std::vector<NodeDef> nodes = {IntNode("start", "Const", {}), IntNode("limit", "Const", {})};
  for (NodeDef& n : CountingLoop("", "outer", "start", "limit", "/device:CPU:1")) {
    if (n.name == "next") n.device = "/device:CPU:1";
    nodes.push_back(std::move(n));
  }
  ASSERT_TRUE(Build(std::move(nodes)).ok());
  ASSERT_TRUE(Partition().ok());
  const NodeDef* merge = FindDef(parts_[kCpu0], "merge");
  ASSERT_NE(merge, nullptr);
  const NodeDef* copy = FindDef(parts_[kCpu0], merge->inputs[1]);
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->op, "NextIteration");
  EXPECT_EQ(copy->device, kCpu0);
  const NodeDef* recv = FindDef(parts_[kCpu0], copy->inputs[0]);
  ASSERT_NE(recv, nullptr);
  EXPECT_EQ(recv->op, "_Recv");
  EXPECT_EQ(recv->attrs.at("tensor_name").s(), "edge_add_0");
  EXPECT_NE(std::find(recv->inputs.begin(), recv->inputs.end(), "^" + kLoop0 + "merge"),
            recv->inputs.end());
  // No transfer reads a NextIteration's output, and the original, with
  // no consumer left on CPU:1, is gone.
  for (const auto& [device, part] : parts_) {
    for (const NodeDef& n : part.nodes) {
      if (n.op == "_Send") {
        EXPECT_NE(n.inputs[0], "next") << device;
      }
    }
  }
  EXPECT_EQ(FindDef(parts_[kCpu1], "next"), nullptr);
}

// An Enter on another device than its Merge: a copy of the Enter on the
// Merge's device reads the value there, so the Merge still sees an Enter.
// A value that comes from the Enter through another node exists only in
// the first iteration: its _Recv waits for the control loop's Enter, not
// its Merge (which would run it, and wait forever, in every iteration).
TEST_F(PartitionControlFlowTest, ValuesCrossBeforeEnterAndFirstIterationValuesOnce) {
  std::vector<NodeDef> nodes = {IntNode("start", "Const", {}), IntNode("limit", "Const", {})};
  for (NodeDef& n : CountingLoop("", "outer", "start", "limit")) {
    if (n.name == "enter_i") n.device = "/device:CPU:1";
    nodes.push_back(std::move(n));
  }
  nodes.push_back(IntNode("copy", "Identity", {"enter_i"}, "/device:CPU:1"));
  nodes.push_back(IntNode("from_copy", "Neg", {"copy"}));
  ASSERT_TRUE(Build(std::move(nodes)).ok());
  ASSERT_TRUE(Partition().ok());
  const NodeDef* merge = FindDef(parts_[kCpu0], "merge");
  ASSERT_NE(merge, nullptr);
  const NodeDef* enter = FindDef(parts_[kCpu0], merge->inputs[0]);
  ASSERT_NE(enter, nullptr);
  EXPECT_EQ(enter->op, "Enter");
  EXPECT_EQ(enter->attrs.at("frame_name").s(), "outer");
  EXPECT_EQ(enter->inputs, std::vector<std::string>{"start"});
  const NodeDef* neg = FindDef(parts_[kCpu0], "from_copy");
  ASSERT_NE(neg, nullptr);
  const NodeDef* recv = FindDef(parts_[kCpu0], neg->inputs[0]);
  ASSERT_NE(recv, nullptr);
  EXPECT_EQ(recv->op, "_Recv");
  EXPECT_EQ(recv->inputs, std::vector<std::string>{"^" + kLoop0 + "enter"});
  // No transfer reads an Enter's output.
  for (const auto& [device, part] : parts_) {
    for (const NodeDef& n : part.nodes) {
      if (n.op == "_Send") {
        EXPECT_NE(n.inputs[0], "enter_i") << device;
      }
    }
  }
}

// Inner loop body on CPU:1, all else on CPU:0: CPU:1 also steps the outer
// frame, and its inner control loop is entered from its outer one.
TEST_F(PartitionControlFlowTest, NestedFramesAcrossDevices) {
  std::vector<NodeDef> nodes = {IntNode("start", "Const", {}), IntNode("limit", "Const", {})};
  for (NodeDef& n : CountingLoop("o/", "outer", "start", "limit")) nodes.push_back(std::move(n));
  for (NodeDef& n : CountingLoop("i/", "inner", "o/body", "o/enter_n", "/device:CPU:1")) {
    nodes.push_back(std::move(n));
  }
  // The outer body adds the inner loop's result.
  for (NodeDef& n : nodes) {
    if (n.name == "o/add") n.inputs = {"i/exit", "o/one"};
  }
  ASSERT_TRUE(Build(std::move(nodes)).ok());
  Status s = Partition();
  ASSERT_TRUE(s.ok()) << s;
  const std::string inner1 = "_loop/inner/job_localhost/replica_0/task_0/device_CPU_1/";
  const std::string inner0 = "_loop/inner/job_localhost/replica_0/task_0/device_CPU_0/";
  GraphDef& cpu1 = parts_[kCpu1];
  ASSERT_NE(FindDef(cpu1, kLoop1 + "merge"), nullptr);
  ASSERT_NE(FindDef(cpu1, inner1 + "merge"), nullptr);
  ASSERT_NE(FindDef(parts_[kCpu0], inner0 + "merge"), nullptr);
  EXPECT_EQ(FindDef(cpu1, kLoop1 + "enter")->inputs, std::vector<std::string>{kLoop1 + "start"});
  EXPECT_EQ(FindDef(cpu1, inner1 + "enter")->inputs, std::vector<std::string>{kLoop1 + "switch:1"});
  EXPECT_EQ(FindDef(cpu1, inner1 + "start"), nullptr);
  // CPU:1 receives the outer predicate for its outer control loop, waiting
  // for that loop; the inner body's value and predicate wait for the inner one.
  const NodeDef* outer_switch = FindDef(cpu1, kLoop1 + "switch");
  const NodeDef* outer_pred = FindDef(cpu1, outer_switch->inputs[1]);
  ASSERT_NE(outer_pred, nullptr);
  EXPECT_EQ(outer_pred->attrs.at("tensor_name").s(), "edge_o/cond_0");
  EXPECT_EQ(outer_pred->inputs, std::vector<std::string>{"^" + kLoop1 + "merge"});
  EXPECT_EQ(RecvsWaitingForControlLoop(cpu1, kLoop1), 1);
  EXPECT_EQ(RecvsWaitingForControlLoop(cpu1, inner1), 3);  // i/body, i/one, i/cond
  EXPECT_EQ(RecvsWaitingForControlLoop(parts_[kCpu0], inner0), 1);  // i/add
}

// A frame on two devices needs a LoopCond to step them.
TEST_F(PartitionControlFlowTest, FrameAcrossDevicesWithoutLoopCondIsAnError) {
  ASSERT_TRUE(
      Build({IntNode("start", "Const", {}), EnterNode("enter", "start", "f"),
             IntNode("neg", "Neg", {"enter"}, "/device:CPU:1"), IntNode("exit", "Exit", {"neg"})})
          .ok());
  Status s = PartitionGraph(graph_, PartitionOptions{}, &parts_);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("'f'"), std::string::npos) << s;
  EXPECT_NE(s.message().find("LoopCond"), std::string::npos) << s;
}

}  // namespace
}  // namespace weir
