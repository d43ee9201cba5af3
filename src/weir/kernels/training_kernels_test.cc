// The fused optimizer kernels against the update formulas written out
// below as plain loops over elements, over several steps, in float and
// double; sparse forms with repeated indices; and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "weir/graph/scope.h"
#include "weir/kernels/all_kernels.h"
#include "weir/ops/all_ops.h"
#include "weir/ops/const_op.h"
#include "weir/runtime/session.h"

namespace weir {
namespace {

// One element's update, in double: x[0] is the variable, x[1..] the slots
// in the op's input order; s the hyperparameters in input order.
using ElementStep =
    std::function<void(std::vector<double*>& x, const std::vector<double>& s, double g)>;

struct Case {
  std::string op;  // the dense op; "ResourceSparse..." for the sparse form
  int slots;
  std::vector<double> scalars;  // in input order (before, then after grad)
  int scalars_before;
  AttrMap attrs;
  ElementStep step;
};

// Tolerances: double agrees with the double reference to rounding; float
// to float rounding over a few steps of rsqrt/division.
double Tolerance(DType dtype) { return dtype == DT_FLOAT ? 2e-5 : 1e-12; }

Tensor Filled(DType dtype, const std::vector<double>& values, const TensorShape& shape) {
  if (dtype == DT_FLOAT) return Tensor::FromVector<float>({values.begin(), values.end()}, shape);
  return Tensor::FromVector<double>(values, shape);
}

std::vector<double> AsDoubles(const Tensor& t) {
  std::vector<double> out;
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    out.push_back(t.dtype() == DT_FLOAT ? t.data<float>()[i] : t.data<double>()[i]);
  }
  return out;
}

struct Model {
  Scope root = Scope::NewRootScope();
  std::vector<std::string> reads;
  std::string apply;
  std::vector<std::string> inits;
};

// Variables (var and slots) initialized to `values`, and the op applying
// `grad` (rows `indices` when sparse). `initialize[i]` false leaves
// variable i uninitialized.
Model Build(const Case& c, DType dtype, const TensorShape& shape,
            const std::vector<std::vector<double>>& values, const std::vector<double>& grad,
            const TensorShape& grad_shape, const std::vector<int64_t>* indices,
            std::vector<bool> initialize = {}) {
  RegisterAllOps();  // AddOp needs the declarations
  RegisterAllKernels();
  Model m;
  std::vector<OpArg> args;
  for (int i = 0; i <= c.slots; ++i) {
    std::string name = i == 0 ? "var" : StrCat("slot", i);
    Operation handle =
        AddOp(m.root.WithOpName(name), "VarHandleOp", {},
              {{"dtype", AttrValue(dtype)}, {"shape", AttrValue(PartialShape(shape))}});
    if (initialize.empty() || initialize[i]) {
      Operation init =
          AddOp(m.root.WithOpName(name + "/init"), "AssignVariableOp",
                {handle.output(0), ops::Const(m.root, Filled(dtype, values[i], shape))});
      m.inits.push_back(init.name());
    }
    m.reads.push_back(AddOp(m.root.WithOpName(name + "/read"), "ReadVariableOp", {handle.output(0)},
                            {{"dtype", AttrValue(dtype)}})
                          .name());
    args.emplace_back(handle.output(0));
  }
  auto scalar = [&](double v) { return OpArg(ops::Const(m.root, Filled(dtype, {v}, {}))); };
  for (int i = 0; i < c.scalars_before; ++i) args.push_back(scalar(c.scalars[i]));
  args.emplace_back(ops::Const(m.root, Filled(dtype, grad, grad_shape)));
  std::string op = c.op;
  if (indices != nullptr) {
    op = "ResourceSparse" + c.op.substr(std::string("Resource").size());
    args.emplace_back(ops::Const(m.root, Tensor::FromVector<int64_t>(*indices)));
  }
  for (size_t i = c.scalars_before; i < c.scalars.size(); ++i) args.push_back(scalar(c.scalars[i]));
  m.apply = AddOp(m.root.WithOpName("apply"), op, args, c.attrs).name();
  return m;
}

// Runs inits, then `steps` applies; returns the variables' values, or the
// first error.
StatusOr<std::vector<std::vector<double>>> RunSteps(const Model& m, int steps) {
  WEIR_RETURN_IF_ERROR(m.root.status());
  WEIR_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::New(SessionOptions()));
  WEIR_RETURN_IF_ERROR(session->Create(m.root.ToGraphDef()));
  std::vector<Tensor> out;
  if (!m.inits.empty()) WEIR_RETURN_IF_ERROR(session->Run({}, {}, m.inits, &out));
  for (int i = 0; i < steps; ++i) WEIR_RETURN_IF_ERROR(session->Run({}, {}, {m.apply}, &out));
  WEIR_RETURN_IF_ERROR(session->Run({}, m.reads, {}, &out));
  std::vector<std::vector<double>> values;
  for (const Tensor& t : out) values.push_back(AsDoubles(t));
  return values;
}

// The reference: `steps` times, every element (dense) or every index in
// order and every element of its row (sparse).
std::vector<std::vector<double>> Reference(const Case& c, std::vector<std::vector<double>> x,
                                           const std::vector<double>& grad, int row,
                                           const std::vector<int64_t>* indices, int steps) {
  for (int t = 0; t < steps; ++t) {
    const int64_t n =
        indices ? static_cast<int64_t>(indices->size()) * row : static_cast<int64_t>(x[0].size());
    for (int64_t e = 0; e < n; ++e) {
      const int64_t target = indices ? (*indices)[e / row] * row + e % row : e;
      std::vector<double*> at;
      for (auto& v : x) at.push_back(&v[target]);
      c.step(at, c.scalars, grad[e]);
    }
  }
  return x;
}

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

std::vector<Case> Cases() {
  auto adam = [](bool nesterov, bool amsgrad) {
    return [nesterov, amsgrad](std::vector<double*>& x, const std::vector<double>& s, double g) {
      const double b1p = s[0], b2p = s[1], lr = s[2], b1 = s[3], b2 = s[4], eps = s[5];
      const double alpha = lr * std::sqrt(1 - b2p) / (1 - b1p);
      double& m = *x[1];
      double& v = *x[2];
      m = b1 * m + (1 - b1) * g;
      v = b2 * v + (1 - b2) * g * g;
      double denom = v;
      if (amsgrad) {
        *x[3] = std::max(*x[3], v);
        denom = *x[3];
      }
      const double first = nesterov ? b1 * m + (1 - b1) * g : m;
      *x[0] -= alpha * first / (std::sqrt(denom) + eps);
    };
  };
  auto momentum = [](bool nesterov) {
    return [nesterov](std::vector<double*>& x, const std::vector<double>& s, double g) {
      const double lr = s[0], mu = s[1];
      *x[1] = mu * *x[1] + g;
      *x[0] -= nesterov ? lr * (g + mu * *x[1]) : lr * *x[1];
    };
  };
  auto rmsprop = [](std::vector<double*>& x, const std::vector<double>& s, double g) {
    const double lr = s[0], rho = s[1], mu = s[2], eps = s[3];
    double& ms = *x[1];
    double& mom = *x[2];
    ms = rho * ms + (1 - rho) * g * g;
    mom = mu * mom + lr * g / std::sqrt(ms + eps);
    *x[0] -= mom;
  };
  auto centered = [](std::vector<double*>& x, const std::vector<double>& s, double g) {
    const double lr = s[0], rho = s[1], mu = s[2], eps = s[3];
    double& mg = *x[1];
    double& ms = *x[2];
    double& mom = *x[3];
    ms = rho * ms + (1 - rho) * g * g;
    mg = rho * mg + (1 - rho) * g;
    mom = mu * mom + lr * g / std::sqrt(ms - mg * mg + eps);
    *x[0] -= mom;
  };
  auto adagrad = [](bool update_slots) {
    return [update_slots](std::vector<double*>& x, const std::vector<double>& s, double g) {
      if (update_slots) *x[1] += g * g;
      *x[0] -= s[0] * g / std::sqrt(*x[1]);
    };
  };
  auto adadelta = [](std::vector<double*>& x, const std::vector<double>& s, double g) {
    const double lr = s[0], rho = s[1], eps = s[2];
    double& accum = *x[1];
    double& accum_update = *x[2];
    accum = rho * accum + (1 - rho) * g * g;
    const double update = std::sqrt(accum_update + eps) / std::sqrt(accum + eps) * g;
    accum_update = rho * accum_update + (1 - rho) * update * update;
    *x[0] -= lr * update;
  };
  // The op doc's formula; multiply_linear_by_lr keeps linear times lr.
  auto ftrl = [](bool shrinkage, bool by_lr) {
    return [shrinkage, by_lr](std::vector<double*>& x, const std::vector<double>& s, double g) {
      const double lr = s[0], l1 = s[1], l2 = s[2], shrink = shrinkage ? s[3] : 0.0;
      const double p = shrinkage ? s[4] : s[3];
      double& var = *x[0];
      double& accum = *x[1];
      double& linear = *x[2];
      const double accum_new = accum + g * g;
      const double change = std::pow(accum_new, -p) - std::pow(accum, -p);
      const double g_shrunk = g + 2 * shrink * var;
      linear += by_lr ? g_shrunk * lr - change * var : g_shrunk - change / lr * var;
      const double quadratic = by_lr ? std::pow(accum_new, -p) + 2 * l2 * lr
                                     : 1.0 / (std::pow(accum_new, p) * lr) + 2 * l2;
      const double l1_scaled = by_lr ? l1 * lr : l1;
      var = std::abs(linear) > l1_scaled
                ? ((linear > 0 ? 1.0 : -1.0) * l1_scaled - linear) / quadratic
                : 0.0;
      accum = accum_new;
    };
  };
  auto proximal = [](bool adagrad) {
    return [adagrad](std::vector<double*>& x, const std::vector<double>& s, double g) {
      const double lr = s[0], l1 = s[1], l2 = s[2];
      if (adagrad) *x[1] += g * g;
      const double rate = adagrad ? lr / std::sqrt(*x[1]) : lr;
      const double prox = *x[0] - rate * g;
      *x[0] = (prox > 0   ? 1.0
               : prox < 0 ? -1.0
                          : 0.0) *
              std::max(std::abs(prox) - rate * l1, 0.0) / (1 + rate * l2);
    };
  };
  return {
      {"ResourceApplyGradientDescent",
       0,
       {0.1},
       1,
       {},
       [](std::vector<double*>& x, const std::vector<double>& s, double g) { *x[0] -= s[0] * g; }},
      {"ResourceApplyMomentum", 1, {0.1, 0.9}, 1, {}, momentum(false)},
      {"ResourceApplyMomentum",
       1,
       {0.1, 0.9},
       1,
       {{"use_nesterov", AttrValue(true)}},
       momentum(true)},
      {"ResourceApplyAdagrad", 1, {0.1}, 1, {}, adagrad(true)},
      {"ResourceApplyAdagrad", 1, {0.1}, 1, {{"update_slots", AttrValue(false)}}, adagrad(false)},
      {"ResourceApplyRMSProp", 2, {0.01, 0.9, 0.5, 1e-6}, 4, {}, rmsprop},
      {"ResourceApplyCenteredRMSProp", 3, {0.01, 0.9, 0.5, 1e-6}, 4, {}, centered},
      {"ResourceApplyAdam", 2, {0.9, 0.999, 0.01, 0.9, 0.999, 1e-8}, 6, {}, adam(false, false)},
      {"ResourceApplyAdam",
       2,
       {0.9, 0.999, 0.01, 0.9, 0.999, 1e-8},
       6,
       {{"use_nesterov", AttrValue(true)}},
       adam(true, false)},
      {"ResourceApplyAdamWithAmsgrad",
       3,
       {0.9, 0.999, 0.01, 0.9, 0.999, 1e-8},
       6,
       {},
       adam(false, true)},
      {"ResourceApplyAdadelta", 2, {0.5, 0.95, 1e-6}, 3, {}, adadelta},
      {"ResourceApplyFtrl", 2, {0.1, 0.01, 0.02, -0.5}, 0, {}, ftrl(false, false)},
      {"ResourceApplyFtrl",
       2,
       {0.1, 0.01, 0.02, -0.6},
       0,
       {{"multiply_linear_by_lr", AttrValue(true)}},
       ftrl(false, true)},
      {"ResourceApplyFtrlV2", 2, {0.1, 0.01, 0.02, 0.05, -0.5}, 0, {}, ftrl(true, false)},
      // l1 large enough that some elements are shrunk to 0.
      {"ResourceApplyProximalGradientDescent", 0, {0.1, 0.05, 0.2}, 3, {}, proximal(false)},
      {"ResourceApplyProximalAdagrad", 1, {0.1, 0.3, 0.2}, 3, {}, proximal(true)},
  };
}

// Initial values: positive slots (accumulators must be), mixed signs in var.
std::vector<std::vector<double>> InitialValues(int slots, int n) {
  std::vector<std::vector<double>> values;
  for (int v = 0; v <= slots; ++v) {
    std::vector<double> x;
    for (int i = 0; i < n; ++i) x.push_back(v == 0 ? 0.5 * i - 1.0 : 0.1 + 0.05 * (i + v));
    values.push_back(x);
  }
  return values;
}

TEST(TrainingKernelsTest, DenseUpdatesMatchTheFormulasOverSteps) {
  const TensorShape shape({2, 3});
  const std::vector<double> grad = {0.3, -1.2, 0.05, 2.0, -0.7, 0.0};
  for (const Case& c : Cases()) {
    for (DType dtype : {DT_FLOAT, DT_DOUBLE}) {
      SCOPED_TRACE(StrCat(c.op, " ", c.attrs.size() ? "(option)" : "", " ", dtype));
      auto initial = InitialValues(c.slots, 6);
      auto got = RunSteps(Build(c, dtype, shape, initial, grad, shape, nullptr), 3);
      ASSERT_TRUE(got.ok()) << got.status();
      ExpectNear(*got, Reference(c, initial, grad, 3, nullptr, 3), Tolerance(dtype));
    }
  }
}

TEST(TrainingKernelsTest, SparseUpdatesApplyEachIndexInOrderRepeatsIncluded) {
  const TensorShape shape({4, 2});
  const std::vector<int64_t> indices = {2, 0, 2};  // row 2 twice
  const std::vector<double> grad = {0.5, -1.0, 0.25, 0.75, -0.3, 1.5};
  for (const Case& c : Cases()) {
    if (c.op.find("Momentum") == std::string::npos && c.op.find("Adagrad") == std::string::npos &&
        c.op.find("RMSProp") == std::string::npos && c.op.find("Adadelta") == std::string::npos &&
        c.op.find("Ftrl") == std::string::npos && c.op.find("Proximal") == std::string::npos) {
      continue;  // no sparse kernel in the family (as in TensorFlow)
    }
    for (DType dtype : {DT_FLOAT, DT_DOUBLE}) {
      SCOPED_TRACE(StrCat(c.op, " sparse ", dtype));
      auto initial = InitialValues(c.slots, 8);
      auto got = RunSteps(Build(c, dtype, shape, initial, grad, TensorShape({3, 2}), &indices), 2);
      ASSERT_TRUE(got.ok()) << got.status();
      auto want = Reference(c, initial, grad, 2, &indices, 2);
      ExpectNear(*got, want, Tolerance(dtype));
      EXPECT_EQ((*got)[0][2], initial[0][2]) << "row 1 has no gradient and must not change";
    }
  }
}

// Above the kernels' threshold the update runs on the intra-op pool.
TEST(TrainingKernelsTest, LargeUpdatesOnThePoolMatchTheFormulas) {
  const int n = 40000;
  const TensorShape shape({n});
  std::vector<double> grad(n);
  for (int i = 0; i < n; ++i) grad[i] = std::sin(0.01 * i);
  for (const Case& c : {Cases()[4], Cases()[8]}) {  // Adagrad without slot update, Nesterov Adam
    SCOPED_TRACE(c.op);
    auto initial = InitialValues(c.slots, n);
    auto got = RunSteps(Build(c, DT_FLOAT, shape, initial, grad, shape, nullptr), 2);
    ASSERT_TRUE(got.ok()) << got.status();
    ExpectNear(*got, Reference(c, initial, grad, 1, nullptr, 2), Tolerance(DT_FLOAT));
  }
}

// Concurrent steps updating one variable: the kernel holds the variable's
// lock for the whole update, so no update is lost.
TEST(TrainingKernelsTest, ConcurrentUpdatesAreAtomic) {
  const Case c = Cases()[1];  // Momentum, with momentum 0: accum = grad
  Case zero_momentum = c;
  zero_momentum.scalars = {1.0, 0.0};
  const TensorShape shape({64});
  Model m = Build(zero_momentum, DT_DOUBLE, shape, InitialValues(1, 64),
                  std::vector<double>(64, -1.0), shape, nullptr);
  ASSERT_TRUE(m.root.ok()) << m.root.status();
  auto session = Session::New(SessionOptions());
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE((*session)->Create(m.root.ToGraphDef()).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE((*session)->Run({}, {}, m.inits, &out).ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      std::vector<Tensor> ignored;
      for (int i = 0; i < 50; ++i) EXPECT_TRUE((*session)->Run({}, {}, {m.apply}, &ignored).ok());
    });
  }
  for (auto& thread : threads) thread.join();
  ASSERT_TRUE((*session)->Run({}, m.reads, {}, &out).ok());
  const std::vector<double> initial = InitialValues(1, 64)[0];
  for (int i = 0; i < 64; ++i) EXPECT_EQ(AsDoubles(out[0])[i], initial[i] + 200) << i;
}

TEST(TrainingKernelsTest, OutOfRangeIndexIsInvalidArgumentAndChangesNothing) {
  const Case c = Cases()[3];  // Adagrad
  const TensorShape shape({4, 2});
  const std::vector<int64_t> indices = {1, 4};
  auto initial = InitialValues(1, 8);
  Model m = Build(c, DT_FLOAT, shape, initial, {1, 1, 1, 1}, TensorShape({2, 2}), &indices);
  ASSERT_TRUE(m.root.ok()) << m.root.status();
  auto session = Session::New(SessionOptions());
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE((*session)->Create(m.root.ToGraphDef()).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE((*session)->Run({}, {}, m.inits, &out).ok());
  Status s = (*session)->Run({}, {}, {m.apply}, &out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("indices[1] = 4 is not in [0, 4)"), std::string::npos) << s;
  EXPECT_NE(s.message().find("'var'"), std::string::npos) << s;
  ASSERT_TRUE((*session)->Run({}, m.reads, {}, &out).ok());
  EXPECT_EQ(AsDoubles(out[0]), initial[0]) << "a bad index must not update the rows before it";
}

TEST(TrainingKernelsTest, UninitializedSlotIsFailedPreconditionNamingIt) {
  const Case c = Cases()[7];  // Adam
  const TensorShape shape({3});
  auto got = RunSteps(Build(c, DT_FLOAT, shape, InitialValues(2, 3), {1, 2, 3}, shape, nullptr,
                            {true, true, false}),
                      1);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), Code::kFailedPrecondition) << got.status();
  EXPECT_NE(got.status().message().find("ResourceApplyAdam: variable 'slot2' is uninitialized"),
            std::string::npos)
      << got.status();
}

TEST(TrainingKernelsTest, GradientOfAnotherShapeIsInvalidArgumentNamingShapes) {
  const Case c = Cases()[1];  // Momentum
  auto got = RunSteps(Build(c, DT_DOUBLE, TensorShape({2, 3}), InitialValues(1, 6), {1, 2, 3},
                            TensorShape({3}), nullptr),
                      1);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), Code::kInvalidArgument) << got.status();
  EXPECT_NE(
      got.status().message().find("gradient has shape [3] but variable 'var' has shape [2,3]"),
      std::string::npos)
      << got.status();
}

TEST(TrainingKernelsTest, ShapeFunctionsRejectNonScalarHyperparameters) {
  RegisterAllOps();
  RegisterAllKernels();
  Scope root = Scope::NewRootScope();
  Operation var = AddOp(root.WithOpName("var"), "VarHandleOp", {},
                        {{"dtype", AttrValue(DT_FLOAT)}, {"shape", AttrValue(PartialShape({2}))}});
  AddOp(root, "ResourceApplyGradientDescent",
        {var.output(0), Input({0.1f, 0.2f}), Input({1.f, 2.f})});
  EXPECT_EQ(root.status().code(), Code::kInvalidArgument);
  EXPECT_NE(root.status().message().find("alpha must be a scalar"), std::string::npos)
      << root.status();

  Scope sparse = Scope::NewRootScope();
  Operation v2 =
      AddOp(sparse.WithOpName("var"), "VarHandleOp", {},
            {{"dtype", AttrValue(DT_FLOAT)}, {"shape", AttrValue(PartialShape({4, 2}))}});
  Operation accum =
      AddOp(sparse.WithOpName("accum"), "VarHandleOp", {},
            {{"dtype", AttrValue(DT_FLOAT)}, {"shape", AttrValue(PartialShape({4, 2}))}});
  AddOp(sparse, "ResourceSparseApplyAdagrad",
        {v2.output(0), accum.output(0), Input(0.1f), Input({{1.f, 2.f}}), Input({0, 1})});
  EXPECT_EQ(sparse.status().code(), Code::kInvalidArgument);
  EXPECT_NE(sparse.status().message().find("one row per index"), std::string::npos)
      << sparse.status();
}

}  // namespace
}  // namespace weir
