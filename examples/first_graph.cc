// A first Weir program: build a small two-layer network as a graph, run it,
// and time the first (compiling) and the cached steps.
//
//   build/examples/first_graph [--steps N]
#include <chrono>
#include <cstdio>
#include <cstring>

#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"

using namespace weir;

namespace {

// Deterministic, roughly zero-mean weights without a random op.
Tensor Weights(int64_t rows, int64_t cols, float scale) {
  Tensor t(DT_FLOAT, TensorShape({rows, cols}));
  float* w = t.data<float>();
  for (int64_t i = 0; i < rows * cols; ++i) w[i] = scale * static_cast<float>((i * 7919) % 13 - 6) / 6.f;
  return t;
}

double MillisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 1000;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--steps") == 0) steps = std::atoi(argv[i + 1]);
  }
  // y = softmax-free logits of a 784-128-10 MLP on a batch of 64.
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT, {{"shape", PartialShape({-1, 784})}});
  Scope hidden = root.NewSubScope("hidden");
  auto h = ops::Relu(hidden, ops::Add(hidden, ops::MatMul(hidden, x, ops::Const(hidden, Weights(784, 128, 0.05f))),
                                      ops::Const(hidden, Tensor::FromVector<float>(std::vector<float>(128, 0.1f)))));
  Scope output = root.NewSubScope("output");
  auto logits = ops::MatMul(output.WithOpName("logits"), h, ops::Const(output, Weights(128, 10, 0.1f)));
  ops::Sum(root.WithOpName("total"), logits, {0, 1});
  if (!root.ok()) {
    std::fprintf(stderr, "building the graph failed: %s\n", root.status().ToString().c_str());
    return 1;
  }
  std::printf("built a graph of %d nodes; its output 'output/logits' has shape %s\n",
              root.graph()->num_nodes(), logits.shape().DebugString().c_str());

  auto session = Session::New(SessionOptions());
  if (!session.ok() || !(*session)->Create(root.ToGraphDef()).ok()) {
    std::fprintf(stderr, "creating the session failed\n");
    return 1;
  }
  Tensor batch(DT_FLOAT, TensorShape({64, 784}));
  for (int64_t i = 0; i < batch.NumElements(); ++i) batch.data<float>()[i] = static_cast<float>(i % 255) / 255.f;

  std::vector<Tensor> outputs;
  auto start = std::chrono::steady_clock::now();
  Status status = (*session)->Run({{"x", batch}}, {"output/logits", "total"}, {}, &outputs);
  if (!status.ok()) {
    std::fprintf(stderr, "run failed: %s\n", status.ToString().c_str());
    return 1;
  }
  double first_ms = MillisSince(start);
  std::printf("logits[0] = %s\n", outputs[0].Slice(0, 1).DebugString(10).c_str());
  std::printf("sum of all logits = %.6f\n", outputs[1].scalar<float>());

  start = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) {
    status = (*session)->Run({{"x", batch}}, {"output/logits"}, {}, &outputs);
    if (!status.ok()) {
      std::fprintf(stderr, "run failed: %s\n", status.ToString().c_str());
      return 1;
    }
  }
  double cached_ms = MillisSince(start) / steps;
  std::printf("first run (prune, place, compile, run): %.3f ms\n", first_ms);
  std::printf("cached run, mean of %d: %.3f ms (%.0f examples/s)\n", steps, cached_ms,
              64.0 / (cached_ms / 1000.0));
  return 0;
}
