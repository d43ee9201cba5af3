// Import + compile time of graphs with extreme fan-in and fan-out, 10^4 to
// 10^6 edges: parsing the binary GraphDef, Session::Create and the first Run
// (prune, place, partition, compile the executors). Growth must be linear in
// edges (Complexity reports the fit); before issue 10 the control fan-in and
// the fed fan-out were quadratic.
//
//   build/release/bench/graph_build_bench --benchmark_filter=BM_Build
#include <benchmark/benchmark.h>

#include "weir/graph/graph_def_io.h"
#include "weir/runtime/session.h"

namespace weir {
namespace {

NodeDef MakeNode(std::string name, std::string op, AttrMap attrs = {}) {
  NodeDef def;
  def.name = std::move(name);
  def.op = std::move(op);
  def.attrs = std::move(attrs);
  return def;
}

// The graph to build, and how to run it.
struct Case {
  GraphDef graph;
  std::vector<std::pair<std::string, Tensor>> feeds;
  std::vector<std::string> fetches;
  std::vector<std::string> targets;
  int devices = 1;
};

// One NoOp with n control inputs, from n NoOps; every 1000th source on a
// second device, so partitioning sends those edges across.
Case ControlFanIn(int n) {
  Case c;
  c.graph.nodes.reserve(n + 1);
  NodeDef sink = MakeNode("sink", "NoOp");
  sink.inputs.reserve(n);
  for (int i = 0; i < n; ++i) {
    c.graph.nodes.push_back(MakeNode(StrCat("n", i), "NoOp"));
    if (i % 1000 == 0) c.graph.nodes.back().device = "/device:CPU:1";
    sink.inputs.push_back(StrCat("^n", i));
  }
  c.graph.nodes.push_back(std::move(sink));
  c.targets = {"sink"};
  c.devices = 2;
  return c;
}

// A fed placeholder read n times by one AddN: the session's feed rewrite
// moves all n edges to the _Arg.
Case FedFanOut(int n) {
  Case c;
  c.graph.nodes.push_back(
      MakeNode("x", "Placeholder", {{"dtype", DT_FLOAT}, {"shape", PartialShape({})}}));
  NodeDef sum = MakeNode("sum", "AddN", {{"T", DT_FLOAT}, {"N", int64_t{n}}});
  sum.inputs.assign(n, "x");
  c.graph.nodes.push_back(std::move(sum));
  c.feeds = {{"x", Tensor::Scalar<float>(1)}};
  c.fetches = {"sum"};
  return c;
}

// n constants summed by one AddN: n nodes and n data edges into one node.
Case WideAddN(int n) {
  Case c;
  c.graph.nodes.reserve(n + 1);
  NodeDef sum = MakeNode("sum", "AddN", {{"T", DT_FLOAT}, {"N", int64_t{n}}});
  sum.inputs.reserve(n);
  const Tensor one = Tensor::Scalar<float>(1);
  for (int i = 0; i < n; ++i) {
    c.graph.nodes.push_back(MakeNode(StrCat("c", i), "Const", {{"dtype", DT_FLOAT}, {"value", one}}));
    sum.inputs.push_back(StrCat("c", i));
  }
  c.graph.nodes.push_back(std::move(sum));
  c.fetches = {"sum"};
  return c;
}

void RunBuild(benchmark::State& state, Case (*make)(int)) {
  const int n = static_cast<int>(state.range(0));
  Case c = make(n);
  const std::string bytes = SerializeGraphDef(c.graph);
  c.graph = GraphDef();
  for (auto _ : state) {
    state.PauseTiming();
    SessionOptions options;
    options.num_cpu_devices = c.devices;
    options.intra_op_threads = 1;
    options.inter_op_threads = 1;
    std::unique_ptr<Session> session = std::move(Session::New(options)).value();
    state.ResumeTiming();

    StatusOr<GraphDef> graph = ParseGraphDef(bytes);
    Status s = graph.status();
    if (s.ok()) s = session->Create(*graph);
    std::vector<Tensor> out;
    if (s.ok()) s = session->Run(c.feeds, c.fetches, c.targets, &out);
    if (!s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      break;
    }

    state.PauseTiming();
    graph = GraphDef();
    session.reset();
    state.ResumeTiming();
  }
  state.SetComplexityN(n);
  state.SetItemsProcessed(state.iterations() * int64_t{n});
  state.counters["edges"] = n;
}

void BM_BuildControlFanIn(benchmark::State& state) { RunBuild(state, ControlFanIn); }
void BM_BuildFedFanOut(benchmark::State& state) { RunBuild(state, FedFanOut); }
void BM_BuildWideAddN(benchmark::State& state) { RunBuild(state, WideAddN); }

void Sizes(benchmark::internal::Benchmark* b) {
  b->RangeMultiplier(10)->Range(10000, 1000000)->Unit(benchmark::kMillisecond)->UseRealTime();
  b->Complexity(benchmark::oN);
}

BENCHMARK(BM_BuildControlFanIn)->Apply(Sizes);
BENCHMARK(BM_BuildFedFanOut)->Apply(Sizes);
BENCHMARK(BM_BuildWideAddN)->Apply(Sizes);

}  // namespace
}  // namespace weir

BENCHMARK_MAIN();
