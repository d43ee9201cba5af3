// Graphs built with ops::Cond and ops::WhileLoop, run in a Session: both
// branches, captured tensors, nested loops, a cond in a loop and a loop in a
// cond, trip counts fed at run time (one compiled signature for all of
// them), maximum_iterations and shape invariants. Expected values are
// computed here in plain C++.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <thread>

#include "weir/ops/control_flow_builder.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"
#include "weir/runtime/standard_registration.h"

namespace weir {
namespace {

const PartialShape kScalar(std::vector<int64_t>{});

Status Returns(std::vector<Output>* out, std::vector<Output> values) {
  *out = std::move(values);
  return Status::OK();
}

class ControlFlowRunTest : public ::testing::Test {
 protected:
  void SetUp() override { RegisterStandardOpsAndKernels(); }

  // Creates the session on the graph built so far.
  void Start(const Scope& root) {
    ASSERT_TRUE(root.ok()) << root.status();
    auto session = Session::New(SessionOptions());
    ASSERT_TRUE(session.ok()) << session.status();
    session_ = std::move(*session);
    Status created = session_->Create(root.ToGraphDef());
    ASSERT_TRUE(created.ok()) << created;
  }

  std::vector<Tensor> Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                          const std::vector<Output>& fetches) {
    std::vector<std::string> names;
    for (const Output& fetch : fetches) names.push_back(fetch.name());
    std::vector<Tensor> outputs;
    Status ran = session_->Run(feeds, names, {}, &outputs);
    EXPECT_TRUE(ran.ok()) << ran;
    return outputs;
  }

  std::unique_ptr<Session> session_;
};

template <typename T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.NumElements());
}

// i < n for an int32 variable 0 and an int32 `n`.
ops::LoopCondFn Below(Output n) {
  return [n](const Scope& s, const std::vector<Output>& v, Output* pred) {
    *pred = ops::Less(s, v[0], n);
    return Status::OK();
  };
}

TEST_F(ControlFlowRunTest, CondRunsTheBranchThePredicateChooses) {
  Scope root = Scope::NewRootScope();
  auto p = ops::Placeholder(root.WithOpName("p"), DT_BOOL, {{"shape", kScalar}});
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT, {{"shape", PartialShape({2})}});
  std::vector<Output> y;
  ASSERT_TRUE(ops::Cond(
                  root, p,
                  [&](const Scope& s, std::vector<Output>* out) {
                    // The second and third values fold to constants, which must stay in
                    // their branch.
                    return Returns(out, {ops::Mul(s, x, 2.f), ops::Const(s, 1),
                                         ops::AddV2(s, ops::Const(s, 1), 2)});
                  },
                  [&](const Scope& s, std::vector<Output>* out) {
                    return Returns(out, {ops::AddV2(s, ops::Const(s, {7.f, 8.f}), x),
                                         ops::Const(s, 0), ops::Mul(s, ops::Const(s, 5), 2)});
                  },
                  &y)
                  .ok());
  Start(root);
  Tensor x_value = Tensor::FromVector<float>({1.f, 2.f});
  auto taken = Run({{"p", Tensor::Scalar<bool>(true)}, {"x", x_value}}, y);
  ASSERT_EQ(taken.size(), 3u);
  EXPECT_EQ(Values<float>(taken[0]), std::vector<float>({2.f, 4.f}));
  EXPECT_EQ(taken[1].data<int32_t>()[0], 1);
  EXPECT_EQ(taken[2].data<int32_t>()[0], 3);
  auto not_taken = Run({{"p", Tensor::Scalar<bool>(false)}, {"x", x_value}}, y);
  ASSERT_EQ(not_taken.size(), 3u);
  EXPECT_EQ(Values<float>(not_taken[0]), std::vector<float>({8.f, 10.f}));
  EXPECT_EQ(not_taken[1].data<int32_t>()[0], 0);
  EXPECT_EQ(not_taken[2].data<int32_t>()[0], 10);
}

TEST_F(ControlFlowRunTest, FedTripCountsReuseOneCompiledSignature) {
  // i, s = 0, 0.0; while i < n: i += 1; s += a * b   (a * b built outside)
  Scope root = Scope::NewRootScope();
  auto n = ops::Placeholder(root.WithOpName("n"), DT_INT32, {{"shape", kScalar}});
  auto a = ops::Placeholder(root.WithOpName("a"), DT_FLOAT, {{"shape", kScalar}});
  auto c = ops::Mul(root, a, 0.5f);
  std::vector<Output> out;
  ASSERT_TRUE(ops::WhileLoop(
                  root, {ops::Const(root, 0), ops::Const(root, 0.f)}, Below(n),
                  [&](const Scope& s, const std::vector<Output>& v, std::vector<Output>* next) {
                    return Returns(next, {ops::AddV2(s, v[0], 1), ops::AddV2(s, v[1], c)});
                  },
                  &out)
                  .ok());
  Start(root);
  for (int trips : {0, 1, 5, 1000, 3}) {
    auto result =
        Run({{"n", Tensor::Scalar<int32_t>(trips)}, {"a", Tensor::Scalar<float>(4.f)}}, out);
    ASSERT_EQ(result.size(), 2u);
    EXPECT_EQ(result[0].data<int32_t>()[0], trips);
    EXPECT_FLOAT_EQ(result[1].data<float>()[0], 2.f * trips);
  }
  EXPECT_EQ(session_->num_cached_signatures(), 1);
}

// A loop of cheap nodes never blocks, so nothing but the loop itself can
// notice that its step should stop: RunOptions::timeout_ms and
// Session::Close must still end it, naming the loop.
TEST_F(ControlFlowRunTest, TimeoutAndCloseStopARunawayLoop) {
  Scope root = Scope::NewRootScope();
  auto n = ops::Placeholder(root.WithOpName("n"), DT_INT32, {{"shape", kScalar}});
  std::vector<Output> out;
  ASSERT_TRUE(ops::WhileLoop(
                  root, {ops::Const(root, 0)}, Below(n),
                  [&](const Scope& s, const std::vector<Output>& v, std::vector<Output>* next) {
                    return Returns(next, {ops::AddV2(s, v[0], 1)});
                  },
                  &out)
                  .ok());
  Start(root);
  const std::vector<std::pair<std::string, Tensor>> forever = {
      {"n", Tensor::Scalar<int32_t>(std::numeric_limits<int32_t>::max())}};
  std::vector<Tensor> outputs;
  RunOptions options;
  options.timeout_ms = 50;
  Status timed_out = session_->Run(forever, {out[0].name()}, {}, &outputs, options);
  EXPECT_EQ(timed_out.code(), Code::kDeadlineExceeded) << timed_out;

  Status closed;
  std::thread step([&] { closed = session_->Run(forever, {out[0].name()}, {}, &outputs); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // (the step compiled earlier)
  EXPECT_TRUE(session_->Close().ok());
  step.join();
  EXPECT_EQ(closed.code(), Code::kCancelled) << closed;
  // Unless the machine was too slow to start the step before Close:
  if (closed.message() != "Session has been closed") {
    EXPECT_NE(closed.message().find("frame 'while'"), std::string::npos) << closed;
  }
}

// The README's loop, as written there.
TEST_F(ControlFlowRunTest, TheReadmeLoopSumsOneToN) {
  Scope root = Scope::NewRootScope();
  // i, s = 0, 0; while i < n: i += 1; s += i
  auto n = ops::Placeholder(root.WithOpName("n"), DT_INT32);
  std::vector<Output> out;
  ASSERT_TRUE(ops::WhileLoop(
                  root, {ops::Const(root, 0), ops::Const(root, 0)},
                  [&](const Scope& s, const std::vector<Output>& v, Output* pred) {
                    *pred = ops::Less(s, v[0], n);
                    return Status::OK();
                  },
                  [&](const Scope& s, const std::vector<Output>& v, std::vector<Output>* next) {
                    auto i = ops::AddV2(s, v[0], 1);
                    *next = {i, ops::AddV2(s, v[1], i)};
                    return Status::OK();
                  },
                  &out)
                  .ok());
  Start(root);
  for (int trips : {0, 1, 10, 1000}) {
    auto result = Run({{"n", Tensor::Scalar<int32_t>(trips)}}, {out[1]});
    ASSERT_EQ(result.size(), 1u);
    EXPECT_EQ(result[0].data<int32_t>()[0], trips * (trips + 1) / 2);
  }
}

TEST_F(ControlFlowRunTest, NestedLoopsMultiplyTheirTripCounts) {
  // for i < n: for j < m: acc += i  ->  acc = m * n (n - 1) / 2
  Scope root = Scope::NewRootScope();
  auto n = ops::Placeholder(root.WithOpName("n"), DT_INT32, {{"shape", kScalar}});
  auto m = ops::Placeholder(root.WithOpName("m"), DT_INT32, {{"shape", kScalar}});
  std::vector<Output> out;
  ASSERT_TRUE(ops::WhileLoop(
                  root, {ops::Const(root, 0), ops::Const(root, 0)}, Below(n),
                  [&](const Scope& s, const std::vector<Output>& v, std::vector<Output>* next) {
                    std::vector<Output> inner;
                    ops::WhileLoopOptions options;
                    options.name = "inner";
                    WEIR_RETURN_IF_ERROR(ops::WhileLoop(
                        s, {ops::Const(s, 0), v[1]}, Below(m),
                        [&](const Scope& t, const std::vector<Output>& w, std::vector<Output>* nx) {
                          // (0 + 1) folds to a constant, which must stay in the frame.
                          auto one = ops::AddV2(t, ops::Const(t, 0), 1);
                          return Returns(nx, {ops::AddV2(t, w[0], one), ops::AddV2(t, w[1], v[0])});
                        },
                        &inner, options));
                    return Returns(next, {ops::AddV2(s, v[0], 1), inner[1]});
                  },
                  &out)
                  .ok())
      << root.status();
  Start(root);
  for (auto [trips_n, trips_m] : {std::pair{4, 3}, {0, 5}, {7, 0}, {30, 20}}) {
    auto result = Run(
        {{"n", Tensor::Scalar<int32_t>(trips_n)}, {"m", Tensor::Scalar<int32_t>(trips_m)}}, out);
    ASSERT_EQ(result.size(), 2u);
    EXPECT_EQ(result[1].data<int32_t>()[0], trips_m * trips_n * (trips_n - 1) / 2)
        << trips_n << " x " << trips_m;
  }
  EXPECT_EQ(session_->num_cached_signatures(), 1);
}

TEST_F(ControlFlowRunTest, CondInsideALoop) {
  // for i < n: s += (i % 2 == 0) ? i * x : -1
  Scope root = Scope::NewRootScope();
  auto n = ops::Placeholder(root.WithOpName("n"), DT_INT32, {{"shape", kScalar}});
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT, {{"shape", kScalar}});
  std::vector<Output> out;
  ASSERT_TRUE(ops::WhileLoop(
                  root, {ops::Const(root, 0), ops::Const(root, 0.f)}, Below(n),
                  [&](const Scope& s, const std::vector<Output>& v, std::vector<Output>* next) {
                    auto even = ops::Equal(s, ops::FloorMod(s, v[0], 2), 0);
                    std::vector<Output> term;
                    WEIR_RETURN_IF_ERROR(ops::Cond(
                        s, even,
                        [&](const Scope& b, std::vector<Output>* o) {
                          return Returns(o, {ops::Mul(b, ops::Cast(b, v[0], DT_FLOAT), x)});
                        },
                        [&](const Scope& b, std::vector<Output>* o) {
                          return Returns(o, {ops::Const(b, -1.f)});
                        },
                        &term));
                    return Returns(next, {ops::AddV2(s, v[0], 1), ops::AddV2(s, v[1], term[0])});
                  },
                  &out)
                  .ok())
      << root.status();
  Start(root);
  for (int trips : {0, 1, 2, 9, 100}) {
    float expected = 0;
    for (int i = 0; i < trips; ++i) expected += i % 2 == 0 ? i * 1.5f : -1.f;
    auto result =
        Run({{"n", Tensor::Scalar<int32_t>(trips)}, {"x", Tensor::Scalar<float>(1.5f)}}, out);
    ASSERT_EQ(result.size(), 2u);
    EXPECT_FLOAT_EQ(result[1].data<float>()[0], expected) << trips;
  }
}

TEST_F(ControlFlowRunTest, LoopInsideACond) {
  // p ? (sum of 1..n) : -n
  Scope root = Scope::NewRootScope();
  auto p = ops::Placeholder(root.WithOpName("p"), DT_BOOL, {{"shape", kScalar}});
  auto n = ops::Placeholder(root.WithOpName("n"), DT_INT32, {{"shape", kScalar}});
  std::vector<Output> y;
  ASSERT_TRUE(
      ops::Cond(
          root, p,
          [&](const Scope& b, std::vector<Output>* o) {
            std::vector<Output> loop;
            WEIR_RETURN_IF_ERROR(ops::WhileLoop(
                b, {ops::Const(b, 0), ops::Const(b, 0)}, Below(n),
                [&](const Scope& s, const std::vector<Output>& v, std::vector<Output>* next) {
                  auto i = ops::AddV2(s, v[0], 1);
                  return Returns(next, {i, ops::AddV2(s, v[1], i)});
                },
                &loop));
            return Returns(o, {loop[1]});
          },
          [&](const Scope& b, std::vector<Output>* o) { return Returns(o, {ops::Neg(b, n)}); }, &y)
          .ok())
      << root.status();
  Start(root);
  for (int trips : {0, 1, 10, 50}) {
    auto sum = Run({{"p", Tensor::Scalar<bool>(true)}, {"n", Tensor::Scalar<int32_t>(trips)}}, y);
    ASSERT_EQ(sum.size(), 1u);
    EXPECT_EQ(sum[0].data<int32_t>()[0], trips * (trips + 1) / 2);
    auto neg = Run({{"p", Tensor::Scalar<bool>(false)}, {"n", Tensor::Scalar<int32_t>(trips)}}, y);
    ASSERT_EQ(neg.size(), 1u);
    EXPECT_EQ(neg[0].data<int32_t>()[0], -trips);
  }
}

TEST_F(ControlFlowRunTest, MaximumIterationsBoundsTheTripCount) {
  Scope root = Scope::NewRootScope();
  auto n = ops::Placeholder(root.WithOpName("n"), DT_INT32, {{"shape", kScalar}});
  auto limit = ops::Placeholder(root.WithOpName("limit"), DT_INT32, {{"shape", kScalar}});
  ops::WhileLoopOptions options;
  options.maximum_iterations = limit;
  std::vector<Output> out;
  ASSERT_TRUE(ops::WhileLoop(
                  root, {ops::Const(root, 0)}, Below(n),
                  [&](const Scope& s, const std::vector<Output>& v, std::vector<Output>* next) {
                    return Returns(next, {ops::AddV2(s, v[0], 1)});
                  },
                  &out, options)
                  .ok())
      << root.status();
  ASSERT_EQ(out.size(), 1u);
  Start(root);
  for (auto [trips, max] : {std::pair{10, 3}, {2, 30}, {5, 5}, {5, 0}}) {
    auto result =
        Run({{"n", Tensor::Scalar<int32_t>(trips)}, {"limit", Tensor::Scalar<int32_t>(max)}}, out);
    ASSERT_EQ(result.size(), 1u);
    EXPECT_EQ(result[0].data<int32_t>()[0], std::min(trips, max));
  }
}

TEST_F(ControlFlowRunTest, ShapeInvariantLetsAVariableGrow) {
  // x = [1]; while sum(x) < bound: x = concat(x, x * 2)
  Scope root = Scope::NewRootScope();
  auto bound = ops::Placeholder(root.WithOpName("bound"), DT_FLOAT, {{"shape", kScalar}});
  ops::WhileLoopOptions options;
  options.shape_invariants = {PartialShape({-1})};
  std::vector<Output> out;
  ASSERT_TRUE(ops::WhileLoop(
                  root, {ops::Const(root, {1.f})},
                  [&](const Scope& s, const std::vector<Output>& v, Output* pred) {
                    *pred = ops::Less(s, ops::Sum(s, v[0], 0), bound);
                    return Status::OK();
                  },
                  [&](const Scope& s, const std::vector<Output>& v, std::vector<Output>* next) {
                    return Returns(next, {ops::ConcatV2(s, {v[0], ops::Mul(s, v[0], 2.f)}, 0)});
                  },
                  &out, options)
                  .ok())
      << root.status();
  Start(root);
  auto result = Run({{"bound", Tensor::Scalar<float>(100.f)}}, out);
  ASSERT_EQ(result.size(), 1u);
  // The same doubling in plain C++.
  std::vector<float> expected = {1.f};
  float sum = 1.f;
  while (sum < 100.f) {
    const size_t half = expected.size();
    for (size_t k = 0; k < half; ++k) expected.push_back(expected[k] * 2.f);
    sum = 0;
    for (float e : expected) sum += e;
  }
  EXPECT_EQ(Values<float>(result[0]), expected);
}

TEST_F(ControlFlowRunTest, LoopsReadVariablesAndOnlyTheTakenBranchWrites) {
  Scope root = Scope::NewRootScope();
  auto w = ops::VarHandleOp(root.WithOpName("w"), DT_FLOAT, kScalar);
  auto init = ops::AssignVariableOp(root.WithOpName("init"), w, 1.5f);
  auto n = ops::Placeholder(root.WithOpName("n"), DT_INT32, {{"shape", kScalar}});
  auto p = ops::Placeholder(root.WithOpName("p"), DT_BOOL, {{"shape", kScalar}});
  // The loop reads w in every iteration: acc = n * w. A read's shape is
  // unknown at build time, so acc's invariant says so.
  ops::WhileLoopOptions options;
  options.shape_invariants = {kScalar, PartialShape::UnknownRank()};
  std::vector<Output> loop;
  ASSERT_TRUE(ops::WhileLoop(
                  root, {ops::Const(root, 0), ops::Const(root, 0.f)}, Below(n),
                  [&](const Scope& s, const std::vector<Output>& v, std::vector<Output>* next) {
                    return Returns(next,
                                   {ops::AddV2(s, v[0], 1),
                                    ops::AddV2(s, v[1], ops::ReadVariableOp(s, w, DT_FLOAT))});
                  },
                  &loop, options)
                  .ok())
      << root.status();
  // p ? (w += 10; n) : n -- the write is in the then branch only.
  std::vector<Output> chosen;
  ASSERT_TRUE(
      ops::Cond(
          root, p,
          [&](const Scope& b, std::vector<Output>* o) {
            auto add = ops::AssignAddVariableOp(b.WithOpName("add"), w, 10.f);
            return Returns(o, {ops::Identity(b.WithControlDependencies({add}), n)});
          },
          [&](const Scope& b, std::vector<Output>* o) { return Returns(o, {ops::Identity(b, n)}); },
          &chosen)
          .ok())
      << root.status();
  auto read = ops::ReadVariableOp(root.WithOpName("read"), w, DT_FLOAT);
  Start(root);
  std::vector<Tensor> none;
  ASSERT_TRUE(session_->Run({}, {}, {"init"}, &none).ok());
  auto sum = Run({{"n", Tensor::Scalar<int32_t>(4)}}, {loop[1]});
  ASSERT_EQ(sum.size(), 1u);
  EXPECT_FLOAT_EQ(sum[0].data<float>()[0], 6.f);
  for (bool flag : {false, true, false}) {
    auto r = Run({{"p", Tensor::Scalar<bool>(flag)}, {"n", Tensor::Scalar<int32_t>(3)}}, chosen);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].data<int32_t>()[0], 3);
  }
  auto value = Run({}, {read});
  ASSERT_EQ(value.size(), 1u);
  EXPECT_FLOAT_EQ(value[0].data<float>()[0], 11.5f);  // one write, from the one true step
}

TEST_F(ControlFlowRunTest, ABodyNodeMayWaitOnANodeOutsideTheLoop) {
  // The body's read waits on `init`, outside the frame, through a constant
  // Enter (an edge straight from the parent frame would be invalid).
  Scope root = Scope::NewRootScope();
  auto w = ops::VarHandleOp(root.WithOpName("w"), DT_FLOAT, kScalar);
  auto init = ops::AssignVariableOp(root.WithOpName("init"), w, 2.f);
  auto n = ops::Placeholder(root.WithOpName("n"), DT_INT32, {{"shape", kScalar}});
  ops::WhileLoopOptions options;
  options.shape_invariants = {kScalar, PartialShape::UnknownRank()};
  std::vector<Output> loop;
  ASSERT_TRUE(ops::WhileLoop(
                  root, {ops::Const(root, 0), ops::Const(root, 0.f)}, Below(n),
                  [&](const Scope& s, const std::vector<Output>& v, std::vector<Output>* next) {
                    return Returns(
                        next, {ops::AddV2(s, v[0], 1),
                               ops::AddV2(s, v[1],
                                          ops::ReadVariableOp(s.WithControlDependencies({init}), w,
                                                              DT_FLOAT))});
                  },
                  &loop, options)
                  .ok())
      << root.status();
  Start(root);
  auto sum = Run({{"n", Tensor::Scalar<int32_t>(3)}}, {loop[1]});  // no separate init step
  ASSERT_EQ(sum.size(), 1u);
  EXPECT_FLOAT_EQ(sum[0].data<float>()[0], 6.f);
}

TEST_F(ControlFlowRunTest, NewtonsSquareRootMatchesStdSqrt) {
  // x <- (x + a / x) / 2 for a fed count of steps, any parallel_iterations.
  for (int parallel : {1, 10}) {
    Scope root = Scope::NewRootScope();
    auto a = ops::Placeholder(root.WithOpName("a"), DT_DOUBLE, {{"shape", kScalar}});
    auto steps = ops::Placeholder(root.WithOpName("steps"), DT_INT32, {{"shape", kScalar}});
    ops::WhileLoopOptions options;
    options.parallel_iterations = parallel;
    std::vector<Output> out;
    ASSERT_TRUE(ops::WhileLoop(
                    root, {ops::Const(root, 0), a}, Below(steps),
                    [&](const Scope& s, const std::vector<Output>& v, std::vector<Output>* next) {
                      auto x = ops::Mul(s, ops::AddV2(s, v[1], ops::RealDiv(s, a, v[1])), 0.5);
                      return Returns(next, {ops::AddV2(s, v[0], 1), x});
                    },
                    &out, options)
                    .ok())
        << root.status();
    Start(root);
    for (double value : {2.0, 1e6, 0.25}) {
      auto result =
          Run({{"a", Tensor::Scalar<double>(value)}, {"steps", Tensor::Scalar<int32_t>(40)}}, out);
      ASSERT_EQ(result.size(), 2u);
      EXPECT_NEAR(result[1].data<double>()[0], std::sqrt(value), 1e-12 * std::sqrt(value));
    }
  }
}

}  // namespace
}  // namespace weir
