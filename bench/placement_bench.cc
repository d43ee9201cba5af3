// Placement: quality, speed and a measured model-parallel step.
//
//   build/release/bench/placement_bench [quality] [time] [measured]
//
// quality:  on simulated devices of different speeds and link costs, the
//           cost-model placement's simulated step against all on CPU:0, all
//           on the fastest device and round-robin, for several graph shapes.
// time:     PlaceGraph on generated graphs of 1k, 10k and 100k nodes, on 1
//           and 4 devices (median of 5).
// measured: a two-tower MatMul model through a Session on 2 CPU devices of
//           1 intra-op thread against 1 device of 2 threads (median step).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>

#include "weir/graph/algorithm.h"
#include "weir/graph/graph_constructor.h"
#include "weir/graph/placer.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"
#include "weir/runtime/standard_registration.h"

namespace weir {
namespace {

std::string Cpu(int i) { return StrCat("/job:localhost/replica:0/task:0/device:CPU:", i); }

NodeDef Placeholder(const std::string& name, std::vector<int64_t> dims) {
  NodeDef def;
  def.name = name;
  def.op = "Placeholder";
  def.attrs["dtype"] = DT_FLOAT;
  def.attrs["shape"] = PartialShape(std::move(dims));
  return def;
}

NodeDef Op(const std::string& name, const std::string& op, std::vector<std::string> inputs) {
  NodeDef def;
  def.name = name;
  def.op = op;
  def.inputs = std::move(inputs);
  def.attrs["T"] = DT_FLOAT;
  if (op == "AddN") def.attrs["N"] = static_cast<int64_t>(def.inputs.size());
  return def;
}

GraphDef TwoTowers(int batch, int width, int layers) {
  GraphDef g;
  g.nodes.push_back(Placeholder("x", {batch, width}));
  std::vector<std::string> tops;
  for (const char* tower : {"a", "b"}) {
    std::string h = "x";
    for (int l = 0; l < layers; ++l) {
      std::string w = StrCat(tower, "/w", l);
      g.nodes.push_back(Placeholder(w, {width, width}));
      g.nodes.push_back(Op(StrCat(tower, "/mm", l), "MatMul", {h, w}));
      g.nodes.push_back(Op(StrCat(tower, "/act", l), "Tanh", {StrCat(tower, "/mm", l)}));
      h = StrCat(tower, "/act", l);
    }
    tops.push_back(h);
  }
  g.nodes.push_back(Op("sum", "Add", tops));
  return g;
}

GraphDef Pipeline(int micro_batches, int stages, int batch, int width) {
  GraphDef g;
  for (int s = 0; s < stages; ++s) g.nodes.push_back(Placeholder(StrCat("w", s), {width, width}));
  std::vector<std::string> outs;
  for (int m = 0; m < micro_batches; ++m) {
    std::string h = StrCat("x", m);
    g.nodes.push_back(Placeholder(h, {batch, width}));
    for (int s = 0; s < stages; ++s) {
      std::string mm = StrCat("mm_", m, "_", s);
      g.nodes.push_back(Op(mm, "MatMul", {h, StrCat("w", s)}));
      g.nodes.push_back(Op(StrCat("relu_", m, "_", s), "Relu", {mm}));
      h = StrCat("relu_", m, "_", s);
    }
    outs.push_back(h);
  }
  g.nodes.push_back(Op("out", "AddN", outs));
  return g;
}

GraphDef FanOut(int branches, int batch, int width) {
  GraphDef g;
  g.nodes.push_back(Placeholder("x", {batch, width}));
  std::vector<std::string> outs;
  for (int b = 0; b < branches; ++b) {
    g.nodes.push_back(Placeholder(StrCat("w", b), {width, width}));
    g.nodes.push_back(Op(StrCat("mm", b), "MatMul", {"x", StrCat("w", b)}));
    g.nodes.push_back(Op(StrCat("relu", b), "Relu", {StrCat("mm", b)}));
    outs.push_back(StrCat("relu", b));
  }
  g.nodes.push_back(Op("out", "AddN", outs));
  return g;
}

GraphDef Chain(int layers, int batch, int width) {
  GraphDef g;
  g.nodes.push_back(Placeholder("x", {batch, width}));
  std::string h = "x";
  for (int l = 0; l < layers; ++l) {
    g.nodes.push_back(Placeholder(StrCat("w", l), {width, width}));
    g.nodes.push_back(Op(StrCat("mm", l), "MatMul", {h, StrCat("w", l)}));
    h = StrCat("mm", l);
  }
  return g;
}

// A random DAG of `n` nodes: elementwise ops and small MatMuls, each
// reading one or two of the previous 64 nodes.
GraphDef RandomDag(int n) {
  GraphDef g;
  std::mt19937 random(1234);
  const int sources = std::max(1, n / 100);
  for (int i = 0; i < sources; ++i) g.nodes.push_back(Placeholder(StrCat("n", i), {32, 32}));
  const char* ops[] = {"Add", "Mul", "Tanh", "MatMul", "Relu", "Sub"};
  for (int i = sources; i < n; ++i) {
    const char* op = ops[random() % 6];
    auto pick = [&] { return StrCat("n", i - 1 - static_cast<int>(random() % std::min(i, 64))); };
    bool unary = std::strcmp(op, "Tanh") == 0 || std::strcmp(op, "Relu") == 0;
    g.nodes.push_back(
        Op(StrCat("n", i), op,
           unary ? std::vector<std::string>{pick()} : std::vector<std::string>{pick(), pick()}));
  }
  return g;
}

std::unique_ptr<Graph> Import(const GraphDef& def) {
  auto graph = std::make_unique<Graph>();
  Status s = ImportGraphDef(def, graph.get());
  CHECK(s.ok()) << s;
  return graph;
}

int CrossDeviceEdges(const Graph& graph) {
  int n = 0;
  for (const Node* node : graph.nodes()) {
    for (const Edge* e : node->in_edges())
      n += e->src()->assigned_device() != node->assigned_device();
  }
  return n;
}

void Quality() {
  // CPU:2 is twice as fast; CPU:3 half as fast and behind a slow link.
  std::vector<DeviceInfo> devices;
  for (int i = 0; i < 4; ++i) devices.push_back({Cpu(i), "CPU", 1});
  devices[2].peak_flops = 2 * CostModel::kCpuFlopsPerThread;
  devices[2].memory_bytes_per_second = 2 * CostModel::kCpuBytesPerSecondPerThread;
  devices[3].peak_flops = 0.5 * CostModel::kCpuFlopsPerThread;
  CostModel cost;
  for (int i = 0; i < 3; ++i) {
    cost.SetLink(Cpu(i), Cpu(3), {50, 1e9});
    cost.SetLink(Cpu(3), Cpu(i), {50, 1e9});
  }
  std::printf(
      "devices: CPU:0 and CPU:1 1x (100 GFLOP/s, 8 GB/s), CPU:2 2x, CPU:3 0.5x;\n"
      "links 5 us + 10 GB/s, to and from CPU:3 50 us + 1 GB/s\n\n");
  std::printf("%-32s %12s %12s %12s %12s %10s\n", "graph (simulated step, us)", "cost model",
              "all CPU:0", "all CPU:2", "round-robin", "transfers");
  struct Shape {
    const char* name;
    GraphDef def;
  };
  std::vector<Shape> shapes = {{"two towers 256x1024, 4 layers", TwoTowers(256, 1024, 4)},
                               {"pipeline 8 micro x 4 stages 512", Pipeline(8, 4, 64, 512)},
                               {"fan-out 16 x MatMul 512", FanOut(16, 128, 512)},
                               {"chain 8 x MatMul 512", Chain(8, 128, 512)}};
  for (const Shape& shape : shapes) {
    auto graph = Import(shape.def);
    PlacementOptions options;
    options.kernels = KernelRegistry::Global();
    options.cost_model = &cost;
    Status s = PlaceGraph(graph.get(), devices, options);
    CHECK(s.ok()) << s;
    double placed = SimulatePlacedStep(*graph, devices, cost).value();
    int transfers = CrossDeviceEdges(*graph);
    auto all_on = [&](int d) {
      for (Node* node : graph->nodes()) node->set_assigned_device(Cpu(d));
      return SimulatePlacedStep(*graph, devices, cost).value();
    };
    double on0 = all_on(0);
    double on2 = all_on(2);
    std::vector<Node*> order = TopologicalOrder(*graph).value();
    for (size_t i = 0; i < order.size(); ++i)
      order[i]->set_assigned_device(Cpu(i % devices.size()));
    double round_robin = SimulatePlacedStep(*graph, devices, cost).value();
    std::printf("%-32s %12.1f %12.1f %12.1f %12.1f %10d\n", shape.name, placed, on0, on2,
                round_robin, transfers);
  }
}

void Time() {
  std::printf("%-10s %10s %14s %14s\n", "nodes", "edges", "1 device (ms)", "4 devices (ms)");
  for (int n : {1000, 10000, 100000}) {
    auto graph = Import(RandomDag(n));
    double ms[2];
    for (int which = 0; which < 2; ++which) {
      std::vector<DeviceInfo> devices;
      for (int i = 0; i < (which == 0 ? 1 : 4); ++i) devices.push_back({Cpu(i), "CPU", 1});
      PlacementOptions options;
      options.kernels = KernelRegistry::Global();
      std::vector<double> times;
      for (int rep = 0; rep < 5; ++rep) {
        auto start = std::chrono::steady_clock::now();
        Status s = PlaceGraph(graph.get(), devices, options);
        times.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count());
        CHECK(s.ok()) << s;
      }
      std::sort(times.begin(), times.end());
      ms[which] = times[2];
    }
    std::printf("%-10d %10d %14.2f %14.2f\n", graph->num_nodes(), graph->num_edges(), ms[0], ms[1]);
  }
}

Tensor Filled(int64_t rows, int64_t cols, float scale = 1) {
  Tensor t(DT_FLOAT, TensorShape({rows, cols}));
  auto flat = t.flat<float>();
  for (int64_t i = 0; i < t.NumElements(); ++i)
    flat[i] = scale * static_cast<float>((i * 7919) % 23 - 11) / 500.f;
  return t;
}

void Measured() {
  constexpr int kBatch = 256, kWidth = 1024, kLayers = 3;
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  std::vector<Output> tops;
  for (const char* tower : {"a", "b"}) {
    Scope s = root.NewSubScope(tower);
    Output h = x;
    for (int l = 0; l < kLayers; ++l) {
      // Distinct weights per tower, or CSE would merge the towers.
      auto w = ops::Const(s.WithOpName(StrCat("w", l)),
                          Filled(kWidth, kWidth, tower[0] == 'a' ? 1.f : -0.5f));
      h = ops::Tanh(s, ops::MatMul(s.WithOpName(StrCat("mm", l)), h, w));
    }
    tops.push_back(h);
  }
  ops::Add(root.WithOpName("sum"), tops[0], tops[1]);
  CHECK(root.ok()) << root.status();
  std::vector<std::pair<std::string, Tensor>> feeds = {{"x", Filled(kBatch, kWidth)}};
  std::printf("two towers: x [%d, %d], %d MatMul+Tanh layers of %d per tower (%.1f GFLOP/step)\n",
              kBatch, kWidth, kLayers, kWidth, 2.0 * 2 * kLayers * kBatch * kWidth * kWidth / 1e9);
  std::printf("%-36s %12s %12s  %s\n", "configuration", "median ms", "min ms", "placement");
  struct Config {
    const char* name;
    int devices;
    int threads;
  };
  for (const Config& config : {Config{"1 device x 2 intra-op threads", 1, 2},
                               Config{"2 devices x 1 intra-op thread", 2, 1},
                               Config{"1 device x 1 intra-op thread", 1, 1}}) {
    SessionOptions options;
    options.num_cpu_devices = config.devices;
    options.intra_op_threads = config.threads;
    auto session = Session::New(options).value();
    CHECK(session->Create(root.ToGraphDef()).ok());
    std::vector<Tensor> out;
    RunOptions traced;
    traced.trace = true;
    RunMetadata metadata;
    CHECK(session->Run(feeds, {"sum"}, {}, &out, traced, &metadata).ok());
    std::map<std::string, int> matmuls;
    for (const NodeExecStats& n : metadata.step_stats.nodes) {
      if (n.op == "MatMul") ++matmuls[n.device.substr(n.device.rfind('/') + 1)];
    }
    std::vector<std::string> placement;
    for (const auto& [device, count] : matmuls)
      placement.push_back(StrCat(count, " MatMuls on ", device));
    for (int i = 0; i < 3; ++i) CHECK(session->Run(feeds, {"sum"}, {}, &out).ok());
    std::vector<double> times;
    for (int i = 0; i < 20; ++i) {
      auto start = std::chrono::steady_clock::now();
      CHECK(session->Run(feeds, {"sum"}, {}, &out).ok());
      times.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
    }
    std::sort(times.begin(), times.end());
    std::printf("%-36s %12.2f %12.2f  %s\n", config.name, times[times.size() / 2], times[0],
                StrJoin(placement, ", ").c_str());
  }
}

}  // namespace
}  // namespace weir

int main(int argc, char** argv) {
  weir::RegisterStandardOpsAndKernels();
  auto want = [&](const char* part) {
    if (argc == 1) return true;
    for (int i = 1; i < argc; ++i) {
      if (std::strcmp(argv[i], part) == 0) return true;
    }
    return false;
  };
  if (want("quality")) {
    std::printf("== placement quality (simulated)\n");
    weir::Quality();
  }
  if (want("time")) {
    std::printf("\n== placement time\n");
    weir::Time();
  }
  if (want("measured")) {
    std::printf("\n== measured: two towers, model parallel on this machine\n");
    weir::Measured();
  }
  return 0;
}
