// Kernel throughput against the machine's own ceilings, measured in the same
// run: MatMul against a raw oneDNN sgemm call on the same shapes, and
// elementwise/reduction kernels against a STREAM-style copy; Conv2D and its
// backprops in examples/s and GFLOP/s. Kernels run through a Session (as
// users run them), on one device with one intra-op thread per core.
// bench/run_kernel_peers.sh sets these beside PyTorch on the same shapes.
#include <benchmark/benchmark.h>
#include <oneapi/dnnl/dnnl.h>

#include <Eigen/Core>
#include <cstring>
#include <random>

#include "weir/base/threadpool.h"
#include "weir/ops/control_flow_builder.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"

namespace weir {
namespace {

// Uniform in [-1, 1), float or bfloat16.
Tensor RandomTensor(const TensorShape& shape, uint32_t seed = 1, DType dtype = DT_FLOAT) {
  Tensor t(dtype, shape);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    if (dtype == DT_BFLOAT16) {
      t.data<Eigen::bfloat16>()[i] = Eigen::bfloat16(dist(gen));
    } else {
      t.data<float>()[i] = dist(gen);
    }
  }
  return t;
}

benchmark::Counter Rate(double count) {
  return benchmark::Counter(count, benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}

std::unique_ptr<Session> MakeSession(const Scope& root) {
  CHECK(root.ok()) << root.status();
  SessionOptions options;  // intra-op threads: one per core
  auto session = Session::New(options);
  CHECK_OK(session.status());
  CHECK_OK((*session)->Create(root.ToGraphDef()));
  return std::move(session).value();
}

using Feeds = std::vector<std::pair<std::string, Tensor>>;

// Runs `session` once per benchmark iteration, fetching `fetch`. Each step's
// result is released before the next step, as a training step's
// intermediates are and as the raw library calls rewrite one buffer: holding
// it would make every step write a second output block, cold in cache
// (measured 25-30% on the write-heavy 3136x100x1024 product).
void RunSteps(benchmark::State& state, Session* session, const Feeds& feeds,
              const std::string& fetch) {
  std::vector<Tensor> out;
  for (auto _ : state) {
    out.clear();
    CHECK_OK(session->Run(feeds, {fetch}, {}, &out));
  }
}

// Args: m, k, n and optionally transpose_a, transpose_b (C[m,n] = op(A) op(B)).
struct GemmArgs {
  int64_t m, k, n;
  bool transpose_a, transpose_b;
  explicit GemmArgs(const benchmark::State& state)
      : m(state.range(0)),
        k(state.range(1)),
        n(state.range(2)),
        transpose_a(state.range(3) != 0),
        transpose_b(state.range(4) != 0) {}
  TensorShape a() const { return transpose_a ? TensorShape({k, m}) : TensorShape({m, k}); }
  TensorShape b() const { return transpose_b ? TensorShape({n, k}) : TensorShape({k, n}); }
  double flops() const { return 2.0 * m * n * k; }
};

// The ceiling: one dnnl_sgemm call (oneDNN's own threading) on the shape.
void BM_RawSgemm(benchmark::State& state) {
  const GemmArgs g(state);
  Tensor a = RandomTensor(g.a()), b = RandomTensor(g.b(), 2), c(DT_FLOAT, TensorShape({g.m, g.n}));
  for (auto _ : state) {
    // Row-major C = op(A)·op(B) as oneDNN's row-major sgemm.
    dnnl_sgemm(g.transpose_a ? 'T' : 'N', g.transpose_b ? 'T' : 'N', g.m, g.n, g.k, 1.f,
               a.data<float>(), a.dim_size(1), b.data<float>(), b.dim_size(1), 0.f,
               c.data<float>(), g.n);
    benchmark::DoNotOptimize(c.data<float>());
  }
  state.counters["GFLOP/s"] = Rate(g.flops() * state.iterations());
}

void MatMulBenchmark(benchmark::State& state, DType dtype) {
  const GemmArgs g(state);
  Scope root = Scope::NewRootScope();
  auto a = ops::Placeholder(root.WithOpName("a"), dtype);
  auto b = ops::Placeholder(root.WithOpName("b"), dtype);
  ops::MatMul(root.WithOpName("c"), a, b,
              {{"transpose_a", g.transpose_a}, {"transpose_b", g.transpose_b}});
  auto session = MakeSession(root);
  Feeds feeds = {{"a", RandomTensor(g.a(), 1, dtype)}, {"b", RandomTensor(g.b(), 2, dtype)}};
  RunSteps(state, session.get(), feeds, "c");
  state.counters["GFLOP/s"] = Rate(g.flops() * state.iterations());
}
void BM_MatMul(benchmark::State& state) { MatMulBenchmark(state, DT_FLOAT); }
void BM_MatMulBFloat16(benchmark::State& state) { MatMulBenchmark(state, DT_BFLOAT16); }

void MatMulShapes(benchmark::internal::Benchmark* b) {
  for (int64_t n : {128, 256, 512, 1024, 2048}) b->Args({n, n, n, 0, 0});
  // The Fashion-MNIST MLP's layers at batch 100 (784-512-512-10).
  b->Args({100, 784, 512, 0, 0})->Args({100, 512, 512, 0, 0})->Args({100, 512, 10, 0, 0});
  // The convnet's dense layer (3136 -> 1024): forward, then the gradients
  // for its input (dy·wᵀ) and its weights (xᵀ·dy).
  b->Args({100, 3136, 1024, 0, 0})->Args({100, 1024, 3136, 0, 1})->Args({3136, 100, 1024, 1, 0});
  b->UseRealTime()->Unit(benchmark::kMicrosecond);
}
BENCHMARK(BM_RawSgemm)->Apply(MatMulShapes);
BENCHMARK(BM_MatMul)->Apply(MatMulShapes);
BENCHMARK(BM_MatMulBFloat16)->Apply(MatMulShapes);

// Attention's scores q k^T as TensorFlow graphs write them: Einsum
// 'bhqd,bhkd->bhqk' (arg 0) against BatchMatMulV2 with adj_y (arg 1), on
// [8, 4, 256, 64] operands. Items: flops.
void BM_EinsumAttention(benchmark::State& state) {
  const bool einsum = state.range(0) == 0;
  const int64_t b = 8, h = 4, q = 256, d = 64;
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto y = ops::Placeholder(root.WithOpName("y"), DT_FLOAT);
  if (einsum) {
    ops::Einsum(root.WithOpName("z"), {x, y}, "bhqd,bhkd->bhqk");
  } else {
    ops::BatchMatMulV2(root.WithOpName("z"), x, y, {{"adj_y", true}});
  }
  auto session = MakeSession(root);
  Feeds feeds = {{"x", RandomTensor({b, h, q, d})}, {"y", RandomTensor({b, h, q, d}, 2)}};
  RunSteps(state, session.get(), feeds, "z");
  state.counters["flops"] = Rate(static_cast<double>(state.iterations()) * 2 * b * h * q * q * d);
}
BENCHMARK(BM_EinsumAttention)->Arg(0)->Arg(1)->UseRealTime()->Unit(benchmark::kMillisecond);

// One pass of a stride-1 SAME convolution of NHWC images with HWIO
// filters. Args: batch, image size (rows = cols), in channels, window
// (rows = cols), out channels. Items are examples (the batch).
enum class ConvPass { kForward, kBackpropInput, kBackpropFilter };

void BM_Conv2D(benchmark::State& state, ConvPass pass, DType dtype) {
  const int64_t batch = state.range(0), size = state.range(1), in = state.range(2);
  const int64_t window = state.range(3), out_depth = state.range(4);
  const TensorShape input({batch, size, size, in}), filter({window, window, in, out_depth});
  const TensorShape output({batch, size, size, out_depth});
  auto sizes = [](const TensorShape& shape) {
    std::vector<int32_t> dims(shape.dim_sizes().begin(), shape.dim_sizes().end());
    return Input(Tensor::FromVector(dims));
  };
  const AttrMap attrs = {{"strides", std::vector<int64_t>{1, 1, 1, 1}},
                         {"padding", std::string("SAME")}};
  Scope root = Scope::NewRootScope();
  Feeds feeds;
  auto feed = [&](const char* name, const TensorShape& shape) {
    feeds.emplace_back(name, RandomTensor(shape, feeds.size() + 1, dtype));
    return ops::Placeholder(root.WithOpName(name), dtype);
  };
  switch (pass) {
    case ConvPass::kForward:
      AddOp(root.WithOpName("y"), "Conv2D", {feed("x", input), feed("w", filter)}, attrs);
      break;
    case ConvPass::kBackpropInput:
      AddOp(root.WithOpName("y"), "Conv2DBackpropInput",
            {sizes(input), feed("w", filter), feed("g", output)}, attrs);
      break;
    case ConvPass::kBackpropFilter:
      AddOp(root.WithOpName("y"), "Conv2DBackpropFilter",
            {feed("x", input), sizes(filter), feed("g", output)}, attrs);
      break;
  }
  auto session = MakeSession(root);
  RunSteps(state, session.get(), feeds, "y");
  state.SetItemsProcessed(state.iterations() * batch);
  // Every pass does the forward pass's multiply-adds.
  const double flops = 2.0 * batch * size * size * out_depth * window * window * in;
  state.counters["GFLOP/s"] = Rate(flops * state.iterations());
}

void ConvShapes(benchmark::internal::Benchmark* b) {
  // The Fashion-MNIST CNN's two layers at batch 100 (5x5, 1->32, 32->64).
  b->Args({100, 28, 1, 5, 32})->Args({100, 14, 32, 5, 64});
  // ResNet-style 3x3 layers at batch 32.
  b->Args({32, 56, 64, 3, 64})->Args({32, 28, 128, 3, 128})->Args({32, 14, 256, 3, 256});
  b->ArgNames({"batch", "size", "in", "window", "out"});
  b->UseRealTime()->Unit(benchmark::kMillisecond);
}
BENCHMARK_CAPTURE(BM_Conv2D, forward_float, ConvPass::kForward, DT_FLOAT)->Apply(ConvShapes);
BENCHMARK_CAPTURE(BM_Conv2D, backprop_input_float, ConvPass::kBackpropInput, DT_FLOAT)
    ->Apply(ConvShapes);
BENCHMARK_CAPTURE(BM_Conv2D, backprop_filter_float, ConvPass::kBackpropFilter, DT_FLOAT)
    ->Apply(ConvShapes);
BENCHMARK_CAPTURE(BM_Conv2D, forward_bfloat16, ConvPass::kForward, DT_BFLOAT16)
    ->Apply(ConvShapes);
BENCHMARK_CAPTURE(BM_Conv2D, backprop_input_bfloat16, ConvPass::kBackpropInput, DT_BFLOAT16)
    ->Apply(ConvShapes);
BENCHMARK_CAPTURE(BM_Conv2D, backprop_filter_bfloat16, ConvPass::kBackpropFilter, DT_BFLOAT16)
    ->Apply(ConvShapes);

// The two convolutions of bench/saved_model_bench.py's convnet at batch 256
// (5x5 SAME, 1->32 on 28x28, 32->64 on 14x14; the second, like the
// Fashion-MNIST one above, runs by Winograd's F(2x2, 5x5) unless the
// environment sets WEIR_CONV_WINOGRAD=0). CPU time is the process's, all
// threads: on a machine other work loads it moves much less than wall time.
BENCHMARK_CAPTURE(BM_Conv2D, convnet_forward_float, ConvPass::kForward, DT_FLOAT)
    ->Args({256, 28, 1, 5, 32})
    ->Args({256, 14, 32, 5, 64})
    ->ArgNames({"batch", "size", "in", "window", "out"})
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMillisecond);

// The fused LSTM cell of the Fashion-MNIST LSTM (batch 100, 28 inputs, 128
// units) forward and backward, against the raw sgemm of its one product
// ([100, 156] x [156, 512], the 2-GFLOP/s-per-step part: Args 100, 156, 512
// of BM_RawSgemm).
void BM_LSTMBlockCell(benchmark::State& state, bool grad) {
  const int64_t batch = 100, input = 28, cell = 128;
  Scope root = Scope::NewRootScope();
  std::vector<Output> in;
  const std::vector<TensorShape> shapes = {{batch, input}, {batch, cell}, {batch, cell},
                                           {input + cell, 4 * cell}, {cell}, {cell}, {cell},
                                           {4 * cell}};
  Feeds feeds;
  for (size_t k = 0; k < shapes.size(); ++k) {
    const std::string name = "in" + std::to_string(k);
    in.push_back(ops::Placeholder(root.WithOpName(name), DT_FLOAT));
    feeds.push_back({name, RandomTensor(shapes[k], k + 1)});
  }
  Operation cell_op = ops::LSTMBlockCell(root.WithOpName("cell"), in[0], in[1], in[2], in[3],
                                         in[4], in[5], in[6], in[7], {{"cell_clip", -1.0f}});
  std::string fetch = "cell:6";
  if (grad) {
    std::vector<Input> args(in.begin(), in.end());
    for (int k = 0; k < 6; ++k) args.push_back(cell_op.output(k));
    args.push_back(in[1]);  // cs_grad
    args.push_back(in[2]);  // h_grad
    ops::LSTMBlockCellGrad(root.WithOpName("grad"), args[0], args[1], args[2], args[3], args[4],
                           args[5], args[6], args[7], args[8], args[9], args[10], args[11],
                           args[12], args[13], args[14], args[15], false);
    fetch = "grad:1";
  }
  auto session = MakeSession(root);
  RunSteps(state, session.get(), feeds, fetch);
  state.counters["cells/s"] = Rate(static_cast<double>(state.iterations()));
}
// The CPU column is the whole process's (every thread), which other
// processes on the machine change far less than real time.
BENCHMARK_CAPTURE(BM_LSTMBlockCell, forward, false)
    ->UseRealTime()
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_LSTMBlockCell, forward_and_grad, true)
    ->UseRealTime()
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMicrosecond);
// The cell alone and its gradient alone (every input fed, as the gradient
// loop pops them from stacks) at the batch of one loop (100 rows) and of
// one of two towers (50 rows). The gradient's inputs are the forward
// pass's values (i, f, o in (0, 1), ci and co in (-1, 1)), as in training.
void BM_LSTMBlockCellRows(benchmark::State& state, bool grad) {
  const int64_t batch = state.range(0), input = 28, cell = 128;
  Scope root = Scope::NewRootScope();
  std::vector<Output> in;
  const std::vector<TensorShape> shapes = {
      {batch, input}, {batch, cell}, {batch, cell}, {input + cell, 4 * cell},
      {cell},         {cell},        {cell},        {4 * cell}};
  Feeds feeds;
  for (size_t k = 0; k < shapes.size(); ++k) {
    const std::string name = "in" + std::to_string(k);
    in.push_back(ops::Placeholder(root.WithOpName(name), DT_FLOAT));
    feeds.push_back({name, RandomTensor(shapes[k], k + 1)});
  }
  std::string fetch = "cell:6";
  if (!grad) {
    ops::LSTMBlockCell(root.WithOpName("cell"), in[0], in[1], in[2], in[3], in[4], in[5], in[6],
                       in[7], {{"cell_clip", -1.0f}});
  } else {
    // The forward values, computed once and fed.
    Scope forward = Scope::NewRootScope();
    std::vector<Output> fin;
    for (size_t k = 0; k < shapes.size(); ++k) {
      fin.push_back(ops::Placeholder(forward.WithOpName(feeds[k].first), DT_FLOAT));
    }
    ops::LSTMBlockCell(forward.WithOpName("cell"), fin[0], fin[1], fin[2], fin[3], fin[4], fin[5],
                       fin[6], fin[7], {{"cell_clip", -1.0f}});
    auto forward_session = MakeSession(forward);
    std::vector<std::string> names;
    for (int k = 0; k < 7; ++k) names.push_back("cell:" + std::to_string(k));
    std::vector<Tensor> values;
    CHECK_OK(forward_session->Run(feeds, names, {}, &values));
    std::vector<Input> args(in.begin(), in.end());
    for (int k = 0; k < 6; ++k) {
      const std::string name = "fwd" + std::to_string(k);
      args.push_back(ops::Placeholder(root.WithOpName(name), DT_FLOAT));
      feeds.push_back({name, values[k]});
    }
    args.push_back(in[1]);  // cs_grad
    args.push_back(in[2]);  // h_grad
    ops::LSTMBlockCellGrad(root.WithOpName("grad"), args[0], args[1], args[2], args[3], args[4],
                           args[5], args[6], args[7], args[8], args[9], args[10], args[11],
                           args[12], args[13], args[14], args[15], false);
    fetch = "grad:1";
  }
  auto session = MakeSession(root);
  RunSteps(state, session.get(), feeds, fetch);
  state.counters["cells/s"] = Rate(static_cast<double>(state.iterations()));
}
BENCHMARK_CAPTURE(BM_LSTMBlockCellRows, forward, false)
    ->ArgName("rows")
    ->Arg(50)
    ->Arg(100)
    ->UseRealTime()
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_LSTMBlockCellRows, grad, true)
    ->ArgName("rows")
    ->Arg(50)
    ->Arg(100)
    ->UseRealTime()
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMicrosecond);

// The cell's product and, in its gradient, the products for [x, h_prev]
// (dicfo * w^T) and w ([x, h_prev]^T * dicfo). Then the alternatives
// measured against them (docs/performance.md, LSTM): the cell's product as
// two (x's rows of w, then h's), h_prev's gradient alone (dicfo * w_h^T, and
// the same with w_h transposed beforehand), and the weight gradient as one
// product over all 28 rows of a batch after the loop.
void LstmShapes(benchmark::internal::Benchmark* b) {
  b->Args({100, 156, 512, 0, 0})->Args({100, 512, 156, 0, 1})->Args({156, 100, 512, 1, 0});
  b->Args({100, 28, 512, 0, 0})->Args({100, 128, 512, 0, 0});
  b->Args({100, 512, 128, 0, 1})->Args({100, 512, 128, 0, 0});
  b->Args({156, 2800, 512, 1, 0});
  b->UseRealTime()->Unit(benchmark::kMicrosecond);
}
BENCHMARK(BM_RawSgemm)->Apply(LstmShapes);
BENCHMARK(BM_MatMul)->Apply(LstmShapes);

// The LSTM's weight gradient summed over 28 iterations of a while loop,
// acc += [x, h]^T * dicfo ([rows, 28] and [rows, 128], dicfo [rows, 512]),
// as the backward loop does it: with the session's kernel fusion (one
// _MatMulAccumulate per iteration, into acc's buffer) and without (ConcatV2,
// MatMul and AddV2 per iteration). Args: rows, fused.
void BM_WeightGradientLoop(benchmark::State& state) {
  const int64_t rows = state.range(0), input = 28, cell = 128, steps = 28;
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto h = ops::Placeholder(root.WithOpName("h"), DT_FLOAT);
  auto dicfo = ops::Placeholder(root.WithOpName("dicfo"), DT_FLOAT);
  auto acc0 = ops::Placeholder(root.WithOpName("acc0"), DT_FLOAT);
  std::vector<Output> out;
  CHECK_OK(ops::WhileLoop(
      root, {ops::Const(root, 0), acc0},
      [&](const Scope& s, const std::vector<Output>& v, Output* pred) {
        *pred = ops::Less(s, v[0], static_cast<int>(steps));
        return Status::OK();
      },
      [&](const Scope& s, const std::vector<Output>& v, std::vector<Output>* next) {
        Output xh = ops::ConcatV2(s, {x, h}, 1);
        *next = {ops::Add(s, v[0], 1),
                 ops::AddV2(s, v[1], ops::MatMul(s, xh, dicfo, {{"transpose_a", true}}))};
        return Status::OK();
      },
      &out));
  ops::Identity(root.WithOpName("sum"), out[1]);
  SessionOptions options;
  options.compile.fuse_kernels = state.range(1) != 0;
  auto session = Session::New(options);
  CHECK_OK(session.status());
  CHECK_OK((*session)->Create(root.ToGraphDef()));
  const Feeds feeds = {{"x", RandomTensor({rows, input}, 1)},
                       {"h", RandomTensor({rows, cell}, 2)},
                       {"dicfo", RandomTensor({rows, 4 * cell}, 3)},
                       {"acc0", RandomTensor({input + cell, 4 * cell}, 4)}};
  RunSteps(state, session->get(), feeds, "sum");
  state.counters["GFLOP/s"] = Rate(2.0 * steps * rows * (input + cell) * 4 * cell *
                                   static_cast<double>(state.iterations()));
}
BENCHMARK(BM_WeightGradientLoop)
    ->ArgNames({"rows", "fused"})
    ->Args({50, 0})
    ->Args({50, 1})
    ->Args({100, 0})
    ->Args({100, 1})
    ->UseRealTime()
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMicrosecond);

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
  Feeds feeds = {{"x", RandomTensor({n})}, {"y", RandomTensor({n}, 2)}};
  RunSteps(state, session.get(), feeds, "z");
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
  Feeds feeds = {{"x", RandomTensor({rows, cols})}, {"b", RandomTensor({cols}, 2)}};
  RunSteps(state, session.get(), feeds, "z");
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
  Feeds feeds = {{"x", RandomTensor({n})}};
  RunSteps(state, session.get(), feeds, "z");
  state.SetBytesProcessed(state.iterations() * n * sizeof(float) * 2);
}
BENCHMARK_CAPTURE(BM_Unary, Relu, "Relu")->Arg(1 << 24)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Unary, Neg, "Neg")->Arg(1 << 24)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Unary, LeakyRelu, "LeakyRelu")->Arg(1 << 24)->UseRealTime()->Unit(benchmark::kMillisecond);

// Reductions: bytes = 1 read.
void BM_Sum(benchmark::State& state) {
  const int64_t rows = state.range(0), cols = state.range(1);
  const int axis = static_cast<int>(state.range(2));
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  ops::Sum(root.WithOpName("z"), x, axis < 0 ? Input({0, 1}) : Input(axis));
  auto session = MakeSession(root);
  Feeds feeds = {{"x", RandomTensor({rows, cols})}};
  RunSteps(state, session.get(), feeds, "z");
  state.SetBytesProcessed(state.iterations() * rows * cols * sizeof(float));
}
BENCHMARK(BM_Sum)->Args({4096, 4096, -1})->Args({4096, 4096, 0})->Args({4096, 4096, 1})
    ->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace weir

BENCHMARK_MAIN();
