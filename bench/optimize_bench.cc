// Time of CSE and of constant folding alone on generated graphs of 1k to
// 100k nodes (Complexity reports the fit; both must be near-linear and a
// small part of a compile under 1 s). The graph is imported once; each
// iteration runs the pass on a fresh copy (the copy is not timed).
//
//   build/release/bench/optimize_bench
#include <benchmark/benchmark.h>

#include "weir/base/str_util.h"
#include "weir/framework/kernel_registry.h"
#include "weir/graph/graph_constructor.h"
#include "weir/graph/optimize_cse.h"
#include "weir/runtime/constant_folding.h"
#include "weir/runtime/cpu_device.h"
#include "weir/runtime/standard_registration.h"

namespace weir {
namespace {

NodeDef MakeNode(std::string name, std::string op, AttrMap attrs,
                 std::vector<std::string> inputs = {}) {
  NodeDef def;
  def.name = std::move(name);
  def.op = std::move(op);
  def.attrs = std::move(attrs);
  def.inputs = std::move(inputs);
  return def;
}

NodeDef Constant(std::string name, Tensor value) {
  const DType dtype = value.dtype();
  return MakeNode(std::move(name), "Const", {{"dtype", dtype}, {"value", std::move(value)}});
}

// About n nodes in blocks of 7 over a fed [32, 64] x: two equal Mul(prev,
// Const) -> Relu chains (their Consts equal too, and equal to those of
// blocks 16 apart) summed into the next block's input. CSE removes 3 of
// every 7 nodes, more through the shared Consts.
GraphDef CseGraph(int n) {
  GraphDef graph;
  const AttrMap f32 = {{"T", DT_FLOAT}};
  graph.nodes.push_back(
      MakeNode("x", "Placeholder", {{"dtype", DT_FLOAT}, {"shape", PartialShape({32, 64})}}));
  std::string prev = "x";
  for (int b = 0; graph.nodes.size() + 7 <= static_cast<size_t>(n); ++b) {
    std::string r[2];
    for (int copy = 0; copy < 2; ++copy) {
      const std::string p = StrCat("b", b, "/", copy, "/");
      graph.nodes.push_back(Constant(p + "c", Tensor::Scalar<float>(0.5f + (b % 16))));
      graph.nodes.push_back(MakeNode(p + "mul", "Mul", f32, {prev, p + "c"}));
      graph.nodes.push_back(MakeNode(p + "relu", "Relu", f32, {p + "mul"}));
      r[copy] = p + "relu";
    }
    prev = StrCat("b", b, "/sum");
    graph.nodes.push_back(MakeNode(prev, "Add", f32, {r[0], r[1]}));
  }
  return graph;
}

// About n nodes in blocks of 8 over a fed [32, 64] x: a constant chain
// (two [64] Consts, Add, Mul, Neg) added to the running value, and a
// Reshape of it to its own static Shape. Folding evaluates one Neg and one
// Shape per block and removes the rest of the chain.
GraphDef FoldGraph(int n) {
  GraphDef graph;
  const AttrMap f32 = {{"T", DT_FLOAT}};
  graph.nodes.push_back(
      MakeNode("x", "Placeholder", {{"dtype", DT_FLOAT}, {"shape", PartialShape({32, 64})}}));
  std::string prev = "x";
  for (int b = 0; graph.nodes.size() + 8 <= static_cast<size_t>(n); ++b) {
    const std::string p = StrCat("b", b, "/");
    Tensor k(DT_FLOAT, TensorShape({64}));
    for (int64_t i = 0; i < 64; ++i) k.flat<float>()[i] = 0.001f * static_cast<float>(b + i);
    graph.nodes.push_back(Constant(p + "k1", k));
    graph.nodes.push_back(Constant(p + "k2", Tensor::Scalar<float>(0.25f)));
    graph.nodes.push_back(MakeNode(p + "add", "Add", f32, {p + "k1", p + "k2"}));
    graph.nodes.push_back(MakeNode(p + "mul", "Mul", f32, {p + "add", p + "k1"}));
    graph.nodes.push_back(MakeNode(p + "neg", "Neg", f32, {p + "mul"}));
    graph.nodes.push_back(MakeNode(p + "sum", "Add", f32, {prev, p + "neg"}));
    graph.nodes.push_back(MakeNode(p + "shape", "Shape", f32, {p + "sum"}));
    graph.nodes.push_back(MakeNode(p + "out", "Reshape", f32, {p + "sum", p + "shape"}));
    prev = p + "out";
  }
  return graph;
}

std::unique_ptr<Graph> Import(const GraphDef& def, benchmark::State& state) {
  auto graph = std::make_unique<Graph>();
  Status s = ImportGraphDef(def, graph.get());
  if (!s.ok()) state.SkipWithError(s.ToString().c_str());
  return graph;
}

void BM_Cse(benchmark::State& state) {
  RegisterStandardOpsAndKernels();
  std::unique_ptr<Graph> source = Import(CseGraph(static_cast<int>(state.range(0))), state);
  int removed = 0;
  std::unique_ptr<Graph> previous;
  for (auto _ : state) {
    state.PauseTiming();
    auto graph = std::make_unique<Graph>();
    graph->CopyFrom(*source);
    previous.reset();  // destroying a copy is not the pass's time either
    state.ResumeTiming();
    StatusOr<int> merged = EliminateCommonSubexpressions(graph.get());
    if (!merged.ok()) state.SkipWithError(merged.status().ToString().c_str());
    removed = merged.ok() ? *merged : 0;
    previous = std::move(graph);
  }
  state.counters["nodes"] = source->num_nodes();
  state.counters["removed"] = removed;
  state.SetComplexityN(source->num_nodes());
}
BENCHMARK(BM_Cse)
    ->RangeMultiplier(10)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(50000)
    ->Arg(100000)
    ->Arg(200000)
    ->Unit(benchmark::kMillisecond)
    ->Complexity();

void BM_FoldConstants(benchmark::State& state) {
  RegisterStandardOpsAndKernels();
  CpuDevice cpu("/job:localhost/replica:0/task:0/device:CPU:0", 1);
  std::unique_ptr<Graph> source = Import(FoldGraph(static_cast<int>(state.range(0))), state);
  int folded = 0;
  std::unique_ptr<Graph> previous;
  for (auto _ : state) {
    state.PauseTiming();
    auto graph = std::make_unique<Graph>();
    graph->CopyFrom(*source);
    previous.reset();
    state.ResumeTiming();
    StatusOr<int> changed = FoldConstants(graph.get(), &cpu, *KernelRegistry::Global());
    if (!changed.ok()) state.SkipWithError(changed.status().ToString().c_str());
    folded = changed.ok() ? *changed : 0;
    previous = std::move(graph);
  }
  state.counters["nodes"] = source->num_nodes();
  state.counters["changed"] = folded;
  state.SetComplexityN(source->num_nodes());
}
BENCHMARK(BM_FoldConstants)
    ->RangeMultiplier(10)
    ->Range(1000, 100000)
    ->Unit(benchmark::kMillisecond)
    ->Complexity();

}  // namespace
}  // namespace weir

BENCHMARK_MAIN();
