// What TensorListSetItem costs inside a while loop as the list grows: the
// loop sets element i of a list of n reserved elements (n fed), i = 0..n-1,
// each a [16] float row. With the list changed in place the time per
// SetItem is flat in n; a copy of the list's element vector per write makes
// it grow linearly with n (n^2 for the loop). The second benchmark also
// reads the list's length in the body, a second consumer of the same list
// value: when it has not run yet, SetItem must copy the list (the element
// vector, not the elements' buffers), so its time per SetItem does grow
// with n; it shows what the first would look like with a copy.
//
//   build/release/bench/list_loop_bench
#include <benchmark/benchmark.h>

#include "weir/ops/control_flow_builder.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"

namespace weir {
namespace {

struct ListLoop {
  std::unique_ptr<Session> session;
  std::string length;
};

ListLoop Build(bool second_reader) {
  Scope root = Scope::NewRootScope();
  auto n = ops::Placeholder(root.WithOpName("n"), DT_INT32);
  auto row =
      ops::Const(root, Tensor::FromVector<float>(std::vector<float>(16, 1.f), TensorShape({16})));
  auto list = ops::TensorListReserve(
      root, ops::Const(root, Tensor::FromVector<int32_t>({16}, TensorShape({1}))), n, DT_FLOAT);
  std::vector<Output> out;
  Status s = ops::WhileLoop(
      root, {ops::Const(root, 0), list},
      [&](const Scope& sc, const std::vector<Output>& v, Output* pred) {
        *pred = ops::Less(sc, v[0], n);
        return Status::OK();
      },
      [&](const Scope& sc, const std::vector<Output>& v, std::vector<Output>* next) {
        Output step = ops::Const(sc, 1);
        if (second_reader) {
          // length - length + 1 == 1, computed from the list before the write.
          Output length = ops::TensorListLength(sc, v[1]);
          step = ops::Add(sc, ops::Sub(sc, length, length), step);
        }
        *next = {ops::Add(sc, v[0], step), ops::TensorListSetItem(sc, v[1], v[0], row)};
        return Status::OK();
      },
      &out);
  CHECK(s.ok()) << s;
  ListLoop loop;
  loop.length = ops::TensorListLength(root, out[1]).name();
  loop.session = std::move(*Session::New(SessionOptions()));
  CHECK(loop.session->Create(root.ToGraphDef()).ok());
  return loop;
}

void Run(benchmark::State& state, bool second_reader) {
  ListLoop loop = Build(second_reader);
  const int n = static_cast<int>(state.range(0));
  std::vector<std::pair<std::string, Tensor>> feeds = {{"n", Tensor::Scalar<int32_t>(n)}};
  std::vector<Tensor> out;
  for (auto _ : state) {
    Status s = loop.session->Run(feeds, {loop.length}, {}, &out);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
  }
  state.SetItemsProcessed(state.iterations() * n);
}

void BM_SetItemInLoop(benchmark::State& state) { Run(state, false); }
void BM_SetItemInLoopWithSecondReader(benchmark::State& state) { Run(state, true); }

BENCHMARK(BM_SetItemInLoop)->Arg(100)->Arg(1000)->Arg(10000)->Arg(100000);
BENCHMARK(BM_SetItemInLoopWithSecondReader)->Arg(100)->Arg(1000)->Arg(10000);

}  // namespace
}  // namespace weir

BENCHMARK_MAIN();
