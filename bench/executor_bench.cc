// Framework overhead: null-op dispatch, the cost of one Session::Run, and
// per-node cost of a graph of small adds. Everything on one core: one
// intra-op and one inter-op thread, so the numbers are per core.
#include <benchmark/benchmark.h>

#include "weir/ops/control_flow_builder.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/local_session.h"
#include "weir/runtime/session.h"

namespace weir {
namespace {

std::unique_ptr<Session> OneCoreSession(const Scope& root) {
  if (!root.ok()) {
    std::fprintf(stderr, "graph: %s\n", root.status().ToString().c_str());
    std::abort();
  }
  SessionOptions options;
  options.intra_op_threads = 1;
  options.inter_op_threads = 1;
  auto session = Session::New(options);
  CHECK_OK(session.status());
  CHECK_OK((*session)->Create(root.ToGraphDef()));
  return std::move(session).value();
}

// A chain of N NoOps joined by control edges, run as a target.
void BM_NullOpChain(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Scope root = Scope::NewRootScope();
  Operation last = ops::NoOp(root.WithOpName("n0"));
  for (int i = 1; i < n; ++i) {
    last = ops::NoOp(root.WithOpName(StrCat("n", i)).WithControlDependencies({last}));
  }
  auto session = OneCoreSession(root);
  std::vector<Tensor> out;
  std::string target = last.name();
  CHECK_OK(session->Run({}, {}, {target}, &out));
  for (auto _ : state) {
    Status s = session->Run({}, {}, {target}, &out);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_NullOpChain)->Arg(10000)->Unit(benchmark::kMicrosecond)->UseRealTime();

// One NoOp fanning out to N NoOps that all feed one sink.
void BM_NullOpFan(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Scope root = Scope::NewRootScope();
  Operation source = ops::NoOp(root.WithOpName("source"));
  std::vector<Operation> middle;
  for (int i = 0; i < n; ++i) {
    middle.push_back(ops::NoOp(root.WithOpName(StrCat("m", i)).WithControlDependencies({source})));
  }
  Operation sink = ops::NoOp(root.WithOpName("sink").WithControlDependencies(middle));
  auto session = OneCoreSession(root);
  std::vector<Tensor> out;
  CHECK_OK(session->Run({}, {}, {"sink"}, &out));
  for (auto _ : state) {
    Status s = session->Run({}, {}, {"sink"}, &out);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
  }
  state.SetItemsProcessed(state.iterations() * (n + 2));
}
BENCHMARK(BM_NullOpFan)->Arg(10000)->Unit(benchmark::kMicrosecond)->UseRealTime();

// Session::Run of a one-node graph (Identity) with one feed and one fetch.
void BM_SessionRunOneNode(benchmark::State& state) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  ops::Identity(root.WithOpName("y"), x);
  auto session = OneCoreSession(root);
  std::vector<std::pair<std::string, Tensor>> feeds = {{"x", Tensor::Scalar<float>(1.f)}};
  std::vector<std::string> fetches = {"y"};
  std::vector<Tensor> out;
  CHECK_OK(session->Run(feeds, fetches, {}, &out));
  for (auto _ : state) {
    Status s = session->Run(feeds, fetches, {}, &out);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
  }
}
BENCHMARK(BM_SessionRunOneNode)->UseRealTime();

// The same through a callable handle (no signature lookup).
void BM_RunCallableOneNode(benchmark::State& state) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  ops::Identity(root.WithOpName("y"), x);
  auto session = OneCoreSession(root);
  auto handle = session->MakeCallable({{"x"}, {"y"}, {}});
  CHECK_OK(handle.status());
  std::vector<Tensor> feeds = {Tensor::Scalar<float>(1.f)};
  std::vector<Tensor> out;
  for (auto _ : state) {
    Status s = session->RunCallable(*handle, feeds, &out);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
  }
}
BENCHMARK(BM_RunCallableOneNode)->UseRealTime();

// A chain of N Adds of small tensors: executor time per node.
void BM_SmallAddChain(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const int64_t width = state.range(1);
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto one = ops::Const(root, Tensor::FromVector<float>(std::vector<float>(width, 1.f)));
  Output y = x;
  for (int i = 0; i < n; ++i) y = ops::Add(root, y, one);
  ops::Identity(root.WithOpName("y"), y);
  auto session = OneCoreSession(root);
  std::vector<std::pair<std::string, Tensor>> feeds = {
      {"x", Tensor::FromVector<float>(std::vector<float>(width, 0.f))}};
  std::vector<Tensor> out;
  CHECK_OK(session->Run(feeds, {"y"}, {}, &out));
  CHECK(out[0].flat<float>()[0] == static_cast<float>(n));
  for (auto _ : state) {
    Status s = session->Run(feeds, {"y"}, {}, &out);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_SmallAddChain)->Args({1000, 1})->Args({1000, 16})->Unit(benchmark::kMicrosecond)->UseRealTime();

// The minimal loop: i = 0; while (i < n) i = i + 1, with n fed. Items are
// loop iterations (Merge, Less, LoopCond, Switch, Identity, Const, Add,
// NextIteration and a dead Exit each). peak_bytes: the CPU allocator's peak
// during the timed runs, above what was in use before (flat in n: the
// memory of a loop is bounded by parallel_iterations).
void BM_MinimalLoop(benchmark::State& state) {
  const int32_t n = static_cast<int32_t>(state.range(0));
  Scope root = Scope::NewRootScope();
  auto limit = ops::Placeholder(root.WithOpName("n"), DT_INT32);
  auto zero = ops::Const(root.WithOpName("zero"), 0);
  std::vector<Output> result;
  CHECK_OK(ops::WhileLoop(
      root, {zero},
      [&](const Scope& s, const std::vector<Output>& vars, Output* pred) {
        *pred = ops::Less(s, vars[0], limit);
        return s.status();
      },
      [&](const Scope& s, const std::vector<Output>& vars, std::vector<Output>* next) {
        next->push_back(ops::Add(s, vars[0], ops::Const(s, 1)));
        return s.status();
      },
      &result));
  ops::Identity(root.WithOpName("i"), result[0]);
  auto session = OneCoreSession(root);
  std::vector<std::pair<std::string, Tensor>> feeds = {{"n", Tensor::Scalar<int32_t>(n)}};
  std::vector<Tensor> out;
  CHECK_OK(session->Run(feeds, {"i"}, {}, &out));
  CHECK(out[0].scalar<int32_t>() == n);
  Allocator* allocator = nullptr;
  if (auto* local = dynamic_cast<LocalSession*>(session.get())) {
    allocator = local->devices().devices()[0]->allocator();
  }
  int64_t before = 0;
  if (allocator != nullptr) {
    out.clear();
    allocator->ResetPeak();
    before = allocator->GetStats().bytes_in_use;
  }
  for (auto _ : state) {
    Status s = session->Run(feeds, {"i"}, {}, &out);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
  }
  state.SetItemsProcessed(state.iterations() * n);
  if (allocator != nullptr) {
    state.counters["peak_bytes"] =
        static_cast<double>(allocator->GetStats().peak_bytes_in_use - before);
  }
}
BENCHMARK(BM_MinimalLoop)->Arg(1000)->Arg(100000)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same loop carrying a 64 KiB vector (v = v + 1 each iteration): its
// peak_bytes shows the loop's memory is that of a few iterations, whatever n.
void BM_VectorLoop(benchmark::State& state) {
  const int32_t n = static_cast<int32_t>(state.range(0));
  Scope root = Scope::NewRootScope();
  auto limit = ops::Placeholder(root.WithOpName("n"), DT_INT32);
  auto zero = ops::Const(root.WithOpName("zero"), 0);
  auto v0 = ops::Const(root.WithOpName("v0"), Tensor::FromVector<float>(std::vector<float>(16384, 0.f)));
  std::vector<Output> result;
  CHECK_OK(ops::WhileLoop(
      root, {zero, v0},
      [&](const Scope& s, const std::vector<Output>& vars, Output* pred) {
        *pred = ops::Less(s, vars[0], limit);
        return s.status();
      },
      [&](const Scope& s, const std::vector<Output>& vars, std::vector<Output>* next) {
        next->push_back(ops::Add(s, vars[0], ops::Const(s, 1)));
        next->push_back(ops::Add(s, vars[1], ops::Const(s, 1.f)));
        return s.status();
      },
      &result));
  ops::Identity(root.WithOpName("v"), result[1]);
  auto session = OneCoreSession(root);
  std::vector<std::pair<std::string, Tensor>> feeds = {{"n", Tensor::Scalar<int32_t>(n)}};
  std::vector<Tensor> out;
  CHECK_OK(session->Run(feeds, {"v"}, {}, &out));
  CHECK(out[0].flat<float>()[0] == static_cast<float>(n));
  auto* local = dynamic_cast<LocalSession*>(session.get());
  CHECK(local != nullptr);
  Allocator* allocator = local->devices().devices()[0]->allocator();
  out.clear();
  allocator->ResetPeak();
  const int64_t before = allocator->GetStats().bytes_in_use;
  for (auto _ : state) {
    Status s = session->Run(feeds, {"v"}, {}, &out);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.counters["peak_bytes"] =
      static_cast<double>(allocator->GetStats().peak_bytes_in_use - before);
}
BENCHMARK(BM_VectorLoop)->Arg(1000)->Arg(100000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace weir

BENCHMARK_MAIN();
