// The optimizers: the fused path equals the composed path over several
// steps (float and double) for every optimizer and option, dense and
// sparse; sparse gradients sum repeated indices and touch only their rows;
// a quadratic is minimized; slots are named and initialized as documented;
// errors name the variable. (The fused kernels are checked against
// hand-written formulas in kernels/training_kernels_test.cc.)
#include "weir/train/optimizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>

#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"
#include "weir/train/learning_rate.h"
#include "weir/train/optimizers.h"

namespace weir {
namespace {

using MakeOptimizer = std::function<std::unique_ptr<Optimizer>(double lr, OptimizerOptions)>;

struct Config {
  std::string name;
  MakeOptimizer make;
  double lr;           // for the fused-versus-composed comparisons
  double minimize_lr;  // large enough to reach the minimum in 300 steps
};

std::vector<Config> Configs() {
  auto adam = [](AdamOptions adam) -> MakeOptimizer {
    return [adam](double lr, OptimizerOptions o) {
      return std::make_unique<AdamOptimizer>(lr, adam, o);
    };
  };
  auto rmsprop = [](RMSPropOptions rmsprop) -> MakeOptimizer {
    return [rmsprop](double lr, OptimizerOptions o) {
      return std::make_unique<RMSPropOptimizer>(lr, rmsprop, o);
    };
  };
  auto momentum = [](bool nesterov) -> MakeOptimizer {
    return [nesterov](double lr, OptimizerOptions o) {
      return std::make_unique<MomentumOptimizer>(lr, 0.9, nesterov, o);
    };
  };
  return {
      {"GradientDescent",
       [](double lr, OptimizerOptions o) {
         return std::make_unique<GradientDescentOptimizer>(lr, o);
       },
       0.1, 0.1},
      {"Momentum", momentum(false), 0.1, 0.1},
      {"Nesterov", momentum(true), 0.1, 0.1},
      {"Adagrad",
       [](double lr, OptimizerOptions o) { return std::make_unique<AdagradOptimizer>(lr, 0.1, o); },
       0.1, 0.5},
      {"RMSProp", rmsprop({.momentum = 0.5}), 0.01, 0.01},
      {"CenteredRMSProp", rmsprop({.momentum = 0.5, .epsilon = 1e-6, .centered = true}), 0.01,
       0.01},
      {"Adam", adam({}), 0.01, 0.1},
      {"NesterovAdam", adam({.use_nesterov = true}), 0.01, 0.1},
      {"AMSGrad", adam({.amsgrad = true}), 0.01, 0.1},
  };
}

Tensor Values(DType dtype, const std::vector<double>& v, const TensorShape& shape) {
  if (dtype == DT_FLOAT) return Tensor::FromVector<float>({v.begin(), v.end()}, shape);
  return Tensor::FromVector<double>(v, shape);
}

std::vector<double> AsDoubles(const Tensor& t) {
  std::vector<double> out;
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    out.push_back(t.dtype() == DT_FLOAT ? t.data<float>()[i] : t.data<double>()[i]);
  }
  return out;
}

// A [4,2] variable updated `steps` times by a fixed gradient: dense, or
// rows {2, 0, 2} (row 2 twice) when sparse. Returns the variable and its
// slots after the steps.
StatusOr<std::vector<std::vector<double>>> Train(const Config& config, bool fused, DType dtype,
                                                 bool sparse, int steps) {
  Scope root = Scope::NewRootScope();
  const TensorShape shape({4, 2});
  WEIR_ASSIGN_OR_RETURN(
      Variable w,
      Variable::Create(root, "w",
                       ops::Const(root, Values(dtype, {-1, -0.5, 0, 0.5, 1, 1.5, 2, 2.5}, shape))));
  Gradient grad;
  if (sparse) {
    grad = Gradient::Sparse(IndexedSlices{
        ops::Const(root, Values(dtype, {0.5, -1.0, 0.25, 0.75, -0.3, 1.5}, {3, 2})),
        ops::Const(root, Tensor::FromVector<int64_t>({2, 0, 2})), ops::Const(root, {4, 2})});
  } else {
    grad = Gradient::Dense(
        ops::Const(root, Values(dtype, {0.3, -1.2, 0.05, 2.0, -0.7, 0.0, 0.4, -0.1}, shape)));
  }
  std::unique_ptr<Optimizer> optimizer = config.make(config.lr, {.use_fused_kernels = fused});
  WEIR_ASSIGN_OR_RETURN(Operation train, optimizer->ApplyGradients(root, {{grad, w}}));
  std::vector<Variable> all = optimizer->variables();
  all.push_back(w);
  Operation init = GroupInitializers(root, all);
  std::vector<std::string> fetches = {w.value.name()};
  for (const Variable& slot : optimizer->slots(w)) fetches.push_back(slot.value.name());
  WEIR_RETURN_IF_ERROR(root.status());

  WEIR_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::New(SessionOptions()));
  WEIR_RETURN_IF_ERROR(session->Create(root.ToGraphDef()));
  std::vector<Tensor> out;
  WEIR_RETURN_IF_ERROR(session->Run({}, {}, {init.name()}, &out));
  for (int i = 0; i < steps; ++i) WEIR_RETURN_IF_ERROR(session->Run({}, {}, {train.name()}, &out));
  WEIR_RETURN_IF_ERROR(session->Run({}, fetches, {}, &out));
  std::vector<std::vector<double>> values;
  for (const Tensor& t : out) values.push_back(AsDoubles(t));
  return values;
}

// Fused and composed compute the same formula in a different order of
// operations: float agrees to a few ulps per step, double to ~1e-15.
double Tolerance(DType dtype) { return dtype == DT_FLOAT ? 1e-5 : 1e-12; }

void ExpectNear(const std::vector<std::vector<double>>& got,
                const std::vector<std::vector<double>>& want, double tolerance) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t v = 0; v < got.size(); ++v) {
    ASSERT_EQ(got[v].size(), want[v].size());
    for (size_t i = 0; i < got[v].size(); ++i) {
      EXPECT_NEAR(got[v][i], want[v][i], tolerance * std::max(1.0, std::abs(want[v][i])))
          << "variable " << v << " element " << i;
    }
  }
}

TEST(OptimizerTest, FusedEqualsComposedDense) {
  for (const Config& config : Configs()) {
    for (DType dtype : {DT_FLOAT, DT_DOUBLE}) {
      SCOPED_TRACE(StrCat(config.name, " ", dtype));
      auto fused = Train(config, true, dtype, false, 4);
      auto composed = Train(config, false, dtype, false, 4);
      ASSERT_TRUE(fused.ok()) << fused.status();
      ASSERT_TRUE(composed.ok()) << composed.status();
      ExpectNear(*fused, *composed, Tolerance(dtype));
    }
  }
}

TEST(OptimizerTest, FusedEqualsComposedSparseAndUntouchedRowsStay) {
  for (const Config& config : Configs()) {
    for (DType dtype : {DT_FLOAT, DT_DOUBLE}) {
      SCOPED_TRACE(StrCat(config.name, " sparse ", dtype));
      auto fused = Train(config, true, dtype, true, 3);
      auto composed = Train(config, false, dtype, true, 3);
      ASSERT_TRUE(fused.ok()) << fused.status();
      ASSERT_TRUE(composed.ok()) << composed.status();
      ExpectNear(*fused, *composed, Tolerance(dtype));
      // Row 1 and row 3 (elements 2, 3, 6, 7) get no gradient.
      for (int e : {2, 3, 6, 7}) EXPECT_EQ((*fused)[0][e], -1 + 0.5 * e) << "element " << e;
    }
  }
}

// Repeated indices are summed before the update, so a sparse gradient
// updates like its dense equivalent wherever a zero gradient changes
// nothing (gradient descent and Adagrad).
TEST(OptimizerTest, SparseWithRepeatedIndicesEqualsDenseEquivalent) {
  for (const Config& config : Configs()) {
    if (config.name != "GradientDescent" && config.name != "Adagrad") continue;
    SCOPED_TRACE(config.name);
    auto run = [&](bool sparse) -> std::vector<double> {
      Scope s = Scope::NewRootScope();
      auto w = Variable::Create(s, "w", ops::Const(s, {{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}}));
      EXPECT_TRUE(w.ok()) << w.status();
      Gradient g = sparse ? Gradient::Sparse({ops::Const(s, {{1.0, 2.0}, {0.5, 0.5}, {-3.0, 1.0}}),
                                              ops::Const(s, {2, 0, 2}), ops::Const(s, {3, 2})})
                          : Gradient::Dense(ops::Const(s, {{0.5, 0.5}, {0.0, 0.0}, {-2.0, 3.0}}));
      auto optimizer = config.make(config.lr, {});
      auto train = optimizer->ApplyGradients(s, {{g, *w}});
      EXPECT_TRUE(train.ok()) << train.status();
      std::vector<Variable> all = optimizer->variables();
      all.push_back(*w);
      Operation init = GroupInitializers(s, all);
      auto session = Session::New(SessionOptions());
      EXPECT_TRUE((*session)->Create(s.ToGraphDef()).ok());
      std::vector<Tensor> out;
      EXPECT_TRUE((*session)->Run({}, {}, {init.name()}, &out).ok());
      for (int i = 0; i < 2; ++i) EXPECT_TRUE((*session)->Run({}, {}, {train->name()}, &out).ok());
      EXPECT_TRUE((*session)->Run({}, {w->value.name()}, {}, &out).ok());
      return AsDoubles(out[0]);
    };
    std::vector<double> sparse = run(true), dense = run(false);
    ASSERT_EQ(sparse.size(), dense.size());
    for (size_t i = 0; i < sparse.size(); ++i) EXPECT_NEAR(sparse[i], dense[i], 1e-12) << i;
  }
}

// With every row in the sparse gradient once, lazy Adam is dense Adam.
TEST(OptimizerTest, SparseAdamOnEveryRowEqualsDenseAdam) {
  auto run = [](bool sparse, bool fused) -> std::vector<double> {
    Scope s = Scope::NewRootScope();
    auto w = Variable::Create(s, "w", ops::Const(s, {{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}}));
    EXPECT_TRUE(w.ok()) << w.status();
    Gradient g = sparse ? Gradient::Sparse({ops::Const(s, {{-3.0, 1.0}, {0.5, 0.5}, {0.25, 2.0}}),
                                            ops::Const(s, {2, 0, 1}), ops::Const(s, {3, 2})})
                        : Gradient::Dense(ops::Const(s, {{0.5, 0.5}, {0.25, 2.0}, {-3.0, 1.0}}));
    AdamOptimizer adam(0.1, {}, {.use_fused_kernels = fused});
    auto train = adam.ApplyGradients(s, {{g, *w}});
    EXPECT_TRUE(train.ok()) << train.status();
    std::vector<Variable> all = adam.variables();
    all.push_back(*w);
    Operation init = GroupInitializers(s, all);
    auto session = Session::New(SessionOptions());
    EXPECT_TRUE((*session)->Create(s.ToGraphDef()).ok());
    std::vector<Tensor> out;
    EXPECT_TRUE((*session)->Run({}, {}, {init.name()}, &out).ok());
    for (int i = 0; i < 3; ++i) EXPECT_TRUE((*session)->Run({}, {}, {train->name()}, &out).ok());
    EXPECT_TRUE((*session)->Run({}, {w->value.name()}, {}, &out).ok());
    return AsDoubles(out[0]);
  };
  const std::vector<double> dense = run(false, true);
  for (bool fused : {true, false}) {
    const std::vector<double> sparse = run(true, fused);
    ASSERT_EQ(sparse.size(), dense.size());
    for (size_t i = 0; i < sparse.size(); ++i) EXPECT_NEAR(sparse[i], dense[i], 1e-12) << i;
  }
}

TEST(OptimizerTest, SlotsAndStateAreNamedLikeTensorFlow) {
  Scope root = Scope::NewRootScope();
  auto w = Variable::Create(root, "w", ops::Const(root, {1.f, 2.f}));
  ASSERT_TRUE(w.ok());
  AdamOptimizer adam(0.1f, {.amsgrad = true});
  ASSERT_TRUE(
      adam.ApplyGradients(root, {{Gradient::Dense(ops::Const(root, {1.f, 1.f})), *w}}).ok());
  std::vector<std::string> names;
  for (const Variable& v : adam.variables()) names.push_back(v.name);
  EXPECT_EQ(names, (std::vector<std::string>{"Adam/beta1_power", "Adam/beta2_power", "w/Adam",
                                             "w/Adam_1", "w/Adam_2"}));
  ASSERT_EQ(adam.slots(*w).size(), 3u);
  EXPECT_EQ(adam.slots(*w)[0].shape, PartialShape({2}));
}

TEST(OptimizerTest, ErrorsNameTheVariable) {
  Scope root = Scope::NewRootScope();
  auto w = Variable::Create(root, "w", ops::Const(root, {1.f, 2.f}));
  ASSERT_TRUE(w.ok());
  MomentumOptimizer momentum(0.1f, 0.9f);
  auto shape =
      momentum.ApplyGradients(root, {{Gradient::Dense(ops::Const(root, {1.f, 2.f, 3.f})), *w}});
  EXPECT_EQ(shape.status().code(), Code::kInvalidArgument);
  EXPECT_NE(shape.status().message().find("shape [3] for variable 'w' of shape [2]"),
            std::string::npos)
      << shape.status();
  auto dtype = momentum.ApplyGradients(root, {{Gradient::Dense(ops::Const(root, {1.0, 2.0})), *w}});
  EXPECT_EQ(dtype.status().code(), Code::kInvalidArgument);
  auto missing = momentum.ApplyGradients(root, {{Gradient{}, *w}});
  EXPECT_NE(missing.status().message().find("no gradient for variable 'w'"), std::string::npos);

  auto ints = Variable::Create(root, "n", ops::Const(root, {1, 2}));
  auto integer =
      momentum.ApplyGradients(root, {{Gradient::Dense(ops::Const(root, {1, 2})), *ints}});
  EXPECT_NE(integer.status().message().find("optimizers update float and double"),
            std::string::npos)
      << integer.status();
  AdamOptimizer both(0.1f, {.use_nesterov = true, .amsgrad = true});
  EXPECT_EQ(both.ApplyGradients(root, {{Gradient::Dense(ops::Const(root, {1.f, 1.f})), *w}})
                .status()
                .code(),
            Code::kInvalidArgument);

  // Slots not initialized: the step fails naming the slot, on both paths.
  for (bool fused : {true, false}) {
    Scope s = Scope::NewRootScope();
    auto v = Variable::Create(s, "v", ops::Const(s, {1.f, 2.f}));
    AdamOptimizer adam(0.1f, {}, {.use_fused_kernels = fused});
    auto train = adam.ApplyGradients(s, {{Gradient::Dense(ops::Const(s, {1.f, 1.f})), *v}});
    ASSERT_TRUE(train.ok()) << train.status();
    auto session = Session::New(SessionOptions());
    ASSERT_TRUE((*session)->Create(s.ToGraphDef()).ok());
    std::vector<Tensor> out;
    ASSERT_TRUE((*session)
                    ->Run({}, {},
                          {v->initializer.name(), adam.variables()[0].initializer.name(),
                           adam.variables()[1].initializer.name()},
                          &out)
                    .ok());
    Status status = (*session)->Run({}, {}, {train->name()}, &out);
    EXPECT_EQ(status.code(), Code::kFailedPrecondition) << status;
    EXPECT_NE(status.message().find("'v/Adam"), std::string::npos) << status;
  }
}

// A schedule is an Output: GD with a piecewise-constant rate read from the
// global step that ApplyGradients increments.
TEST(OptimizerTest, LearningRateScheduleFollowsTheGlobalStep) {
  Scope root = Scope::NewRootScope();
  auto w = Variable::Create(root, "w", ops::Const(root, {0.f}));
  Variable step = *CreateGlobalStep(root);
  Output lr = PiecewiseConstant(root, step.value, {1}, {1.0f, 0.5f});
  GradientDescentOptimizer sgd(lr);
  auto train = sgd.ApplyGradients(root, {{Gradient::Dense(ops::Const(root, {1.f})), *w}}, &step);
  ASSERT_TRUE(train.ok()) << train.status();
  Operation init = GroupInitializers(root, {*w, step});
  auto session = Session::New(SessionOptions());
  ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE((*session)->Run({}, {}, {init.name()}, &out).ok());
  for (int i = 0; i < 4; ++i) ASSERT_TRUE((*session)->Run({}, {}, {train->name()}, &out).ok());
  ASSERT_TRUE((*session)->Run({}, {w->value.name(), step.value.name()}, {}, &out).ok());
  EXPECT_FLOAT_EQ(out[0].data<float>()[0], -1.f - 1.f - 0.5f - 0.5f);  // steps 0, 1 at rate 1
  EXPECT_EQ(out[1].scalar<int64_t>(), 4);
}

// loss = sum((w - target)^2), minimized at w = target; the global step counts.
TEST(OptimizerTest, MinimizesAQuadratic) {
  const std::vector<float> target = {1.5f, -2.0f, 0.25f};
  for (const Config& config : Configs()) {
    for (bool fused : {true, false}) {
      SCOPED_TRACE(StrCat(config.name, fused ? " fused" : " composed"));
      Scope root = Scope::NewRootScope();
      auto w = Variable::Create(root, "w", ops::Const(root, {0.f, 0.f, 0.f}));
      ASSERT_TRUE(w.ok()) << w.status();
      // Elementwise; the driver seeds it with ones, so the gradient is that
      // of its sum. (Only Mul and Sub need gradient functions.)
      Output diff = ops::Sub(root, w->value, ops::Const(root, {1.5f, -2.0f, 0.25f}));
      Output loss = ops::Mul(root, diff, diff);
      auto total = [](const Tensor& t) {
        return t.data<float>()[0] + t.data<float>()[1] + t.data<float>()[2];
      };
      std::unique_ptr<Optimizer> optimizer =
          config.make(config.minimize_lr, {.use_fused_kernels = fused});
      Variable step = *CreateGlobalStep(root);
      auto train = optimizer->Minimize(root, loss, {*w}, &step);
      ASSERT_TRUE(train.ok()) << train.status();
      std::vector<Variable> all = optimizer->variables();
      all.push_back(*w);
      all.push_back(step);
      Operation init = GroupInitializers(root, all);
      ASSERT_TRUE(root.ok()) << root.status();
      auto session = Session::New(SessionOptions());
      ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
      std::vector<Tensor> out;
      ASSERT_TRUE((*session)->Run({}, {}, {init.name()}, &out).ok());
      ASSERT_TRUE((*session)->Run({}, {loss.name()}, {}, &out).ok());
      const float first = total(out[0]);
      for (int i = 0; i < 300; ++i)
        ASSERT_TRUE((*session)->Run({}, {}, {train->name()}, &out).ok());
      ASSERT_TRUE(
          (*session)->Run({}, {loss.name(), w->value.name(), step.value.name()}, {}, &out).ok());
      EXPECT_LT(total(out[0]), 1e-2f * first);
      for (int i = 0; i < 3; ++i) EXPECT_NEAR(out[1].data<float>()[i], target[i], 0.1);
      EXPECT_EQ(out[2].scalar<int64_t>(), 300);
    }
  }
}

}  // namespace
}  // namespace weir
