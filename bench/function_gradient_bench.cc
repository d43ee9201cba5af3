// What differentiating through function calls costs as the graph's
// function library grows: y = f(f(...f(x))) with `calls` calls of a small
// function on the path, in a graph whose library also holds `library`
// other functions (unused, as a real model's library holds savers and
// gradients). AddSymbolicGradients expands each call on the path in place
// (graph/expand_node.h), each in a scratch graph with the library, so the
// library's size should not multiply the cost. The graph is imported
// and dropped outside the timing; the time is AddSymbolicGradients alone.
//
//   build/release/bench/function_gradient_bench
#include <benchmark/benchmark.h>

#include <optional>

#include "weir/base/logging.h"
#include "weir/graph/graph_constructor.h"
#include "weir/runtime/standard_registration.h"
#include "weir/train/gradients.h"

namespace weir {
namespace {

NodeDef Node(const std::string& name, const std::string& op, std::vector<std::string> inputs,
             AttrMap attrs = {}) {
  NodeDef def;
  def.name = name;
  def.op = op;
  def.inputs = std::move(inputs);
  def.attrs = std::move(attrs);
  return def;
}

// name(x: float) -> y: float = sin(x) * x.
FunctionDef Small(const std::string& name) {
  FunctionDef f;
  f.signature.name = name;
  ArgDef x, y;
  x.name = "x";
  x.type = DT_FLOAT;
  y.name = "y";
  y.type = DT_FLOAT;
  f.signature.inputs = {x};
  f.signature.outputs = {y};
  f.node_def = {Node("s", "Sin", {"x"}, {{"T", DT_FLOAT}}),
                Node("m", "Mul", {"s:y:0", "x"}, {{"T", DT_FLOAT}})};
  f.ret["y"] = "m:z:0";
  return f;
}

GraphDef Chain(int calls, int library) {
  GraphDef def;
  def.nodes.push_back(Node("x", "Placeholder", {}, {{"dtype", DT_FLOAT}}));
  std::string last = "x";
  for (int i = 0; i < calls; ++i) {
    const std::string name = StrCat("call_", i);
    def.nodes.push_back(Node(name, "f", {last}));
    last = name;
  }
  def.library.functions.push_back(Small("f"));
  for (int i = 0; i < library; ++i) def.library.functions.push_back(Small(StrCat("unused_", i)));
  return def;
}

void BM_GradientsThroughCalls(benchmark::State& state) {
  RegisterStandardOpsAndKernels();
  const int calls = static_cast<int>(state.range(0));
  const GraphDef def = Chain(calls, static_cast<int>(state.range(1)));
  std::optional<Scope> root;
  for (auto _ : state) {
    // The last iteration's graph is dropped here, outside the timing too.
    state.PauseTiming();
    root.reset();
    root.emplace(Scope::NewRootScope());
    CHECK(ImportGraphDef(def, root->graph()).ok());
    Output y(root->graph()->FindNode(StrCat("call_", calls - 1)), 0);
    Output x(root->graph()->FindNode("x"), 0);
    state.ResumeTiming();
    std::vector<Output> grads;
    Status s = AddSymbolicGradients(*root, {y}, {x}, &grads);
    CHECK(s.ok()) << s;
    benchmark::DoNotOptimize(grads);
  }
  state.counters["calls"] = calls;
}
BENCHMARK(BM_GradientsThroughCalls)
    ->Args({16, 0})
    ->Args({16, 1000})
    ->Args({16, 10000})
    ->Args({128, 10000})
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime();

}  // namespace
}  // namespace weir

BENCHMARK_MAIN();
