// Cross-device transfers on 2 virtual CPU devices.
//
//   transfer_bench                 peak memory with and without Recv
//                                  scheduling (Google Benchmark)
//   transfer_bench --mlp-lossy [--steps N] [--data DIR]
//                                  Fashion-MNIST MLP split over 2 devices:
//                                  bytes crossing per step and the loss curve
//                                  with lossy (bfloat16) transfers off and on
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <set>
#include <tuple>

#include "fashion_mnist_data.h"
#include "model.h"
#include "weir/framework/kernel_registry.h"
#include "weir/graph/graph_constructor.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/device_mgr.h"
#include "weir/runtime/graph_compiler.h"
#include "weir/runtime/session.h"
#include "weir/train/learning_rate.h"
#include "weir/train/optimizers.h"

namespace weir {
namespace {

std::string Cpu(int i) { return StrCat("/job:localhost/replica:0/task:0/device:CPU:", i); }

// Large early transfers: CPU:0 makes K tensors of N floats at the start of
// the step; CPU:1 runs a chain of K stages, stage k reading y_k = 2 * x_k.
// Unscheduled, every _Recv (and so every y_k) runs at once and all K y_k
// are alive together; scheduled, each _Recv waits until its stage is near.
// The x_k stay on CPU:0's allocator either way: in one process a _Recv
// hands over the sender's buffer, so what scheduling saves here is what
// the Recv's consumers allocate (a copying transport saves the received
// buffers too).
GraphDef LargeEarlyTransfers(int stages, int64_t elements) {
  Scope root = Scope::NewRootScope();
  Scope cpu0 = root.WithDevice("/device:CPU:0");
  Scope cpu1 = root.WithDevice("/device:CPU:1");
  Output seed = ops::Placeholder(cpu0.WithOpName("seed"), DT_FLOAT,
                                 {{"shape", PartialShape(std::vector<int64_t>{})}});
  Output dims = ops::Const(root, Tensor::FromVector<int64_t>({elements}));
  Output chain = ops::Fill(cpu1, dims, ops::Identity(cpu1, seed));
  for (int k = 0; k < stages; ++k) {
    Output x = ops::Fill(cpu0.WithOpName(StrCat("x", k)), dims,
                         ops::Add(cpu0, seed, static_cast<float>(k)));
    // x * x, not 2 * x: with x read twice the Mul cannot reuse the received
    // buffer in place, so y_k is allocated on CPU:1.
    Output y = ops::Mul(cpu1.WithOpName(StrCat("y", k)), x, x);
    for (int j = 0; j < 3; ++j) chain = ops::Neg(cpu1, chain);
    chain = ops::Add(cpu1.WithOpName(StrCat("stage", k)), chain, y);
  }
  ops::Sum(cpu1.WithOpName("total"), chain, ops::Const(root, {0}));
  CHECK_OK(root.status());
  return root.ToGraphDef();
}

void BM_RecvSchedulingPeakMemory(benchmark::State& state) {
  const bool schedule = state.range(0) != 0;
  const int stages = 8;
  const int64_t elements = int64_t{1} << 20;  // 4 MiB per tensor
  SessionOptions options;
  options.num_cpu_devices = 2;
  options.intra_op_threads = 1;
  options.inter_op_threads = 2;
  options.compile.schedule_recvs = schedule;
  auto session = Session::New(options);
  CHECK_OK(session.status());
  CHECK_OK((*session)->Create(LargeEarlyTransfers(stages, elements)));
  // The devices' allocators live per device name for the whole process.
  auto devices = DeviceMgr::NewCpuDevices(2, 1);
  Allocator* allocators[2] = {devices->devices()[0]->allocator(),
                              devices->devices()[1]->allocator()};
  std::vector<Tensor> out;
  const std::vector<std::pair<std::string, Tensor>> feeds = {{"seed", Tensor::Scalar<float>(1)}};
  CHECK_OK((*session)->Run(feeds, {"total"}, {}, &out));
  int64_t peak[2] = {0, 0};
  for (auto _ : state) {
    state.PauseTiming();
    for (Allocator* a : allocators) a->ResetPeak();
    state.ResumeTiming();
    Status s = (*session)->Run(feeds, {"total"}, {}, &out);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
    for (int d = 0; d < 2; ++d) {
      peak[d] = std::max(peak[d], allocators[d]->GetStats().peak_bytes_in_use);
    }
  }
  state.counters["peak_cpu0_MiB"] = static_cast<double>(peak[0]) / (1 << 20);
  state.counters["peak_cpu1_MiB"] = static_cast<double>(peak[1]) / (1 << 20);
}
BENCHMARK(BM_RecvSchedulingPeakMemory)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// --- Fashion-MNIST MLP over two devices, lossy transfers off and on. ---

// By name: the images, dense1's forward ops, its variables and their Adam
// updates on CPU:0; everything else (dense2, logits, loss, the backward
// pass) on CPU:1. Activations cross forward, dense1's gradients come back.
void SplitOverTwoDevices(GraphDef* graph) {
  for (NodeDef& node : graph->nodes) {
    // Colocated nodes (optimizer slots' initializers) follow their target.
    if (!node.device.empty() || node.attrs.count("_class")) continue;
    const bool first = node.name.find("dense1") != std::string::npos || node.name == "images";
    node.device = first ? "/device:CPU:0" : "/device:CPU:1";
  }
}

// The tensors the graph compiler sends across devices in one training
// step (its own partitions, default options), as names a Session can
// fetch, and the number of control transfers (a 4-byte scalar each).
StatusOr<std::vector<std::string>> CrossingTensors(const GraphDef& def, const StepSignature& step,
                                                   int* control_transfers) {
  Graph graph;
  WEIR_RETURN_IF_ERROR(ImportGraphDef(def, &graph));
  auto devices = DeviceMgr::NewCpuDevices(2, 1);
  CompileEnv env;
  env.devices = devices->Infos();
  env.kernels = KernelRegistry::Global();
  env.host_device = devices->devices().front().get();
  env.incarnation = [](const std::string&) { return uint64_t{0}; };
  WEIR_ASSIGN_OR_RETURN(CompiledGraph compiled, CompileGraph(graph, step, env, CompileOptions()));
  std::vector<std::string> tensors;
  *control_transfers = 0;
  for (const CompiledPartition& part : compiled.partitions) {
    std::map<std::string, const NodeDef*> by_name;
    for (const NodeDef& node : part.def.nodes) by_name[node.name] = &node;
    for (const NodeDef& node : part.def.nodes) {
      if (node.op != "_Send") continue;
      const std::string& sent = node.inputs[0];
      const NodeDef* source = by_name.count(sent) ? by_name.at(sent) : nullptr;
      if (sent.starts_with("_control/")) {
        ++*control_transfers;
      } else if (source != nullptr && source->op == "_Arg") {
        tensors.push_back(compiled.feeds[source->attrs.at("index").i()].name);
      } else {
        tensors.push_back(sent);
      }
    }
  }
  return tensors;
}

// Trains `steps` steps of batch 100 (a fixed order) and returns the loss of
// each step.
StatusOr<std::vector<double>> TrainLosses(const fashion_mnist::Dataset& data, bool lossy, int steps,
                                          std::pair<int, int64_t>* crossing) {
  using namespace fashion_mnist;
  Scope root = Scope::NewRootScope();
  WEIR_ASSIGN_OR_RETURN(Model model, BuildModel(root, ModelKind::kMlp, 1));
  WEIR_ASSIGN_OR_RETURN(Variable global_step, CreateGlobalStep(root));
  AdamOptimizer adam(1e-3);
  WEIR_ASSIGN_OR_RETURN(Operation train,
                        adam.Minimize(root, model.loss, model.variables, &global_step));
  std::vector<Variable> state = model.variables;
  for (const Variable& v : adam.variables()) state.push_back(v);
  state.push_back(global_step);
  std::string init = GroupInitializers(root, state).name();
  WEIR_RETURN_IF_ERROR(root.status());
  GraphDef graph = root.ToGraphDef();
  SplitOverTwoDevices(&graph);
  constexpr int64_t kBatch = 100;
  SessionOptions options;
  options.num_cpu_devices = 2;
  options.compile.lossy_transfers = lossy;
  WEIR_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::New(options));
  WEIR_RETURN_IF_ERROR(session->Create(graph));
  std::vector<Tensor> out;
  WEIR_RETURN_IF_ERROR(session->Run({}, {}, {init}, &out));
  const int64_t n = data.train.labels.NumElements();
  std::vector<int32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(1);
  for (int64_t i = n - 1; i > 0; --i)
    std::swap(order[i], order[rng() % static_cast<uint64_t>(i + 1)]);
  std::vector<double> losses;
  Tensor zero_images(DT_FLOAT, TensorShape({kBatch, kImageSize}));
  Tensor zero_labels(DT_INT32, TensorShape({kBatch}));
  std::memset(zero_images.data<float>(), 0, zero_images.TotalBytes());
  std::memset(zero_labels.data<int32_t>(), 0, zero_labels.TotalBytes());
  const std::vector<std::pair<std::string, Tensor>> probe_feeds = {
      {model.images.name(), zero_images},
      {model.labels.name(), zero_labels},
      {model.dropout_rate.name(), Tensor::Scalar<float>(0)}};
  {
    // Bytes per step: the crossing tensors' sizes, fetched once (before
    // training, so the step's variables are as at the start).
    StepSignature signature{{model.images.name(), model.labels.name(), model.dropout_rate.name()},
                            {model.loss.name()},
                            {train.name()}};
    int control = 0;
    WEIR_ASSIGN_OR_RETURN(std::vector<std::string> tensors,
                          CrossingTensors(graph, signature, &control));
    WEIR_RETURN_IF_ERROR(session->Run(probe_feeds, tensors, {}, &out));
    int64_t bytes = 4 * control;
    for (size_t i = 0; i < out.size(); ++i) {
      const Tensor& t = out[i];
      bytes += t.dtype() == DT_FLOAT && lossy ? t.NumElements() * 2 : t.TotalBytes();
      if (!lossy)
        std::printf("  crosses: %s %s\n", tensors[i].c_str(), t.shape().DebugString().c_str());
    }
    *crossing = {static_cast<int>(tensors.size()) + control, bytes};
  }
  for (int step = 0; step < steps; ++step) {
    Tensor images(DT_FLOAT, TensorShape({kBatch, kImageSize}));
    Tensor labels(DT_INT32, TensorShape({kBatch}));
    for (int64_t i = 0; i < kBatch; ++i) {
      const int64_t row = order[(step * kBatch + i) % n];
      std::memcpy(images.data<float>() + i * kImageSize,
                  data.train.images.data<float>() + row * kImageSize, kImageSize * sizeof(float));
      labels.data<int32_t>()[i] = data.train.labels.data<int32_t>()[row];
    }
    WEIR_RETURN_IF_ERROR(session->Run({{model.images.name(), images},
                                       {model.labels.name(), labels},
                                       {model.dropout_rate.name(), Tensor::Scalar<float>(0)}},
                                      {model.loss.name()}, {train.name()}, &out));
    losses.push_back(out[0].scalar<float>());
  }
  return losses;
}

int RunMlpLossy(int steps, const std::string& dir) {
  auto data = fashion_mnist::Load(dir);
  if (!data.ok()) {
    std::fprintf(stderr, "%s\n", data.status().ToString().c_str());
    return 1;
  }
  std::pair<int, int64_t> exact_crossing, lossy_crossing;
  auto exact = TrainLosses(*data, false, steps, &exact_crossing);
  auto lossy = TrainLosses(*data, true, steps, &lossy_crossing);
  if (!exact.ok() || !lossy.ok()) {
    std::fprintf(stderr, "%s\n",
                 (!exact.ok() ? exact.status() : lossy.status()).ToString().c_str());
    return 1;
  }
  std::printf(
      "transfers per step: %d; bytes crossing per step: float32 %lld, lossy %lld (%.1f%%)\n",
      exact_crossing.first, static_cast<long long>(exact_crossing.second),
      static_cast<long long>(lossy_crossing.second),
      100.0 * lossy_crossing.second / std::max<int64_t>(1, exact_crossing.second));
  std::printf("%8s %12s %12s %10s\n", "steps", "float32", "bfloat16", "diff");
  const int window = std::max(1, steps / 10);
  double max_diff = 0;
  for (int end = window; end <= steps; end += window) {
    double a = 0, b = 0;
    for (int i = end - window; i < end; ++i) {
      a += (*exact)[i];
      b += (*lossy)[i];
    }
    a /= window;
    b /= window;
    max_diff = std::max(max_diff, std::abs(a - b));
    std::printf("%8d %12.4f %12.4f %+10.4f\n", end, a, b, b - a);
  }
  std::printf("largest difference of windowed mean loss: %.4f\n", max_diff);
  return 0;
}

}  // namespace
}  // namespace weir

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--mlp-lossy") == 0) {
      int steps = 600;
      std::string dir = weir::fashion_mnist::kDefaultDir;
      for (int j = 1; j + 1 < argc; ++j) {
        if (std::strcmp(argv[j], "--steps") == 0) steps = std::atoi(argv[j + 1]);
        if (std::strcmp(argv[j], "--data") == 0) dir = argv[j + 1];
      }
      return weir::RunMlpLossy(std::max(1, steps), dir);
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
