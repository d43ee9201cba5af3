// Placement: feasibility, colocation, the greedy cost-model choice and its
// explanation, on 1-8 virtual devices.
#include "weir/graph/placer.h"

#include <gtest/gtest.h>

#include <set>

#include "weir/framework/ref_inputs.h"
#include "weir/graph/graph_constructor.h"
#include "weir/graph/graph_test_util.h"
#include "weir/kernels/all_kernels.h"
#include "weir/ops/all_ops.h"

namespace weir {
namespace {

std::string Cpu(int i, int task = 0) {
  return StrCat("/job:localhost/replica:0/task:", task, "/device:CPU:", i);
}

std::vector<DeviceInfo> CpuDevices(int n) {
  std::vector<DeviceInfo> devices;
  for (int i = 0; i < n; ++i) devices.push_back({Cpu(i), "CPU"});
  return devices;
}

NodeDef Placeholder(const std::string& name, std::vector<int64_t> dims) {
  NodeDef def;
  def.name = name;
  def.op = "Placeholder";
  def.attrs["dtype"] = DT_FLOAT;
  def.attrs["shape"] = PartialShape(std::move(dims));
  return def;
}

NodeDef Colocated(NodeDef def, const std::string& target) {
  def.attrs["_class"] = std::vector<std::string>{"loc:@" + target};
  return def;
}

class PlacerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterAllOps();
    RegisterAllKernels();
  }

  Status Build(std::vector<NodeDef> nodes) {
    GraphDef def;
    def.nodes = std::move(nodes);
    return ImportGraphDef(def, &graph_);
  }
  Status Place(const std::vector<DeviceInfo>& devices,
               PlacementExplanation* explanation = nullptr) {
    PlacementOptions options;
    options.kernels = KernelRegistry::Global();
    options.cost_model = &cost_;
    return PlaceGraph(&graph_, devices, options, explanation);
  }
  const std::string& DeviceOf(const std::string& name) {
    return graph_.FindNode(name)->assigned_device();
  }
  static const NodePlacement* Find(const PlacementExplanation& e, const std::string& name) {
    for (const NodePlacement& n : e.nodes) {
      if (n.node == name) return &n;
    }
    return nullptr;
  }

  Graph graph_;
  CostModel cost_;
};

// Two independent MatMul towers from one input, joined at the end.
std::vector<NodeDef> TwoTowers(int width, int layers) {
  std::vector<NodeDef> nodes = {Placeholder("x", {width, width})};
  for (const char* tower : {"a", "b"}) {
    std::string prev = "x";
    for (int l = 0; l < layers; ++l) {
      std::string w = StrCat(tower, "_w", l);
      std::string y = StrCat(tower, "_y", l);
      nodes.push_back(Placeholder(w, {width, width}));
      nodes.push_back(FloatNode(y, "MatMul", {prev, w}));
      prev = y;
    }
  }
  nodes.push_back(FloatNode("sum", "Add", {StrCat("a_y", layers - 1), StrCat("b_y", layers - 1)}));
  return nodes;
}

TEST_F(PlacerTest, PartialSpecsNarrowTheFeasibleDevices) {
  std::vector<DeviceInfo> devices;
  for (int task = 0; task < 2; ++task) {
    for (int i = 0; i < 4; ++i) devices.push_back({Cpu(i, task), "CPU"});
  }
  ASSERT_TRUE(Build({FloatNode("any_on_task1", "Const", {}, "/job:localhost/task:1/device:CPU:*"),
                     FloatNode("cpu1", "Const", {}, "/device:CPU:1"),
                     FloatNode("short", "Const", {}, "cpu:2"),
                     FloatNode("full", "Const", {}, Cpu(3, 1)), FloatNode("free", "Const", {})})
                  .ok());
  PlacementExplanation explanation;
  ASSERT_TRUE(Place(devices, &explanation).ok());
  EXPECT_EQ(Find(explanation, "any_on_task1")->feasible, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(Find(explanation, "cpu1")->feasible, (std::vector<int>{1, 5}));
  EXPECT_EQ(Find(explanation, "short")->feasible, (std::vector<int>{2, 6}));
  EXPECT_EQ(Find(explanation, "full")->feasible, (std::vector<int>{7}));
  EXPECT_EQ(Find(explanation, "free")->feasible.size(), 8u);
  EXPECT_EQ(DeviceOf("full"), Cpu(3, 1));
  EXPECT_EQ(Find(explanation, "full")->reason, "requested " + Cpu(3, 1));
  EXPECT_NE(DeviceOf("any_on_task1").find("task:1"), std::string::npos);
  EXPECT_NE(DeviceOf("cpu1").find("CPU:1"), std::string::npos);
}

TEST_F(PlacerTest, ColocationAndResourceUsersShareTheRequestedDevice) {
  NodeDef var;
  var.name = "v";
  var.op = "VarHandleOp";
  var.attrs["dtype"] = DT_FLOAT;
  var.attrs["shape"] = PartialShape({});
  var.device = "/device:CPU:2";
  NodeDef read;
  read.name = "read";
  read.op = "ReadVariableOp";
  read.inputs = {"v"};
  read.attrs["dtype"] = DT_FLOAT;
  ASSERT_TRUE(Build({var, read, Colocated(FloatNode("near", "Neg", {"read"}), "read"),
                     FloatNode("other", "Neg", {"read"})})
                  .ok());
  PlacementExplanation explanation;
  ASSERT_TRUE(Place(CpuDevices(4), &explanation).ok()) << explanation.ToString();
  EXPECT_EQ(DeviceOf("v"), Cpu(2));
  EXPECT_EQ(DeviceOf("read"), Cpu(2));
  EXPECT_EQ(DeviceOf("near"), Cpu(2));
  EXPECT_EQ(Find(explanation, "read")->reason, "colocated with 'v', which requests /device:CPU:2");
  // 'other' is free, and its input is on CPU:2: it stays there.
  EXPECT_EQ(DeviceOf("other"), Cpu(2));
}

TEST_F(PlacerTest, MissingColocationTargetIsAnError) {
  ASSERT_TRUE(Build({Colocated(FloatNode("a", "Const", {}), "ghost")}).ok());
  Status s = Place(CpuDevices(2));
  ASSERT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("'a' (Const)"), std::string::npos) << s;
  EXPECT_NE(s.message().find("'ghost'"), std::string::npos) << s;
  Status check = CheckColocationTargets(graph_);
  EXPECT_EQ(check.code(), Code::kInvalidArgument) << check;
  EXPECT_NE(check.message().find("'ghost'"), std::string::npos) << check;

  PlacementOptions options;
  options.kernels = KernelRegistry::Global();
  options.ignore_missing_colocation_targets = true;
  EXPECT_TRUE(PlaceGraph(&graph_, CpuDevices(2), options).ok());
}

TEST_F(PlacerTest, ConflictListsEveryMemberAndConstraint) {
  ASSERT_TRUE(Build({FloatNode("a", "Const", {}, "/device:CPU:0"),
                     Colocated(FloatNode("b", "Neg", {"a"}, "/device:CPU:1"), "a"),
                     Colocated(FloatNode("c", "Neg", {"b"}), "b")})
                  .ok());
  Status s = Place(CpuDevices(3));
  ASSERT_EQ(s.code(), Code::kInvalidArgument) << s;
  for (const std::string& part :
       {std::string("'a' (Const) requests '/device:CPU:0'"),
        std::string("'b' (Neg) requests '/device:CPU:1', is colocated with 'a'"),
        std::string("'c' (Neg) is colocated with 'b'"), Cpu(0), Cpu(2)}) {
    EXPECT_NE(s.message().find(part), std::string::npos) << part << "\n" << s;
  }
}

TEST_F(PlacerTest, RequestMatchingNoDeviceIsAnError) {
  ASSERT_TRUE(Build({FloatNode("k", "Const", {}, "/device:GPU:0")}).ok());
  Status s = Place(CpuDevices(2));
  ASSERT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("'k' (Const) requests '/device:GPU:0' (matches no device)"),
            std::string::npos)
      << s;
  EXPECT_NE(s.message().find(Cpu(1)), std::string::npos) << s;
}

// A registry where Neg<float> has a kernel only on the "ACCEL" device type.
class FakeKernelsTest : public PlacerTest {
 protected:
  void SetUp() override {
    PlacerTest::SetUp();
    auto none = [](OpKernelConstruction*) -> std::unique_ptr<OpKernel> { return nullptr; };
    registry_.Register(KernelBuilder("Const").Device("CPU"), none);
    registry_.Register(KernelBuilder("Const").Device("ACCEL"), none);
    registry_.Register(KernelBuilder("Neg").Device("CPU").TypeConstraint<double>("T"), none);
    registry_.Register(KernelBuilder("Neg").Device("ACCEL").TypeConstraint<float>("T"), none);
  }
  Status PlaceWithFakes(const std::vector<DeviceInfo>& devices, PlacementExplanation* e) {
    PlacementOptions options;
    options.kernels = &registry_;
    return PlaceGraph(&graph_, devices, options, e);
  }
  KernelRegistry registry_;
};

TEST_F(FakeKernelsTest, KernelsDecideAndTheirAbsenceIsNamed) {
  ASSERT_TRUE(Build({FloatNode("k", "Const", {}), FloatNode("n", "Neg", {"k"})}).ok());
  std::vector<DeviceInfo> devices = {{Cpu(0), "CPU"},
                                     {"/job:localhost/replica:0/task:0/device:ACCEL:0", "ACCEL"}};
  PlacementExplanation explanation;
  ASSERT_TRUE(PlaceWithFakes(devices, &explanation).ok());
  EXPECT_EQ(DeviceOf("n"), devices[1].name);
  EXPECT_EQ(Find(explanation, "n")->reason, "only device with a kernel for it");
  EXPECT_EQ(DeviceOf("k"), devices[1].name) << "a source goes with its consumer";

  Graph fresh;
  GraphDef def;
  def.nodes = {FloatNode("k", "Const", {}), FloatNode("n", "Neg", {"k"})};
  ASSERT_TRUE(ImportGraphDef(def, &fresh).ok());
  PlacementOptions options;
  options.kernels = &registry_;
  Status s = PlaceGraph(&fresh, {{Cpu(0), "CPU"}}, options);
  ASSERT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("'n' (Neg) has no kernel for T=float on device type CPU"),
            std::string::npos)
      << s;
  EXPECT_NE(s.message().find("kernels: CPU (T in {double})"), std::string::npos) << s;
}

TEST_F(PlacerTest, IndependentTowersSplitAndChainsStayTogether) {
  ASSERT_TRUE(Build(TwoTowers(512, 3)).ok());
  PlacementExplanation explanation;
  ASSERT_TRUE(Place(CpuDevices(2), &explanation).ok());
  for (int l = 1; l < 3; ++l) {
    EXPECT_EQ(DeviceOf(StrCat("a_y", l)), DeviceOf("a_y0")) << explanation.ToString();
    EXPECT_EQ(DeviceOf(StrCat("b_y", l)), DeviceOf("b_y0")) << explanation.ToString();
  }
  EXPECT_NE(DeviceOf("a_y0"), DeviceOf("b_y0")) << explanation.ToString();
  // Weights (sources) sit with the MatMul that reads them.
  for (int l = 0; l < 3; ++l) {
    EXPECT_EQ(DeviceOf(StrCat("a_w", l)), DeviceOf(StrCat("a_y", l)));
    EXPECT_EQ(DeviceOf(StrCat("b_w", l)), DeviceOf(StrCat("b_y", l)));
  }
  // The split beats one device: the simulated step is shorter.
  StatusOr<double> split = SimulatePlacedStep(graph_, CpuDevices(2), cost_);
  for (Node* node : graph_.nodes()) node->set_assigned_device(Cpu(0));
  StatusOr<double> one = SimulatePlacedStep(graph_, CpuDevices(2), cost_);
  ASSERT_TRUE(split.ok() && one.ok());
  EXPECT_LT(*split, 0.7 * *one);
  EXPECT_DOUBLE_EQ(*split, explanation.simulated_step_micros);
}

TEST_F(PlacerTest, ExpensiveLinksKeepEverythingOnOneDevice) {
  ASSERT_TRUE(Build(TwoTowers(256, 2)).ok());
  cost_.SetDefaultLink({1e6, 1e9});  // a second per transfer
  ASSERT_TRUE(Place(CpuDevices(4)).ok());
  for (Node* node : graph_.nodes()) EXPECT_EQ(node->assigned_device(), Cpu(0)) << node->name();
}

TEST_F(PlacerTest, CheapNodesDoNotMoveToAnIdleDevice) {
  // 'big' keeps CPU:0 busy; the small chain and the Const after it would
  // finish no earlier elsewhere once their transfers are counted.
  ASSERT_TRUE(Build({Placeholder("x", {1024, 1024}), FloatNode("big", "MatMul", {"x", "x"}),
                     FloatNode("k", "Const", {}), FloatNode("scaled", "Mul", {"big", "k"}),
                     FloatNode("out", "Neg", {"scaled"})})
                  .ok());
  PlacementExplanation explanation;
  ASSERT_TRUE(Place(CpuDevices(2), &explanation).ok());
  for (const char* name : {"x", "big", "k", "scaled", "out"}) {
    EXPECT_EQ(DeviceOf(name), Cpu(0)) << name << "\n" << explanation.ToString();
  }
  EXPECT_NE(Find(explanation, "k")->reason.find("placed with its consumer 'scaled'"),
            std::string::npos)
      << explanation.ToString();
}

TEST_F(PlacerTest, AFasterDeviceWinsTheHeavyWork) {
  ASSERT_TRUE(Build({Placeholder("x", {1024, 1024}), FloatNode("big", "MatMul", {"x", "x"})}).ok());
  std::vector<DeviceInfo> devices = CpuDevices(2);
  devices[1].peak_flops = 10 * CostModel::kCpuFlopsPerThread;
  PlacementExplanation explanation;
  ASSERT_TRUE(Place(devices, &explanation).ok());
  EXPECT_EQ(DeviceOf("big"), Cpu(1));
  const NodePlacement* big = Find(explanation, "big");
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(big->reason.rfind("earliest finish (", 0), 0u) << big->reason;
  EXPECT_NE(big->reason.find("on CPU:1 vs"), std::string::npos) << big->reason;
  ASSERT_EQ(big->finish_micros.size(), 2u);
  EXPECT_GT(big->finish_micros[0], 5 * big->finish_micros[1]);
}

TEST_F(PlacerTest, MeasuredTimesOverrideTheEstimates) {
  ASSERT_TRUE(Build({Placeholder("x", {64, 64}), FloatNode("y", "MatMul", {"x", "x"})}).ok());
  ASSERT_TRUE(Place(CpuDevices(2)).ok());
  EXPECT_EQ(DeviceOf("y"), Cpu(0));
  cost_.RecordMeasurement("y", Cpu(0), 5000);
  cost_.RecordMeasurement("y", Cpu(1), 10);
  PlacementExplanation explanation;
  ASSERT_TRUE(Place(CpuDevices(2), &explanation).ok());
  EXPECT_EQ(DeviceOf("y"), Cpu(1)) << explanation.ToString();
  const NodePlacement* y = Find(explanation, "y");
  ASSERT_EQ(y->finish_micros.size(), 2u);
  EXPECT_GE(y->finish_micros[0], 5000);
}

TEST_F(PlacerTest, SameGraphSamePlacement) {
  ASSERT_TRUE(Build(TwoTowers(128, 4)).ok());
  PlacementExplanation first, second;
  ASSERT_TRUE(Place(CpuDevices(3), &first).ok());
  std::vector<std::string> devices;
  for (Node* node : graph_.nodes()) devices.push_back(node->assigned_device());
  ASSERT_TRUE(Place(CpuDevices(3), &second).ok());
  for (Node* node : graph_.nodes()) EXPECT_EQ(node->assigned_device(), devices[node->id()]);
  EXPECT_EQ(first.ToString(), second.ToString());
  Graph copy;
  copy.CopyFrom(graph_);
  PlacementOptions options;
  options.kernels = KernelRegistry::Global();
  options.cost_model = &cost_;
  ASSERT_TRUE(PlaceGraph(&copy, CpuDevices(3), options).ok());
  for (Node* node : copy.nodes()) {
    EXPECT_EQ(node->assigned_device(), graph_.FindNode(node->name())->assigned_device());
  }
}

TEST_F(PlacerTest, WideFanOutUsesEveryDeviceUpToItsWidth) {
  // Eight heavy branches: N devices get min(N, 8) of them busy.
  std::vector<NodeDef> nodes = {Placeholder("x", {256, 256})};
  std::vector<std::string> outs;
  for (int b = 0; b < 8; ++b) {
    nodes.push_back(Placeholder(StrCat("w", b), {256, 256}));
    nodes.push_back(FloatNode(StrCat("y", b), "MatMul", {"x", StrCat("w", b)}));
    nodes.push_back(FloatNode(StrCat("r", b), "Relu", {StrCat("y", b)}));
    outs.push_back(StrCat("r", b));
  }
  NodeDef sum;
  sum.name = "sum";
  sum.op = "AddN";
  sum.inputs = outs;
  sum.attrs["T"] = DT_FLOAT;
  sum.attrs["N"] = int64_t{8};
  nodes.push_back(sum);
  ASSERT_TRUE(Build(nodes).ok());
  double one_device = 0;
  for (int n = 1; n <= 8; ++n) {
    PlacementExplanation explanation;
    ASSERT_TRUE(Place(CpuDevices(n), &explanation).ok()) << n;
    std::set<std::string> used;
    for (int b = 0; b < 8; ++b) used.insert(DeviceOf(StrCat("y", b)));
    EXPECT_EQ(static_cast<int>(used.size()), n) << n << " devices";
    // The MatMuls dominate: the step shrinks about as 1 / ceil(8 / n), plus
    // the transfers out of x and into the final AddN.
    if (n == 1) one_device = *SimulatePlacedStep(graph_, CpuDevices(1), cost_);
    const double rounds = (8 + n - 1) / n;
    const double gather = 8 * cost_.TransferMicros(Cpu(0), Cpu(1), 256 * 256 * 4);
    EXPECT_LT(explanation.simulated_step_micros, one_device * (rounds / 8) * 1.15 + 2 * gather)
        << n << " devices\n"
        << explanation.ToString();
  }
}

TEST_F(PlacerTest, MixedConstraintsOnEightDevices) {
  // Requests, colocation and free nodes together: every constraint holds.
  std::vector<NodeDef> nodes = {Placeholder("x", {128, 128})};
  for (int i = 0; i < 8; ++i) {
    std::string y = StrCat("y", i);
    nodes.push_back(
        FloatNode(y, "MatMul", {"x", "x"}, i % 2 == 0 ? StrCat("/device:CPU:", i) : ""));
    nodes.push_back(Colocated(FloatNode(StrCat("c", i), "Neg", {y}), y));
    nodes.push_back(
        FloatNode(StrCat("t", i), "Tanh", {StrCat("c", i)}, i == 7 ? "/device:CPU:*" : ""));
  }
  ASSERT_TRUE(Build(nodes).ok());
  PlacementExplanation explanation;
  ASSERT_TRUE(Place(CpuDevices(8), &explanation).ok());
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(DeviceOf(StrCat("c", i)), DeviceOf(StrCat("y", i)));
    if (i % 2 == 0) {
      EXPECT_EQ(DeviceOf(StrCat("y", i)), Cpu(i));
    }
  }
  EXPECT_EQ(Find(explanation, "c0")->reason, "colocated with 'y0', which requests /device:CPU:0");
  EXPECT_EQ(Find(explanation, "c1")->reason, "colocated with 'y1'");
  EXPECT_NE(explanation.ToString().find("y4"), std::string::npos);
}

TEST_F(PlacerTest, OneDeviceAndSimulationOffAreTheDefaultDevice) {
  ASSERT_TRUE(Build(TwoTowers(64, 2)).ok());
  PlacementExplanation explanation;
  ASSERT_TRUE(Place(CpuDevices(1), &explanation).ok());
  EXPECT_EQ(explanation.nodes.size(), static_cast<size_t>(graph_.num_nodes()));
  EXPECT_EQ(Find(explanation, "sum")->reason, "the only device");

  PlacementOptions options;
  options.kernels = KernelRegistry::Global();
  options.simulate = false;
  options.default_device = 1;
  ASSERT_TRUE(PlaceGraph(&graph_, CpuDevices(3), options, &explanation).ok());
  for (Node* node : graph_.nodes()) EXPECT_EQ(node->assigned_device(), Cpu(1));
  EXPECT_EQ(Find(explanation, "sum")->reason, "default device (simulation off)");
}

TEST_F(PlacerTest, ExplanationTableNamesDevicesCostsAndReasons) {
  ASSERT_TRUE(Build({Placeholder("x", {512, 512}), FloatNode("a", "MatMul", {"x", "x"}),
                     FloatNode("b", "MatMul", {"x", "x"}, "/device:CPU:1"),
                     FloatNode("s", "Add", {"a", "b"})})
                  .ok());
  PlacementExplanation explanation;
  ASSERT_TRUE(Place(CpuDevices(2), &explanation).ok());
  std::string table = explanation.ToString();
  for (const char* part : {"placement of 4 nodes on 2 devices", "requested /device:CPU:1",
                           "earliest finish", "CPU:0 finish", "CPU:1 finish", "transfers"}) {
    EXPECT_NE(table.find(part), std::string::npos) << part << "\n" << table;
  }
  EXPECT_GT(explanation.simulated_step_micros, 0);
}

// TensorFlow's dense accumulator with a string handle (its Ref(string)): the
// accumulator, a gradient and the apply and take ops on the handle.
std::vector<NodeDef> Accumulator(const std::string& acc_device, const std::string& apply_device) {
  NodeDef acc;
  acc.name = "acc";
  acc.op = "ConditionalAccumulator";
  acc.attrs["dtype"] = DT_FLOAT;
  acc.attrs["shape"] = PartialShape({});
  acc.device = acc_device;
  NodeDef step = FloatNode("step", "Const", {});
  step.attrs["dtype"] = DT_INT64;
  step.attrs["value"] = Tensor::Scalar<int64_t>(0);
  NodeDef need = FloatNode("need", "Const", {});
  need.attrs["dtype"] = DT_INT32;
  need.attrs["value"] = Tensor::Scalar<int32_t>(1);
  NodeDef apply;
  apply.name = "apply";
  apply.op = "AccumulatorApplyGradient";
  apply.inputs = {"acc", "step", "grad"};
  apply.attrs["dtype"] = DT_FLOAT;
  apply.device = apply_device;
  NodeDef take;
  take.name = "take";
  take.op = "AccumulatorTakeGradient";
  take.inputs = {"acc", "need", "^apply"};
  take.attrs["dtype"] = DT_FLOAT;
  return {acc, step, need, FloatNode("grad", "Const", {}), apply, take};
}

TEST_F(PlacerTest, RefHandleInputsAreDeclaredByTheirOps) {
  const OpRegistry* registry = OpRegistry::Global();
  const OpDef* apply = registry->Find("AccumulatorApplyGradient");
  ASSERT_NE(apply, nullptr);
  EXPECT_TRUE(HasRefInputs(*apply));
  EXPECT_TRUE(IsRefInputArg(*apply, 0));   // handle
  EXPECT_FALSE(IsRefInputArg(*apply, 1));  // local_step
  EXPECT_FALSE(IsRefInputArg(*apply, 7));
  for (const char* op :
       {"AccumulatorTakeGradient", "AccumulatorNumAccumulated", "AccumulatorSetGlobalStep",
        "SparseAccumulatorApplyGradient", "SparseAccumulatorTakeGradient"}) {
    ASSERT_NE(registry->Find(op), nullptr) << op;
    EXPECT_TRUE(IsRefInputArg(*registry->Find(op), 0)) << op;
  }
  // The resource forms take a DT_RESOURCE handle: no reference input.
  EXPECT_FALSE(HasRefInputs(*registry->Find("ResourceAccumulatorApplyGradient")));
  EXPECT_FALSE(HasRefInputs(*registry->Find("MatMul")));
}

TEST_F(PlacerTest, RefHandleUsersGoWhereTheAccumulatorLives) {
  ASSERT_TRUE(Build(Accumulator("/device:CPU:1", "")).ok());
  // Simulated and not: with simulation off every free node would go on
  // the default device, CPU:0, where the handle names no accumulator.
  for (bool simulate : {false, true}) {
    PlacementOptions options;
    options.kernels = KernelRegistry::Global();
    options.cost_model = &cost_;
    options.simulate = simulate;
    PlacementExplanation explanation;
    ASSERT_TRUE(PlaceGraph(&graph_, CpuDevices(3), options, &explanation).ok());
    EXPECT_EQ(DeviceOf("apply"), Cpu(1)) << explanation.ToString();
    EXPECT_EQ(DeviceOf("take"), Cpu(1)) << explanation.ToString();
    EXPECT_EQ(Find(explanation, "take")->reason,
              "colocated with 'acc', which requests /device:CPU:1");
  }
}

TEST_F(PlacerTest, AnUnplacedAccumulatorGoesWithItsUsersRequest) {
  ASSERT_TRUE(Build(Accumulator("", "/device:CPU:2")).ok());
  ASSERT_TRUE(Place(CpuDevices(3)).ok());
  EXPECT_EQ(DeviceOf("acc"), Cpu(2));
  EXPECT_EQ(DeviceOf("take"), Cpu(2));
}

TEST_F(PlacerTest, AHandleUsersConflictingRequestYieldsToTheResource) {
  // As TensorFlow 2.21's placer: the op on the handle runs where the
  // accumulator lives, whatever device it asked for.
  ASSERT_TRUE(Build(Accumulator("/device:CPU:1", "/device:CPU:0")).ok());
  PlacementExplanation explanation;
  ASSERT_TRUE(Place(CpuDevices(2), &explanation).ok());
  EXPECT_EQ(DeviceOf("apply"), Cpu(1));
  EXPECT_EQ(Find(explanation, "apply")->reason,
            "colocated with 'acc', which requests /device:CPU:1; its request '/device:CPU:0' "
            "yields to the device of the resource it uses");
  EXPECT_EQ(Find(explanation, "acc")->reason, "requested /device:CPU:1");
}

TEST_F(PlacerTest, VariableUsersUnderAnotherJobRunOnTheVariablesTask) {
  std::vector<DeviceInfo> devices;
  for (const char* job : {"ps", "worker"}) {
    for (int task = 0; task < 2; ++task) {
      devices.push_back({StrCat("/job:", job, "/replica:0/task:", task, "/device:CPU:0"), "CPU"});
    }
  }
  NodeDef var;
  var.name = "v";
  var.op = "VarHandleOp";
  var.attrs["dtype"] = DT_FLOAT;
  var.attrs["shape"] = PartialShape({});
  var.device = "/job:ps";
  NodeDef read;
  read.name = "read";
  read.op = "ReadVariableOp";
  read.inputs = {"v"};
  read.attrs["dtype"] = DT_FLOAT;
  read.device = "/job:worker/task:0";  // conflicts: yields
  NodeDef init;
  init.name = "is_init";
  init.op = "VarIsInitializedOp";
  init.inputs = {"v"};
  init.device = "/job:ps/task:1";  // compatible: narrows the group
  ASSERT_TRUE(
      Build({var, read, init, FloatNode("use", "Neg", {"read"}, "/job:worker/task:0")}).ok());
  PlacementExplanation explanation;
  ASSERT_TRUE(Place(devices, &explanation).ok()) << explanation.ToString();
  EXPECT_EQ(DeviceOf("v"), devices[1].name);
  EXPECT_EQ(DeviceOf("read"), devices[1].name);
  EXPECT_EQ(DeviceOf("is_init"), devices[1].name);
  EXPECT_EQ(DeviceOf("use"), devices[2].name);  // math stays on the worker
  EXPECT_NE(Find(explanation, "read")->reason.find("its request '/job:worker/task:0' yields"),
            std::string::npos)
      << explanation.ToString();
  EXPECT_EQ(Find(explanation, "is_init")->reason.find("yields"), std::string::npos);
}

TEST_F(PlacerTest, ResourcesOnConflictingDevicesAreAnErrorNamingBoth) {
  // One op takes two variables that explicitly live on different devices.
  std::vector<NodeDef> nodes;
  for (const char* v : {"var", "accum"}) {
    NodeDef def;
    def.name = v;
    def.op = "VarHandleOp";
    def.attrs["dtype"] = DT_FLOAT;
    def.attrs["shape"] = PartialShape({});
    def.device = std::string(v) == "var" ? "/device:CPU:0" : "/device:CPU:1";
    nodes.push_back(def);
  }
  for (const char* c : {"lr", "g", "m"}) nodes.push_back(FloatNode(c, "Const", {}));
  nodes.push_back(FloatNode("update", "ResourceApplyMomentum", {"var", "accum", "lr", "g", "m"}));
  ASSERT_TRUE(Build(nodes).ok());
  Status s = Place(CpuDevices(2));
  ASSERT_EQ(s.code(), Code::kInvalidArgument) << s;
  for (const std::string& part :
       {std::string("'var' (VarHandleOp) requests '/device:CPU:0'"),
        std::string("'accum' (VarHandleOp) requests '/device:CPU:1'"),
        std::string("'update' (ResourceApplyMomentum) uses the resource of 'var', uses the "
                    "resource of 'accum'")}) {
    EXPECT_NE(s.message().find(part), std::string::npos) << part << "\n" << s;
  }
}

TEST_F(PlacerTest, AHandleUserColocatedAwayFromItsResourceIsAnError) {
  // A string handle's user colocated (_class) with a node that requests
  // another device than the accumulator's: two explicit devices conflict.
  std::vector<NodeDef> acc = Accumulator("/device:CPU:1", "");
  acc.push_back(FloatNode("pinned", "Const", {}, "/device:CPU:0"));
  acc[4] = Colocated(acc[4], "pinned");
  ASSERT_TRUE(Build(acc).ok());
  Status s = Place(CpuDevices(2));
  ASSERT_EQ(s.code(), Code::kInvalidArgument) << s;
  for (const std::string& part :
       {std::string("'acc' (ConditionalAccumulator) requests '/device:CPU:1'"),
        std::string("'pinned' (Const) requests '/device:CPU:0'"),
        std::string("takes input 0 by reference from 'acc'"), std::string("'pinned'")}) {
    EXPECT_NE(s.message().find(part), std::string::npos) << part << "\n" << s;
  }
}

}  // namespace
}  // namespace weir
