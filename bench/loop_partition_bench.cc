// The cost of a loop iteration when the loop spans two virtual CPU devices
// (partition.h: each device steps the frame with a control loop and the
// values cross through the in-process rendezvous each iteration), against
// the same loop on one device.
//
//   loop_partition_bench    items/s = loop iterations per second
#include <benchmark/benchmark.h>

#include "weir/ops/control_flow_builder.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"

namespace weir {
namespace {

constexpr int32_t kTrips = 2000;

// i = 0; while i < n: i = i + 1, its Add on CPU:`body_device`.
GraphDef CountingLoop(int body_device, int parallel_iterations) {
  Scope root = Scope::NewRootScope();
  Scope s = root.WithDevice("/device:CPU:0");
  auto n = ops::Placeholder(s.WithOpName("n"), DT_INT32);
  std::vector<Output> outputs;
  ops::WhileLoopOptions options;
  options.parallel_iterations = parallel_iterations;
  CHECK_OK(ops::WhileLoop(
      s, {ops::Const(s, 0)},
      [&](const Scope& c, const std::vector<Output>& v, Output* pred) {
        *pred = ops::Less(c, v[0], n);
        return Status::OK();
      },
      [&](const Scope& b, const std::vector<Output>& v, std::vector<Output>* next) {
        next->push_back(ops::Add(b.WithDevice(StrCat("/device:CPU:", body_device)), v[0], 1));
        return Status::OK();
      },
      &outputs, options));
  ops::Identity(s.WithOpName("i"), outputs[0]);
  CHECK_OK(root.status());
  return root.ToGraphDef();
}

// Args: devices (1: all on CPU:0; 2: the body's Add on CPU:1),
// parallel_iterations.
void BM_CountingLoop(benchmark::State& state) {
  const int devices = static_cast<int>(state.range(0));
  SessionOptions options;
  options.num_cpu_devices = devices;
  options.intra_op_threads = 1;
  options.inter_op_threads = 1;
  auto session = Session::New(options);
  CHECK_OK(session.status());
  CHECK_OK((*session)->Create(CountingLoop(devices - 1, static_cast<int>(state.range(1)))));
  const std::vector<std::pair<std::string, Tensor>> feeds = {
      {"n", Tensor::Scalar<int32_t>(kTrips)}};
  std::vector<Tensor> out;
  CHECK_OK((*session)->Run(feeds, {"i"}, {}, &out));  // compile outside the timing
  for (auto _ : state) {
    CHECK_OK((*session)->Run(feeds, {"i"}, {}, &out));
    benchmark::DoNotOptimize(out);
  }
  CHECK(out[0].scalar<int32_t>() == kTrips);
  state.SetItemsProcessed(state.iterations() * kTrips);
}
BENCHMARK(BM_CountingLoop)
    ->ArgNames({"devices", "parallel"})
    ->Args({1, 1})
    ->Args({1, 10})
    ->Args({2, 1})
    ->Args({2, 10})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace weir

BENCHMARK_MAIN();
