#include "weir/runtime/session.h"

#include <gtest/gtest.h>

#include <cmath>
#include <condition_variable>
#include <nlohmann/json.hpp>
#include <thread>
#include <tuple>

#include "weir/base/cancellation.h"
#include "weir/framework/kernel_registry.h"
#include "weir/framework/shape_inference.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/local_session.h"
#include "weir/runtime/standard_registration.h"

namespace weir {
namespace {

// Test-only ops: TestCounter counts its executions (stateful, so it is never
// folded or deduplicated); TestBlock waits until the step is cancelled.
std::mutex counter_mu;
std::map<std::string, int> counter_runs;

class TestCounterKernel final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    int runs;
    {
      std::lock_guard<std::mutex> lock(counter_mu);
      runs = ++counter_runs[name()];
    }
    context->set_output(0, Tensor::Scalar<int32_t>(runs));
  }
};

class TestBlockKernel final : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;
  void ComputeAsync(OpKernelContext* context, DoneCallback done) override {
    CancellationManager* cm = context->cancellation_manager();
    auto shared_done = std::make_shared<DoneCallback>(std::move(done));
    bool registered = cm->RegisterCallback(cm->GetToken(), [context, shared_done] {
      context->SetStatus(errors::Cancelled("TestBlock cancelled"));
      (*shared_done)();
    });
    if (!registered) {
      context->SetStatus(errors::Cancelled("TestBlock cancelled"));
      (*shared_done)();
    }
  }
};

void RegisterTestOps() {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterStandardOpsAndKernels();
    OpRegistry::Global()->Register(
        OpDefBuilder("TestCounter").Output("runs: int32").SetIsStateful());
    OpRegistry::Global()->Register(OpDefBuilder("TestBlock").Output("out: float").SetIsStateful());
    KernelRegistry::Global()->Register(KernelBuilder("TestCounter"), MakeKernel<TestCounterKernel>);
    KernelRegistry::Global()->Register(KernelBuilder("TestBlock"), MakeKernel<TestBlockKernel>);
  });
}

int CounterRuns(const std::string& name) {
  std::lock_guard<std::mutex> lock(counter_mu);
  return counter_runs[name];
}

class SessionTest : public ::testing::Test {
 protected:
  void SetUp() override { RegisterTestOps(); }

  std::unique_ptr<Session> NewSession(const Scope& root, int devices = 1) {
    EXPECT_TRUE(root.ok()) << root.status();
    SessionOptions options;
    options.num_cpu_devices = devices;
    options.intra_op_threads = 1;
    auto session = Session::New(options);
    EXPECT_TRUE(session.ok()) << session.status();
    Status created = (*session)->Create(root.ToGraphDef());
    EXPECT_TRUE(created.ok()) << created;
    return std::move(session).value();
  }
};

TEST_F(SessionTest, FeedsAndFetches) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT, {{"shape", PartialShape({-1, 2})}});
  auto w = ops::Const(root, {{1.f, 2.f}, {3.f, 4.f}});
  auto y = ops::Add(root.WithOpName("y"), ops::MatMul(root, x, w), 1.f);
  auto session = NewSession(root);
  std::vector<Tensor> out;
  Status s =
      session->Run({{"x", Tensor::FromVector<float>({1, 1, 0, 2}, {2, 2})}}, {"y"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), TensorShape({2, 2}));
  // [1,1]·w = [4,6]; [0,2]·w = [6,8]; plus one.
  EXPECT_EQ(std::vector<float>(out[0].flat<float>().begin(), out[0].flat<float>().end()),
            (std::vector<float>{5, 7, 7, 9}));
  EXPECT_EQ(session->num_cached_signatures(), 1);
  ASSERT_TRUE(
      session->Run({{"x:0", Tensor::FromVector<float>({0, 0}, {1, 2})}}, {"y:0"}, {}, &out).ok());
  EXPECT_EQ(out[0].flat<float>()[0], 1.f);
}

TEST_F(SessionTest, FetchOrderFollowsTheCaller) {
  Scope root = Scope::NewRootScope();
  ops::Const(root.WithOpName("a"), 1.f);
  ops::Const(root.WithOpName("b"), 2.f);
  auto session = NewSession(root);
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {"b", "a", "b"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), 2.f);
  EXPECT_EQ(out[1].scalar<float>(), 1.f);
  EXPECT_EQ(out[2].scalar<float>(), 2.f);
}

TEST_F(SessionTest, PrunedNodesDoNotRun) {
  Scope root = Scope::NewRootScope();
  auto used = AddOp(root.WithOpName("used_counter"), "TestCounter", {});
  AddOp(root.WithOpName("pruned_counter"), "TestCounter", {});
  ops::Identity(root.WithOpName("out"), used.output(0));
  auto session = NewSession(root);
  std::vector<Tensor> out;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(session->Run({}, {"out"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<int32_t>(), 3);
  EXPECT_EQ(CounterRuns("used_counter"), 3);
  EXPECT_EQ(CounterRuns("pruned_counter"), 0);
  // A target runs the node for its effect without fetching it.
  ASSERT_TRUE(session->Run({}, {}, {"pruned_counter"}, &out).ok());
  EXPECT_EQ(CounterRuns("pruned_counter"), 1);
  EXPECT_EQ(CounterRuns("used_counter"), 3);
}

TEST_F(SessionTest, FeedOverridesANodesOutputAndCutsItsInputs) {
  Scope root = Scope::NewRootScope();
  auto counter = AddOp(root.WithOpName("feed_counter"), "TestCounter", {});
  auto as_float = ops::Cast(root.WithOpName("c"), counter.output(0), DT_FLOAT);
  ops::Mul(root.WithOpName("y"), as_float, 10.f);
  auto session = NewSession(root);
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({{"c", Tensor::Scalar<float>(4.f)}}, {"y"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), 40.f);
  EXPECT_EQ(CounterRuns("feed_counter"), 0) << "a fed tensor's producers must not run";
  // Fetching a fed tensor returns the fed value.
  ASSERT_TRUE(session->Run({{"c", Tensor::Scalar<float>(7.f)}}, {"c"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), 7.f);
}

TEST_F(SessionTest, ControlEdgesOfAFedPlaceholderFollowTheFeed) {
  // tf.control_dependencies([placeholder]) then feeding the placeholder (TF1
  // metrics do this): the Placeholder must not run, yet its dependents wait
  // for the fed value, as in TF. An unfed Placeholder still fails the step.
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto after_x = root.WithControlDependencies({x});
  ops::Identity(after_x.WithOpName("y"), ops::Const(root, 5.f));
  auto session = NewSession(root);
  std::vector<Tensor> out;
  Status fed = session->Run({{"x", Tensor::Scalar<float>(1.f)}}, {"y"}, {}, &out);
  ASSERT_TRUE(fed.ok()) << fed;
  EXPECT_EQ(out[0].scalar<float>(), 5.f);
  Status unfed = session->Run({}, {"y"}, {}, &out);
  EXPECT_EQ(unfed.code(), Code::kInvalidArgument) << unfed;
}

TEST_F(SessionTest, OutOfRangeDeviceAndThreadCountsAreRefused) {
  for (auto [devices, intra, inter] :
       {std::tuple{0, 0, 0}, {100000, 0, 0}, {1, -1, 0}, {1, 0, 1 << 20}}) {
    SessionOptions options;
    options.num_cpu_devices = devices;
    options.intra_op_threads = intra;
    options.inter_op_threads = inter;
    auto session = Session::New(options);
    ASSERT_FALSE(session.ok()) << devices << " " << intra << " " << inter;
    EXPECT_EQ(session.status().code(), Code::kInvalidArgument) << session.status();
  }
}

TEST_F(SessionTest, PlaceholderWithDefaultIsItsInputUnlessFed) {
  Scope root = Scope::NewRootScope();
  auto x = ops::PlaceholderWithDefault(root.WithOpName("x"), ops::Const(root, {1.f, 2.f}),
                                       PartialShape({-1}));
  EXPECT_EQ(x.shape(), PartialShape({-1})) << "the shape attr, not the default's";
  ops::Mul(root.WithOpName("y"), x, 3.f);
  auto session = NewSession(root);
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {"y"}, {}, &out).ok());
  EXPECT_EQ(std::vector<float>(out[0].flat<float>().begin(), out[0].flat<float>().end()),
            (std::vector<float>{3, 6}));
  ASSERT_TRUE(session->Run({{"x", Tensor::FromVector<float>({1, 1, 1})}}, {"y"}, {}, &out).ok());
  EXPECT_EQ(out[0].NumElements(), 3);
  EXPECT_EQ(out[0].flat<float>()[2], 3.f);

  Scope bad = Scope::NewRootScope();
  ops::PlaceholderWithDefault(bad.WithOpName("z"), ops::Const(bad, {1.f, 2.f}), PartialShape({3}));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("not compatible with the shape attr"), std::string::npos)
      << bad.status();

  // A default of unknown shape at graph time is checked when it runs.
  Scope late = Scope::NewRootScope();
  auto v = ops::Placeholder(late.WithOpName("v"), DT_FLOAT);
  ops::PlaceholderWithDefault(late.WithOpName("w"), v, PartialShape({3}));
  auto late_session = NewSession(late);
  Status status = late_session->Run({{"v", Tensor::FromVector<float>({1, 2})}}, {"w"}, {}, &out);
  EXPECT_EQ(status.code(), Code::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("'w'"), std::string::npos) << status;
  ASSERT_TRUE(late_session->Run({{"v", Tensor::FromVector<float>({1, 2, 3})}}, {"w"}, {}, &out).ok());
}

TEST_F(SessionTest, ConcurrentRunsFromEightThreads) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto y = ops::Mul(root.WithOpName("y"), ops::Add(root, x, 1.f), 2.f);
  auto session = NewSession(root);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 300; ++i) {
        float v = static_cast<float>(t * 1000 + i);
        std::vector<Tensor> out;
        Status s = session->Run({{"x", Tensor::FromVector<float>({v, -v}, {2})}}, {"y"}, {}, &out);
        if (!s.ok() || out[0].flat<float>()[0] != (v + 1) * 2 ||
            out[0].flat<float>()[1] != (1 - v) * 2) {
          failures.fetch_add(1);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(session->num_cached_signatures(), 1);
}

TEST_F(SessionTest, NodeErrorNamesTheNodeAndWhereItWasBuilt) {
  Scope root = Scope::NewRootScope();
  auto a = ops::Placeholder(root.WithOpName("a"), DT_FLOAT);
  auto b = ops::Placeholder(root.WithOpName("b"), DT_FLOAT);
  int line = __LINE__ + 1;
  ops::MatMul(root.WithOpName("product"), a, b);
  auto session = NewSession(root);
  std::vector<Tensor> out;
  Status s = session->Run(
      {{"a", Tensor(DT_FLOAT, TensorShape({2, 3}))}, {"b", Tensor(DT_FLOAT, TensorShape({4, 5}))}},
      {"product"}, {}, &out);
  ASSERT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("'product' (MatMul)"), std::string::npos) << s;
  EXPECT_NE(s.message().find(StrCat("session_test.cc:", line)), std::string::npos) << s;
  EXPECT_NE(s.message().find("[2,3]"), std::string::npos) << s;
}

TEST_F(SessionTest, ErrorOnOneDeviceCancelsTheWaitOnAnother) {
  // CPU:1 waits for a tensor from CPU:0, whose producer fails: the error
  // must end the step (not hang it) and be the one reported.
  Scope root = Scope::NewRootScope();
  auto a = ops::Placeholder(root.WithOpName("a").WithDevice("/device:CPU:0"), DT_FLOAT);
  auto bad = ops::MatMul(root.WithOpName("bad").WithDevice("/device:CPU:0"), a, a);
  ops::Identity(root.WithOpName("far").WithDevice("/device:CPU:1"), bad);
  auto session = NewSession(root, 2);
  std::vector<Tensor> out;
  Status s = session->Run({{"a", Tensor(DT_FLOAT, TensorShape({2, 3}))}}, {"far"}, {}, &out);
  ASSERT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("'bad'"), std::string::npos) << s;
}

TEST_F(SessionTest, MultiDevicePartitionsWithDataAndControlEdges) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x").WithDevice("/cpu:0"), DT_FLOAT);
  auto counter =
      AddOp(root.WithOpName("dev_counter").WithDevice("/device:CPU:0"), "TestCounter", {});
  auto y = ops::Mul(root.WithOpName("y").WithDevice("/device:CPU:1"), x, x);
  auto z = ops::Add(
      root.WithOpName("z").WithDevice("/device:CPU:1").WithControlDependencies({counter}), y, x);
  ops::Neg(root.WithOpName("w").WithDevice("/device:CPU:0"), z);
  auto session = NewSession(root, 2);
  std::vector<Tensor> out;
  Status s = session->Run({{"x", Tensor::FromVector<float>({3, -2}, {2})}}, {"w", "y"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].flat<float>()[0], -12.f);
  EXPECT_EQ(out[0].flat<float>()[1], -2.f);
  EXPECT_EQ(out[1].flat<float>()[0], 9.f);
  EXPECT_EQ(CounterRuns("dev_counter"), 1) << "the control edge across devices must run it";
}

TEST_F(SessionTest, ImpossiblePlacementIsAClearError) {
  Scope root = Scope::NewRootScope();
  ops::Const(root.WithOpName("k").WithDevice("/device:GPU:0"), 1.f);
  auto session = NewSession(root);
  std::vector<Tensor> out;
  Status s = session->Run({}, {"k"}, {}, &out);
  ASSERT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("'k'"), std::string::npos) << s;
  EXPECT_NE(s.message().find("GPU:0"), std::string::npos) << s;
  EXPECT_NE(s.message().find("CPU:0"), std::string::npos) << s;
}

TEST_F(SessionTest, BadFeedsAndFetches) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT, {{"shape", PartialShape({-1, 3})}});
  ops::Identity(root.WithOpName("y"), x);
  auto session = NewSession(root);
  std::vector<Tensor> out;
  Status s = session->Run({{"x", Tensor::FromVector<int32_t>({1, 2, 3}, {1, 3})}}, {"y"}, {}, &out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("int32"), std::string::npos) << s;
  s = session->Run({{"x", Tensor(DT_FLOAT, TensorShape({2, 4}))}}, {"y"}, {}, &out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("[2,4]"), std::string::npos) << s;
  EXPECT_NE(s.message().find("[?,3]"), std::string::npos) << s;
  s = session->Run({}, {"nothing"}, {}, &out);
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_NE(s.message().find("nothing"), std::string::npos) << s;
  s = session->Run({}, {"y:1"}, {}, &out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  s = session->Run({}, {"y"}, {}, &out);  // placeholder left unfed
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("'x'"), std::string::npos) << s;
  EXPECT_NE(s.message().find("feed"), std::string::npos) << s;
}

TEST_F(SessionTest, CallableSkipsTheLookupAndMatchesRun) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  ops::Add(root.WithOpName("y"), x, x);
  auto session = NewSession(root);
  StatusOr<CallableHandle> handle = session->MakeCallable({{"x"}, {"y"}, {}});
  ASSERT_TRUE(handle.ok()) << handle.status();
  std::vector<Tensor> out;
  ASSERT_TRUE(session->RunCallable(*handle, {Tensor::Scalar<float>(21)}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), 42.f);
  ASSERT_TRUE(session->ReleaseCallable(*handle).ok());
  EXPECT_EQ(session->RunCallable(*handle, {Tensor::Scalar<float>(1)}, &out).code(),
            Code::kInvalidArgument);
}

TEST_F(SessionTest, TraceProducesStatsAndChromeJson) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  ops::Relu(root.WithOpName("r"), ops::Neg(root.WithOpName("n"), x));
  auto session = NewSession(root);
  std::vector<Tensor> out;
  RunOptions options;
  options.trace = true;
  RunMetadata metadata;
  ASSERT_TRUE(
      session
          ->Run({{"x", Tensor(DT_FLOAT, TensorShape({256}))}}, {"r"}, {}, &out, options, &metadata)
          .ok());
  std::set<std::string> names;
  for (const NodeExecStats& node : metadata.step_stats.nodes) {
    names.insert(node.node_name);
    EXPECT_LE(node.start_micros, node.end_micros);
    EXPECT_NE(node.device.find("CPU:0"), std::string::npos);
  }
  EXPECT_TRUE(names.count("n") && names.count("r")) << StrJoin(names, ",");
  nlohmann::json trace = nlohmann::json::parse(metadata.ChromeTrace());
  int complete_events = 0;
  for (const auto& event : trace["traceEvents"]) complete_events += event["ph"] == "X";
  EXPECT_EQ(complete_events, static_cast<int>(metadata.step_stats.nodes.size()));
}

TEST_F(SessionTest, TracedStepsFeedTheCostModel) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  ops::Neg(root.WithOpName("n"), x);
  ASSERT_TRUE(root.ok()) << root.status();
  SessionOptions options;
  options.intra_op_threads = 1;
  LocalSession session(options);
  ASSERT_TRUE(session.Create(root.ToGraphDef()).ok());
  const DeviceInfo device = session.ListDevices()[0];
  std::vector<Tensor> out;
  ASSERT_TRUE(session.Run({{"x", Tensor(DT_FLOAT, TensorShape({64}))}}, {"n"}, {}, &out).ok());
  EXPECT_FALSE(session.cost_model().has_measurements()) << "untraced steps record nothing";
  RunOptions traced;
  traced.trace = true;
  ASSERT_TRUE(
      session.Run({{"x", Tensor(DT_FLOAT, TensorShape({64}))}}, {"n"}, {}, &out, traced).ok());
  EXPECT_TRUE(session.cost_model().has_measurements());
  EXPECT_GE(session.cost_model().MeasuredMicros("n", device), 0.0);
  EXPECT_LT(session.cost_model().MeasuredMicros("never_ran", device), 0.0);
}

TEST_F(SessionTest, CloseCancelsABlockedStep) {
  Scope root = Scope::NewRootScope();
  AddOp(root.WithOpName("block"), "TestBlock", {});
  auto session = NewSession(root);
  Status result;
  std::thread runner([&] {
    std::vector<Tensor> out;
    result = session->Run({}, {"block"}, {}, &out);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(session->Close().ok());
  runner.join();
  EXPECT_EQ(result.code(), Code::kCancelled) << result;
  std::vector<Tensor> out;
  EXPECT_EQ(session->Run({}, {"block"}, {}, &out).code(), Code::kCancelled);
}

// Sleeps until ReleaseSlowStep() even if the step is cancelled: a kernel
// that is slow to notice cancellation.
std::mutex slow_mu;
std::condition_variable slow_cv;
bool slow_released = false;
std::atomic<bool> slow_started{false};
std::atomic<bool> slow_finished{false};

class TestSlowKernel final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    slow_started = true;
    std::unique_lock<std::mutex> lock(slow_mu);
    slow_cv.wait(lock, [] { return slow_released; });
    slow_finished = true;
    context->set_output(0, Tensor::Scalar<float>(1.f));
  }
};

TEST_F(SessionTest, DestructorWaitsForRunningSteps) {
  static std::once_flag once;
  std::call_once(once, [] {
    OpRegistry::Global()->Register(OpDefBuilder("TestSlow").Output("out: float").SetIsStateful());
    KernelRegistry::Global()->Register(KernelBuilder("TestSlow"), MakeKernel<TestSlowKernel>);
  });
  Scope root = Scope::NewRootScope();
  AddOp(root.WithOpName("slow"), "TestSlow", {});
  auto session = NewSession(root);
  Session* raw = session.get();
  std::thread runner([raw] {
    std::vector<Tensor> out;
    raw->Run({}, {"slow"}, {}, &out).ok();
  });
  while (!slow_started) std::this_thread::yield();
  std::thread releaser([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::lock_guard<std::mutex> lock(slow_mu);
    slow_released = true;
    slow_cv.notify_all();
  });
  session.reset();  // must block until the step has finished
  EXPECT_TRUE(slow_finished) << "the session was destroyed while its step still ran";
  releaser.join();
  runner.join();
}

TEST_F(SessionTest, TimeoutEndsABlockedStep) {
  Scope root = Scope::NewRootScope();
  AddOp(root.WithOpName("block"), "TestBlock", {});
  auto session = NewSession(root);
  RunOptions options;
  options.timeout_ms = 30;
  std::vector<Tensor> out;
  Status s = session->Run({}, {"block"}, {}, &out, options);
  EXPECT_EQ(s.code(), Code::kDeadlineExceeded) << s;
}

TEST_F(SessionTest, GrowingGraphBetweenRunsWarns) {
  Scope root = Scope::NewRootScope();
  ops::Const(root.WithOpName("start"), 1.f);
  auto session = NewSession(root);
  std::vector<Tensor> out;
  for (int step = 0; step < 4; ++step) {
    ASSERT_TRUE(session->Run({}, {"start"}, {}, &out).ok());
    Scope more = Scope::NewRootScope();
    ops::Const(more.WithOpName(StrCat("made_in_loop_", step)), 2.f);
    ASSERT_TRUE(session->Extend(more.ToGraphDef()).ok());
  }
  EXPECT_GE(session->graph_growth_warnings(), 1);
}

TEST_F(SessionTest, CreateTwiceAndRunBeforeCreate) {
  auto session = Session::New(SessionOptions());
  ASSERT_TRUE(session.ok());
  std::vector<Tensor> out;
  EXPECT_EQ((*session)->Run({}, {"x"}, {}, &out).code(), Code::kFailedPrecondition);
  Scope root = Scope::NewRootScope();
  ops::Const(root.WithOpName("x"), 1.f);
  ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  EXPECT_EQ((*session)->Create(root.ToGraphDef()).code(), Code::kFailedPrecondition);
}

}  // namespace
}  // namespace weir

namespace weir {
namespace {

// Conv2D -> BiasAdd -> Relu runs as one _FusedConv2D (graph/fuse_ops.h),
// with the values of the three ops run one by one, and fetching an
// intermediate keeps it. With `add`, the bias is added by AddV2 (b + conv,
// as graph-mode TF code writes it), which fuses the same way.
void CheckConvBiasReluFuses(bool add) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  std::vector<float> filter(3 * 3 * 2 * 4), bias(4);
  for (size_t i = 0; i < filter.size(); ++i) filter[i] = std::sin(0.7f * i);
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = 0.3f * i - 0.5f;
  auto conv = ops::Conv2D(root.WithOpName("conv"), x,
                          ops::Const(root, Tensor::FromVector<float>(filter, {3, 3, 2, 4})),
                          {1, 1, 1, 1}, "SAME");
  auto bias_value = ops::Const(root, Tensor::FromVector(bias, {4}));
  auto biased = add ? ops::AddV2(root.WithOpName("bias"), bias_value, conv)
                    : ops::BiasAdd(root.WithOpName("bias"), conv, bias_value);
  ops::Relu(root.WithOpName("relu"), biased);
  std::vector<float> image(2 * 5 * 5 * 2);
  for (size_t i = 0; i < image.size(); ++i) image[i] = std::cos(1.3f * i);
  const Tensor input = Tensor::FromVector<float>(image, {2, 5, 5, 2});

  auto run = [&](bool fuse, const std::vector<std::string>& fetches, std::string* relu_op) {
    SessionOptions options;
    options.compile.fuse_kernels = fuse;
    options.intra_op_threads = 1;
    auto session = Session::New(options);
    EXPECT_TRUE(session.ok()) << session.status();
    EXPECT_TRUE((*session)->Create(root.ToGraphDef()).ok());
    RunOptions run_options;
    run_options.trace = true;
    RunMetadata metadata;
    std::vector<Tensor> out;
    Status s = (*session)->Run({{"x", input}}, fetches, {}, &out, run_options, &metadata);
    EXPECT_TRUE(s.ok()) << s;
    for (const NodeExecStats& stats : metadata.step_stats.nodes) {
      if (stats.node_name == "relu") *relu_op = stats.op;
    }
    return out;
  };
  std::string op;
  const std::vector<Tensor> fused = run(true, {"relu"}, &op);
  EXPECT_EQ(op, "_FusedConv2D");
  const std::vector<Tensor> unfused = run(false, {"relu", "conv"}, &op);
  EXPECT_EQ(op, "Relu");
  ASSERT_EQ(fused.size(), 1u);
  ASSERT_EQ(fused[0].shape(), unfused[0].shape());
  int zeros = 0;
  for (int64_t i = 0; i < fused[0].NumElements(); ++i) {
    EXPECT_NEAR(fused[0].flat<float>()[i], unfused[0].flat<float>()[i], 1e-5) << i;
    zeros += unfused[0].flat<float>()[i] == 0;
  }
  EXPECT_GT(zeros, 0);  // the Relu did cut something
  // Fetching the convolution's output keeps it: nothing is fused.
  const std::vector<Tensor> both = run(true, {"relu", "conv"}, &op);
  EXPECT_EQ(op, "Relu");
  ASSERT_EQ(both.size(), 2u);
  for (int64_t i = 0; i < both[1].NumElements(); ++i) {
    EXPECT_EQ(both[1].flat<float>()[i], unfused[1].flat<float>()[i]) << i;
  }
}

TEST_F(SessionTest, ConvBiasReluRunsFusedWithTheSameValues) { CheckConvBiasReluFuses(false); }

TEST_F(SessionTest, ConvPlusBiasReluRunsFusedWithTheSameValues) { CheckConvBiasReluFuses(true); }

}  // namespace
}  // namespace weir
