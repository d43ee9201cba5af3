// Array kernels that move memory, against memcpy of the same bytes, each
// run through a Session on a fed 16 MiB float tensor. Reports bytes read +
// written per second; Arg is the intra-op thread count. Compare kernels
// with BM_MemcpyToNewTensor: a kernel's output is a fresh allocation too.
//   array_ops_bench --benchmark_filter=Transpose   (on an idle machine)
#include <benchmark/benchmark.h>

#include <cstring>

#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"

namespace weir {
namespace {

// A session running `build(x)` on a fed float tensor x of `shape`.
struct OpRunner {
  std::unique_ptr<Session> session;
  std::vector<std::pair<std::string, Tensor>> feeds;
  std::vector<std::string> fetches;

  OpRunner(int threads, const TensorShape& shape,
           const std::function<Output(const Scope&, Output)>& build) {
    Scope root = Scope::NewRootScope();
    auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
    Output y = build(root, x);
    CHECK_OK(root.status());
    SessionOptions options;
    options.intra_op_threads = threads;
    options.inter_op_threads = 1;
    session = std::move(Session::New(options)).value();
    CHECK_OK(session->Create(root.ToGraphDef()));
    Tensor input(DT_FLOAT, shape);
    std::fill_n(input.data<float>(), input.NumElements(), 1.f);
    feeds = {{"x", input}};
    fetches = {y.name()};
  }
  void Run(benchmark::State& state, int64_t bytes_moved) {
    std::vector<Tensor> out;
    CHECK_OK(session->Run(feeds, fetches, {}, &out));
    for (auto _ : state) {
      Status s = session->Run(feeds, fetches, {}, &out);
      if (!s.ok()) state.SkipWithError(s.ToString().c_str());
    }
    state.SetBytesProcessed(state.iterations() * bytes_moved);
  }
};

constexpr int64_t kRows = 2048, kCols = 2048;  // 16 MiB of float
constexpr int64_t kBytes = kRows * kCols * 4;

void BM_Memcpy(benchmark::State& state) {
  std::vector<char> a(kBytes, 1), b(kBytes);
  for (auto _ : state) {
    std::memcpy(b.data(), a.data(), kBytes);
    benchmark::DoNotOptimize(b.data());
  }
  state.SetBytesProcessed(state.iterations() * 2 * kBytes);
}
BENCHMARK(BM_Memcpy)->UseRealTime()->Unit(benchmark::kMillisecond);

// memcpy into a new tensor each time, as a kernel's output is: the fair
// baseline for kernels, since first-touch page faults of a large fresh
// allocation cost as much as the copy.
void BM_MemcpyToNewTensor(benchmark::State& state) {
  Tensor a(DT_FLOAT, TensorShape({kRows, kCols}));
  std::fill_n(a.data<float>(), a.NumElements(), 1.f);
  for (auto _ : state) {
    Tensor b(DT_FLOAT, TensorShape({kRows, kCols}));
    std::memcpy(b.data<float>(), a.data<float>(), kBytes);
    benchmark::DoNotOptimize(b.data<float>());
  }
  state.SetBytesProcessed(state.iterations() * 2 * kBytes);
}
BENCHMARK(BM_MemcpyToNewTensor)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_Transpose2D(benchmark::State& state) {
  OpRunner runner(state.range(0), TensorShape({kRows, kCols}), [](const Scope& s, Output x) {
    return ops::Transpose(s, x, ops::Const(s, Tensor::FromVector<int32_t>({1, 0})));
  });
  runner.Run(state, 2 * kBytes);
}
BENCHMARK(BM_Transpose2D)->Arg(1)->Arg(2)->Arg(8)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_TransposeInner(benchmark::State& state) {  // NHWC -> NCHW style
  OpRunner runner(state.range(0), TensorShape({8, 64 * 64, 128}), [](const Scope& s, Output x) {
    return ops::Transpose(s, x, ops::Const(s, Tensor::FromVector<int32_t>({0, 2, 1})));
  });
  runner.Run(state, 2 * kBytes);
}
BENCHMARK(BM_TransposeInner)->Arg(1)->Arg(2)->Arg(8)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_ConcatAxis1(benchmark::State& state) {
  OpRunner runner(state.range(0), TensorShape({kRows, kCols / 2}), [](const Scope& s, Output x) {
    return ops::ConcatV2(s, {x, x}, ops::Const(s, 1));
  });
  runner.Run(state, 2 * kBytes);
}
BENCHMARK(BM_ConcatAxis1)->Arg(1)->Arg(2)->Arg(8)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_ConcatAxis0(benchmark::State& state) {
  OpRunner runner(state.range(0), TensorShape({kRows / 2, kCols}), [](const Scope& s, Output x) {
    return ops::ConcatV2(s, {x, x}, ops::Const(s, 0));
  });
  runner.Run(state, 2 * kBytes);
}
BENCHMARK(BM_ConcatAxis0)->Arg(1)->Arg(2)->Arg(8)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_SplitAxis1(benchmark::State& state) {
  OpRunner runner(state.range(0), TensorShape({kRows, kCols}), [](const Scope& s, Output x) {
    return ops::Split(s, ops::Const(s, 1), x, 2).output(1);
  });
  runner.Run(state, 2 * kBytes);  // both halves are written
}
BENCHMARK(BM_SplitAxis1)->Arg(1)->Arg(2)->Arg(8)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_SliceInner(benchmark::State& state) {
  OpRunner runner(state.range(0), TensorShape({kRows, kCols}), [](const Scope& s, Output x) {
    return ops::Slice(s, x, ops::Const(s, Tensor::FromVector<int32_t>({0, 1})),
                      ops::Const(s, Tensor::FromVector<int32_t>({-1, kCols - 2})));
  });
  runner.Run(state, 2 * kBytes);
}
BENCHMARK(BM_SliceInner)->Arg(1)->Arg(2)->Arg(8)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_GatherRows(benchmark::State& state) {
  std::vector<int32_t> rows(kRows);
  for (int64_t i = 0; i < kRows; ++i) rows[i] = static_cast<int32_t>((i * 7919) % kRows);
  OpRunner runner(state.range(0), TensorShape({kRows, kCols}), [&](const Scope& s, Output x) {
    return ops::GatherV2(s, x, ops::Const(s, Tensor::FromVector(rows)), ops::Const(s, 0));
  });
  runner.Run(state, 2 * kBytes);
}
BENCHMARK(BM_GatherRows)->Arg(1)->Arg(2)->Arg(8)->UseRealTime()->Unit(benchmark::kMillisecond);

// Scans and segment sums read and write every element once, like a copy.
void BM_CumsumAxis1(benchmark::State& state) {
  OpRunner runner(state.range(0), TensorShape({kRows, kCols}),
                  [](const Scope& s, Output x) { return ops::Cumsum(s, x, 1); });
  runner.Run(state, 2 * kBytes);
}
BENCHMARK(BM_CumsumAxis1)->Arg(1)->Arg(2)->Arg(8)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_CumsumAxis0(benchmark::State& state) {
  OpRunner runner(state.range(0), TensorShape({kRows, kCols}),
                  [](const Scope& s, Output x) { return ops::Cumsum(s, x, 0); });
  runner.Run(state, 2 * kBytes);
}
BENCHMARK(BM_CumsumAxis0)->Arg(1)->Arg(2)->Arg(8)->UseRealTime()->Unit(benchmark::kMillisecond);

// 2048 rows into 64 segments: reads 16 MiB, writes 0.5 MiB.
void BM_UnsortedSegmentSumRows(benchmark::State& state) {
  std::vector<int32_t> ids(kRows);
  for (int64_t i = 0; i < kRows; ++i) ids[i] = static_cast<int32_t>((i * 7919) % 64);
  OpRunner runner(state.range(0), TensorShape({kRows, kCols}), [&](const Scope& s, Output x) {
    return ops::UnsortedSegmentSum(s, x, ops::Const(s, Tensor::FromVector(ids)), 64);
  });
  runner.Run(state, kBytes + 64 * kCols * 4);
}
BENCHMARK(BM_UnsortedSegmentSumRows)
    ->Arg(1)
    ->Arg(2)
    ->Arg(8)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace weir

BENCHMARK_MAIN();
