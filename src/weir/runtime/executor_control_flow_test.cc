// The executor's frames and iterations: conds, loops with data-dependent
// trip counts, nesting both ways, dead values through loops, the
// parallel_iterations bound, state freed per iteration, errors and
// cancellation inside loops, frame ids, and frame/iteration in step stats.
// Graphs are NodeDefs with TensorFlow's control-flow v1 structure.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include "weir/base/cancellation.h"
#include "weir/base/notification.h"
#include "weir/framework/call_frame.h"
#include "weir/framework/kernel_registry.h"
#include "weir/graph/graph_constructor.h"
#include "weir/runtime/cpu_device.h"
#include "weir/runtime/executor.h"
#include "weir/runtime/session.h"
#include "weir/runtime/standard_registration.h"

namespace weir {
namespace {

std::atomic<int> body_runs{0};

// Identity (int32) that counts how often it ran.
class CountedKernel final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    body_runs.fetch_add(1);
    context->set_output(0, context->input(0));
  }
};

// Identity that fails when its input is 3.
class FailAtThreeKernel final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    OP_REQUIRES(context, context->input(0).scalar<int32_t>() != 3,
                errors::InvalidArgument("input is 3"));
    context->set_output(0, context->input(0));
  }
};

// Identity that records the frame and iteration it ran in.
std::mutex frames_mu;
std::vector<std::pair<uint64_t, int64_t>> frames_seen;
class RecordFrameKernel final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    {
      std::lock_guard<std::mutex> lock(frames_mu);
      frames_seen.push_back({context->frame_iter().frame_id, context->frame_iter().iter_id});
    }
    context->set_output(0, context->input(0));
  }
};

// Holds its input until the test releases it (from any thread).
struct HeldCall {
  OpKernelContext* context;
  AsyncOpKernel::DoneCallback done;
};
std::mutex gate_mu;
std::vector<HeldCall> gate_held;
class GateKernel final : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;
  void ComputeAsync(OpKernelContext* context, DoneCallback done) override {
    std::lock_guard<std::mutex> lock(gate_mu);
    gate_held.push_back({context, std::move(done)});
  }
};
int GatesHeld() {
  std::lock_guard<std::mutex> lock(gate_mu);
  return static_cast<int>(gate_held.size());
}

// Blocks until the step is cancelled, then fails with Cancelled.
std::atomic<int> blocked_started{0};
class BlockUntilCancelledKernel final : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;
  void ComputeAsync(OpKernelContext* context, DoneCallback done) override {
    CancellationManager* cm = context->cancellation_manager();
    auto finish = [context, done] {
      context->SetStatus(errors::Cancelled("cancelled while blocked"));
      done();
    };
    blocked_started.fetch_add(1);
    if (!cm->RegisterCallback(cm->GetToken(), finish)) finish();
  }
};

void RegisterControlFlowTestOps() {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterStandardOpsAndKernels();
    OpRegistry* ops = OpRegistry::Global();
    KernelRegistry* kernels = KernelRegistry::Global();
    auto identity = [&](const char* name, KernelFactory factory) {
      ops->Register(OpDefBuilder(name).Input("in: int32").Output("out: int32"));
      kernels->Register(KernelBuilder(name), std::move(factory));
    };
    identity("CfTestCounted", MakeKernel<CountedKernel>);
    identity("CfTestFailAtThree", MakeKernel<FailAtThreeKernel>);
    identity("CfTestRecordFrame", MakeKernel<RecordFrameKernel>);
    identity("CfTestGate", MakeKernel<GateKernel>);
    identity("CfTestBlock", MakeKernel<BlockUntilCancelledKernel>);
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

NodeDef IntConst(const std::string& name, int32_t value, std::vector<std::string> controls = {}) {
  return Node(name, "Const", std::move(controls),
              {{"dtype", DT_INT32}, {"value", Tensor::Scalar<int32_t>(value)}});
}

NodeDef BoolConst(const std::string& name, bool value) {
  return Node(name, "Const", {}, {{"dtype", DT_BOOL}, {"value", Tensor::Scalar<bool>(value)}});
}

NodeDef Retval(const std::string& name, const std::string& input, int index,
               DType dtype = DT_INT32) {
  return Node(name, "_Retval", {input}, {{"T", dtype}, {"index", int64_t{index}}});
}

NodeDef Binary(const std::string& name, const std::string& op, const std::string& a,
               const std::string& b) {
  return Node(name, op, {a, b}, {{"T", DT_INT32}});
}

// Appends a cond: Switch every input of `inputs` on `pred`, build each
// branch on the switched values, Merge the branch outputs. Returns the
// merged outputs' names.
using BranchBuilder = std::function<std::vector<std::string>(
    std::vector<NodeDef>* g, const std::vector<std::string>& values)>;
std::vector<std::string> AddCond(std::vector<NodeDef>* g, const std::string& name,
                                 const std::string& pred, const std::vector<std::string>& inputs,
                                 const BranchBuilder& then_fn, const BranchBuilder& else_fn) {
  // Each branch sees Identities of the Switch outputs (TF's pivots: nodes
  // without inputs in a branch hang on them by a control edge).
  std::vector<std::string> on_true, on_false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string sw = StrCat(name, "/switch", i);
    g->push_back(Node(sw, "Switch", {inputs[i], pred}, {{"T", DT_INT32}}));
    g->push_back(Node(StrCat(sw, "/f"), "Identity", {sw + ":0"}, {{"T", DT_INT32}}));
    g->push_back(Node(StrCat(sw, "/t"), "Identity", {sw + ":1"}, {{"T", DT_INT32}}));
    on_false.push_back(StrCat(sw, "/f"));
    on_true.push_back(StrCat(sw, "/t"));
  }
  std::vector<std::string> t = then_fn(g, on_true), f = else_fn(g, on_false);
  std::vector<std::string> merged;
  for (size_t i = 0; i < t.size(); ++i) {
    std::string m = StrCat(name, "/merge", i);
    g->push_back(Node(m, "Merge", {f[i], t[i]}, {{"T", DT_INT32}, {"N", int64_t{2}}}));
    merged.push_back(m);
  }
  return merged;
}

// Appends a while loop with TensorFlow's v1 structure. `cond` gets the
// Merge outputs and returns the predicate; `body` gets the loop variables
// (Identity of the Switches' true outputs; the first one is the pivot that
// constants in the body hang on) and returns the next values. Invariants
// enter through is_constant Enters. Returns the Exit names.
using LoopFn = std::function<std::string(std::vector<NodeDef>* g,
                                         const std::vector<std::string>& vars,
                                         const std::vector<std::string>& invariants)>;
using BodyFn = std::function<std::vector<std::string>(std::vector<NodeDef>* g,
                                                      const std::vector<std::string>& vars,
                                                      const std::vector<std::string>& invariants)>;
std::vector<std::string> AddWhile(std::vector<NodeDef>* g, const std::string& name,
                                  const std::vector<std::string>& inits,
                                  const std::vector<std::string>& invariant_inputs,
                                  const LoopFn& cond, const BodyFn& body,
                                  int64_t parallel_iterations = 10) {
  auto enter_attrs = [&](bool constant) {
    return AttrMap{{"T", DT_INT32},
                   {"frame_name", name},
                   {"is_constant", constant},
                   {"parallel_iterations", parallel_iterations}};
  };
  std::vector<std::string> merges, invariants;
  for (size_t i = 0; i < invariant_inputs.size(); ++i) {
    std::string e = StrCat(name, "/inv", i);
    g->push_back(Node(e, "Enter", {invariant_inputs[i]}, enter_attrs(true)));
    invariants.push_back(e);
  }
  for (size_t i = 0; i < inits.size(); ++i) {
    g->push_back(Node(StrCat(name, "/enter", i), "Enter", {inits[i]}, enter_attrs(false)));
    g->push_back(Node(StrCat(name, "/merge", i), "Merge",
                      {StrCat(name, "/enter", i), StrCat(name, "/next", i)},
                      {{"T", DT_INT32}, {"N", int64_t{2}}}));
    merges.push_back(StrCat(name, "/merge", i));
  }
  std::string pred = cond(g, merges, invariants);
  g->push_back(Node(name + "/cond", "LoopCond", {pred}));
  std::vector<std::string> vars, exits;
  for (size_t i = 0; i < inits.size(); ++i) {
    std::string sw = StrCat(name, "/switch", i);
    g->push_back(Node(sw, "Switch", {merges[i], name + "/cond"}, {{"T", DT_INT32}}));
    g->push_back(Node(StrCat(name, "/var", i), "Identity", {sw + ":1"}, {{"T", DT_INT32}}));
    g->push_back(Node(StrCat(name, "/exit", i), "Exit", {sw + ":0"}, {{"T", DT_INT32}}));
    vars.push_back(StrCat(name, "/var", i));
    exits.push_back(StrCat(name, "/exit", i));
  }
  std::vector<std::string> next = body(g, vars, invariants);
  for (size_t i = 0; i < inits.size(); ++i) {
    g->push_back(Node(StrCat(name, "/next", i), "NextIteration", {next[i]}, {{"T", DT_INT32}}));
  }
  return exits;
}

// i < invariant 0
std::string LessThanInvariant(std::vector<NodeDef>* g, const std::vector<std::string>& vars,
                              const std::vector<std::string>& invariants, const std::string& name) {
  g->push_back(Binary(name, "Less", vars[0], invariants[0]));
  return name;
}

// A loop `i = start; while (i < n) i += 1` (n and start graph inputs);
// body nodes go through `body_op` (an int32 identity op) first.
std::vector<std::string> AddCountingLoop(std::vector<NodeDef>* g, const std::string& name,
                                         const std::string& start, const std::string& n,
                                         int64_t parallel = 10,
                                         const std::string& body_op = "Identity") {
  return AddWhile(
      g, name, {start}, {n},
      [&](std::vector<NodeDef>* g, const std::vector<std::string>& vars,
          const std::vector<std::string>& inv) {
        return LessThanInvariant(g, vars, inv, name + "/less");
      },
      [&](std::vector<NodeDef>* g, const std::vector<std::string>& vars,
          const std::vector<std::string>&) {
        AttrMap attrs;
        if (body_op == "Identity") attrs = {{"T", DT_INT32}};
        g->push_back(Node(name + "/body", body_op, {vars[0]}, attrs));
        g->push_back(IntConst(name + "/one", 1, {"^" + vars[0]}));
        g->push_back(Binary(name + "/add", "Add", name + "/body", name + "/one"));
        return std::vector<std::string>{name + "/add"};
      },
      parallel);
}

class ExecutorControlFlowTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    RegisterControlFlowTestOps();
    body_runs = 0;
    frames_seen.clear();
    gate_held.clear();
  }

  Status Build(std::vector<NodeDef> nodes) {
    GraphDef def;
    def.nodes = std::move(nodes);
    graph_ = std::make_unique<Graph>();
    WEIR_RETURN_IF_ERROR(ImportGraphDef(def, graph_.get(), {.allow_internal_ops = true}));
    WEIR_ASSIGN_OR_RETURN(executor_,
                          Executor::Create(*graph_, &device_, *KernelRegistry::Global()));
    return Status::OK();
  }

  // Runs one step (on the pool when the test parameter says so).
  Status RunStep(CallFrame* frame, StepStatsCollector* stats = nullptr) {
    CancellationManager cancellation;
    Executor::Args args;
    args.cancellation = &cancellation;
    args.call_frame = frame;
    args.stats = stats;
    args.runner = GetParam() ? &runner_ : nullptr;
    return executor_->Run(args);
  }

  Status BuildAndRun(std::vector<NodeDef> nodes, CallFrame* frame) {
    WEIR_RETURN_IF_ERROR(Build(std::move(nodes)));
    return RunStep(frame);
  }

  CpuDevice device_{"/job:localhost/replica:0/task:0/device:CPU:0", 2};
  ThreadPool pool_{"inter_op", 2};
  Executor::Runner runner_ = [this](std::function<void()> fn) { pool_.Schedule(std::move(fn)); };
  std::unique_ptr<Graph> graph_;
  std::unique_ptr<Executor> executor_;
};

INSTANTIATE_TEST_SUITE_P(Runner, ExecutorControlFlowTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Pool" : "Inline"; });

TEST_P(ExecutorControlFlowTest, CondRunsOnlyTheTakenBranch) {
  for (bool pred : {false, true}) {
    SCOPED_TRACE(pred);
    body_runs = 0;
    std::vector<NodeDef> g = {BoolConst("pred", pred), IntConst("x", 5)};
    auto merged = AddCond(
        &g, "cond", "pred", {"x"},
        [](std::vector<NodeDef>* g, const std::vector<std::string>& v) {
          g->push_back(Node("then", "CfTestCounted", {v[0]}));
          g->push_back(IntConst("ten", 10, {"^then"}));
          g->push_back(Binary("then_add", "Add", "then", "ten"));
          return std::vector<std::string>{"then_add"};
        },
        [](std::vector<NodeDef>* g, const std::vector<std::string>& v) {
          g->push_back(Node("else", "CfTestCounted", {v[0]}));
          g->push_back(Binary("else_mul", "Mul", "else", "else"));
          return std::vector<std::string>{"else_mul"};
        });
    g.push_back(Retval("r", merged[0], 0));
    g.push_back(Retval("index", merged[0] + ":1", 1));
    CallFrame frame({}, 2);
    Status s = BuildAndRun(g, &frame);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(frame.retvals()[0].scalar<int32_t>(), pred ? 15 : 25);
    EXPECT_EQ(frame.retvals()[1].scalar<int32_t>(), pred ? 1 : 0);
    EXPECT_EQ(body_runs.load(), 1) << "the dead branch never runs";
  }
}

TEST_P(ExecutorControlFlowTest, ControlTriggerRunsLiveAfterADeadBranch) {
  std::vector<NodeDef> g = {BoolConst("pred", false), IntConst("x", 5),
                            Node("sw", "Switch", {"x", "pred"}, {{"T", DT_INT32}}),
                            Node("dead_side", "CfTestCounted", {"sw:1"}),
                            Node("trigger", "ControlTrigger", {"^dead_side"}),
                            IntConst("after", 7, {"^trigger"}), Retval("r", "after", 0)};
  CallFrame frame({}, 1);
  Status s = BuildAndRun(g, &frame);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(body_runs.load(), 0);
  ASSERT_TRUE(frame.retvals()[0].IsInitialized()) << "ControlTrigger's output is live";
  EXPECT_EQ(frame.retvals()[0].scalar<int32_t>(), 7);
}

TEST_P(ExecutorControlFlowTest, LoopWithADataDependentTripCount) {
  std::vector<NodeDef> g = {IntConst("start", 0), IntConst("n", 0)};
  auto exits = AddCountingLoop(&g, "while", "start", "n", 10, "CfTestCounted");
  g.push_back(Retval("r", exits[0], 0));
  for (int n : {0, 1, 7, 1000}) {
    SCOPED_TRACE(n);
    g[1] = IntConst("n", n);
    body_runs = 0;
    CallFrame frame({}, 1);
    Status s = BuildAndRun(g, &frame);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(frame.retvals()[0].scalar<int32_t>(), n);
    EXPECT_EQ(body_runs.load(), n);
    // The same executor runs again with the same result.
    CallFrame again({}, 1);
    ASSERT_TRUE(RunStep(&again).ok());
    EXPECT_EQ(again.retvals()[0].scalar<int32_t>(), n);
  }
}

TEST_P(ExecutorControlFlowTest, TwoLoopVariables) {
  // (i, acc) = (0, 0); while i < 10: (i + 1, acc + i)  -> acc = 45
  std::vector<NodeDef> g = {IntConst("zero", 0), IntConst("n", 10)};
  auto exits = AddWhile(
      &g, "sum", {"zero", "zero"}, {"n"},
      [](std::vector<NodeDef>* g, const std::vector<std::string>& vars,
         const std::vector<std::string>& inv) {
        return LessThanInvariant(g, vars, inv, "sum/less");
      },
      [](std::vector<NodeDef>* g, const std::vector<std::string>& vars,
         const std::vector<std::string>&) {
        g->push_back(IntConst("sum/one", 1, {"^" + vars[0]}));
        g->push_back(Binary("sum/i_next", "Add", vars[0], "sum/one"));
        g->push_back(Binary("sum/acc_next", "Add", vars[1], vars[0]));
        return std::vector<std::string>{"sum/i_next", "sum/acc_next"};
      });
  g.push_back(Retval("r0", exits[0], 0));
  g.push_back(Retval("r1", exits[1], 1));
  CallFrame frame({}, 2);
  Status s = BuildAndRun(g, &frame);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(frame.retvals()[0].scalar<int32_t>(), 10);
  EXPECT_EQ(frame.retvals()[1].scalar<int32_t>(), 45);
}

TEST_P(ExecutorControlFlowTest, NestedLoops) {
  // total = 0; for i in [0, 4): { j = 0; while j < 5: j += 1; total += j } -> 20;
  // the inner body runs 4 * 5 times.
  std::vector<NodeDef> g = {IntConst("zero", 0), IntConst("outer_n", 4), IntConst("inner_n", 5)};
  auto exits = AddWhile(
      &g, "outer", {"zero", "zero"}, {"outer_n", "inner_n"},
      [](std::vector<NodeDef>* g, const std::vector<std::string>& vars,
         const std::vector<std::string>& inv) {
        return LessThanInvariant(g, vars, inv, "outer/less");
      },
      [](std::vector<NodeDef>* g, const std::vector<std::string>& vars,
         const std::vector<std::string>& inv) {
        g->push_back(IntConst("outer/zero", 0, {"^" + vars[0]}));
        auto inner = AddCountingLoop(g, "outer/inner", "outer/zero", inv[1], 10, "CfTestCounted");
        g->push_back(IntConst("outer/one", 1, {"^" + vars[0]}));
        g->push_back(Binary("outer/i_next", "Add", vars[0], "outer/one"));
        g->push_back(Binary("outer/total", "Add", vars[1], inner[0]));
        return std::vector<std::string>{"outer/i_next", "outer/total"};
      });
  g.push_back(Retval("r", exits[1], 0));
  CallFrame frame({}, 1);
  Status s = BuildAndRun(g, &frame);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(frame.retvals()[0].scalar<int32_t>(), 20);
  EXPECT_EQ(body_runs.load(), 20);
}

TEST_P(ExecutorControlFlowTest, AnInnerLoopsInvariantChangesPerInvocation) {
  // total = 0; for i in [0, 6): { j = 0; while j < i: j += 1; total += j } -> 15.
  // The inner loop's bound is the outer variable: each invocation of the
  // inner frame must see its own value, not one an input slot kept from the
  // invocation before (ExecutorPlan::kKeepsValue).
  std::vector<NodeDef> g = {IntConst("zero", 0), IntConst("outer_n", 6)};
  auto exits = AddWhile(
      &g, "outer", {"zero", "zero"}, {"outer_n"},
      [](std::vector<NodeDef>* g, const std::vector<std::string>& vars,
         const std::vector<std::string>& inv) {
        return LessThanInvariant(g, vars, inv, "outer/less");
      },
      [](std::vector<NodeDef>* g, const std::vector<std::string>& vars,
         const std::vector<std::string>&) {
        g->push_back(IntConst("outer/zero", 0, {"^" + vars[0]}));
        auto inner = AddCountingLoop(g, "outer/inner", "outer/zero", vars[0], 1, "CfTestCounted");
        g->push_back(IntConst("outer/one", 1, {"^" + vars[0]}));
        g->push_back(Binary("outer/i_next", "Add", vars[0], "outer/one"));
        g->push_back(Binary("outer/total", "Add", vars[1], inner[0]));
        return std::vector<std::string>{"outer/i_next", "outer/total"};
      },
      1);
  g.push_back(Retval("r", exits[1], 0));
  ASSERT_TRUE(Build(g).ok());
  for (int step = 0; step < 2; ++step) {
    body_runs = 0;
    CallFrame frame({}, 1);
    Status s = RunStep(&frame);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(frame.retvals()[0].scalar<int32_t>(), 15);
    EXPECT_EQ(body_runs.load(), 15);
  }
}

TEST_P(ExecutorControlFlowTest, ALoopInvariantArrivingLateFromAnotherThread) {
  // (i, acc) = (0, 0); while i < n: (i + 1, acc + i), with n held by an
  // asynchronous kernel that another thread releases after the loop
  // variables entered: the frame's first iteration waits for it, and the
  // iterations after it (which one thread may own) see it too.
  for (int n : {1, 2, 300}) {
    SCOPED_TRACE(n);
    std::vector<NodeDef> g = {IntConst("zero", 0), IntConst("n", n),
                              Node("gated_n", "CfTestGate", {"n"})};
    auto exits = AddWhile(
        &g, "sum", {"zero", "zero"}, {"gated_n"},
        [](std::vector<NodeDef>* g, const std::vector<std::string>& vars,
           const std::vector<std::string>& inv) {
          return LessThanInvariant(g, vars, inv, "sum/less");
        },
        [](std::vector<NodeDef>* g, const std::vector<std::string>& vars,
           const std::vector<std::string>&) {
          g->push_back(IntConst("sum/one", 1, {"^" + vars[0]}));
          g->push_back(Binary("sum/i_next", "Add", vars[0], "sum/one"));
          g->push_back(Binary("sum/acc_next", "Add", vars[1], vars[0]));
          return std::vector<std::string>{"sum/i_next", "sum/acc_next"};
        });
    g.push_back(Retval("r0", exits[0], 0));
    g.push_back(Retval("r1", exits[1], 1));
    ASSERT_TRUE(Build(g).ok());
    CallFrame frame({}, 2);
    CancellationManager cancellation;
    Executor::Args args;
    args.cancellation = &cancellation;
    args.call_frame = &frame;
    args.runner = GetParam() ? &runner_ : nullptr;
    Notification done;
    Status status;
    executor_->RunAsync(args, [&](const Status& s) {
      status = s;
      done.Notify();
    });
    while (GatesHeld() == 0) std::this_thread::yield();
    std::thread releaser([] {
      HeldCall call;
      {
        std::lock_guard<std::mutex> lock(gate_mu);
        call = std::move(gate_held.back());
        gate_held.pop_back();
      }
      call.context->set_output(0, call.context->input(0));
      call.done();
    });
    done.Wait();
    releaser.join();
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_EQ(frame.retvals()[0].scalar<int32_t>(), n);
    EXPECT_EQ(frame.retvals()[1].scalar<int32_t>(), n * (n - 1) / 2);
  }
}

TEST_P(ExecutorControlFlowTest, ConcurrentStepsOfNestedLoops) {
  std::vector<NodeDef> g = {IntConst("zero", 0), IntConst("outer_n", 6), IntConst("inner_n", 7)};
  auto exits = AddWhile(
      &g, "outer", {"zero", "zero"}, {"outer_n", "inner_n"},
      [](std::vector<NodeDef>* g, const std::vector<std::string>& vars,
         const std::vector<std::string>& inv) {
        return LessThanInvariant(g, vars, inv, "outer/less");
      },
      [](std::vector<NodeDef>* g, const std::vector<std::string>& vars,
         const std::vector<std::string>& inv) {
        g->push_back(IntConst("outer/zero", 0, {"^" + vars[0]}));
        auto inner = AddCountingLoop(g, "outer/inner", "outer/zero", inv[1], 2);
        g->push_back(IntConst("outer/one", 1, {"^" + vars[0]}));
        g->push_back(Binary("outer/i_next", "Add", vars[0], "outer/one"));
        g->push_back(Binary("outer/total", "Add", vars[1], inner[0]));
        return std::vector<std::string>{"outer/i_next", "outer/total"};
      },
      3);
  g.push_back(Retval("r", exits[1], 0));
  ASSERT_TRUE(Build(g).ok());
  std::atomic<int> ok_steps{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 25; ++i) {
        CallFrame frame({}, 1);
        if (RunStep(&frame).ok() && frame.retvals()[0].scalar<int32_t>() == 42) ++ok_steps;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(ok_steps.load(), 100);
}

TEST_P(ExecutorControlFlowTest, CondInsideALoop) {
  // i = 0, acc = 0; while i < 8: acc += (i < 3 ? 1 : 100); i += 1  -> 3 + 500
  std::vector<NodeDef> g = {IntConst("zero", 0), IntConst("n", 8), IntConst("three", 3)};
  auto exits = AddWhile(
      &g, "w", {"zero", "zero"}, {"n", "three"},
      [](std::vector<NodeDef>* g, const std::vector<std::string>& vars,
         const std::vector<std::string>& inv) { return LessThanInvariant(g, vars, inv, "w/less"); },
      [](std::vector<NodeDef>* g, const std::vector<std::string>& vars,
         const std::vector<std::string>& inv) {
        g->push_back(Binary("w/small", "Less", vars[0], inv[1]));
        auto merged = AddCond(
            g, "w/if", "w/small", {vars[1]},
            [](std::vector<NodeDef>* g, const std::vector<std::string>& v) {
              g->push_back(IntConst("w/if/one", 1, {"^" + v[0]}));
              g->push_back(Binary("w/if/then", "Add", v[0], "w/if/one"));
              return std::vector<std::string>{"w/if/then"};
            },
            [](std::vector<NodeDef>* g, const std::vector<std::string>& v) {
              g->push_back(IntConst("w/if/hundred", 100, {"^" + v[0]}));
              g->push_back(Node("w/if/counted", "CfTestCounted", {v[0]}));
              g->push_back(Binary("w/if/else", "Add", "w/if/counted", "w/if/hundred"));
              return std::vector<std::string>{"w/if/else"};
            });
        g->push_back(IntConst("w/one", 1, {"^" + vars[0]}));
        g->push_back(Binary("w/i_next", "Add", vars[0], "w/one"));
        return std::vector<std::string>{"w/i_next", merged[0]};
      });
  g.push_back(Retval("r", exits[1], 0));
  CallFrame frame({}, 1);
  Status s = BuildAndRun(g, &frame);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(frame.retvals()[0].scalar<int32_t>(), 503);
  EXPECT_EQ(body_runs.load(), 5) << "the else branch ran only in iterations 3..7";
}

TEST_P(ExecutorControlFlowTest, LoopInsideACondAndDeadValuesThroughIt) {
  for (bool pred : {true, false}) {
    SCOPED_TRACE(pred);
    body_runs = 0;
    std::vector<NodeDef> g = {BoolConst("pred", pred), IntConst("x", 2), IntConst("n", 6)};
    auto merged = AddCond(
        &g, "if", "pred", {"x", "n"},
        [](std::vector<NodeDef>* g, const std::vector<std::string>& v) {
          // The loop's inputs are dead when pred is false: its frame still
          // runs (dead), and its Exit is dead for the Merge after it.
          return AddCountingLoop(g, "if/loop", v[0], v[1], 10, "CfTestCounted");
        },
        [](std::vector<NodeDef>* g, const std::vector<std::string>& v) {
          g->push_back(Binary("if/neg", "Sub", v[1], v[0]));
          return std::vector<std::string>{"if/neg"};
        });
    // Only the first merged value is used; drop the second Merge's input.
    g.push_back(Retval("r", merged[0], 0));
    CallFrame frame({}, 1);
    Status s = BuildAndRun(g, &frame);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(frame.retvals()[0].scalar<int32_t>(), pred ? 6 : 4);
    EXPECT_EQ(body_runs.load(), pred ? 4 : 0);
  }
}

TEST_P(ExecutorControlFlowTest, ADeadLoopsExitIsDeadOutside) {
  std::vector<NodeDef> g = {BoolConst("pred", false), IntConst("x", 2), IntConst("n", 6),
                            Node("sw", "Switch", {"x", "pred"}, {{"T", DT_INT32}})};
  auto exits = AddCountingLoop(&g, "loop", "sw:1", "n", 10, "CfTestCounted");
  g.push_back(Node("after", "CfTestCounted", {exits[0]}));
  g.push_back(Retval("r", "after", 0));
  CallFrame frame({}, 1);
  Status s = BuildAndRun(g, &frame);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_FALSE(frame.retvals()[0].IsInitialized()) << "dead";
  EXPECT_EQ(body_runs.load(), 0);
}

TEST_P(ExecutorControlFlowTest, ParallelIterationsBoundsTheIterationsInFlight) {
  // Each iteration's gate holds that iteration open; the counter runs ahead
  // until parallel_iterations iterations are alive, then waits.
  for (int64_t parallel : {1, 3, 10}) {
    SCOPED_TRACE(parallel);
    std::vector<NodeDef> g = {IntConst("start", 0), IntConst("n", 25)};
    auto exits = AddWhile(
        &g, "w", {"start"}, {"n"},
        [](std::vector<NodeDef>* g, const std::vector<std::string>& vars,
           const std::vector<std::string>& inv) { return LessThanInvariant(g, vars, inv, "w/less"); },
        [](std::vector<NodeDef>* g, const std::vector<std::string>& vars,
           const std::vector<std::string>&) {
          g->push_back(Node("w/gate", "CfTestGate", {vars[0]}));
          g->push_back(IntConst("w/one", 1, {"^" + vars[0]}));
          g->push_back(Binary("w/add", "Add", vars[0], "w/one"));
          return std::vector<std::string>{"w/add"};
        },
        parallel);
    g.push_back(Retval("r", exits[0], 0));
    ASSERT_TRUE(Build(g).ok());
    CallFrame frame({}, 1);
    CancellationManager cancellation;
    Executor::Args args;
    args.cancellation = &cancellation;
    args.call_frame = &frame;  // inline: RunAsync returns when all is blocked
    Notification done;
    Status status;
    executor_->RunAsync(args, [&](const Status& s) {
      status = s;
      done.Notify();
    });
    int max_held = 0, released = 0;
    while (!done.HasBeenNotified()) {
      const int held = GatesHeld();
      max_held = std::max(max_held, held);
      ASSERT_EQ(held, std::min<int64_t>(parallel, 25 - released));
      // Release the oldest iteration's only: the next iteration can then
      // start (iterations end in order).
      std::vector<HeldCall> calls;
      {
        std::lock_guard<std::mutex> lock(gate_mu);
        auto oldest = std::min_element(
            gate_held.begin(), gate_held.end(), [](const HeldCall& a, const HeldCall& b) {
              return a.context->frame_iter().iter_id < b.context->frame_iter().iter_id;
            });
        EXPECT_EQ(oldest->context->frame_iter().iter_id, released);
        calls.push_back(std::move(*oldest));
        gate_held.erase(oldest);
      }
      calls[0].context->set_output(0, calls[0].context->input(0));
      ++released;
      calls[0].done();  // runs the step on to its next blocked state
    }
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_EQ(max_held, parallel);
    EXPECT_EQ(released, 25);
    EXPECT_EQ(frame.retvals()[0].scalar<int32_t>(), 25);
  }
}

TEST_P(ExecutorControlFlowTest, LoopMemoryStaysFlat) {
  // v is a 64 KiB vector; v += 1 per iteration. The allocator's peak must
  // not grow with the trip count.
  auto run = [&](int n) -> int64_t {
    NodeDef init = Node("init", "Const", {},
                        {{"dtype", DT_INT32},
                         {"value", Tensor::FromVector<int32_t>(std::vector<int32_t>(16384, 0))}});
    std::vector<NodeDef> g = {init, IntConst("zero", 0), IntConst("n", n)};
    auto exits = AddWhile(
        &g, "w", {"zero", "init"}, {"n"},
        [](std::vector<NodeDef>* g, const std::vector<std::string>& vars,
           const std::vector<std::string>& inv) { return LessThanInvariant(g, vars, inv, "w/less"); },
        [](std::vector<NodeDef>* g, const std::vector<std::string>& vars,
           const std::vector<std::string>&) {
          g->push_back(IntConst("w/one", 1, {"^" + vars[0]}));
          g->push_back(Binary("w/i", "Add", vars[0], "w/one"));
          g->push_back(Binary("w/v", "Add", vars[1], "w/one"));
          return std::vector<std::string>{"w/i", "w/v"};
        });
    g.push_back(Retval("r", exits[1], 0));
    EXPECT_TRUE(Build(g).ok());
    Allocator* allocator = device_.allocator();
    allocator->ResetPeak();
    const int64_t before = allocator->GetStats().bytes_in_use;
    CallFrame frame({}, 1);
    Status s = RunStep(&frame);
    EXPECT_TRUE(s.ok()) << s;
    EXPECT_EQ(frame.retvals()[0].flat<int32_t>()[16383], n);
    return allocator->GetStats().peak_bytes_in_use - before;
  };
  const int64_t small = run(50), large = run(100000);
  EXPECT_GT(small, 0);
  EXPECT_LE(large, small + 2 * 65536) << "peak " << small << " bytes at 50 iterations";
  std::printf("peak bytes: %lld at 50 iterations, %lld at 100000\n", static_cast<long long>(small),
              static_cast<long long>(large));
}

TEST_P(ExecutorControlFlowTest, AnErrorInsideALoopNamesNodeFrameAndIteration) {
  std::vector<NodeDef> g = {IntConst("start", 0), IntConst("n", 10)};
  auto exits = AddCountingLoop(&g, "while", "start", "n", 10, "CfTestFailAtThree");
  g.push_back(Retval("r", exits[0], 0));
  CallFrame frame({}, 1);
  Status s = BuildAndRun(g, &frame);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("'while/body' (CfTestFailAtThree)"), std::string::npos) << s;
  EXPECT_NE(s.message().find("frame 'while' iteration 3"), std::string::npos) << s;
  EXPECT_NE(s.message().find("input is 3"), std::string::npos) << s;
}

TEST_P(ExecutorControlFlowTest, CancellingAStepBlockedInsideALoop) {
  std::vector<NodeDef> g = {IntConst("start", 0), IntConst("n", 10)};
  auto exits = AddCountingLoop(&g, "while", "start", "n", 1, "CfTestBlock");
  g.push_back(Retval("r", exits[0], 0));
  ASSERT_TRUE(Build(g).ok());
  blocked_started = 0;
  CallFrame frame({}, 1);
  CancellationManager cancellation;
  Executor::Args args;
  args.cancellation = &cancellation;
  args.call_frame = &frame;
  args.runner = GetParam() ? &runner_ : nullptr;
  Notification done;
  Status status;
  executor_->RunAsync(args, [&](const Status& s) {
    status = s;
    done.Notify();
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (blocked_started.load() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  ASSERT_GT(blocked_started.load(), 0);
  EXPECT_FALSE(done.HasBeenNotified());
  cancellation.StartCancel();
  ASSERT_TRUE(done.WaitFor(std::chrono::seconds(30))) << "the step hangs";
  EXPECT_EQ(status.code(), Code::kCancelled) << status;
  EXPECT_NE(status.message().find("'while/body'"), std::string::npos) << status;
  EXPECT_NE(status.message().find("frame 'while' iteration 0"), std::string::npos) << status;
}

TEST_P(ExecutorControlFlowTest, FrameIdsAgreeAcrossExecutorsAndDifferPerInvocation) {
  // An inner loop's node records its frame id in each of 3 outer iterations.
  std::vector<NodeDef> g = {IntConst("zero", 0), IntConst("three", 3), IntConst("two", 2)};
  auto exits = AddWhile(
      &g, "outer", {"zero"}, {"three", "two"},
      [](std::vector<NodeDef>* g, const std::vector<std::string>& vars,
         const std::vector<std::string>& inv) {
        return LessThanInvariant(g, vars, inv, "outer/less");
      },
      [](std::vector<NodeDef>* g, const std::vector<std::string>& vars,
         const std::vector<std::string>& inv) {
        g->push_back(IntConst("outer/zero", 0, {"^" + vars[0]}));
        auto inner = AddCountingLoop(g, "outer/inner", "outer/zero", inv[1], 10,
                                     "CfTestRecordFrame");
        g->push_back(IntConst("outer/one", 1, {"^" + vars[0]}));
        g->push_back(Binary("outer/next", "Add", vars[0], "outer/one"));
        g->back().inputs.push_back("^" + inner[0]);
        return std::vector<std::string>{"outer/next"};
      },
      1);
  g.push_back(Retval("r", exits[0], 0));
  std::vector<std::vector<std::pair<uint64_t, int64_t>>> runs;
  for (int run = 0; run < 2; ++run) {
    frames_seen.clear();
    CallFrame frame({}, 1);
    Status s = BuildAndRun(g, &frame);  // a new executor each time
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(frame.retvals()[0].scalar<int32_t>(), 3);
    std::sort(frames_seen.begin(), frames_seen.end());
    runs.push_back(frames_seen);
  }
  ASSERT_EQ(runs[0].size(), 6u);  // 3 outer iterations x 2 inner ones
  EXPECT_EQ(runs[0], runs[1]);
  std::set<uint64_t> ids;
  for (auto [id, iter] : runs[0]) {
    EXPECT_NE(id, 0u);
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), 3u) << "one inner frame invocation per outer iteration";
}

TEST_P(ExecutorControlFlowTest, StepStatsNameFrameAndIteration) {
  std::vector<NodeDef> g = {IntConst("start", 0), IntConst("n", 4)};
  auto exits = AddCountingLoop(&g, "while", "start", "n");
  g.push_back(Retval("r", exits[0], 0));
  ASSERT_TRUE(Build(g).ok());
  StepStatsCollector stats;
  CallFrame frame({}, 1);
  ASSERT_TRUE(RunStep(&frame, &stats).ok());
  std::set<int64_t> body_iterations;
  bool saw_root = false;
  RunMetadata metadata;
  metadata.step_stats = stats.Finalize();
  const std::string trace = metadata.ChromeTrace();
  EXPECT_NE(trace.find("\"frame\":\"while\""), std::string::npos) << trace.substr(0, 2000);
  EXPECT_NE(trace.find("\"iteration\":3"), std::string::npos);
  for (const NodeExecStats& node : metadata.step_stats.nodes) {
    if (node.node_name == "while/body") {
      EXPECT_EQ(node.frame_name, "while");
      body_iterations.insert(node.iteration);
    }
    if (node.node_name == "start") {
      saw_root = true;
      EXPECT_EQ(node.frame_name, "");
    }
  }
  EXPECT_TRUE(saw_root);
  EXPECT_EQ(body_iterations, (std::set<int64_t>{0, 1, 2, 3}));
}

TEST_P(ExecutorControlFlowTest, ASwitchOnANonScalarPredicateFailsNamingIt) {
  NodeDef pred = Node("pred", "Const", {},
                      {{"dtype", DT_BOOL}, {"value", Tensor::FromVector<bool>({true, false})}});
  std::vector<NodeDef> g = {pred, IntConst("x", 1),
                            Node("sw", "Switch", {"x", "pred"}, {{"T", DT_INT32}}),
                            Retval("r", "sw:1", 0)};
  CallFrame frame({}, 1);
  Status s = Build(g);
  if (s.ok()) s = RunStep(&frame);  // shape inference may already reject it
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("'sw' (Switch)"), std::string::npos) << s;
}

TEST_P(ExecutorControlFlowTest, ALoopCondOnANonScalarFailsNamingIt) {
  // An _Arg of unknown shape, so only the step can tell.
  std::vector<NodeDef> g = {Node("pred", "_Arg", {}, {{"T", DT_BOOL}, {"index", int64_t{0}}}),
                            Node("cond", "LoopCond", {"pred"}), Retval("r", "cond", 0, DT_BOOL)};
  CallFrame frame({Tensor::FromVector<bool>({true, false})}, 1);
  ASSERT_TRUE(Build(g).ok());
  Status s = RunStep(&frame);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("'cond' (LoopCond)"), std::string::npos) << s;
}

TEST_P(ExecutorControlFlowTest, MalformedFramesAreErrors) {
  // An Exit outside any loop.
  Status s = Build({IntConst("x", 1), Node("exit", "Exit", {"x"}, {{"T", DT_INT32}})});
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("'exit' (Exit)"), std::string::npos) << s;
  // A node fed from two frames.
  s = Build({IntConst("x", 1),
             Node("enter", "Enter", {"x"}, {{"T", DT_INT32}, {"frame_name", std::string("f")}}),
             Binary("mix", "Add", "enter", "x")});
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("'mix' (Add)"), std::string::npos) << s;
  EXPECT_NE(s.message().find("frame 'f'"), std::string::npos) << s;
}

}  // namespace
}  // namespace weir
