// Queue throughput through sessions: one step enqueues, another dequeues.
// Scalars: one float per enqueue and per dequeue. Batches: EnqueueMany of a
// fed [100, 784] float batch and DequeueMany(100), as an input pipeline
// moves Fashion-MNIST images. "items" are elements, so items_per_second
// gives the per-element cost. Run (Session::Run) and RunCallable (the
// cheapest client path) both. One intra- and one inter-op thread; the
// TensorFlow peer (bench/peers/queue_peers.py) runs the same graphs.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>

#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"

namespace weir {
namespace {

constexpr int kBatch = 100;
constexpr int kFeatures = 784;

// A FIFO queue of float elements of `element_shape`; nodes "value" (fed),
// "enqueue", "dequeue", "enqueue_many", "dequeue_many" (n = kBatch).
std::unique_ptr<Session> Build(const TensorShape& element_shape) {
  Scope root = Scope::NewRootScope();
  Output queue = ops::FIFOQueueV2(
      root.WithOpName("queue"), {DT_FLOAT},
      {{"shapes", AttrValue(std::vector<PartialShape>{PartialShape(element_shape)})},
       {"capacity", AttrValue(int64_t{10000})}});
  Output value = ops::Placeholder(root.WithOpName("value"), DT_FLOAT);
  ops::QueueEnqueueV2(root.WithOpName("enqueue"), queue, {value});
  ops::QueueEnqueueManyV2(root.WithOpName("enqueue_many"), queue, {value});
  ops::QueueDequeueV2(root.WithOpName("dequeue"), queue, {DT_FLOAT});
  ops::QueueDequeueManyV2(root.WithOpName("dequeue_many"), queue, kBatch, {DT_FLOAT});
  if (!root.ok()) {
    std::fprintf(stderr, "graph: %s\n", root.status().ToString().c_str());
    std::abort();
  }
  SessionOptions options;
  options.intra_op_threads = 1;
  options.inter_op_threads = 1;
  auto session = Session::New(options);
  CHECK_OK(session.status());
  CHECK_OK((*session)->Create(root.ToGraphDef()));
  return std::move(session).value();
}

Tensor Filled(const TensorShape& shape) {
  Tensor t(DT_FLOAT, shape);
  for (int64_t i = 0; i < t.NumElements(); ++i) t.data<float>()[i] = static_cast<float>(i % 255);
  return t;
}

// Enqueue then dequeue one scalar per iteration, with Session::Run.
void BM_QueueScalarRun(benchmark::State& state) {
  std::unique_ptr<Session> session = Build(TensorShape({}));
  std::vector<std::pair<std::string, Tensor>> feeds = {{"value", Tensor::Scalar<float>(1.f)}};
  std::vector<Tensor> out;
  for (auto _ : state) {
    Status s = session->Run(feeds, {}, {"enqueue"}, &out);
    if (s.ok()) s = session->Run({}, {"dequeue"}, {}, &out);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_QueueScalarRun)->UseRealTime();

void BM_QueueScalarCallable(benchmark::State& state) {
  std::unique_ptr<Session> session = Build(TensorShape({}));
  auto enqueue = session->MakeCallable({{"value"}, {}, {"enqueue"}});
  auto dequeue = session->MakeCallable({{}, {"dequeue"}, {}});
  CHECK_OK(enqueue.status());
  CHECK_OK(dequeue.status());
  std::vector<Tensor> feeds = {Tensor::Scalar<float>(1.f)};
  std::vector<Tensor> out;
  for (auto _ : state) {
    Status s = session->RunCallable(*enqueue, feeds, &out);
    if (s.ok()) s = session->RunCallable(*dequeue, {}, &out);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_QueueScalarCallable)->UseRealTime();

// EnqueueMany of a [100, 784] batch, then DequeueMany(100).
void BM_QueueBatchRun(benchmark::State& state) {
  std::unique_ptr<Session> session = Build(TensorShape({kFeatures}));
  std::vector<std::pair<std::string, Tensor>> feeds = {
      {"value", Filled(TensorShape({kBatch, kFeatures}))}};
  std::vector<Tensor> out;
  for (auto _ : state) {
    Status s = session->Run(feeds, {}, {"enqueue_many"}, &out);
    if (s.ok()) s = session->Run({}, {"dequeue_many"}, {}, &out);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
  state.SetBytesProcessed(state.iterations() * kBatch * kFeatures * sizeof(float));
}
BENCHMARK(BM_QueueBatchRun)->UseRealTime();

void BM_QueueBatchCallable(benchmark::State& state) {
  std::unique_ptr<Session> session = Build(TensorShape({kFeatures}));
  auto enqueue = session->MakeCallable({{"value"}, {}, {"enqueue_many"}});
  auto dequeue = session->MakeCallable({{}, {"dequeue_many"}, {}});
  CHECK_OK(enqueue.status());
  CHECK_OK(dequeue.status());
  std::vector<Tensor> feeds = {Filled(TensorShape({kBatch, kFeatures}))};
  std::vector<Tensor> out;
  for (auto _ : state) {
    Status s = session->RunCallable(*enqueue, feeds, &out);
    if (s.ok()) s = session->RunCallable(*dequeue, {}, &out);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
  state.SetBytesProcessed(state.iterations() * kBatch * kFeatures * sizeof(float));
}
BENCHMARK(BM_QueueBatchCallable)->UseRealTime();

}  // namespace
}  // namespace weir

BENCHMARK_MAIN();
