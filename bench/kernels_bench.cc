// Kernel throughput against the machine's own ceilings, measured in the same
// run: MatMul against a raw oneDNN sgemm call on the same shapes, and
// elementwise/reduction kernels against a STREAM-style copy. Kernels run
// through a Session (as users run them), on one device with one intra-op
// thread per core.
#include <benchmark/benchmark.h>
#include <oneapi/dnnl/dnnl.h>

#include <cstring>
#include <random>

#include "weir/base/threadpool.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"

namespace weir {
namespace {

Tensor RandomTensor(const TensorShape& shape, uint32_t seed = 1) {
  Tensor t(DT_FLOAT, shape);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (float& v : t.flat<float>()) v = dist(gen);
  return t;
}

std::unique_ptr<Session> MakeSession(const Scope& root) {
  CHECK(root.ok()) << root.status();
  SessionOptions options;  // intra-op threads: one per core
  auto session = Session::New(options);
  CHECK_OK(session.status());
  CHECK_OK((*session)->Create(root.ToGraphDef()));
  return std::move(session).value();
}

// The ceiling: one dnnl_sgemm call (oneDNN's own threading) on the shape.
void BM_RawSgemm(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  Tensor a = RandomTensor({m, k}), b = RandomTensor({k, n}, 2), c(DT_FLOAT, TensorShape({m, n}));
  for (auto _ : state) {
    // Row-major C = A·B as oneDNN's row-major sgemm.
    dnnl_sgemm('N', 'N', m, n, k, 1.f, a.data<float>(), k, b.data<float>(), n, 0.f,
               c.data<float>(), n);
    benchmark::DoNotOptimize(c.data<float>());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * m * n * k * state.iterations(),
                                                 benchmark::Counter::kIsRate,
                                                 benchmark::Counter::kIs1000);
}

void BM_MatMul(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  Scope root = Scope::NewRootScope();
  auto a = ops::Placeholder(root.WithOpName("a"), DT_FLOAT);
  auto b = ops::Placeholder(root.WithOpName("b"), DT_FLOAT);
  ops::MatMul(root.WithOpName("c"), a, b);
  auto session = MakeSession(root);
  std::vector<std::pair<std::string, Tensor>> feeds = {{"a", RandomTensor({m, k})},
                                                       {"b", RandomTensor({k, n}, 2)}};
  std::vector<Tensor> out;
  for (auto _ : state) CHECK_OK(session->Run(feeds, {"c"}, {}, &out));
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * m * n * k * state.iterations(),
                                                 benchmark::Counter::kIsRate,
                                                 benchmark::Counter::kIs1000);
}

void MatMulShapes(benchmark::internal::Benchmark* b) {
  for (int64_t n : {128, 256, 512, 1024, 2048}) b->Args({n, n, n});
  // The Fashion-MNIST MLP's layers at batch 100 (784-512-512-10).
  b->Args({100, 784, 512})->Args({100, 512, 512})->Args({100, 512, 10});
  b->UseRealTime()->Unit(benchmark::kMicrosecond);
}
BENCHMARK(BM_RawSgemm)->Apply(MatMulShapes);
BENCHMARK(BM_MatMul)->Apply(MatMulShapes);

// The memory ceiling: a parallel copy over the same thread pool size.
void BM_StreamCopy(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor src = RandomTensor({n}), dst(DT_FLOAT, TensorShape({n}));
  ThreadPool pool("stream", NumSchedulableCpus());
  for (auto _ : state) {
    pool.ParallelFor(n, 1, [&](int64_t begin, int64_t end) {
      std::memcpy(dst.data<float>() + begin, src.data<float>() + begin, (end - begin) * sizeof(float));
    });
    benchmark::DoNotOptimize(dst.data<float>());
  }
  state.SetBytesProcessed(state.iterations() * n * sizeof(float) * 2);  // read + write
}
BENCHMARK(BM_StreamCopy)->Arg(1 << 24)->UseRealTime()->Unit(benchmark::kMillisecond);

// x (op) y over n floats: bytes = 2 reads + 1 write.
void BM_Binary(benchmark::State& state, const char* op) {
  const int64_t n = state.range(0);
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto y = ops::Placeholder(root.WithOpName("y"), DT_FLOAT);
  AddOp(root.WithOpName("z"), op, {x, y});
  auto session = MakeSession(root);
  std::vector<std::pair<std::string, Tensor>> feeds = {{"x", RandomTensor({n})},
                                                       {"y", RandomTensor({n}, 2)}};
  std::vector<Tensor> out;
  for (auto _ : state) CHECK_OK(session->Run(feeds, {"z"}, {}, &out));
  state.SetBytesProcessed(state.iterations() * n * sizeof(float) * 3);
}
BENCHMARK_CAPTURE(BM_Binary, Add, "Add")->Arg(1 << 24)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Binary, Mul, "Mul")->Arg(1 << 24)->UseRealTime()->Unit(benchmark::kMillisecond);

// [rows, cols] + [cols]: the bias case.
void BM_BiasLikeAdd(benchmark::State& state) {
  const int64_t rows = state.range(0), cols = state.range(1);
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto b = ops::Placeholder(root.WithOpName("b"), DT_FLOAT);
  ops::Add(root.WithOpName("z"), x, b);
  auto session = MakeSession(root);
  std::vector<std::pair<std::string, Tensor>> feeds = {{"x", RandomTensor({rows, cols})},
                                                       {"b", RandomTensor({cols}, 2)}};
  std::vector<Tensor> out;
  for (auto _ : state) CHECK_OK(session->Run(feeds, {"z"}, {}, &out));
  state.SetBytesProcessed(state.iterations() * rows * cols * sizeof(float) * 2);
}
BENCHMARK(BM_BiasLikeAdd)->Args({4096, 4096})->UseRealTime()->Unit(benchmark::kMillisecond);

// Unary: bytes = 1 read + 1 write.
void BM_Unary(benchmark::State& state, const char* op) {
  const int64_t n = state.range(0);
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  AddOp(root.WithOpName("z"), op, {x});
  auto session = MakeSession(root);
  std::vector<std::pair<std::string, Tensor>> feeds = {{"x", RandomTensor({n})}};
  std::vector<Tensor> out;
  for (auto _ : state) CHECK_OK(session->Run(feeds, {"z"}, {}, &out));
  state.SetBytesProcessed(state.iterations() * n * sizeof(float) * 2);
}
BENCHMARK_CAPTURE(BM_Unary, Relu, "Relu")->Arg(1 << 24)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Unary, Neg, "Neg")->Arg(1 << 24)->UseRealTime()->Unit(benchmark::kMillisecond);

// Reductions: bytes = 1 read.
void BM_Sum(benchmark::State& state) {
  const int64_t rows = state.range(0), cols = state.range(1);
  const int axis = static_cast<int>(state.range(2));
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  ops::Sum(root.WithOpName("z"), x, axis < 0 ? Input({0, 1}) : Input(axis));
  auto session = MakeSession(root);
  std::vector<std::pair<std::string, Tensor>> feeds = {{"x", RandomTensor({rows, cols})}};
  std::vector<Tensor> out;
  for (auto _ : state) CHECK_OK(session->Run(feeds, {"z"}, {}, &out));
  state.SetBytesProcessed(state.iterations() * rows * cols * sizeof(float));
}
BENCHMARK(BM_Sum)->Args({4096, 4096, -1})->Args({4096, 4096, 0})->Args({4096, 4096, 1})
    ->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace weir

BENCHMARK_MAIN();
