// Recv scheduling: which node each _Recv waits for, and that the added
// control edges never close a cycle, on one device or across several.
#include "weir/graph/recv_schedule.h"

#include <gtest/gtest.h>

#include <deque>
#include <set>

#include "weir/graph/graph_constructor.h"
#include "weir/graph/graph_test_util.h"
#include "weir/graph/partition.h"
#include "weir/graph/placer.h"
#include "weir/graph/random_dag_test_util.h"
#include "weir/kernels/all_kernels.h"
#include "weir/ops/all_ops.h"

namespace weir {
namespace {

using testing_dag::CpuName;

NodeDef Op(const std::string& name, const std::string& op, std::vector<std::string> inputs,
           int device) {
  return FloatNode(name, op, std::move(inputs), StrCat("/device:CPU:", device));
}

// True when the partitions together, each _Send joined to its _Recv, have
// no cycle: then every node of the step can run.
bool StepIsAcyclic(const std::map<std::string, GraphDef>& parts, std::string* stuck) {
  std::map<std::string, std::vector<std::string>> preds;
  std::map<std::string, std::string> send_by_key;
  for (const auto& [device, def] : parts) {
    for (const NodeDef& n : def.nodes) {
      auto& p = preds[n.name];
      for (const std::string& in : n.inputs) {
        std::string name = in[0] == '^' ? in.substr(1) : in.substr(0, in.find(':'));
        p.push_back(name);
      }
      if (n.op == "_Send") {
        send_by_key[n.attrs.at("tensor_name").s() + ";" + n.attrs.at("recv_device").s()] = n.name;
      }
    }
  }
  for (const auto& [device, def] : parts) {
    for (const NodeDef& n : def.nodes) {
      if (n.op != "_Recv") continue;
      auto it =
          send_by_key.find(n.attrs.at("tensor_name").s() + ";" + n.attrs.at("recv_device").s());
      if (it == send_by_key.end()) {
        *stuck = "no _Send for " + n.name;
        return false;
      }
      preds[n.name].push_back(it->second);
    }
  }
  std::map<std::string, int> pending;
  std::map<std::string, std::vector<std::string>> succs;
  for (const auto& [name, ps] : preds) {
    pending[name] += static_cast<int>(ps.size());
    for (const std::string& p : ps) succs[p].push_back(name);
  }
  std::deque<std::string> ready;
  for (const auto& [name, count] : pending) {
    if (count == 0) ready.push_back(name);
  }
  size_t done = 0;
  while (!ready.empty()) {
    std::string name = ready.front();
    ready.pop_front();
    ++done;
    for (const std::string& s : succs[name]) {
      if (--pending[s] == 0) ready.push_back(s);
    }
  }
  for (const auto& [name, count] : pending) {
    if (count > 0) *stuck = name;
  }
  return done == pending.size();
}

// The control inputs of the _Recv of `src`:0 in `part`.
std::vector<std::string> RecvControls(const GraphDef& part, const std::string& src) {
  for (const NodeDef& n : part.nodes) {
    if (n.op == "_Recv" && n.name.starts_with("_recv/" + src + "/0/")) return n.inputs;
  }
  return {"<no recv>"};
}

class RecvScheduleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterAllOps();
    RegisterAllKernels();
  }
  Status Build(std::vector<NodeDef> nodes, int num_devices = 2) {
    GraphDef def;
    def.nodes = std::move(nodes);
    return BuildDef(def, num_devices);
  }
  Status BuildDef(const GraphDef& def, int num_devices) {
    graph_ = std::make_unique<Graph>();
    WEIR_RETURN_IF_ERROR(ImportGraphDef(def, graph_.get()));
    std::vector<DeviceInfo> devices;
    for (int i = 0; i < num_devices; ++i) devices.push_back({CpuName(i), "CPU"});
    return PlaceOnRequestedDevices(graph_.get(), devices);
  }
  StatusOr<std::map<std::string, GraphDef>> Partition(bool schedule,
                                                      RecvScheduleOptions costs = {}) {
    PartitionOptions options;
    options.schedule_recvs = schedule;
    options.recv_schedule = std::move(costs);
    std::map<std::string, GraphDef> parts;
    WEIR_RETURN_IF_ERROR(PartitionGraph(*graph_, options, &parts, &changes_));
    return parts;
  }
  std::unique_ptr<Graph> graph_;
  std::vector<std::string> changes_;
};

RecvScheduleOptions HalfMicroTransfers() {
  RecvScheduleOptions costs;
  costs.transfer_micros = [](const Node*, int, const std::string&, const std::string&) {
    return 0.5;
  };
  return costs;
}

// x is ready at once on CPU:0 but needed on CPU:1 only after a chain of five
// nodes: its Recv waits for the chain's fourth node, which finishes (1 us
// per node) just before the Recv must start (5.5 us, the consumer's start
// minus the 0.5 us transfer); the fifth would be too late.
TEST_F(RecvScheduleTest, RecvWaitsForTheNodeThatFinishesJustBeforeItIsNeeded) {
  ASSERT_TRUE(
      Build({Op("x", "Const", {}, 0), Op("b0", "Const", {}, 1), Op("b1", "Neg", {"b0"}, 1),
             Op("b2", "Neg", {"b1"}, 1), Op("b3", "Neg", {"b2"}, 1), Op("b4", "Neg", {"b3"}, 1),
             Op("b5", "Neg", {"b4"}, 1), Op("end", "Add", {"b5", "x"}, 1)})
          .ok());
  auto schedule = ScheduleRecvs(*graph_, HalfMicroTransfers(), nullptr);
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  ASSERT_EQ(schedule->start_after.size(), 1u);
  const auto& [key, after] = *schedule->start_after.begin();
  EXPECT_EQ(std::get<0>(key), graph_->FindNode("x")->id());
  EXPECT_EQ(std::get<2>(key), CpuName(1));
  EXPECT_EQ(after->name(), "b4");

  auto parts = Partition(true, HalfMicroTransfers());
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_EQ(RecvControls((*parts)[CpuName(1)], "x"), std::vector<std::string>{"^b4"});
  ASSERT_EQ(changes_.size(), 1u);
  EXPECT_NE(changes_[0].find("_Recv of x:0"), std::string::npos) << changes_[0];
  EXPECT_NE(changes_[0].find("'b4'"), std::string::npos) << changes_[0];
  for (const auto& [device, def] : *parts) {
    Graph g;
    Status imported = ImportGraphDef(def, &g, {.allow_internal_ops = true});
    EXPECT_TRUE(imported.ok()) << device << ": " << imported;
  }

  // Off, the Recv starts at once.
  changes_.clear();
  auto unscheduled = Partition(false);
  ASSERT_TRUE(unscheduled.ok());
  EXPECT_TRUE(RecvControls((*unscheduled)[CpuName(1)], "x").empty());
  EXPECT_TRUE(changes_.empty());
}

TEST_F(RecvScheduleTest, RecvNeededAtOnceGetsNoControlInput) {
  ASSERT_TRUE(Build({Op("x", "Const", {}, 0), Op("y", "Neg", {"x"}, 1), Op("b0", "Const", {}, 1),
                     Op("b1", "Neg", {"b0"}, 1), Op("end", "Add", {"b1", "y"}, 1)})
                  .ok());
  auto parts = Partition(true, HalfMicroTransfers());
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_TRUE(RecvControls((*parts)[CpuName(1)], "x").empty());
}

// u on CPU:1 reads x's Recv; w on CPU:0 reads u; c on CPU:1 reads w; end on
// CPU:1 needs c only after a long chain on CPU:0. c finishes early (ASAP)
// and is needed late, well after the Recv of x could start late: a
// scheduler comparing c's ASAP finish with the Recv's latest start would
// pick c and close the cycle Recv(x) -> u -> w -> c -> Recv(x) across the
// two devices, hanging the step. Nothing on CPU:1 is safe here.
TEST_F(RecvScheduleTest, NeverClosesACycleThroughAnotherDevice) {
  std::vector<NodeDef> nodes = {Op("x", "Const", {}, 0), Op("u", "Neg", {"x"}, 1),
                                Op("w", "Neg", {"u"}, 0), Op("c", "Neg", {"w"}, 1),
                                Op("l0", "Const", {}, 0)};
  for (int i = 1; i <= 20; ++i) {
    nodes.push_back(Op(StrCat("l", i), "Neg", {StrCat("l", i - 1)}, 0));
  }
  nodes.push_back(Op("end", "Add", {"c", "l20"}, 1));
  ASSERT_TRUE(Build(nodes).ok());
  auto parts = Partition(true, HalfMicroTransfers());
  ASSERT_TRUE(parts.ok()) << parts.status();
  std::string stuck;
  EXPECT_TRUE(StepIsAcyclic(*parts, &stuck)) << stuck;
  for (const std::string& in : RecvControls((*parts)[CpuName(1)], "x")) {
    EXPECT_NE(in, "^c");
    EXPECT_NE(in, "^u");
  }
}

// Random DAGs on 2-4 devices with random node and transfer costs: every
// added control input comes from a node of the Recv's own device, and the
// step stays acyclic.
TEST_F(RecvScheduleTest, RandomDagsStayAcyclic) {
  int scheduled = 0;
  for (uint32_t seed = 1; seed <= 150; ++seed) {
    const int devices = 2 + static_cast<int>(seed % 3);
    testing_dag::RandomDag dag = testing_dag::MakeRandomDag(seed, devices, 10 + seed % 40, 4);
    ASSERT_TRUE(BuildDef(dag.graph, devices).ok()) << seed;
    RecvScheduleOptions costs;
    costs.node_micros = [seed](const Node* n) {
      return static_cast<double>((std::hash<std::string>()(n->name()) + seed) % 7);
    };
    costs.transfer_micros = [seed](const Node* n, int port, const std::string&,
                                   const std::string& dst) {
      return static_cast<double>((std::hash<std::string>()(n->name() + dst) + seed + port) % 5);
    };
    changes_.clear();
    auto parts = Partition(true, costs);
    ASSERT_TRUE(parts.ok()) << seed << ": " << parts.status();
    std::string stuck;
    ASSERT_TRUE(StepIsAcyclic(*parts, &stuck)) << "seed " << seed << ": stuck at " << stuck;
    for (const auto& [device, def] : *parts) {
      std::set<std::string> local;
      for (const NodeDef& n : def.nodes) local.insert(n.name);
      for (const NodeDef& n : def.nodes) {
        if (n.op != "_Recv") continue;
        for (const std::string& in : n.inputs) {
          EXPECT_TRUE(local.count(in.substr(1))) << n.name << " waits for " << in;
          ++scheduled;
        }
      }
    }
  }
  EXPECT_GT(scheduled, 50);  // the test exercised the scheduler
}

// With a loop in the graph nothing is scheduled, even a transfer in the
// root frame that would gain: a control input from a node in a frame would
// move the _Recv into it. The frame's _Recvs wait only for their control
// loop, as partitioning makes them.
TEST_F(RecvScheduleTest, GraphsWithLoopsAreLeftUnscheduled) {
  auto loop_node = [](const std::string& name, const std::string& op,
                      std::vector<std::string> inputs, int device) {
    NodeDef def = Op(name, op, std::move(inputs), device);
    if (op == "LoopCond") def.attrs.clear();
    if (op == "Merge") def.attrs["N"] = 2;
    if (op == "Enter") def.attrs["frame_name"] = "loop";
    return def;
  };
  std::vector<NodeDef> nodes = {
      Op("x", "Const", {}, 0),  // needed late on CPU:1: scheduled without the loop
      Op("b0", "Const", {}, 1),
      Op("b1", "Neg", {"b0"}, 1),
      Op("b2", "Neg", {"b1"}, 1),
      Op("b3", "Neg", {"b2"}, 1),
      Op("end", "Add", {"b3", "x"}, 1),
      loop_node("enter", "Enter", {"b0"}, 1),
      loop_node("merge", "Merge", {"enter", "next"}, 1),
      loop_node("less", "Less", {"merge", "merge"}, 1),
      loop_node("cond", "LoopCond", {"less"}, 1),
      loop_node("switch", "Switch", {"merge", "cond"}, 1),
      loop_node("neg", "Neg", {"switch:1"}, 0),
      loop_node("next", "NextIteration", {"neg"}, 1),
      loop_node("exit", "Exit", {"switch"}, 1)};
  ASSERT_TRUE(Build(nodes).ok());
  auto parts = Partition(true, HalfMicroTransfers());
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_TRUE(RecvControls((*parts)[CpuName(1)], "x").empty());
  ASSERT_FALSE(changes_.empty());
  EXPECT_NE(changes_[0].find("Recvs left unscheduled"), std::string::npos) << changes_[0];
  for (const auto& [device, def] : *parts) {
    for (const NodeDef& n : def.nodes) {
      if (n.op != "_Recv" || n.inputs.empty()) continue;
      ASSERT_EQ(n.inputs.size(), 1u) << n.name;
      EXPECT_TRUE(n.inputs[0].starts_with("^_loop/loop/"))
          << n.name << " waits for " << n.inputs[0];
    }
  }
}

}  // namespace
}  // namespace weir
