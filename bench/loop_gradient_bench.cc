// What a while loop's gradient costs per iteration: the same scalar loop
// (v = v * w + 0.5, n iterations, n fed) run forward in a graph without
// gradients, forward in a graph with them (the pushes run), and forward and
// backward together (stack pops, the backward loop, the accumulator of w).
//
//   build/release/bench/loop_gradient_bench
#include <benchmark/benchmark.h>

#include "weir/ops/control_flow_builder.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"
#include "weir/train/gradients.h"

namespace weir {
namespace {

struct LoopGraph {
  std::unique_ptr<Session> session;
  std::string forward;
  std::vector<std::string> grads;
};

LoopGraph Build(bool with_gradients) {
  Scope root = Scope::NewRootScope();
  auto n = ops::Placeholder(root.WithOpName("n"), DT_INT32);
  auto w = ops::Placeholder(root.WithOpName("w"), DT_FLOAT,
                            {{"shape", PartialShape(std::vector<int64_t>{})}});
  std::vector<Output> out;
  Status s = ops::WhileLoop(
      root, {ops::Const(root, 0), ops::Const(root, 1.f)},
      [&](const Scope& sc, const std::vector<Output>& v, Output* pred) {
        *pred = ops::Less(sc, v[0], n);
        return Status::OK();
      },
      [&](const Scope& sc, const std::vector<Output>& v, std::vector<Output>* next) {
        *next = {ops::Add(sc, v[0], 1), ops::Add(sc, ops::Mul(sc, v[1], w), 0.5f)};
        return Status::OK();
      },
      &out);
  CHECK(s.ok()) << s;
  LoopGraph graph;
  graph.forward = out[1].name();
  if (with_gradients) {
    std::vector<Output> grads;
    s = AddSymbolicGradients(root, {out[1]}, {w}, &grads);
    CHECK(s.ok()) << s;
    graph.grads.push_back(grads[0].name());
  }
  graph.session = std::move(*Session::New(SessionOptions()));
  CHECK(graph.session->Create(root.ToGraphDef()).ok());
  return graph;
}

void Run(benchmark::State& state, bool with_gradients, bool backward) {
  LoopGraph graph = Build(with_gradients);
  const int iterations = static_cast<int>(state.range(0));
  std::vector<std::pair<std::string, Tensor>> feeds = {{"n", Tensor::Scalar<int32_t>(iterations)},
                                                       {"w", Tensor::Scalar<float>(0.999f)}};
  std::vector<std::string> fetches = {graph.forward};
  if (backward) fetches = graph.grads;
  std::vector<Tensor> out;
  for (auto _ : state) {
    Status s = graph.session->Run(feeds, fetches, {}, &out);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
  }
  state.SetItemsProcessed(state.iterations() * iterations);
}

void BM_LoopForward(benchmark::State& state) { Run(state, false, false); }
void BM_LoopForwardInGradientGraph(benchmark::State& state) { Run(state, true, false); }
void BM_LoopForwardAndBackward(benchmark::State& state) { Run(state, true, true); }

BENCHMARK(BM_LoopForward)->Arg(1000)->Arg(100000);
BENCHMARK(BM_LoopForwardInGradientGraph)->Arg(1000)->Arg(100000);
BENCHMARK(BM_LoopForwardAndBackward)->Arg(1000)->Arg(100000);

}  // namespace
}  // namespace weir

BENCHMARK_MAIN();
