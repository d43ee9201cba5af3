// The executor on its own: dead values, asynchronous kernels completing on
// other threads, errors stopping the step, long chains, concurrent steps.
#include "weir/runtime/executor.h"

#include <gtest/gtest.h>

#include <deque>
#include <mutex>
#include <thread>

#include "weir/base/cancellation.h"
#include "weir/base/notification.h"
#include "weir/framework/call_frame.h"
#include "weir/framework/kernel_registry.h"
#include "weir/graph/graph_constructor.h"
#include "weir/runtime/cpu_device.h"
#include "weir/runtime/standard_registration.h"

namespace weir {
namespace {

std::atomic<int> counted_runs{0};

// Outputs a dead value (what an untaken branch produces).
class DeadSourceKernel final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override { context->set_outputs_dead(); }
};

// Forwards its input one millisecond later, from another thread.
class SlowIdentityKernel final : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;
  void ComputeAsync(OpKernelContext* context, DoneCallback done) override {
    Tensor value = context->input(0);
    std::thread([context, value, done = std::move(done)] {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      context->set_output(0, value);
      done();
    }).detach();
  }
};

// Identity that counts how often it ran.
class CountedIdentityKernel final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    counted_runs.fetch_add(1);
    context->set_output(0, context->input(0));
  }
};

// An expensive identity that records the order nodes ran in.
std::mutex recorded_mu;
std::vector<std::string> recorded;
class RecordedIdentityKernel final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool IsExpensive() const override { return true; }
  void Compute(OpKernelContext* context) override {
    {
      std::lock_guard<std::mutex> lock(recorded_mu);
      recorded.push_back(name());
    }
    context->set_output(0, context->input(0));
  }
};

// An expensive node (so it goes to the pool) that fails.
class FailingExpensiveKernel final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool IsExpensive() const override { return true; }
  void Compute(OpKernelContext* context) override {
    context->SetStatus(errors::Internal("failing on purpose"));
  }
};

void RegisterExecutorTestOps() {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterStandardOpsAndKernels();
    OpRegistry* ops = OpRegistry::Global();
    ops->Register(OpDefBuilder("ExecTestDeadSource").Output("out: float"));
    ops->Register(OpDefBuilder("ExecTestSlowIdentity").Input("in: float").Output("out: float"));
    ops->Register(OpDefBuilder("ExecTestCounted").Input("in: float").Output("out: float"));
    ops->Register(OpDefBuilder("ExecTestRecorded").Input("in: float").Output("out: float"));
    KernelRegistry* kernels = KernelRegistry::Global();
    kernels->Register(KernelBuilder("ExecTestDeadSource"), MakeKernel<DeadSourceKernel>);
    kernels->Register(KernelBuilder("ExecTestSlowIdentity"), MakeKernel<SlowIdentityKernel>);
    kernels->Register(KernelBuilder("ExecTestCounted"), MakeKernel<CountedIdentityKernel>);
    kernels->Register(KernelBuilder("ExecTestRecorded"), MakeKernel<RecordedIdentityKernel>);
    ops->Register(OpDefBuilder("ExecTestFailExpensive").Input("in: float").Output("out: float"));
    kernels->Register(KernelBuilder("ExecTestFailExpensive"), MakeKernel<FailingExpensiveKernel>);
  });
}

NodeDef Node(const std::string& name, const std::string& op, std::vector<std::string> inputs,
             AttrMap attrs = {}) {
  NodeDef def;
  def.name = name;
  def.op = op;
  def.inputs = std::move(inputs);
  def.attrs = std::move(attrs);
  return def;
}

NodeDef Retval(const std::string& name, const std::string& input, int index) {
  return Node(name, "_Retval", {input}, {{"T", DT_FLOAT}, {"index", int64_t{index}}});
}

NodeDef Constant(const std::string& name, float value) {
  return Node(name, "Const", {}, {{"dtype", DT_FLOAT}, {"value", Tensor::Scalar<float>(value)}});
}

class ExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterExecutorTestOps();
    counted_runs = 0;
  }

  // Builds an executor for `nodes` and runs one step; retvals in `frame`.
  Status RunOnce(std::vector<NodeDef> nodes, CallFrame* frame, bool with_pool = true) {
    GraphDef def;
    def.nodes = std::move(nodes);
    graph_ = std::make_unique<Graph>();
    // The test graphs hold the runtime's own _Retval nodes.
    WEIR_RETURN_IF_ERROR(ImportGraphDef(def, graph_.get(), {.allow_internal_ops = true}));
    WEIR_ASSIGN_OR_RETURN(executor_,
                          Executor::Create(*graph_, &device_, *KernelRegistry::Global()));
    CancellationManager cancellation;
    Executor::Runner runner = [this](std::function<void()> fn) { pool_.Schedule(std::move(fn)); };
    Executor::Args args;
    args.cancellation = &cancellation;
    args.call_frame = frame;
    args.runner = with_pool ? &runner : nullptr;
    return executor_->Run(args);
  }

  CpuDevice device_{"/job:localhost/replica:0/task:0/device:CPU:0", 2};
  ThreadPool pool_{"inter_op", 2};
  std::unique_ptr<Graph> graph_;
  std::unique_ptr<Executor> executor_;
};

TEST_F(ExecutorTest, DeadInputsSkipTheKernelAndPropagate) {
  CallFrame frame({}, 2);
  Status s =
      RunOnce({Node("dead", "ExecTestDeadSource", {}), Node("after", "ExecTestCounted", {"dead"}),
               Constant("live", 3), Node("live_after", "ExecTestCounted", {"live"}),
               Retval("r_dead", "after", 0), Retval("r_live", "live_after", 1)},
              &frame);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(counted_runs.load(), 1) << "only the live branch runs";
  EXPECT_FALSE(frame.retvals()[0].IsInitialized());
  EXPECT_EQ(frame.retvals()[1].scalar<float>(), 3.f);
}

TEST_F(ExecutorTest, AsyncKernelsCompleteOnOtherThreads) {
  std::vector<NodeDef> nodes = {Constant("c", 5)};
  std::string last = "c";
  for (int i = 0; i < 20; ++i) {
    std::string name = "slow" + std::to_string(i);
    nodes.push_back(Node(name, i % 2 ? "ExecTestSlowIdentity" : "ExecTestCounted", {last}));
    last = name;
  }
  nodes.push_back(Retval("r", last, 0));
  for (bool with_pool : {true, false}) {
    CallFrame frame({}, 1);
    ASSERT_TRUE(RunOnce(nodes, &frame, with_pool).ok());
    EXPECT_EQ(frame.retvals()[0].scalar<float>(), 5.f);
  }
}

TEST_F(ExecutorTest, AnErrorStopsTheStepAndNamesTheNode) {
  NodeDef a = Node("a", "Const", {},
                   {{"dtype", DT_FLOAT}, {"value", Tensor(DT_FLOAT, TensorShape({2, 3}))}});
  CallFrame frame({}, 1);
  Status s = RunOnce({a, Node("mm", "MatMul", {"a", "a"}, {{"T", DT_FLOAT}}),
                      Node("after", "ExecTestCounted", {"mm"}), Retval("r", "after", 0)},
                     &frame);
  // Shape inference knows a's shape, so the import itself rejects MatMul.
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("'mm'"), std::string::npos) << s;
  EXPECT_EQ(counted_runs.load(), 0);
}

TEST_F(ExecutorTest, RuntimeErrorStopsDownstreamNodes) {
  // RealDiv of ints by zero fails only at run time.
  NodeDef x = Node("x", "Const", {}, {{"dtype", DT_INT32}, {"value", Tensor::Scalar<int32_t>(1)}});
  NodeDef zero =
      Node("zero", "Const", {}, {{"dtype", DT_INT32}, {"value", Tensor::Scalar<int32_t>(0)}});
  NodeDef div = Node("div", "RealDiv", {"x", "zero"}, {{"T", DT_INT32}});
  NodeDef cast = Node("cast", "Cast", {"div"}, {{"SrcT", DT_INT32}, {"DstT", DT_FLOAT}});
  CallFrame frame({}, 1);
  Status s = RunOnce(
      {x, zero, div, cast, Node("after", "ExecTestCounted", {"cast"}), Retval("r", "after", 0)},
      &frame);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("'div' (RealDiv)"), std::string::npos) << s;
  EXPECT_EQ(counted_runs.load(), 0);
}

// The executor hands a Const's tensor on itself (OpKernel::ConstantOutput)
// instead of calling its kernel: every step and every consumer gets the
// kernel's buffer, a control input still orders it, and it is traced like
// any node.
TEST_F(ExecutorTest, ConstantsAreHandedOnWithoutTheirKernel) {
  NodeDef after_control = Constant("c", 7);
  after_control.inputs.push_back("^first");
  std::vector<NodeDef> nodes = {Constant("first", 1),
                                after_control,
                                Node("a", "ExecTestCounted", {"c"}),
                                Node("b", "ExecTestCounted", {"c"}),
                                Retval("ra", "a", 0),
                                Retval("rb", "b", 1)};
  CallFrame frame({}, 2);
  ASSERT_TRUE(RunOnce(nodes, &frame).ok());
  EXPECT_EQ(frame.retvals()[0].scalar<float>(), 7.f);
  EXPECT_EQ(frame.retvals()[1].scalar<float>(), 7.f);
  EXPECT_TRUE(frame.retvals()[0].SharesBufferWith(frame.retvals()[1]));
  const void* first_step = frame.retvals()[0].raw_data();

  CallFrame again({}, 2);
  StepStatsCollector collector;
  Executor::Args args;
  args.call_frame = &again;
  args.stats = &collector;
  ASSERT_TRUE(executor_->Run(args).ok());
  EXPECT_EQ(again.retvals()[0].raw_data(), first_step)
      << "a copy of the attr's tensor, not a new one";
  StepStats stats = collector.Finalize();
  int64_t first_end = -1, c_start = -1;
  for (const NodeExecStats& node : stats.nodes) {
    if (node.node_name == "first") first_end = node.end_micros;
    if (node.node_name == "c") {
      c_start = node.start_micros;
      EXPECT_EQ(node.op, "Const");
      EXPECT_EQ(node.bytes_allocated, 0);
    }
  }
  ASSERT_GE(c_start, 0) << "the Const is traced";
  ASSERT_GE(first_end, 0);
  EXPECT_GE(c_start, first_end) << "its control input ran first";
}

TEST_F(ExecutorTest, LongChainAndConcurrentSteps) {
  std::vector<NodeDef> nodes = {Constant("c", 1)};
  std::string last = "c";
  for (int i = 0; i < 5000; ++i) {
    std::string name = "n" + std::to_string(i);
    nodes.push_back(Node(name, "ExecTestCounted", {last}));
    last = name;
  }
  nodes.push_back(Retval("r", last, 0));
  CallFrame first({}, 1);
  ASSERT_TRUE(RunOnce(nodes, &first).ok());
  EXPECT_EQ(counted_runs.load(), 5000);
  std::vector<std::thread> threads;
  std::atomic<int> ok_steps{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 5; ++i) {
        CallFrame frame({}, 1);
        CancellationManager cancellation;
        Executor::Args args;
        args.cancellation = &cancellation;
        args.call_frame = &frame;
        if (executor_->Run(args).ok() && frame.retvals()[0].scalar<float>() == 1.f)
          ok_steps.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok_steps.load(), 20);
  EXPECT_EQ(counted_runs.load(), 5000 * 21);
}

// Two expensive nodes become ready together; "long" has three nodes behind
// it, "short" none. Whichever order the graph lists them in, and whether the
// ready thread keeps one (nothing cheap to do) or hands both to the pool
// (a cheap sibling to run), "long" runs first. The pool is a queue this
// test drains in order, so the order is the executor's choice alone.
TEST_F(ExecutorTest, TheExpensiveNodeWithMoreWorkBehindItRunsFirst) {
  for (bool short_listed_first : {true, false}) {
    for (bool cheap_sibling : {false, true}) {
      SCOPED_TRACE(testing::Message() << "short listed first " << short_listed_first
                                      << ", cheap sibling " << cheap_sibling);
      std::vector<NodeDef> nodes = {Constant("c", 1)};
      std::vector<NodeDef> branches = {Node("short", "ExecTestRecorded", {"c"}),
                                       Node("long", "ExecTestRecorded", {"c"})};
      if (!short_listed_first) std::swap(branches[0], branches[1]);
      nodes.insert(nodes.end(), branches.begin(), branches.end());
      nodes.push_back(Node("l1", "ExecTestCounted", {"long"}));
      nodes.push_back(Node("l2", "ExecTestCounted", {"l1"}));
      nodes.push_back(Node("l3", "ExecTestCounted", {"l2"}));
      nodes.push_back(Retval("r0", "l3", 0));
      nodes.push_back(Retval("r1", "short", 1));
      if (cheap_sibling) {
        nodes.push_back(Node("cheap", "ExecTestCounted", {"c"}));
        nodes.push_back(Retval("r2", "cheap", 2));
      }
      GraphDef def;
      def.nodes = nodes;
      Graph graph;
      ASSERT_TRUE(ImportGraphDef(def, &graph, {.allow_internal_ops = true}).ok());
      auto executor = Executor::Create(graph, &device_, *KernelRegistry::Global());
      ASSERT_TRUE(executor.ok()) << executor.status();

      std::deque<std::function<void()>> queued;
      Executor::Runner runner = [&](std::function<void()> fn) { queued.push_back(std::move(fn)); };
      CallFrame frame({}, cheap_sibling ? 3 : 2);
      CancellationManager cancellation;
      Executor::Args args;
      args.cancellation = &cancellation;
      args.call_frame = &frame;
      args.runner = &runner;
      recorded.clear();
      Status status = errors::Unknown("not done");
      bool done = false;
      (*executor)->RunAsync(args, [&](const Status& s) {
        status = s;
        done = true;
      });
      while (!queued.empty()) {
        std::function<void()> fn = std::move(queued.front());
        queued.pop_front();
        fn();
      }
      ASSERT_TRUE(done);
      ASSERT_TRUE(status.ok()) << status;
      EXPECT_EQ(recorded, (std::vector<std::string>{"long", "short"}));
    }
  }
}

// The step fails (on a pool thread) just as an asynchronous node is about to
// start: the hook holds that node until the failure was recorded. The node
// must still count as finished, or the step never ends.
TEST_F(ExecutorTest, AnAsyncNodeSkippedBecauseTheStepFailedStillFinishes) {
  // "slow" (async) has more work behind it than "fail", so the thread that
  // makes both ready keeps it and hands "fail" to the pool.
  std::vector<NodeDef> nodes = {Constant("c", 1), Node("fail", "ExecTestFailExpensive", {"c"}),
                                Node("slow", "ExecTestSlowIdentity", {"c"}),
                                Node("after1", "ExecTestCounted", {"slow"}),
                                Node("after2", "ExecTestCounted", {"after1"}),
                                Retval("r0", "after2", 0), Retval("r1", "fail", 1)};
  GraphDef def;
  def.nodes = nodes;
  Graph graph;
  ASSERT_TRUE(ImportGraphDef(def, &graph, {.allow_internal_ops = true}).ok());
  auto executor = Executor::Create(graph, &device_, *KernelRegistry::Global());
  ASSERT_TRUE(executor.ok()) << executor.status();
  for (int round = 0; round < 20; ++round) {
    CancellationManager cancellation;
    std::atomic<bool> hooked{false};
    std::function<void()> hook = [&] {
      // Wait (bounded) until the failure cancelled the step.
      hooked = true;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (!cancellation.IsCancelled() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::yield();
      }
    };
    SetExecutorAsyncStartHookForTest(&hook);
    Executor::Runner runner = [this](std::function<void()> fn) { pool_.Schedule(std::move(fn)); };
    CallFrame frame({}, 2);
    Executor::Args args;
    args.cancellation = &cancellation;
    args.call_frame = &frame;
    args.runner = &runner;
    Notification done;
    Status status;
    (*executor)->RunAsync(args, [&](const Status& s) {
      status = s;
      done.Notify();
    });
    const bool finished = done.WaitFor(std::chrono::seconds(30));
    SetExecutorAsyncStartHookForTest(nullptr);
    ASSERT_TRUE(finished) << "the step hangs";
    EXPECT_TRUE(hooked.load());
    EXPECT_TRUE(cancellation.IsCancelled());
    EXPECT_EQ(status.code(), Code::kInternal) << status;
    EXPECT_NE(status.message().find("'fail'"), std::string::npos) << status;
    EXPECT_EQ(counted_runs.load(), 0) << "slow was skipped";
  }
}

}  // namespace
}  // namespace weir
