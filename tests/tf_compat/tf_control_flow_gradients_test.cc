// Gradients through control flow exported by TensorFlow (tf.compat.v1
// while_loop and cond, control flow v2 disabled; fixtures in tests/data,
// see README.md): the loops and conds are found from the imported graph
// alone, and the gradients match central differences for every recorded
// trip count, with one compiled signature for all of them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "weir/graph/graph_constructor.h"
#include "weir/graph/graph_def_io.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"
#include "weir/runtime/standard_registration.h"
#include "weir/train/gradients.h"

namespace weir {
namespace {

using Feeds = std::vector<std::pair<std::string, Tensor>>;

struct Imported {
  Scope root = Scope::NewRootScope();
  Output Find(const std::string& name) const { return Output(root.graph()->FindNode(name), 0); }
};

void Import(const std::string& file, Imported* imported) {
  RegisterStandardOpsAndKernels();
  StatusOr<GraphDef> def = ReadGraphDefFile(std::string(WEIR_TEST_DATA) + "/" + file);
  ASSERT_TRUE(def.ok()) << def.status();
  Status s = ImportGraphDef(*def, imported->root.graph());
  ASSERT_TRUE(s.ok()) << s;
}

RunOptions Bounded() {
  RunOptions options;
  options.timeout_ms = 60000;
  return options;
}

// d(sum(w * y))/dx for fed float x against central differences. y is
// piecewise linear in x here, so a large step is exact up to rounding.
void ExpectGradientMatches(Session* session, const std::string& loss, const std::string& grad,
                           const std::string& x, const Feeds& feeds) {
  std::vector<Tensor> out;
  Status s = session->Run(feeds, {grad}, {}, &out, Bounded());
  ASSERT_TRUE(s.ok()) << s;
  const Tensor symbolic = out[0];
  int feed = 0;
  while (feeds[feed].first != x) ++feed;
  const Tensor& value = feeds[feed].second;
  ASSERT_EQ(symbolic.shape(), value.shape());
  for (int64_t i = 0; i < value.NumElements(); ++i) {
    float f[2];
    for (int side = 0; side < 2; ++side) {
      Feeds moved = feeds;
      Tensor t(DT_FLOAT, value.shape());
      for (int64_t j = 0; j < value.NumElements(); ++j) t.data<float>()[j] = value.data<float>()[j];
      t.data<float>()[i] += side ? -0.25f : 0.25f;
      moved[feed].second = t;
      ASSERT_TRUE(session->Run(moved, {loss}, {}, &out, Bounded()).ok());
      f[side] = out[0].scalar<float>();
    }
    EXPECT_NEAR(symbolic.data<float>()[i], (f[0] - f[1]) / 0.5f, 1e-3) << x << "[" << i << "]";
  }
}

TEST(TfControlFlowGradientsTest, WhileLoopWithCondInBodyAndCondAfter) {
  Imported g;
  Import("tf_while_cond.pbtxt", &g);
  Scope& root = g.root;
  Output x = g.Find("x");
  Output weights = ops::Const(root, {1.f, -2.f, 0.5f});
  Output loss = ops::Sum(root, ops::Mul(root, g.Find("result"), weights), {0});
  std::vector<Output> grads;
  Status s = AddSymbolicGradients(root, {loss}, {x}, &grads);
  ASSERT_TRUE(s.ok()) << s;
  auto session = Session::New(SessionOptions());
  ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  int compiled = -1;
  for (int trips : {0, 1, 4, 7}) {
    for (bool p : {true, false}) {
      SCOPED_TRACE(trips);
      SCOPED_TRACE(p);
      Feeds feeds = {{"n", Tensor::Scalar<int32_t>(trips)},
                     {"x", Tensor::FromVector<float>({1.f, 2.f, -3.f}, {3})},
                     {"p", Tensor::Scalar<bool>(p)}};
      ExpectGradientMatches(session->get(), loss.name(), grads[0].name(), "x", feeds);
      if (compiled < 0) compiled = (*session)->num_cached_signatures();
    }
  }
  EXPECT_EQ((*session)->num_cached_signatures(), compiled);
}

TEST(TfControlFlowGradientsTest, NestedWhileLoopsWithMaximumIterations) {
  Imported g;
  Import("tf_nested_while.pbtxt", &g);
  Scope& root = g.root;
  Output step = g.Find("step");
  std::vector<Output> grads;
  Status s = AddSymbolicGradients(root, {g.Find("total")}, {step}, &grads);
  ASSERT_TRUE(s.ok()) << s;
  auto session = Session::New(SessionOptions());
  ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  for (auto [outer, inner] : std::vector<std::pair<int, int>>{{0, 3}, {2, 3}, {5, 0}, {9, 4}}) {
    SCOPED_TRACE(outer);
    Feeds feeds = {{"n", Tensor::Scalar<int32_t>(outer)},
                   {"m", Tensor::Scalar<int32_t>(inner)},
                   {"step", Tensor::Scalar<float>(0.25f)}};
    ExpectGradientMatches(session->get(), "total", grads[0].name(), "step", feeds);
    // total = step * sum over i < min(n, 6), j < m of (i + j).
    std::vector<Tensor> out;
    ASSERT_TRUE((*session)->Run(feeds, {grads[0].name()}, {}, &out, Bounded()).ok());
    int expected = 0;
    for (int i = 0; i < std::min(outer, 6); ++i) {
      for (int j = 0; j < inner; ++j) expected += i + j;
    }
    EXPECT_FLOAT_EQ(out[0].scalar<float>(), static_cast<float>(expected));
  }
}

}  // namespace
}  // namespace weir
