// Gradients through Cond and WhileLoop against central finite differences:
// both branches of a cond, loops with fed trip counts (a new count reuses
// the compiled step), captured tensors, nested loops, a variable read in the
// body, a cond inside a loop, and a loop trained by an optimizer.
#include <gtest/gtest.h>

#include <cmath>

#include "weir/graph/control_flow_info.h"
#include "weir/ops/control_flow_builder.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"
#include "weir/train/gradients.h"
#include "weir/train/optimizers.h"
#include "weir/train/variables.h"

namespace weir {
namespace {

using Feeds = std::vector<std::pair<std::string, Tensor>>;

Tensor Doubles(std::vector<double> v, TensorShape shape) {
  return Tensor::FromVector<double>(v, shape);
}
Tensor Scalar(double v) { return Tensor::Scalar<double>(v); }

Tensor Copy(const Tensor& t) {
  Tensor copy(t.dtype(), t.shape());
  for (int64_t i = 0; i < t.NumElements(); ++i) copy.data<double>()[i] = t.data<double>()[i];
  return copy;
}

// The gradients of sum(y) with respect to xs, added to the graph.
struct Check {
  std::string loss;
  std::vector<std::string> grads;
};
Check AddCheck(const Scope& root, const Output& y, const std::vector<Output>& xs) {
  Output loss = ops::Sum(root, ops::Reshape(root, y, {-1}), {0});
  std::vector<Output> grads;
  Status s = AddSymbolicGradients(root, {loss}, xs, &grads);
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_TRUE(root.ok()) << root.status();
  // The graph keeps every value in its frame.
  Status frames = BuildControlFlowInfo(*root.graph()).status();
  EXPECT_TRUE(frames.ok()) << frames;
  Check check{loss.name(), {}};
  for (const Output& g : grads) check.grads.push_back(g.name());
  return check;
}

std::unique_ptr<Session> NewSession(const Scope& root) {
  auto session = Session::New(SessionOptions());
  EXPECT_TRUE(session.ok());
  Status s = (*session)->Create(root.ToGraphDef());
  EXPECT_TRUE(s.ok()) << s;
  return std::move(*session);
}

// A stuck loop fails the test instead of hanging it.
RunOptions Bounded() {
  RunOptions options;
  options.timeout_ms = 60000;
  return options;
}

// Compares the symbolic gradients with central differences in every
// element of every x (fed doubles, by name; `feeds` holds all y needs).
void ExpectMatches(Session* session, const Check& check, const std::vector<std::string>& xs,
                   const Feeds& feeds, double tolerance = 1e-6) {
  std::vector<Tensor> symbolic;
  Status s = session->Run(feeds, check.grads, {}, &symbolic, Bounded());
  ASSERT_TRUE(s.ok()) << s;
  const double delta = 1e-5;
  for (size_t k = 0; k < xs.size(); ++k) {
    int feed = -1;
    for (size_t f = 0; f < feeds.size(); ++f) {
      if (feeds[f].first == xs[k]) feed = static_cast<int>(f);
    }
    ASSERT_GE(feed, 0) << xs[k] << " is not fed";
    const Tensor& x = feeds[feed].second;
    ASSERT_EQ(symbolic[k].shape(), x.shape()) << xs[k];
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      double f[2];
      for (int side = 0; side < 2; ++side) {
        Feeds moved = feeds;
        moved[feed].second = Copy(x);
        moved[feed].second.data<double>()[i] += side ? -delta : delta;
        std::vector<Tensor> out;
        ASSERT_TRUE(session->Run(moved, {check.loss}, {}, &out, Bounded()).ok());
        f[side] = out[0].scalar<double>();
      }
      EXPECT_NEAR(symbolic[k].data<double>()[i], (f[0] - f[1]) / (2 * delta), tolerance)
          << "d/d" << xs[k] << "[" << i << "]";
    }
  }
}

void ExpectGradientsMatch(const Scope& root, const Output& y, const std::vector<Output>& xs,
                          const Feeds& feeds, double tolerance = 1e-6) {
  Check check = AddCheck(root, y, xs);
  ASSERT_TRUE(root.ok());
  std::vector<std::string> names;
  for (const Output& x : xs) names.push_back(x.name());
  ExpectMatches(NewSession(root).get(), check, names, feeds, tolerance);
}

TEST(ControlFlowGradientsTest, CondBothBranches) {
  for (double sign : {1.0, -1.0}) {
    SCOPED_TRACE(sign);
    Scope root = Scope::NewRootScope();
    auto x = ops::Placeholder(root.WithOpName("x"), DT_DOUBLE);
    auto w = ops::Placeholder(root.WithOpName("w"), DT_DOUBLE);
    // The predicate depends on x, far from flipping under the steps.
    Output pred = ops::Greater(root, ops::Sum(root, x, {0}), 0.0);
    std::vector<Output> out;
    ASSERT_TRUE(ops::Cond(
                    root, pred,
                    [&](const Scope& s, std::vector<Output>* o) {
                      o->push_back(ops::Mul(s, ops::Mul(s, x, x), w));
                      return Status::OK();
                    },
                    [&](const Scope& s, std::vector<Output>* o) {
                      o->push_back(ops::Add(s, ops::Sin(s, x), 2.0));
                      return Status::OK();
                    },
                    &out)
                    .ok());
    Output y = ops::Mul(root, out[0], x);
    Feeds feeds = {{"x", Doubles({0.5 * sign, 1.5 * sign, 0.25 * sign}, {3})},
                   {"w", Doubles({2, -1, 0.5}, {3})}};
    ExpectGradientsMatch(root, y, {x, w}, feeds);
  }
}

// v = v * x + sin(v), n times (n fed): d/dx and d/dv0.
Output PolynomialLoop(const Scope& root, const Output& n, const Output& v0, const Output& x) {
  std::vector<Output> out;
  Status s = ops::WhileLoop(
      root, {ops::Const(root, 0), v0},
      [&](const Scope& sc, const std::vector<Output>& vars, Output* pred) {
        *pred = ops::Less(sc, vars[0], n);
        return Status::OK();
      },
      [&](const Scope& sc, const std::vector<Output>& vars, std::vector<Output>* next) {
        *next = {ops::Add(sc, vars[0], 1),
                 ops::Add(sc, ops::Mul(sc, vars[1], x), ops::Mul(sc, ops::Sin(sc, vars[1]), 0.5))};
        return Status::OK();
      },
      &out);
  EXPECT_TRUE(s.ok()) << s;
  return out.size() == 2 ? out[1] : Output();
}

TEST(ControlFlowGradientsTest, LoopWithFedTripCountReusesTheCompiledStep) {
  Scope root = Scope::NewRootScope();
  auto n = ops::Placeholder(root.WithOpName("n"), DT_INT32);
  auto v0 = ops::Placeholder(root.WithOpName("v0"), DT_DOUBLE);
  auto x = ops::Placeholder(root.WithOpName("x"), DT_DOUBLE);
  Output y = PolynomialLoop(root, n, v0, x);
  ASSERT_TRUE(root.ok()) << root.status();
  Feeds feeds = {{"n", Tensor::Scalar<int32_t>(3)},
                 {"v0", Doubles({0.3, -0.7}, {2})},
                 {"x", Doubles({0.9, 1.1}, {2})}};
  Check check = AddCheck(root, y, {v0, x});
  std::unique_ptr<Session> session = NewSession(root);
  ExpectMatches(session.get(), check, {"v0", "x"}, feeds);
  const int compiled = session->num_cached_signatures();
  EXPECT_GT(compiled, 0);
  // A new trip count, even none, runs the same executors.
  for (int trips : {7, 1, 0}) {
    SCOPED_TRACE(trips);
    feeds[0].second = Tensor::Scalar<int32_t>(trips);
    ExpectMatches(session.get(), check, {"v0", "x"}, feeds);
  }
  EXPECT_EQ(session->num_cached_signatures(), compiled);

  // A step that fetches only the loop's value pushes nothing: the counter
  // and the pushes exist for the backward pass alone.
  feeds[0].second = Tensor::Scalar<int32_t>(3);
  RunOptions traced = Bounded();
  traced.trace = true;
  RunMetadata metadata;
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run(feeds, {y.name()}, {}, &out, traced, &metadata).ok());
  int pushes = 0, nodes = 0;
  for (const NodeExecStats& node : metadata.step_stats.nodes) {
    pushes += node.node_name.find("StackPush") != std::string::npos;
    ++nodes;
  }
  EXPECT_GT(nodes, 0);
  EXPECT_EQ(pushes, 0);
  metadata = RunMetadata();
  ASSERT_TRUE(session->Run(feeds, check.grads, {}, &out, traced, &metadata).ok());
  for (const NodeExecStats& node : metadata.step_stats.nodes) {
    pushes += node.node_name.find("StackPush") != std::string::npos;
  }
  EXPECT_GT(pushes, 0);
}

TEST(ControlFlowGradientsTest, LoopTripCountGradientsByFormula) {
  // v = v * w, n times: dv/dw = n v0 w^(n-1), dv/dv0 = w^n.
  Scope root = Scope::NewRootScope();
  auto n = ops::Placeholder(root.WithOpName("n"), DT_INT32);
  auto v0 = ops::Placeholder(root.WithOpName("v0"), DT_DOUBLE);
  auto w = ops::Placeholder(root.WithOpName("w"), DT_DOUBLE);
  std::vector<Output> out;
  ASSERT_TRUE(ops::WhileLoop(
                  root, {ops::Const(root, 0), v0},
                  [&](const Scope& s, const std::vector<Output>& v, Output* pred) {
                    *pred = ops::Less(s, v[0], n);
                    return Status::OK();
                  },
                  [&](const Scope& s, const std::vector<Output>& v, std::vector<Output>* next) {
                    *next = {ops::Add(s, v[0], 1), ops::Mul(s, v[1], w)};
                    return Status::OK();
                  },
                  &out)
                  .ok());
  std::vector<Output> grads;
  ASSERT_TRUE(AddSymbolicGradients(root, {out[1]}, {w, v0}, &grads).ok());
  auto session = Session::New(SessionOptions());
  ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  for (int trips : {0, 1, 4}) {
    std::vector<Tensor> got;
    Status s = (*session)->Run(
        {{"n", Tensor::Scalar<int32_t>(trips)}, {"v0", Scalar(1.5)}, {"w", Scalar(1.2)}},
        {grads[0].name(), grads[1].name()}, {}, &got, Bounded());
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_NEAR(got[0].scalar<double>(), trips * 1.5 * std::pow(1.2, trips - 1), 1e-12) << trips;
    EXPECT_NEAR(got[1].scalar<double>(), std::pow(1.2, trips), 1e-12) << trips;
  }
}

TEST(ControlFlowGradientsTest, CapturedTensorInBody) {
  Scope root = Scope::NewRootScope();
  auto v0 = ops::Placeholder(root.WithOpName("v0"), DT_DOUBLE);
  auto w = ops::Placeholder(root.WithOpName("w"), DT_DOUBLE);
  auto b = ops::Placeholder(root.WithOpName("b"), DT_DOUBLE);
  std::vector<Output> out;
  ASSERT_TRUE(
      ops::WhileLoop(
          root, {ops::Const(root, 0), v0},
          [&](const Scope& s, const std::vector<Output>& v, Output* pred) {
            *pred = ops::Less(s, v[0], 4);
            return Status::OK();
          },
          [&](const Scope& s, const std::vector<Output>& v, std::vector<Output>* next) {
                    // A matrix-vector step: both w and b are captured.
            Output mv = ops::MatMul(s, w, ops::Reshape(s, v[1], {2, 1}));
            *next = {ops::Add(s, v[0], 1), ops::Tanh(s, ops::Add(s, ops::Reshape(s, mv, {2}), b))};
            return Status::OK();
          },
          &out)
          .ok());
  Feeds feeds = {{"v0", Doubles({0.3, -0.2}, {2})},
                 {"w", Doubles({0.5, -1.2, 0.8, 0.3}, {2, 2})},
                 {"b", Doubles({0.1, -0.4}, {2})}};
  ExpectGradientsMatch(root, ops::Mul(root, out[1], out[1]), {v0, w, b}, feeds);
}

TEST(ControlFlowGradientsTest, StacksHoldOnlyWhatTheBackwardBodyReads) {
  // h = tanh(h w + b): the backward body reads h and tanh's output; the
  // shapes the broadcast gradient needs are static, so no stack holds
  // h w + b just for its shape.
  Scope root = Scope::NewRootScope();
  auto h0 = ops::Placeholder(root.WithOpName("h0"), DT_DOUBLE, {{"shape", PartialShape({2, 3})}});
  auto w = ops::Placeholder(root.WithOpName("w"), DT_DOUBLE, {{"shape", PartialShape({3, 3})}});
  auto b = ops::Placeholder(root.WithOpName("b"), DT_DOUBLE, {{"shape", PartialShape({3})}});
  std::vector<Output> out;
  ASSERT_TRUE(
      ops::WhileLoop(
          root, {ops::Const(root, 0), h0},
          [&](const Scope& s, const std::vector<Output>& v, Output* pred) {
            *pred = ops::Less(s, v[0], 3);
            return Status::OK();
          },
          [&](const Scope& s, const std::vector<Output>& v, std::vector<Output>* next) {
            *next = {ops::Add(s, v[0], 1), ops::Tanh(s, ops::Add(s, ops::MatMul(s, v[1], w), b))};
            return Status::OK();
          },
          &out)
          .ok());
  Check check = AddCheck(root, out[1], {h0, w, b});
  int stacks = 0;
  for (const Node* node : root.graph()->nodes()) stacks += node->type_string() == "StackV2";
  EXPECT_EQ(stacks, 2);
  Feeds feeds = {{"h0", Doubles({0.1, -0.2, 0.3, 0.4, 0.5, -0.6}, {2, 3})},
                 {"w", Doubles({0.5, -0.3, 0.2, 0.1, 0.7, -0.4, 0.3, 0.2, 0.6}, {3, 3})},
                 {"b", Doubles({0.05, -0.1, 0.2}, {3})}};
  ExpectMatches(NewSession(root).get(), check, {"h0", "w", "b"}, feeds);
}

TEST(ControlFlowGradientsTest, NestedLoops) {
  Scope root = Scope::NewRootScope();
  auto v0 = ops::Placeholder(root.WithOpName("v0"), DT_DOUBLE);
  auto w = ops::Placeholder(root.WithOpName("w"), DT_DOUBLE);
  auto n = ops::Placeholder(root.WithOpName("n"), DT_INT32);
  std::vector<Output> out;
  ASSERT_TRUE(
      ops::WhileLoop(
          root, {ops::Const(root, 0), v0},
          [&](const Scope& s, const std::vector<Output>& v, Output* pred) {
            *pred = ops::Less(s, v[0], 3);
            return Status::OK();
          },
          [&](const Scope& s, const std::vector<Output>& v, std::vector<Output>* next) {
                    // The inner trip count depends on the outer iteration.
            std::vector<Output> inner;
            Output limit = ops::Add(s, v[0], n);
            WEIR_RETURN_IF_ERROR(ops::WhileLoop(
                s, {ops::Const(s, 0), v[1]},
                [&](const Scope& s2, const std::vector<Output>& u, Output* pred) {
                  *pred = ops::Less(s2, u[0], limit);
                  return Status::OK();
                },
                [&](const Scope& s2, const std::vector<Output>& u, std::vector<Output>* nu) {
                  *nu = {ops::Add(s2, u[0], 1), ops::Sin(s2, ops::Mul(s2, u[1], w))};
                  return Status::OK();
                },
                &inner, {.name = "inner"}));
            *next = {ops::Add(s, v[0], 1), ops::Add(s, ops::Mul(s, inner[1], v[1]), w)};
            return Status::OK();
          },
          &out, {.name = "outer"})
          .ok())
      << root.status();
  Feeds feeds = {{"v0", Doubles({0.3, -0.6}, {2})},
                 {"w", Doubles({0.7, 1.3}, {2})},
                 {"n", Tensor::Scalar<int32_t>(1)}};
  Check check = AddCheck(root, out[1], {v0, w});
  std::unique_ptr<Session> session = NewSession(root);
  for (int n_value : {1, 2, 0}) {
    SCOPED_TRACE(n_value);
    feeds[2].second = Tensor::Scalar<int32_t>(n_value);
    ExpectMatches(session.get(), check, {"v0", "w"}, feeds);
  }
}

TEST(ControlFlowGradientsTest, CondInsideLoop) {
  Scope root = Scope::NewRootScope();
  auto v0 = ops::Placeholder(root.WithOpName("v0"), DT_DOUBLE);
  auto w = ops::Placeholder(root.WithOpName("w"), DT_DOUBLE);
  std::vector<Output> out;
  ASSERT_TRUE(ops::WhileLoop(
                  root, {ops::Const(root, 0), v0},
                  [&](const Scope& s, const std::vector<Output>& v, Output* pred) {
                    *pred = ops::Less(s, v[0], 5);
                    return Status::OK();
                  },
                  [&](const Scope& s, const std::vector<Output>& v, std::vector<Output>* next) {
                    // Alternate branches by iteration parity: each is taken
                    // in some iterations and not in others.
                    Output even = ops::Equal(s, ops::FloorMod(s, v[0], 2), 0);
                    std::vector<Output> picked;
                    WEIR_RETURN_IF_ERROR(ops::Cond(
                        s, even,
                        [&](const Scope& b, std::vector<Output>* o) {
                          o->push_back(ops::Mul(b, ops::Sin(b, v[1]), w));
                          return Status::OK();
                        },
                        [&](const Scope& b, std::vector<Output>* o) {
                          o->push_back(ops::Add(b, ops::Mul(b, v[1], v[1]), w));
                          return Status::OK();
                        },
                        &picked));
                    *next = {ops::Add(s, v[0], 1), picked[0]};
                    return Status::OK();
                  },
                  &out)
                  .ok())
      << root.status();
  Feeds feeds = {{"v0", Doubles({0.4, -0.3}, {2})}, {"w", Doubles({0.6, 0.2}, {2})}};
  ExpectGradientsMatch(root, out[1], {v0, w}, feeds);
}

TEST(ControlFlowGradientsTest, LoopInsideCond) {
  for (double sign : {1.0, -1.0}) {
    SCOPED_TRACE(sign);
    Scope root = Scope::NewRootScope();
    auto v0 = ops::Placeholder(root.WithOpName("v0"), DT_DOUBLE);
    auto w = ops::Placeholder(root.WithOpName("w"), DT_DOUBLE);
    Output pred = ops::Greater(root, ops::Sum(root, v0, {0}), 0.0);
    std::vector<Output> out;
    ASSERT_TRUE(
        ops::Cond(
            root, pred,
            [&](const Scope& s, std::vector<Output>* o) {
              std::vector<Output> loop;
              WEIR_RETURN_IF_ERROR(ops::WhileLoop(
                  s, {ops::Const(s, 0), v0},
                  [&](const Scope& c, const std::vector<Output>& v, Output* p) {
                    *p = ops::Less(c, v[0], 3);
                    return Status::OK();
                  },
                  [&](const Scope& b, const std::vector<Output>& v, std::vector<Output>* next) {
                    *next = {ops::Add(b, v[0], 1), ops::Sin(b, ops::Mul(b, v[1], w))};
                    return Status::OK();
                  },
                  &loop));
              o->push_back(loop[1]);
              return Status::OK();
            },
            [&](const Scope& s, std::vector<Output>* o) {
              o->push_back(ops::Mul(s, v0, w));
              return Status::OK();
            },
            &out)
            .ok())
        << root.status();
    Feeds feeds = {{"v0", Doubles({0.4 * sign, 0.7 * sign}, {2})},
                   {"w", Doubles({0.9, -0.5}, {2})}};
    ExpectGradientsMatch(root, out[0], {v0, w}, feeds);
  }
}

TEST(ControlFlowGradientsTest, TwoGradientsOfOneLoop) {
  // Each call adds its own counter and stacks to the same forward loop.
  Scope root = Scope::NewRootScope();
  auto v0 = ops::Placeholder(root.WithOpName("v0"), DT_DOUBLE);
  auto w = ops::Placeholder(root.WithOpName("w"), DT_DOUBLE);
  Output y = PolynomialLoop(root, ops::Const(root, 4), v0, w);
  Check first = AddCheck(root, y, {w});
  Check second = AddCheck(root, ops::Mul(root, y, y), {v0, w});
  std::unique_ptr<Session> session = NewSession(root);
  Feeds feeds = {{"v0", Doubles({0.2, -0.4}, {2})}, {"w", Doubles({0.8, 1.05}, {2})}};
  ExpectMatches(session.get(), first, {"w"}, feeds);
  ExpectMatches(session.get(), second, {"v0", "w"}, feeds);
}

TEST(ControlFlowGradientsTest, TensorArrayReadInBody) {
  // dynamic_rnn's shape: the inputs scattered into a TensorArray outside,
  // row i read in iteration i, each h written to an output array.
  Scope root = Scope::NewRootScope();
  auto xs = ops::Placeholder(root.WithOpName("xs"), DT_DOUBLE, {{"shape", PartialShape({4, 2})}});
  auto w = ops::Placeholder(root.WithOpName("w"), DT_DOUBLE, {{"shape", PartialShape({2})}});
  Operation inputs = AddOp(root, "TensorArrayV3", {ops::Const(root, 4)}, {{"dtype", DT_DOUBLE}});
  Operation outputs = AddOp(root, "TensorArrayV3", {ops::Const(root, 4)}, {{"dtype", DT_DOUBLE}});
  Output filled = AddOp(root, "TensorArrayScatterV3",
                        {inputs.output(0), ops::Const(root, {0, 1, 2, 3}), xs, inputs.output(1)})
                      .output(0);
  std::vector<Output> out;
  ASSERT_TRUE(
      ops::WhileLoop(
          root, {ops::Const(root, 0), ops::Const(root, {0.1, -0.2}), outputs.output(1)},
          [&](const Scope& s, const std::vector<Output>& v, Output* pred) {
            *pred = ops::Less(s, v[0], 4);
            return Status::OK();
          },
          [&](const Scope& s, const std::vector<Output>& v, std::vector<Output>* next) {
            Output x_t = AddOp(s, "TensorArrayReadV3", {inputs.output(0), v[0], filled},
                               {{"dtype", DT_DOUBLE}})
                             .output(0);
            Output h = ops::Reshape(s, ops::Tanh(s, ops::Add(s, ops::Mul(s, v[1], w), x_t)), {2});
            Output flow =
                AddOp(s, "TensorArrayWriteV3", {outputs.output(0), v[0], h, v[2]}).output(0);
            *next = {ops::Add(s, v[0], 1), h, flow};
            return Status::OK();
          },
          &out)
          .ok())
      << root.status();
  Output all =
      AddOp(root, "TensorArrayGatherV3",
            {outputs.output(0), ops::Const(root, {0, 1, 2, 3}), out[2]}, {{"dtype", DT_DOUBLE}})
          .output(0);
  Feeds feeds = {{"xs", Doubles({0.3, -0.1, 0.2, 0.5, -0.4, 0.1, 0.6, -0.3}, {4, 2})},
                 {"w", Doubles({0.9, -0.7}, {2})}};
  ExpectGradientsMatch(root, ops::Mul(root, all, all), {xs, w}, feeds);
}

TEST(ControlFlowGradientsTest, VariableReadInBody) {
  Scope root = Scope::NewRootScope();
  auto w_init = ops::Placeholder(root.WithOpName("w_init"), DT_DOUBLE);
  auto v0 = ops::Placeholder(root.WithOpName("v0"), DT_DOUBLE);
  StatusOr<Variable> w = Variable::Create(root, "w", w_init);
  ASSERT_TRUE(w.ok()) << w.status();
  std::vector<Output> out;
  ASSERT_TRUE(ops::WhileLoop(
                  root, {ops::Const(root, 0), v0},
                  [&](const Scope& s, const std::vector<Output>& v, Output* pred) {
                    *pred = ops::Less(s, v[0], 3);
                    return Status::OK();
                  },
                  [&](const Scope& s, const std::vector<Output>& v, std::vector<Output>* next) {
                    Output read = ops::ReadVariableOp(s, w->handle, DT_DOUBLE);
                    *next = {ops::Add(s, v[0], 1), ops::Mul(s, ops::Cos(s, v[1]), read)};
                    return Status::OK();
                  },
                  &out)
                  .ok())
      << root.status();
  Output loss = ops::Sum(root, out[1], {0});
  std::vector<Output> grads;
  Status s = AddSymbolicGradients(root, {loss}, {w->handle}, &grads);
  ASSERT_TRUE(s.ok()) << s;
  auto session = Session::New(SessionOptions());
  ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  const Tensor w_value = Doubles({0.8, -1.1}, {2});
  const Tensor v_value = Doubles({0.5, 0.2}, {2});
  auto loss_at = [&](const Tensor& wv, std::vector<std::string> fetches, std::vector<Tensor>* got) {
    ASSERT_TRUE((*session)->Run({{"w_init", wv}}, {}, {w->initializer.name()}, got).ok());
    Status st = (*session)->Run({{"v0", v_value}}, fetches, {}, got, Bounded());
    ASSERT_TRUE(st.ok()) << st;
  };
  std::vector<Tensor> symbolic;
  loss_at(w_value, {grads[0].name()}, &symbolic);
  ASSERT_EQ(symbolic[0].shape(), TensorShape({2}));
  for (int i = 0; i < 2; ++i) {
    double f[2];
    for (int side = 0; side < 2; ++side) {
      Tensor moved = Copy(w_value);
      moved.data<double>()[i] += side ? -1e-5 : 1e-5;
      std::vector<Tensor> got;
      loss_at(moved, {loss.name()}, &got);
      f[side] = got[0].scalar<double>();
    }
    EXPECT_NEAR(symbolic[0].data<double>()[i], (f[0] - f[1]) / 2e-5, 1e-6) << i;
  }
}

TEST(ControlFlowGradientsTest, OptimizerTrainsALoop) {
  // A tiny recurrent model: h = tanh(h * w + x_t) over a fed sequence,
  // fitted to a target by gradient descent.
  Scope root = Scope::NewRootScope();
  auto xs = ops::Placeholder(root.WithOpName("xs"), DT_FLOAT, {{"shape", PartialShape({-1, 3})}});
  StatusOr<Variable> w = Variable::Create(root, "w", ops::Const(root, {0.1f, -0.2f, 0.3f}));
  ASSERT_TRUE(w.ok());
  Output steps = ops::GatherV2(root, ops::Shape(root, xs), 0, 0);
  std::vector<Output> out;
  ASSERT_TRUE(ops::WhileLoop(
                  root, {ops::Const(root, 0), ops::Const(root, {0.f, 0.f, 0.f})},
                  [&](const Scope& s, const std::vector<Output>& v, Output* pred) {
                    *pred = ops::Less(s, v[0], steps);
                    return Status::OK();
                  },
                  [&](const Scope& s, const std::vector<Output>& v, std::vector<Output>* next) {
                    Output x_t = ops::GatherV2(s, xs, v[0], 0);
                    Output h = ops::Tanh(s, ops::Add(s, ops::Mul(s, v[1], w->value), x_t));
                    *next = {ops::Add(s, v[0], 1), ops::Reshape(s, h, {3})};
                    return Status::OK();
                  },
                  &out)
                  .ok())
      << root.status();
  Output err = ops::Sub(root, out[1], ops::Const(root, {0.5f, -0.25f, 0.75f}));
  Output loss = ops::Sum(root, ops::Mul(root, err, err), {0});
  GradientDescentOptimizer sgd(0.5);
  StatusOr<Operation> train = sgd.Minimize(root, loss, {*w});
  ASSERT_TRUE(train.ok()) << train.status();
  auto session = Session::New(SessionOptions());
  ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  std::vector<Tensor> got;
  ASSERT_TRUE((*session)->Run({}, {}, {w->initializer.name()}, &got).ok());
  Feeds feeds = {{"xs", Tensor::FromVector<float>({0.2f, -0.1f, 0.4f, 0.3f, 0.1f, 0.2f, -0.2f, 0.0f,
                                                   0.5f, 0.1f, -0.3f, 0.6f},
                                                  {4, 3})}};
  std::vector<float> losses;
  for (int step = 0; step < 8; ++step) {
    Status s = (*session)->Run(feeds, {loss.name()}, {train->name()}, &got, Bounded());
    ASSERT_TRUE(s.ok()) << s;
    losses.push_back(got[0].scalar<float>());
  }
  for (size_t i = 1; i < losses.size(); ++i) EXPECT_LT(losses[i], losses[i - 1]) << i;
  EXPECT_LT(losses.back(), 0.5f * losses.front());
}

TEST(ControlFlowGradientsTest, OnlyPathsBetweenYsAndXs) {
  // The loop reads data (xs) that needs no gradient; asking for one is an
  // error naming it, not a crash, and the wanted gradient still works.
  Scope root = Scope::NewRootScope();
  auto data = ops::Placeholder(root.WithOpName("data"), DT_DOUBLE);
  auto w = ops::Placeholder(root.WithOpName("w"), DT_DOUBLE);
  auto unrelated = ops::Placeholder(root.WithOpName("unrelated"), DT_DOUBLE);
  std::vector<Output> out;
  ASSERT_TRUE(ops::WhileLoop(
                  root, {ops::Const(root, 0), w},
                  [&](const Scope& s, const std::vector<Output>& v, Output* pred) {
                    *pred = ops::Less(s, v[0], 2);
                    return Status::OK();
                  },
                  [&](const Scope& s, const std::vector<Output>& v, std::vector<Output>* next) {
                    *next = {ops::Add(s, v[0], 1), ops::Mul(s, v[1], data)};
                    return Status::OK();
                  },
                  &out)
                  .ok());
  std::vector<Output> grads;
  Status s = AddSymbolicGradients(root, {out[1]}, {unrelated}, &grads);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("'unrelated'"), std::string::npos) << s;
  ExpectGradientsMatch(root, out[1], {w}, {{"w", Scalar(0.7)}, {"data", Scalar(1.3)}});
}

TEST(ControlFlowGradientsTest, ErrorsNameTheNode) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_DOUBLE);
  Output inside;
  std::vector<Output> out;
  ASSERT_TRUE(ops::WhileLoop(
                  root, {ops::Const(root, 0), x},
                  [&](const Scope& s, const std::vector<Output>& v, Output* pred) {
                    *pred = ops::Less(s, v[0], 2);
                    return Status::OK();
                  },
                  [&](const Scope& s, const std::vector<Output>& v, std::vector<Output>* next) {
                    inside = ops::Mul(s.WithOpName("inside"), v[1], v[1]);
                    *next = {ops::Add(s, v[0], 1), inside};
                    return Status::OK();
                  },
                  &out)
                  .ok());
  std::vector<Output> grads;
  Status s = AddSymbolicGradients(root, {inside}, {x}, &grads);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("inside a while loop"), std::string::npos) << s;

  // A frame with no Merge and NextIteration is no loop this pass knows.
  Operation enter = AddOp(root.WithOpName("bad_enter"), "Enter", {x}, {{"frame_name", "bad"}});
  Output identity = AddOp(root, "Identity", {enter.output(0)}).output(0);
  Output exit = AddOp(root, "Exit", {identity}).output(0);
  ASSERT_TRUE(root.ok()) << root.status();
  s = AddSymbolicGradients(root, {exit}, {x}, &grads);
  EXPECT_EQ(s.code(), Code::kUnimplemented);
  EXPECT_NE(s.message().find("'bad_enter'"), std::string::npos) << s;
}

}  // namespace
}  // namespace weir
