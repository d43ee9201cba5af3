// Compile time of the whole graph compiler (rewrite feeds/fetches, prune,
// CSE, constant folding, placement, fusion, partitioning, Recv scheduling)
// on generated model-like graphs of 1k to 100k nodes, on 1 and 4 devices.
// Growth must be near-linear (flat per node once the graph has left the
// caches, 100k to 200k) and 100k nodes must compile in under 1 s.
// The graph is imported once; each iteration is one CompileGraph.
//
//   build/release/bench/compile_bench
//   build/release/bench/compile_bench --passes 100000   # per-pass breakdown
#include <benchmark/benchmark.h>

#include <cstring>
#include <iostream>

#include "weir/graph/graph_constructor.h"
#include "weir/runtime/device_mgr.h"
#include "weir/runtime/graph_compiler.h"
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

// A copy of `t` with its own buffer.
Tensor Fresh(const Tensor& t) {
  Tensor out(t.dtype(), t.shape());
  std::copy(t.flat<float>().begin(), t.flat<float>().end(), out.flat<float>().begin());
  return out;
}

// A model-like DAG of about n nodes: a fed [32, 64] batch and stacks of
// layers (MatMul with a weight constant, BiasAdd, Relu or Tanh, a residual
// Add with an earlier layer), with a few duplicate subexpressions and
// constant subgraphs for CSE and folding to find. The loss of every
// 64-layer block is fetched.
GraphDef ModelLikeGraph(int n, std::vector<std::string>* fetches) {
  GraphDef graph;
  graph.nodes.reserve(n + 16);
  const AttrMap f32 = {{"T", DT_FLOAT}};
  graph.nodes.push_back(
      MakeNode("x", "Placeholder", {{"dtype", DT_FLOAT}, {"shape", PartialShape({32, 64})}}));
  graph.nodes.push_back(MakeNode(
      "axes", "Const", {{"dtype", DT_INT32}, {"value", Tensor::FromVector<int32_t>({0, 1}, {2})}}));
  Tensor weight(DT_FLOAT, TensorShape({64, 64}));
  for (int64_t i = 0; i < weight.NumElements(); ++i) weight.flat<float>()[i] = 0.01f * (i % 7);
  Tensor bias(DT_FLOAT, TensorShape({64}));
  for (int64_t i = 0; i < 64; ++i) bias.flat<float>()[i] = 0.001f * i;
  std::vector<std::string> layers = {"x"};
  int layer = 0;
  while (static_cast<int>(graph.nodes.size()) < n) {
    const std::string p = StrCat("l", layer, "/");
    const std::string& in = layers.back();
    // Every layer its own weights, as in a trained model.
    weight = Fresh(weight);
    weight.flat<float>()[0] = static_cast<float>(layer);
    bias = Fresh(bias);
    bias.flat<float>()[0] = static_cast<float>(layer);
    graph.nodes.push_back(MakeNode(p + "w", "Const", {{"dtype", DT_FLOAT}, {"value", weight}}));
    graph.nodes.push_back(MakeNode(p + "b", "Const", {{"dtype", DT_FLOAT}, {"value", bias}}));
    // A constant subgraph: the bias scaled by 2 (folds to one Const).
    graph.nodes.push_back(MakeNode(p + "b2", "Add", f32, {p + "b", p + "b"}));
    graph.nodes.push_back(MakeNode(p + "mm", "MatMul", f32, {in, p + "w"}));
    graph.nodes.push_back(MakeNode(p + "ba", "BiasAdd", f32, {p + "mm", p + "b2"}));
    graph.nodes.push_back(MakeNode(p + "act", layer % 2 ? "Relu" : "Tanh", f32, {p + "ba"}));
    // A duplicate of the activation (CSE merges it) and a residual add.
    graph.nodes.push_back(MakeNode(p + "act_dup", layer % 2 ? "Relu" : "Tanh", f32, {p + "ba"}));
    const std::string& skip = layers.size() >= 3 ? layers[layers.size() - 3] : in;
    graph.nodes.push_back(MakeNode(p + "res", "Add", f32, {p + "act", skip}));
    graph.nodes.push_back(MakeNode(p + "out", "Add", f32, {p + "res", p + "act_dup"}));
    layers.push_back(p + "out");
    if (++layer % 64 == 0) {
      graph.nodes.push_back(MakeNode(StrCat("loss", layer), "Sum",
                                     {{"T", DT_FLOAT}, {"Tidx", DT_INT32}, {"keep_dims", false}},
                                     {p + "out", "axes"}));
      fetches->push_back(StrCat("loss", layer));
    }
  }
  graph.nodes.push_back(MakeNode("loss", "Sum",
                                 {{"T", DT_FLOAT}, {"Tidx", DT_INT32}, {"keep_dims", false}},
                                 {layers.back(), "axes"}));
  fetches->push_back("loss");
  return graph;
}

struct Fixture {
  Graph graph;
  StepSignature signature;
  std::unique_ptr<DeviceMgr> devices;
  CompileEnv env;
};

std::unique_ptr<Fixture> MakeFixture(int n, int num_devices) {
  RegisterStandardOpsAndKernels();
  auto f = std::make_unique<Fixture>();
  GraphDef def = ModelLikeGraph(n, &f->signature.fetches);
  f->signature.feeds = {"x"};
  Status s = ImportGraphDef(def, &f->graph);
  if (!s.ok()) {
    std::cerr << s << "\n";
    std::abort();
  }
  f->devices = DeviceMgr::NewCpuDevices(num_devices, 1);
  f->env.devices = f->devices->Infos();
  f->env.kernels = KernelRegistry::Global();
  f->env.host_device = f->devices->devices().front().get();
  f->env.incarnation = [d = f->devices.get()](const std::string& name) {
    return d->Incarnation(name);
  };
  return f;
}

void BM_Compile(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const int num_devices = static_cast<int>(state.range(1));
  std::unique_ptr<Fixture> f = MakeFixture(n, num_devices);
  for (auto _ : state) {
    StatusOr<CompiledGraph> compiled = CompileGraph(f->graph, f->signature, f->env, {});
    if (!compiled.ok()) {
      state.SkipWithError(compiled.status().ToString().c_str());
      break;
    }
    state.PauseTiming();
    compiled = CompiledGraph();
    state.ResumeTiming();
  }
  state.SetComplexityN(n);
  state.counters["nodes"] = f->graph.num_nodes();
  state.counters["devices"] = num_devices;
}

BENCHMARK(BM_Compile)
    ->ArgsProduct({{1000, 10000, 100000, 200000}, {1, 4}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// --passes N [DEVICES]: one compile of an N-node graph with each pass's time.
int PrintPasses(int n, int num_devices) {
  std::unique_ptr<Fixture> f = MakeFixture(n, num_devices);
  CompileOptions options;
  options.record_passes = true;
  StatusOr<CompiledGraph> compiled = CompileGraph(f->graph, f->signature, f->env, options);
  if (!compiled.ok()) {
    std::cerr << compiled.status() << "\n";
    return 1;
  }
  std::cout << DescribePasses(compiled->passes);
  return 0;
}

}  // namespace
}  // namespace weir

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "--passes") == 0) {
    return weir::PrintPasses(std::atoi(argv[2]), argc >= 4 ? std::atoi(argv[3]) : 1);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
