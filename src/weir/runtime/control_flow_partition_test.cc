// Loops whose frames span two CPU devices (white paper §4.4): each device
// steps its part of the frame with a control loop, and the results are the
// ones a single device computes, and the ones plain C++ computes, for every
// trip count including 0.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "weir/ops/control_flow_builder.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"
#include "weir/runtime/standard_registration.h"

namespace weir {
namespace {

constexpr char kCpu1[] = "/device:CPU:1";

// Where the test puts the parts of its loops: with `split`, the nodes built
// through On1 go to CPU:1, all else to CPU:0; without, every node to CPU:0.
struct Split {
  bool split = false;
  Scope On0(const Scope& s) const { return s.WithDevice("/device:CPU:0"); }
  Scope On1(const Scope& s) const { return split ? s.WithDevice(kCpu1) : On0(s); }
};

struct StepResult {
  std::vector<Tensor> outputs;
  std::set<std::string> devices;  // that ran a node, from the trace
  std::vector<NodeExecStats> nodes;

  // The iterations in which nodes of `op` ran on CPU:`device` inside a loop.
  std::set<int64_t> IterationsOf(const std::string& op, int device) const {
    std::set<int64_t> iterations;
    for (const NodeExecStats& node : nodes) {
      if (node.op == op && !node.frame_name.empty() &&
          node.device.ends_with(StrCat("CPU:", device))) {
        iterations.insert(node.iteration);
      }
    }
    return iterations;
  }
};

std::set<int64_t> Range(int64_t n) {
  std::set<int64_t> range;
  for (int64_t i = 0; i < n; ++i) range.insert(i);
  return range;
}

class ControlFlowPartitionTest : public ::testing::Test {
 protected:
  void SetUp() override { RegisterStandardOpsAndKernels(); }

  // Runs `root`'s graph once per feed set in one session of `devices` CPU
  // devices, fetching `fetches`.
  std::vector<StepResult> RunAll(
      const Scope& root, int devices,
      const std::vector<std::vector<std::pair<std::string, Tensor>>>& feeds,
      const std::vector<std::string>& fetches) {
    EXPECT_TRUE(root.ok()) << root.status();
    SessionOptions options;
    options.num_cpu_devices = devices;
    options.intra_op_threads = 1;
    auto session = Session::New(options);
    EXPECT_TRUE(session.ok()) << session.status();
    Status created = (*session)->Create(root.ToGraphDef());
    EXPECT_TRUE(created.ok()) << created;
    std::vector<StepResult> runs;
    for (const auto& feed : feeds) {
      StepResult run;
      RunOptions run_options;
      run_options.trace = true;
      run_options.timeout_ms = 20'000;  // a hang fails the test instead of stopping it
      RunMetadata metadata;
      Status s = (*session)->Run(feed, fetches, {}, &run.outputs, run_options, &metadata);
      EXPECT_TRUE(s.ok()) << s;
      for (const NodeExecStats& node : metadata.step_stats.nodes) run.devices.insert(node.device);
      run.nodes = std::move(metadata.step_stats.nodes);
      runs.push_back(std::move(run));
    }
    return runs;
  }
};

std::vector<std::vector<std::pair<std::string, Tensor>>> TripCounts(std::vector<int32_t> counts) {
  std::vector<std::vector<std::pair<std::string, Tensor>>> feeds;
  for (int32_t n : counts) feeds.push_back({{"n", Tensor::Scalar<int32_t>(n)}});
  return feeds;
}

// i = 0, acc = 1; while i < n: acc = acc * 0.5 + i (on CPU:1), i += 1.
Scope CountingLoop(const Split& split, int parallel_iterations) {
  Scope root = Scope::NewRootScope();
  Scope s = split.On0(root);
  auto n = ops::Placeholder(s.WithOpName("n"), DT_INT32);
  std::vector<Output> outputs;
  ops::WhileLoopOptions options;
  options.parallel_iterations = parallel_iterations;
  Status built = ops::WhileLoop(
      s, {ops::Const(s, 0), ops::Const(s, 1.0f)},
      [&](const Scope& c, const std::vector<Output>& v, Output* pred) {
        *pred = ops::Less(c, v[0], n);
        return Status::OK();
      },
      [&](const Scope& b, const std::vector<Output>& v, std::vector<Output>* next) {
        Scope far = split.On1(b);
        auto acc = ops::Add(far, ops::Mul(far, v[1], 0.5f), ops::Cast(far, v[0], DT_FLOAT));
        next->push_back(ops::Add(b, v[0], 1));
        next->push_back(acc);
        return Status::OK();
      },
      &outputs, options);
  EXPECT_TRUE(built.ok()) << built;
  ops::Identity(s.WithOpName("i"), outputs[0]);
  ops::Identity(s.WithOpName("acc"), outputs[1]);
  return root;
}

float CountingLoopReference(int32_t n) {
  float acc = 1.0f;
  for (int32_t i = 0; i < n; ++i) acc = acc * 0.5f + static_cast<float>(i);
  return acc;
}

void ExpectSameRuns(const std::vector<StepResult>& split, const std::vector<StepResult>& single) {
  ASSERT_EQ(split.size(), single.size());
  for (size_t r = 0; r < split.size(); ++r) {
    ASSERT_EQ(split[r].outputs.size(), single[r].outputs.size()) << "run " << r;
    for (size_t o = 0; o < split[r].outputs.size(); ++o) {
      const Tensor& a = split[r].outputs[o];
      const Tensor& b = single[r].outputs[o];
      ASSERT_EQ(a.dtype(), b.dtype());
      ASSERT_EQ(a.shape(), b.shape());
      if (a.dtype() == DT_FLOAT) {
        EXPECT_EQ(a.scalar<float>(), b.scalar<float>()) << "run " << r << " output " << o;
      } else {
        EXPECT_EQ(a.scalar<int32_t>(), b.scalar<int32_t>()) << "run " << r << " output " << o;
      }
    }
  }
}

class CountingLoopTest : public ControlFlowPartitionTest,
                         public ::testing::WithParamInterface<int> {};

TEST_P(CountingLoopTest, BodyOnTwoDevicesMatchesOneDevice) {
  const std::vector<int32_t> counts = {0, 1, 2, 7, 40};
  std::vector<StepResult> split =
      RunAll(CountingLoop(Split{true}, GetParam()), 2, TripCounts(counts), {"i", "acc"});
  std::vector<StepResult> single =
      RunAll(CountingLoop(Split{false}, GetParam()), 1, TripCounts(counts), {"i", "acc"});
  ASSERT_EQ(split.size(), counts.size());
  for (size_t r = 0; r < counts.size(); ++r) {
    ASSERT_EQ(split[r].outputs.size(), 2u);
    EXPECT_EQ(split[r].outputs[0].scalar<int32_t>(), counts[r]);
    EXPECT_EQ(split[r].outputs[1].scalar<float>(), CountingLoopReference(counts[r]))
        << "n = " << counts[r];
    EXPECT_EQ(split[r].devices.size(), 2u) << "n = " << counts[r];
    // CPU:1 ran the body's Mul in each iteration, and its control loop
    // received the predicate once more: the false that ends the loop.
    EXPECT_EQ(split[r].IterationsOf("Mul", 1), Range(counts[r])) << "n = " << counts[r];
    EXPECT_TRUE(split[r].IterationsOf("Mul", 0).empty());
    EXPECT_EQ(split[r].IterationsOf("_Recv", 1), Range(counts[r] + 1)) << "n = " << counts[r];
    EXPECT_EQ(split[r].IterationsOf("Switch", 1), Range(counts[r] + 1)) << "n = " << counts[r];
  }
  ExpectSameRuns(split, single);
}

INSTANTIATE_TEST_SUITE_P(ParallelIterations, CountingLoopTest, ::testing::Values(1, 10));

// for i < n: for j < m: acc += i * j, the inner loop (its condition too) on
// CPU:1, the outer on CPU:0.
Scope NestedLoops(const Split& split) {
  Scope root = Scope::NewRootScope();
  Scope s = split.On0(root);
  auto n = ops::Placeholder(s.WithOpName("n"), DT_INT32);
  auto m = ops::Placeholder(s.WithOpName("m"), DT_INT32);
  std::vector<Output> outputs;
  Status built = ops::WhileLoop(
      s, {ops::Const(s, 0), ops::Const(s, 0.0f)},
      [&](const Scope& c, const std::vector<Output>& v, Output* pred) {
        *pred = ops::Less(c, v[0], n);
        return Status::OK();
      },
      [&](const Scope& b, const std::vector<Output>& outer, std::vector<Output>* next) {
        Scope far = split.On1(b);
        std::vector<Output> inner_out;
        ops::WhileLoopOptions inner_options;
        inner_options.name = "inner";
        WEIR_RETURN_IF_ERROR(ops::WhileLoop(
            far, {ops::Const(far, 0), outer[1]},
            [&](const Scope& c, const std::vector<Output>& v, Output* pred) {
              *pred = ops::Less(c, v[0], m);
              return Status::OK();
            },
            [&](const Scope& ib, const std::vector<Output>& v, std::vector<Output>* inext) {
              auto product = ops::Cast(ib, ops::Mul(ib, v[0], outer[0]), DT_FLOAT);
              inext->push_back(ops::Add(ib, v[0], 1));
              inext->push_back(ops::Add(ib, v[1], product));
              return Status::OK();
            },
            &inner_out, inner_options));
        next->push_back(ops::Add(b, outer[0], 1));
        next->push_back(inner_out[1]);
        return Status::OK();
      },
      &outputs);
  EXPECT_TRUE(built.ok()) << built;
  ops::Identity(s.WithOpName("acc"), outputs[1]);
  return root;
}

TEST_F(ControlFlowPartitionTest, NestedLoopsAcrossDevicesMatchOneDevice) {
  std::vector<std::pair<int32_t, int32_t>> sizes = {{0, 3}, {3, 0}, {1, 1}, {4, 5}, {6, 2}};
  std::vector<std::vector<std::pair<std::string, Tensor>>> feeds;
  for (auto [n, m] : sizes) {
    feeds.push_back({{"n", Tensor::Scalar<int32_t>(n)}, {"m", Tensor::Scalar<int32_t>(m)}});
  }
  std::vector<StepResult> split = RunAll(NestedLoops(Split{true}), 2, feeds, {"acc"});
  std::vector<StepResult> single = RunAll(NestedLoops(Split{false}), 1, feeds, {"acc"});
  ASSERT_EQ(split.size(), sizes.size());
  for (size_t r = 0; r < sizes.size(); ++r) {
    auto [n, m] = sizes[r];
    float expected = 0;
    for (int32_t i = 0; i < n; ++i) {
      for (int32_t j = 0; j < m; ++j) expected += static_cast<float>(i * j);
    }
    ASSERT_EQ(split[r].outputs.size(), 1u);
    EXPECT_EQ(split[r].outputs[0].scalar<float>(), expected) << "n = " << n << ", m = " << m;
    if (n > 0 && m > 0) {
      EXPECT_EQ(split[r].devices.size(), 2u);
    }
  }
  ExpectSameRuns(split, single);
}

// for i < n: acc = (i even) ? acc + i (on CPU:1) : acc * 0.5 (on CPU:0):
// the untaken branch's dead values cross devices in each iteration.
Scope CondInLoop(const Split& split) {
  Scope root = Scope::NewRootScope();
  Scope s = split.On0(root);
  auto n = ops::Placeholder(s.WithOpName("n"), DT_INT32);
  std::vector<Output> outputs;
  Status built = ops::WhileLoop(
      s, {ops::Const(s, 0), ops::Const(s, 3.0f)},
      [&](const Scope& c, const std::vector<Output>& v, Output* pred) {
        *pred = ops::Less(c, v[0], n);
        return Status::OK();
      },
      [&](const Scope& b, const std::vector<Output>& v, std::vector<Output>* next) {
        auto even = ops::Equal(b, ops::FloorMod(b, v[0], 2), 0);
        std::vector<Output> branch;
        WEIR_RETURN_IF_ERROR(ops::Cond(
            b, even,
            [&](const Scope& t, std::vector<Output>* out) {
              Scope far = split.On1(t);
              out->push_back(ops::Add(far, v[1], ops::Cast(far, v[0], DT_FLOAT)));
              return Status::OK();
            },
            [&](const Scope& e, std::vector<Output>* out) {
              out->push_back(ops::Mul(e, v[1], 0.5f));
              return Status::OK();
            },
            &branch));
        next->push_back(ops::Add(b, v[0], 1));
        next->push_back(branch[0]);
        return Status::OK();
      },
      &outputs);
  EXPECT_TRUE(built.ok()) << built;
  ops::Identity(s.WithOpName("acc"), outputs[1]);
  return root;
}

TEST_F(ControlFlowPartitionTest, CondInLoopAcrossDevicesMatchesOneDevice) {
  const std::vector<int32_t> counts = {0, 1, 2, 5, 12};
  std::vector<StepResult> split = RunAll(CondInLoop(Split{true}), 2, TripCounts(counts), {"acc"});
  std::vector<StepResult> single = RunAll(CondInLoop(Split{false}), 1, TripCounts(counts), {"acc"});
  ASSERT_EQ(split.size(), counts.size());
  for (size_t r = 0; r < counts.size(); ++r) {
    float expected = 3.0f;
    for (int32_t i = 0; i < counts[r]; ++i) {
      expected = i % 2 == 0 ? expected + static_cast<float>(i) : expected * 0.5f;
    }
    ASSERT_EQ(split[r].outputs.size(), 1u);
    EXPECT_EQ(split[r].outputs[0].scalar<float>(), expected) << "n = " << counts[r];
  }
  ExpectSameRuns(split, single);
}

// cond(p, while i < n: acc += 2 (on CPU:1), acc): when p is false the
// whole frame is dead on both devices and the step still ends.
Scope LoopInCond(const Split& split) {
  Scope root = Scope::NewRootScope();
  Scope s = split.On0(root);
  auto n = ops::Placeholder(s.WithOpName("n"), DT_INT32);
  auto p = ops::Placeholder(s.WithOpName("p"), DT_BOOL);
  auto start = ops::Const(s, 1.0f);
  std::vector<Output> branch;
  Status built = ops::Cond(
      s, p,
      [&](const Scope& t, std::vector<Output>* out) {
        std::vector<Output> loop_out;
        WEIR_RETURN_IF_ERROR(ops::WhileLoop(
            t, {ops::Const(t, 0), start},
            [&](const Scope& c, const std::vector<Output>& v, Output* pred) {
              *pred = ops::Less(c, v[0], n);
              return Status::OK();
            },
            [&](const Scope& b, const std::vector<Output>& v, std::vector<Output>* next) {
              next->push_back(ops::Add(b, v[0], 1));
              next->push_back(ops::Add(split.On1(b), v[1], 2.0f));
              return Status::OK();
            },
            &loop_out));
        out->push_back(loop_out[1]);
        return Status::OK();
      },
      [&](const Scope& e, std::vector<Output>* out) {
        out->push_back(ops::Neg(e, start));
        return Status::OK();
      },
      &branch);
  EXPECT_TRUE(built.ok()) << built;
  ops::Identity(s.WithOpName("acc"), branch[0]);
  return root;
}

TEST_F(ControlFlowPartitionTest, LoopInCondAcrossDevicesMatchesOneDevice) {
  std::vector<std::vector<std::pair<std::string, Tensor>>> feeds;
  std::vector<float> expected;
  for (bool p : {true, false, true}) {
    for (int32_t n : {0, 3}) {
      feeds.push_back({{"n", Tensor::Scalar<int32_t>(n)}, {"p", Tensor::Scalar<bool>(p)}});
      expected.push_back(p ? 1.0f + 2.0f * static_cast<float>(n) : -1.0f);
    }
  }
  std::vector<StepResult> split = RunAll(LoopInCond(Split{true}), 2, feeds, {"acc"});
  std::vector<StepResult> single = RunAll(LoopInCond(Split{false}), 1, feeds, {"acc"});
  ASSERT_EQ(split.size(), feeds.size());
  for (size_t r = 0; r < feeds.size(); ++r) {
    ASSERT_EQ(split[r].outputs.size(), 1u);
    EXPECT_EQ(split[r].outputs[0].scalar<float>(), expected[r]) << "run " << r;
  }
  ExpectSameRuns(split, single);
}

// Every node of a graph on a device drawn from `seed`: loops cut anywhere.
GraphDef ScatterOverDevices(GraphDef graph, uint32_t seed, int devices) {
  std::mt19937 random(seed);
  for (NodeDef& node : graph.nodes) {
    node.device = StrCat("/device:CPU:", random() % devices);
  }
  return graph;
}

std::vector<Tensor> RunGraph(const GraphDef& graph, int devices,
                             const std::vector<std::pair<std::string, Tensor>>& feeds,
                             const std::string& fetch) {
  SessionOptions options;
  options.num_cpu_devices = devices;
  options.intra_op_threads = 1;
  auto session = Session::New(options);
  EXPECT_TRUE(session.ok()) << session.status();
  Status created = (*session)->Create(graph);
  EXPECT_TRUE(created.ok()) << created;
  std::vector<Tensor> outputs;
  RunOptions run_options;
  run_options.timeout_ms = 20'000;
  Status s = (*session)->Run(feeds, {fetch}, {}, &outputs, run_options, nullptr);
  EXPECT_TRUE(s.ok()) << s;
  return outputs;
}

TEST_F(ControlFlowPartitionTest, NestedLoopsCutAnywhereMatchOneDevice) {
  const GraphDef graph = NestedLoops(Split{false}).ToGraphDef();
  for (uint32_t seed = 0; seed < 40; ++seed) {
    const GraphDef scattered = ScatterOverDevices(graph, seed, 3);
    for (auto [n, m] : std::vector<std::pair<int32_t, int32_t>>{{0, 2}, {2, 0}, {3, 4}}) {
      float expected = 0;
      for (int32_t i = 0; i < n; ++i) {
        for (int32_t j = 0; j < m; ++j) expected += static_cast<float>(i * j);
      }
      std::vector<Tensor> outputs =
          RunGraph(scattered, 3,
                   {{"n", Tensor::Scalar<int32_t>(n)}, {"m", Tensor::Scalar<int32_t>(m)}}, "acc");
      ASSERT_EQ(outputs.size(), 1u) << "seed " << seed;
      EXPECT_EQ(outputs[0].scalar<float>(), expected) << "seed " << seed << ", n " << n;
    }
  }
}

TEST_F(ControlFlowPartitionTest, CondInLoopCutAnywhereMatchesOneDevice) {
  const GraphDef graph = CondInLoop(Split{false}).ToGraphDef();
  for (uint32_t seed = 0; seed < 40; ++seed) {
    const GraphDef scattered = ScatterOverDevices(graph, seed, 3);
    for (int32_t n : {0, 1, 6}) {
      float expected = 3.0f;
      for (int32_t i = 0; i < n; ++i) {
        expected = i % 2 == 0 ? expected + static_cast<float>(i) : expected * 0.5f;
      }
      std::vector<Tensor> outputs =
          RunGraph(scattered, 3, {{"n", Tensor::Scalar<int32_t>(n)}}, "acc");
      ASSERT_EQ(outputs.size(), 1u) << "seed " << seed;
      EXPECT_EQ(outputs[0].scalar<float>(), expected) << "seed " << seed << ", n " << n;
    }
  }
}

TEST_F(ControlFlowPartitionTest, LoopInCondAndCountingLoopCutAnywhere) {
  const GraphDef loop_in_cond = LoopInCond(Split{false}).ToGraphDef();
  const GraphDef counting = CountingLoop(Split{false}, /*parallel_iterations=*/2).ToGraphDef();
  for (uint32_t seed = 0; seed < 40; ++seed) {
    const GraphDef scattered = ScatterOverDevices(loop_in_cond, seed, 3);
    for (bool p : {false, true}) {
      std::vector<Tensor> outputs = RunGraph(
          scattered, 3, {{"n", Tensor::Scalar<int32_t>(4)}, {"p", Tensor::Scalar<bool>(p)}}, "acc");
      ASSERT_EQ(outputs.size(), 1u) << "seed " << seed;
      EXPECT_EQ(outputs[0].scalar<float>(), p ? 9.0f : -1.0f) << "seed " << seed;
    }
    std::vector<Tensor> outputs = RunGraph(ScatterOverDevices(counting, seed, 3), 3,
                                           {{"n", Tensor::Scalar<int32_t>(9)}}, "acc");
    ASSERT_EQ(outputs.size(), 1u) << "seed " << seed;
    EXPECT_EQ(outputs[0].scalar<float>(), CountingLoopReference(9)) << "seed " << seed;
  }
}

// No device requested: the cost-model placer may split a loop as it likes.
TEST_F(ControlFlowPartitionTest, UnplacedLoopsRunOnFourDevices) {
  GraphDef graph = NestedLoops(Split{false}).ToGraphDef();
  for (NodeDef& node : graph.nodes) node.device.clear();
  std::vector<Tensor> outputs = RunGraph(
      graph, 4, {{"n", Tensor::Scalar<int32_t>(3)}, {"m", Tensor::Scalar<int32_t>(3)}}, "acc");
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].scalar<float>(), 9.0f);  // (0 + 1 + 2) * (0 + 1 + 2)
}

// A hand-built loop, `i = 0; while (i < n) i = i + 1`, its nodes placed by
// `layout` (node name -> CPU index; others on CPU:0): placements the
// builder does not make, such as a NextIteration away from its Merge.
GraphDef HandBuiltLoop(const std::map<std::string, int>& layout) {
  auto node = [&](const std::string& name, const std::string& op, std::vector<std::string> inputs) {
    NodeDef def;
    def.name = name;
    def.op = op;
    def.inputs = std::move(inputs);
    auto it = layout.find(name);
    def.device = StrCat("/device:CPU:", it == layout.end() ? 0 : it->second);
    if (op == "Const") {
      def.attrs["dtype"] = DT_INT32;
      def.attrs["value"] = Tensor::Scalar<int32_t>(name == "one" ? 1 : 0);
    } else if (op == "Placeholder") {
      def.attrs["dtype"] = DT_INT32;
    } else if (op != "LoopCond") {
      def.attrs["T"] = DT_INT32;
    }
    if (op == "Merge") def.attrs["N"] = 2;
    if (op == "Enter") {
      def.attrs["frame_name"] = "count";
      def.attrs["is_constant"] = name == "enter_n";
      def.attrs["parallel_iterations"] = 3;
    }
    return def;
  };
  GraphDef graph;
  graph.nodes = {node("zero", "Const", {}),
                 node("n", "Placeholder", {}),
                 node("enter_i", "Enter", {"zero"}),
                 node("enter_n", "Enter", {"n"}),
                 node("start", "Identity", {"enter_i"}),  // first iteration only
                 node("merge", "Merge", {"start", "next"}),
                 node("less", "Less", {"merge", "enter_n"}),
                 node("cond", "LoopCond", {"less"}),
                 node("switch", "Switch", {"merge", "cond"}),
                 node("body", "Identity", {"switch:1"}),
                 node("one", "Const", {"^body"}),
                 node("add", "Add", {"body", "one"}),
                 node("next", "NextIteration", {"add"}),
                 node("exit", "Exit", {"switch"}),
                 node("i", "Identity", {"exit"})};
  return graph;
}

class HandBuiltLoopTest : public ControlFlowPartitionTest,
                          public ::testing::WithParamInterface<std::map<std::string, int>> {};

TEST_P(HandBuiltLoopTest, CountsToN) {
  SessionOptions options;
  options.num_cpu_devices = 2;
  auto session = Session::New(options);
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_TRUE((*session)->Create(HandBuiltLoop(GetParam())).ok());
  for (int32_t n : {0, 1, 6}) {
    std::vector<Tensor> outputs;
    RunOptions run_options;
    run_options.trace = true;
    run_options.timeout_ms = 20'000;
    RunMetadata metadata;
    Status s = (*session)->Run({{"n", Tensor::Scalar<int32_t>(n)}}, {"i"}, {}, &outputs,
                               run_options, &metadata);
    ASSERT_TRUE(s.ok()) << s;
    ASSERT_EQ(outputs.size(), 1u);
    EXPECT_EQ(outputs[0].scalar<int32_t>(), n);
    // Each node ran where the layout put it.
    for (const NodeExecStats& stats : metadata.step_stats.nodes) {
      auto it = GetParam().find(stats.node_name);
      const int device = it == GetParam().end() ? 0 : it->second;
      if (stats.node_name.starts_with("_")) continue;  // the partitioner's own
      EXPECT_TRUE(stats.device.ends_with(StrCat("CPU:", device))) << stats.node_name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, HandBuiltLoopTest,
    ::testing::Values(
        // The back edge's source away from its Merge.
        std::map<std::string, int>{{"add", 1}, {"next", 1}},
        // The LoopCond away from the loop variable's Switch.
        std::map<std::string, int>{{"less", 1}, {"cond", 1}},
        // A value of the first iteration only, read on the other device once.
        std::map<std::string, int>{{"start", 1}},
        // An is_constant Enter on one device, read on the other in every iteration.
        std::map<std::string, int>{{"enter_n", 1}},
        // Every other node on CPU:1.
        std::map<std::string, int>{{"enter_i", 1},
                                   {"start", 0},
                                   {"merge", 0},
                                   {"less", 1},
                                   {"cond", 0},
                                   {"switch", 1},
                                   {"body", 0},
                                   {"one", 1},
                                   {"add", 0},
                                   {"next", 1},
                                   {"exit", 0},
                                   {"i", 1}}));

// Loops whose variables turn dead (TensorFlow control flow v1 semantics): a
// Merge whose inputs are all dead is dead, a dead NextIteration makes the
// variable dead in the next iteration (if live values start one), a dead
// LoopCond ends the loop with every Exit dead, and a fetch of a dead value
// fails. Split over devices, the loop must end the same way: each device's
// _Recvs of the frame run in every iteration, so every _Send must too.

// What one Run gave: the status and the outputs.
struct Outcome {
  Status status;
  std::vector<Tensor> outputs;
};

std::string Describe(const Outcome& outcome) {
  std::string text = outcome.status.ToString();
  for (const Tensor& t : outcome.outputs) text += " " + t.DebugString();
  return text;
}

void ExpectSameOutcome(const Outcome& split, const Outcome& single, const std::string& what) {
  EXPECT_EQ(split.status.code(), single.status.code()) << what << ": " << split.status;
  EXPECT_EQ(split.status.message(), single.status.message()) << what;
  ASSERT_EQ(split.outputs.size(), single.outputs.size()) << what;
  for (size_t o = 0; o < split.outputs.size(); ++o) {
    EXPECT_EQ(split.outputs[o].DebugString(), single.outputs[o].DebugString())
        << what << ", output " << o;
  }
}

// Runs `graph` on `devices` CPU devices, once per (feeds, fetches), each
// with a timeout so that a hang fails instead of stopping the test.
std::vector<Outcome> RunCases(const GraphDef& graph, int devices,
                              const std::vector<std::vector<std::pair<std::string, Tensor>>>& feeds,
                              const std::vector<std::vector<std::string>>& fetch_sets) {
  SessionOptions options;
  options.num_cpu_devices = devices;
  options.intra_op_threads = 1;
  auto session = Session::New(options);
  EXPECT_TRUE(session.ok()) << session.status();
  Status created = (*session)->Create(graph);
  EXPECT_TRUE(created.ok()) << created;
  std::vector<Outcome> outcomes;
  for (const auto& feed : feeds) {
    for (const auto& fetches : fetch_sets) {
      Outcome outcome;
      RunOptions run_options;
      run_options.timeout_ms = 20'000;
      outcome.status = (*session)->Run(feed, fetches, {}, &outcome.outputs, run_options, nullptr);
      outcomes.push_back(std::move(outcome));
    }
  }
  return outcomes;
}

// The loop of tests/data/tf_while_cond.pbtxt (i < n; acc = i even ? acc *
// 0.5 + 2 : acc - 1, through a cond in the body) with the fault of the
// issue-12 repro: the cond's Merge reads `mul` instead of the else
// branch's result, so both its inputs are dead in odd iterations and acc
// is dead from iteration 2 on, while i counts on. `split` places the cond's
// then branch.
GraphDef ParityLoop(const Split& split) {
  Scope root = Scope::NewRootScope();
  Scope s = split.On0(root);
  auto n = ops::Placeholder(s.WithOpName("n"), DT_INT32);
  std::vector<Output> outputs;
  std::string mul_name, then_name;
  Status built = ops::WhileLoop(
      s, {ops::Const(s, 0), ops::Const(s, 1.0f)},
      [&](const Scope& c, const std::vector<Output>& v, Output* pred) {
        *pred = ops::Less(c, v[0], n);
        return Status::OK();
      },
      [&](const Scope& b, const std::vector<Output>& v, std::vector<Output>* next) {
        auto even = ops::Equal(b, ops::FloorMod(b, v[0], 2), 0);
        std::vector<Output> branch;
        WEIR_RETURN_IF_ERROR(ops::Cond(
            b, even,
            [&](const Scope& t, std::vector<Output>* out) {
              Scope far = split.On1(t);
              auto mul = ops::Mul(far, v[1], 0.5f);
              out->push_back(ops::Add(far, mul, 2.0f));
              mul_name = mul.name();
              then_name = out->back().name();
              return Status::OK();
            },
            [&](const Scope& e, std::vector<Output>* out) {
              out->push_back(ops::Sub(e, v[1], 1.0f));
              return Status::OK();
            },
            &branch));
        next->push_back(ops::Add(b, v[0], 1));
        next->push_back(branch[0]);
        return Status::OK();
      },
      &outputs);
  EXPECT_TRUE(built.ok()) << built;
  ops::Identity(s.WithOpName("i"), outputs[0]);
  ops::Identity(s.WithOpName("acc"), outputs[1]);
  GraphDef graph = root.ToGraphDef();
  int rewired = 0;
  for (NodeDef& node : graph.nodes) {
    if (node.op == "Merge" && node.inputs.size() == 2 && node.inputs[1] == then_name) {
      node.inputs[0] = mul_name;
      ++rewired;
    }
  }
  EXPECT_EQ(rewired, 1);
  return graph;
}

TEST_F(ControlFlowPartitionTest, ALoopVariableTurningDeadEndsLikeOnOneDevice) {
  // n = 1 is left out: there Merge(mul, add) has two live inputs and takes
  // whichever comes first, which two devices need not agree on.
  std::vector<std::vector<std::pair<std::string, Tensor>>> feeds = TripCounts({0, 2, 3, 6});
  const std::vector<std::vector<std::string>> fetch_sets = {{"i"}, {"acc"}, {"i", "acc"}};
  const std::vector<Outcome> single = RunCases(ParityLoop(Split{false}), 1, feeds, fetch_sets);
  // The reference: i counts to n; acc is 1 for n = 0, then dead.
  ASSERT_EQ(single.size(), 12u);
  for (size_t f = 0; f < feeds.size(); ++f) {
    const int32_t n = feeds[f][0].second.scalar<int32_t>();
    const Outcome& i = single[3 * f];
    const Outcome& acc = single[3 * f + 1];
    ASSERT_TRUE(i.status.ok()) << i.status;
    EXPECT_EQ(i.outputs[0].scalar<int32_t>(), n);
    if (n == 0) {
      ASSERT_TRUE(acc.status.ok()) << acc.status;
      EXPECT_EQ(acc.outputs[0].scalar<float>(), 1.0f);
    } else {
      EXPECT_EQ(acc.status.code(), Code::kInternal) << acc.status;
      EXPECT_NE(acc.status.message().find("fetch 'acc' was not produced"), std::string::npos)
          << acc.status;
      EXPECT_EQ(single[3 * f + 2].status.message(), acc.status.message());
    }
  }
  std::vector<std::pair<std::string, GraphDef>> placements = {
      {"then branch on CPU:1", ParityLoop(Split{true})}};
  for (uint32_t seed = 0; seed < 12; ++seed) {
    placements.emplace_back(StrCat("scattered, seed ", seed),
                            ScatterOverDevices(ParityLoop(Split{false}), seed, 2));
  }
  for (const auto& [placement, graph] : placements) {
    const std::vector<Outcome> split = RunCases(graph, 2, feeds, fetch_sets);
    ASSERT_EQ(split.size(), single.size());
    for (size_t r = 0; r < split.size(); ++r) {
      ExpectSameOutcome(split[r], single[r], StrCat(placement, ", run ", r));
    }
  }
}

// i = 0, acc = acc0; while i < n (and, with `cond_reads_acc`, acc > -1000):
// acc = i < d ? acc * 0.5 + i : dead, i += 1. The then branch's Merge reads
// two copies of one value (the same whichever comes first); the else
// branch feeds it nothing (`rewires`: the Merge's input to point at the
// copy's source). acc is dead from iteration d + 1 on; with
// `cond_reads_acc` so is the LoopCond there, and the loop ends with i dead
// too.
Status AddDyingLoop(const Scope& s, Output n, Output d, Output acc0, bool cond_reads_acc,
                    int parallel_iterations, std::vector<Output>* outputs,
                    std::vector<std::pair<std::string, std::string>>* rewires) {
  ops::WhileLoopOptions options;
  options.name = "dying";
  options.parallel_iterations = parallel_iterations;
  return ops::WhileLoop(
      s, {ops::Const(s, 0), acc0},
      [&](const Scope& c, const std::vector<Output>& v, Output* pred) {
        *pred = ops::Less(c, v[0], n);
        if (cond_reads_acc) *pred = ops::LogicalAnd(c, *pred, ops::Greater(c, v[1], -1000.0f));
        return Status::OK();
      },
      [&](const Scope& b, const std::vector<Output>& v, std::vector<Output>* next) {
        std::vector<Output> branch;
        WEIR_RETURN_IF_ERROR(ops::Cond(
            b, ops::Less(b, v[0], d),
            [&](const Scope& t, std::vector<Output>* out) {
              auto live = ops::Add(t, ops::Mul(t, v[1], 0.5f), ops::Cast(t, v[0], DT_FLOAT));
              out->push_back(ops::Identity(t, live));
              rewires->emplace_back(out->back().name(), live.name());
              return Status::OK();
            },
            [&](const Scope& e, std::vector<Output>* out) {
              out->push_back(ops::Neg(e, v[1]));
              return Status::OK();
            },
            &branch));
        next->push_back(ops::Add(b, v[0], 1));
        next->push_back(branch[0]);
        return Status::OK();
      },
      outputs, options);
}

struct DyingLoopCase {
  bool cond_reads_acc;
  bool nested;
  int parallel_iterations;  // of every loop
};

// The dying loop with acc0 = 1 (fetch "i" and "acc"), or with `nested`
// inside a loop of two iterations that feeds it acc (fetch "i" for the
// outer count, "acc" for the outer acc). "done" is a Const after a
// ControlTrigger on acc's Exit: produced whether acc is live or dead.
GraphDef DyingLoop(const DyingLoopCase& loop) {
  Scope root = Scope::NewRootScope();
  Scope s = root.WithDevice("/device:CPU:0");
  auto n = ops::Placeholder(s.WithOpName("n"), DT_INT32);
  auto d = ops::Placeholder(s.WithOpName("d"), DT_INT32);
  std::vector<Output> outputs;
  std::vector<std::pair<std::string, std::string>> rewires;
  ops::WhileLoopOptions outer_options;
  outer_options.parallel_iterations = loop.parallel_iterations;
  Status built;
  if (loop.nested) {
    built = ops::WhileLoop(
        s, {ops::Const(s, 0), ops::Const(s, 1.0f)},
        [&](const Scope& c, const std::vector<Output>& v, Output* pred) {
          *pred = ops::Less(c, v[0], 2);
          return Status::OK();
        },
        [&](const Scope& b, const std::vector<Output>& v, std::vector<Output>* next) {
          std::vector<Output> inner;
          WEIR_RETURN_IF_ERROR(AddDyingLoop(b, n, d, v[1], loop.cond_reads_acc,
                                            loop.parallel_iterations, &inner, &rewires));
          next->push_back(ops::Add(b, v[0], 1));
          next->push_back(inner[1]);
          return Status::OK();
        },
        &outputs, outer_options);
  } else {
    built = AddDyingLoop(s, n, d, ops::Const(s, 1.0f), loop.cond_reads_acc,
                         loop.parallel_iterations, &outputs, &rewires);
  }
  EXPECT_TRUE(built.ok()) << built;
  ops::Identity(s.WithOpName("i"), outputs[0]);
  ops::Identity(s.WithOpName("acc"), outputs[1]);
  auto trigger =
      ops::ControlTrigger(s.WithOpName("acc_ended").WithControlDependencies({outputs[1]}));
  ops::Const(s.WithOpName("done").WithControlDependencies({trigger}), 7);
  EXPECT_TRUE(root.ok()) << root.status();
  GraphDef graph = root.ToGraphDef();
  int rewired = 0;
  for (NodeDef& node : graph.nodes) {
    for (const auto& [copy, live] : rewires) {
      if (node.op == "Merge" && node.inputs.size() == 2 && node.inputs[1] == copy) {
        node.inputs[0] = live;
        ++rewired;
      }
    }
  }
  EXPECT_EQ(rewired, 1);
  return graph;
}

class DyingLoopTest : public ControlFlowPartitionTest,
                      public ::testing::WithParamInterface<DyingLoopCase> {};

TEST_P(DyingLoopTest, CutAnywhereMatchesOneDevice) {
  const auto [cond_reads_acc, nested, parallel_iterations] = GetParam();
  std::vector<std::vector<std::pair<std::string, Tensor>>> feeds;
  for (int32_t n : {0, 1, 3, 6}) {
    for (int32_t d : {0, 1, 2, 10}) {
      feeds.push_back({{"n", Tensor::Scalar<int32_t>(n)}, {"d", Tensor::Scalar<int32_t>(d)}});
    }
  }
  const std::vector<std::vector<std::string>> fetch_sets = {
      {"i"}, {"acc"}, {"done"}, {"i", "acc", "done"}};
  const GraphDef graph = DyingLoop(GetParam());
  const std::vector<Outcome> single = RunCases(graph, 1, feeds, fetch_sets);
  ASSERT_EQ(single.size(), feeds.size() * fetch_sets.size());
  // The reference, from plain C++: acc is computed in iterations before d
  // and dead after; a loop condition that reads a dead acc is dead. Nested,
  // a dead acc enters the second inner loop dead, and the outer count
  // never reads it.
  for (size_t f = 0; f < feeds.size(); ++f) {
    const int32_t n = feeds[f][0].second.scalar<int32_t>();
    const int32_t d = feeds[f][1].second.scalar<int32_t>();
    const std::string what = StrCat("n ", n, ", d ", d);
    const bool acc_dies = d < n;
    const bool i_dies = acc_dies && cond_reads_acc && !nested;
    float acc = 1.0f;
    for (int outer = 0; outer < (nested ? 2 : 1); ++outer) {
      for (int32_t k = 0; k < n; ++k) acc = acc * 0.5f + static_cast<float>(k);
    }
    const Outcome* outcome = &single[fetch_sets.size() * f];
    EXPECT_EQ(outcome[0].status.ok(), !i_dies) << what << ": " << Describe(outcome[0]);
    if (!i_dies && outcome[0].status.ok()) {
      EXPECT_EQ(outcome[0].outputs[0].scalar<int32_t>(), nested ? 2 : n) << what;
    }
    EXPECT_EQ(outcome[1].status.ok(), !acc_dies) << what << ": " << Describe(outcome[1]);
    if (!acc_dies && outcome[1].status.ok()) {
      EXPECT_EQ(outcome[1].outputs[0].scalar<float>(), acc) << what;
    }
    if (acc_dies) {
      EXPECT_EQ(outcome[1].status.code(), Code::kInternal) << what;
    }
    ASSERT_TRUE(outcome[2].status.ok()) << what << ": " << outcome[2].status;
    EXPECT_EQ(outcome[2].outputs[0].scalar<int32_t>(), 7) << what;
    EXPECT_EQ(outcome[3].status.ok(), !acc_dies && !i_dies) << what << ": " << Describe(outcome[3]);
  }
  for (int devices : {2, 3}) {
    for (uint32_t seed = 0; seed < 8; ++seed) {
      const std::vector<Outcome> split = RunCases(
          ScatterOverDevices(graph, 100 * devices + seed, devices), devices, feeds, fetch_sets);
      ASSERT_EQ(split.size(), single.size());
      for (size_t r = 0; r < split.size(); ++r) {
        ExpectSameOutcome(split[r], single[r],
                          StrCat(devices, " devices, seed ", seed, ", run ", r));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    DeadVariablesAndConditions, DyingLoopTest,
    ::testing::Values(DyingLoopCase{false, false, 10}, DyingLoopCase{true, false, 10},
                      DyingLoopCase{false, true, 10}, DyingLoopCase{true, true, 10},
                      DyingLoopCase{false, false, 1}, DyingLoopCase{true, true, 1}));

}  // namespace
}  // namespace weir
