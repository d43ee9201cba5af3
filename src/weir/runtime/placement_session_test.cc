// Cost-model placement through a Session: two-tower and pipeline-shaped
// graphs split across two virtual CPU devices and compute what one device
// computes.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"
#include "weir/runtime/standard_registration.h"

namespace weir {
namespace {

Tensor Filled(int64_t rows, int64_t cols, float scale) {
  Tensor t(DT_FLOAT, TensorShape({rows, cols}));
  auto flat = t.flat<float>();
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    flat[i] = scale * static_cast<float>((i * 7919) % 23 - 11) / 11.f;
  }
  return t;
}

struct Result {
  std::vector<Tensor> outputs;
  std::map<std::string, std::string> device_of;  // node -> device, from the trace
};

Result RunOn(const Scope& root, int devices,
             const std::vector<std::pair<std::string, Tensor>>& feeds,
             const std::vector<std::string>& fetches) {
  EXPECT_TRUE(root.ok()) << root.status();
  SessionOptions options;
  options.num_cpu_devices = devices;
  options.intra_op_threads = 1;
  auto session = Session::New(options);
  EXPECT_TRUE(session.ok()) << session.status();
  Status created = (*session)->Create(root.ToGraphDef());
  EXPECT_TRUE(created.ok()) << created;
  Result result;
  RunOptions run_options;
  run_options.trace = true;
  RunMetadata metadata;
  Status s = (*session)->Run(feeds, fetches, {}, &result.outputs, run_options, &metadata);
  EXPECT_TRUE(s.ok()) << s;
  for (const NodeExecStats& node : metadata.step_stats.nodes)
    result.device_of[node.node_name] = node.device;
  return result;
}

void ExpectSameValues(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.shape(), b.shape());
  for (int64_t i = 0; i < a.NumElements(); ++i) {
    ASSERT_FLOAT_EQ(a.flat<float>()[i], b.flat<float>()[i]) << "element " << i;
  }
}

class PlacementSessionTest : public ::testing::Test {
 protected:
  void SetUp() override { RegisterStandardOpsAndKernels(); }
};

TEST_F(PlacementSessionTest, TwoTowersSplitAcrossTwoDevices) {
  constexpr int kWidth = 256;
  constexpr int kLayers = 3;
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  std::vector<Output> tops;
  for (const char* tower : {"a", "b"}) {
    Scope s = root.NewSubScope(tower);
    Output h = x;
    for (int l = 0; l < kLayers; ++l) {
      // Distinct weights per tower, or CSE would merge the towers.
      float scale = (tower[0] == 'a' ? 0.1f : -0.07f) * (l + 1);
      auto w = ops::Const(s.WithOpName(StrCat("w", l)), Filled(kWidth, kWidth, scale));
      h = ops::Tanh(s.WithOpName(StrCat("act", l)),
                    ops::MatMul(s.WithOpName(StrCat("mm", l)), h, w));
    }
    tops.push_back(h);
  }
  ops::Add(root.WithOpName("sum"), tops[0], tops[1]);
  std::vector<std::pair<std::string, Tensor>> feeds = {{"x", Filled(64, kWidth, 1.f)}};

  Result one = RunOn(root, 1, feeds, {"sum"});
  Result two = RunOn(root, 2, feeds, {"sum"});
  ASSERT_EQ(one.outputs.size(), 1u);
  ASSERT_EQ(two.outputs.size(), 1u);
  ExpectSameValues(one.outputs[0], two.outputs[0]);

  // Each tower's layers share a device, and the towers are apart.
  ASSERT_TRUE(two.device_of.count("a/mm0") && two.device_of.count("b/mm0"));
  for (int l = 1; l < kLayers; ++l) {
    EXPECT_EQ(two.device_of[StrCat("a/mm", l)], two.device_of["a/mm0"]);
    EXPECT_EQ(two.device_of[StrCat("b/mm", l)], two.device_of["b/mm0"]);
  }
  EXPECT_NE(two.device_of["a/mm0"], two.device_of["b/mm0"]);
}

TEST_F(PlacementSessionTest, PipelineOfMicroBatchesUsesBothDevices) {
  // Four micro-batches through three stages with shared weights.
  constexpr int kWidth = 192;
  constexpr int kStages = 3;
  constexpr int kMicroBatches = 4;
  Scope root = Scope::NewRootScope();
  std::vector<Output> weights;
  for (int s = 0; s < kStages; ++s) {
    weights.push_back(
        ops::Const(root.WithOpName(StrCat("w", s)), Filled(kWidth, kWidth, 0.05f * (s + 1))));
  }
  std::vector<std::pair<std::string, Tensor>> feeds;
  std::vector<std::string> fetches;
  for (int m = 0; m < kMicroBatches; ++m) {
    Output h = ops::Placeholder(root.WithOpName(StrCat("x", m)), DT_FLOAT);
    feeds.emplace_back(StrCat("x", m), Filled(32, kWidth, 1.f + m));
    for (int s = 0; s < kStages; ++s) {
      h = ops::Relu(root.WithOpName(StrCat("relu_", m, "_", s)),
                    ops::MatMul(root.WithOpName(StrCat("mm_", m, "_", s)), h, weights[s]));
    }
    fetches.push_back(h.name());
  }
  Result one = RunOn(root, 1, feeds, fetches);
  Result two = RunOn(root, 2, feeds, fetches);
  ASSERT_EQ(one.outputs.size(), static_cast<size_t>(kMicroBatches));
  ASSERT_EQ(two.outputs.size(), static_cast<size_t>(kMicroBatches));
  for (int m = 0; m < kMicroBatches; ++m) ExpectSameValues(one.outputs[m], two.outputs[m]);
  std::set<std::string> used;
  for (int m = 0; m < kMicroBatches; ++m) {
    for (int s = 0; s < kStages; ++s) used.insert(two.device_of[StrCat("mm_", m, "_", s)]);
  }
  EXPECT_EQ(used.size(), 2u);
}

// A variable with no device request is placed by the first signature that
// runs it (the initializer, on the default device). A later signature whose
// update and read request CPU:1 would on its own place the variable there,
// where it was never initialized; the session keeps stateful nodes where
// they were first placed, as TensorFlow does, and the handle's users yield.
TEST_F(PlacementSessionTest, StatefulNodesKeepTheirFirstDeviceAcrossSignatures) {
  Scope root = Scope::NewRootScope();
  auto v = ops::VarHandleOp(root.WithOpName("v"), DT_FLOAT, PartialShape({}));
  ops::AssignVariableOp(root.WithOpName("init"), v, ops::Const(root, 1.f));
  Scope cpu1 = root.WithDevice("/device:CPU:1");
  auto add = ops::AssignAddVariableOp(cpu1.WithOpName("add"), v, ops::Const(cpu1, 2.f));
  ops::ReadVariableOp(cpu1.WithOpName("read").WithControlDependencies({add}), v, DT_FLOAT);
  ASSERT_TRUE(root.ok()) << root.status();
  SessionOptions options;
  options.num_cpu_devices = 2;
  options.intra_op_threads = 1;
  auto session = Session::New(options);
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  RunOptions trace;
  trace.trace = true;
  std::map<std::string, std::string> device_of;
  // The initializer, then two updates (1 + 2, then + 2).
  const std::vector<std::vector<std::string>> fetches = {{}, {"read"}, {"read"}};
  const float expected[] = {0.f, 3.f, 5.f};
  for (size_t run = 0; run < fetches.size(); ++run) {
    std::vector<Tensor> out;
    RunMetadata metadata;
    const std::vector<std::string> targets =
        run == 0 ? std::vector<std::string>{"init"} : std::vector<std::string>{};
    Status s = (*session)->Run({}, fetches[run], targets, &out, trace, &metadata);
    ASSERT_TRUE(s.ok()) << "run " << run << ": " << s;
    for (const NodeExecStats& node : metadata.step_stats.nodes) {
      auto [it, inserted] = device_of.emplace(node.node_name, node.device);
      EXPECT_EQ(it->second, node.device) << node.node_name << " moved in run " << run;
    }
    if (run > 0) EXPECT_FLOAT_EQ(out[0].scalar<float>(), expected[run]);
  }
  EXPECT_EQ(device_of["add"], device_of["v"]);  // the update yielded to the variable
}

}  // namespace
}  // namespace weir
