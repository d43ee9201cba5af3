// The math family's gradient functions (elementwise, binary, selection,
// batched products, Max/Min/Prod) and batch normalization against finite
// differences, and second derivatives through the fused backward ops.
#include <gtest/gtest.h>

#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"
#include "weir/train/gradients.h"
#include "weir/train/gradients_test_util.h"

namespace weir {
namespace {

// Away from 0 (Abs, Sign, Relu), from .5 (Round), from integers (Floor,
// Ceil) and from 6 (Relu6).
const Tensor& Mixed() {
  static const Tensor t = Values({-1.7, -0.6, 0.4, 1.3, 2.1, -0.2, 6.7, 0.8}, {2, 4});
  return t;
}
// For the functions defined only above 0.
const Tensor& Positive() {
  static const Tensor t = Values({0.3, 0.7, 1.1, 1.6, 2.3, 0.45, 3.2, 0.9}, {2, 4});
  return t;
}

struct UnaryCase {
  const char* op;
  bool positive_only;
  bool smooth;  // has a second derivative to check (not piecewise constant)
};

const std::vector<UnaryCase>& UnaryCases() {
  static const std::vector<UnaryCase> cases = {
      {"Abs", false, true},     {"Exp", false, true},      {"Expm1", false, true},
      {"Log", true, true},      {"Log1p", true, true},     {"Sqrt", true, true},
      {"Rsqrt", true, true},    {"Square", false, true},   {"Reciprocal", true, true},
      {"Sin", false, true},     {"Cos", false, true},      {"Tanh", false, true},
      {"Sigmoid", false, true}, {"Erf", false, true},      {"Neg", false, true},
      {"Sign", false, false},   {"Floor", false, false},   {"Ceil", false, false},
      {"Round", false, false},  {"Relu", false, true},     {"Relu6", false, true},
      {"Elu", false, true},     {"Selu", false, true},     {"Softplus", false, true},
      {"Erfc", false, true},    {"Softsign", false, true},
  };
  return cases;
}

Output Unary(const Scope& s, const char* op, const Output& x) { return AddOp(s, op, {x}).output(0); }

TEST(MathGradientsTest, EveryUnaryOp) {
  for (const UnaryCase& c : UnaryCases()) {
    SCOPED_TRACE(c.op);
    ExpectGradientsMatch({c.positive_only ? Positive() : Mixed()},
                         [&](const Scope& s, const std::vector<Output>& in) {
                           return Unary(s, c.op, in[0]);
                         });
  }
}

TEST(MathGradientsTest, EveryUnaryOpTwice) {
  // y = d f(x) / dx, itself differentiated by the checker: the gradient
  // functions' graphs (TanhGrad, ReluGrad, EluGrad, ...) must have correct
  // gradients of their own.
  for (const UnaryCase& c : UnaryCases()) {
    if (!c.smooth) continue;
    SCOPED_TRACE(c.op);
    ExpectGradientsMatch({c.positive_only ? Positive() : Mixed()},
                         [&](const Scope& s, const std::vector<Output>& in) {
                           std::vector<Output> grads;
                           Status status = AddSymbolicGradients(s, {Unary(s, c.op, in[0])}, {in[0]}, &grads);
                           if (!status.ok()) s.UpdateStatus(status);
                           return status.ok() ? grads[0] : Output();
                         },
                         1e-5);
  }
}

TEST(MathGradientsTest, TrigonometryInTheirDomains) {
  // Each on values inside its domain, away from poles; once and twice.
  const Tensor unit = Values({-0.8, -0.35, 0.1, 0.55, 0.9, -0.05}, {2, 3});
  const Tensor wide = Values({-2.1, -0.7, 0.3, 1.2, 2.6, -1.4}, {2, 3});
  const Tensor above_one = Values({1.2, 1.7, 2.5, 3.1, 1.05, 4.0}, {2, 3});
  const Tensor below_pole = Values({-1.2, -0.4, 0.2, 0.9, 1.3, -0.8}, {2, 3});
  const std::pair<const char*, const Tensor*> cases[] = {
      {"Tan", &below_pole}, {"Asin", &unit},       {"Acos", &unit},
      {"Atan", &wide},      {"Sinh", &wide},       {"Cosh", &wide},
      {"Asinh", &wide},     {"Acosh", &above_one}, {"Atanh", &unit}};
  for (const auto& [op, x] : cases) {
    SCOPED_TRACE(op);
    ExpectGradientsMatch(
        {*x}, [&](const Scope& s, const std::vector<Output>& in) { return Unary(s, op, in[0]); });
    ExpectGradientsMatch(
        {*x},
        [&](const Scope& s, const std::vector<Output>& in) {
          std::vector<Output> grads;
          Status status = AddSymbolicGradients(s, {Unary(s, op, in[0])}, {in[0]}, &grads);
          if (!status.ok()) s.UpdateStatus(status);
          return status.ok() ? grads[0] : Output();
        },
        1e-5);
  }
}

TEST(MathGradientsTest, DivNoNan) {
  // Where y is 0 the quotient is pinned to 0: x gets no gradient there (y
  // is not differentiable at its jump, so it is a constant here).
  const Tensor x = Values({1.5, -2.0, 0.7, 3.1, -0.4, 2.2}, {2, 3});
  const Tensor y = Values({0.5, 0.0, -1.3, 2.0, 0.0, 0.9}, {2, 3});
  ExpectGradientsMatch({x}, [&](const Scope& s, const std::vector<Output>& in) {
    return AddOp(s, "DivNoNan", {in[0], ops::Const(s, y)}).output(0);
  });
  // Away from 0 it is RealDiv, in both inputs, with broadcasting.
  ExpectGradientsMatch({x, Values({0.6, -1.5, 2.5}, {3})},
                       [](const Scope& s, const std::vector<Output>& in) {
                         return AddOp(s, "DivNoNan", {in[0], in[1]}).output(0);
                       });
}

TEST(MathGradientsTest, FusedBackwardOpsInBothInputs) {
  // (y, dy) ops and (gradients, features/outputs) ops, both inputs free.
  for (const char* op :
       {"TanhGrad", "SigmoidGrad", "SqrtGrad", "RsqrtGrad", "ReciprocalGrad", "ReluGrad",
        "Relu6Grad", "EluGrad", "SeluGrad", "SoftplusGrad", "SoftsignGrad"}) {
    SCOPED_TRACE(op);
    ExpectGradientsMatch({Positive(), Mixed()}, [&](const Scope& s, const std::vector<Output>& in) {
      // (y, dy) take the forward value first, the others the gradient.
      bool value_first = std::string(op).find("Relu") == std::string::npos &&
                         std::string(op).find("lu") == std::string::npos &&
                         std::string(op) != "SoftplusGrad" && std::string(op) != "SoftsignGrad";
      return value_first ? AddOp(s, op, {in[0], in[1]}).output(0)
                         : AddOp(s, op, {in[1], in[0]}).output(0);
    });
    // Features below zero too (ReluGrad at negative features is 0).
    ExpectGradientsMatch({Mixed(), Mixed()}, [&](const Scope& s, const std::vector<Output>& in) {
      return AddOp(s, op, {in[0], ops::Mul(s, in[1], 0.5)}).output(0);
    });
  }
}

TEST(MathGradientsTest, SecondDerivativesAgainstAnalyticValues) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_DOUBLE);
  auto tanh = ops::Tanh(root, x);
  auto cube = ops::Mul(root, ops::Mul(root, x, x), x);
  std::vector<Output> d_tanh, dd_tanh, d_cube, dd_cube;
  ASSERT_TRUE(AddSymbolicGradients(root, {tanh}, {x}, &d_tanh).ok());
  ASSERT_TRUE(AddSymbolicGradients(root, {d_tanh[0]}, {x}, &dd_tanh).ok());
  ASSERT_TRUE(AddSymbolicGradients(root, {cube}, {x}, &d_cube).ok());
  ASSERT_TRUE(AddSymbolicGradients(root, {d_cube[0]}, {x}, &dd_cube).ok());
  auto session = Session::New(SessionOptions());
  ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  for (double v : {-1.3, 0.0, 0.4, 2.0}) {
    std::vector<Tensor> out;
    ASSERT_TRUE((*session)
                    ->Run({{"x", Tensor::Scalar<double>(v)}},
                          {d_tanh[0].name(), dd_tanh[0].name(), d_cube[0].name(), dd_cube[0].name()},
                          {}, &out)
                    .ok());
    const double t = std::tanh(v);
    EXPECT_NEAR(out[0].scalar<double>(), 1 - t * t, 1e-12);
    EXPECT_NEAR(out[1].scalar<double>(), -2 * t * (1 - t * t), 1e-12);
    EXPECT_NEAR(out[2].scalar<double>(), 3 * v * v, 1e-12);
    EXPECT_NEAR(out[3].scalar<double>(), 6 * v, 1e-12);
  }
}

TEST(MathGradientsTest, BinaryOpsWithBroadcasting) {
  Tensor a = Values({1.3, 0.45, 2.2, 0.7, 1.9, 0.35}, {2, 3});
  Tensor b = Values({0.6, 1.7, 0.9}, {3});
  Tensor c = Values({1.25}, {});
  for (const char* op : {"Div", "Maximum", "Minimum", "Pow", "SquaredDifference", "FloorMod"}) {
    SCOPED_TRACE(op);
    for (const auto& [x, y] : std::vector<std::pair<Tensor, Tensor>>{{a, b}, {b, a}, {a, c}, {c, b}}) {
      ExpectGradientsMatch({x, y}, [&](const Scope& s, const std::vector<Output>& in) {
        return AddOp(s, op, {in[0], in[1]}).output(0);
      });
    }
  }
  // Pow with negative bases (integer exponents): d/dy is taken as 0 there,
  // so only x is checked.
  ExpectGradientsMatch({Values({-1.5, 0.5, -2.0}, {3})}, [](const Scope& s, const std::vector<Output>& in) {
    return ops::Pow(s, in[0], ops::Const(s, {3.0, 2.0, 4.0}));
  });
}

TEST(MathGradientsTest, SelectAddNBatchMatMul) {
  Tensor a = DistinctValues({2, 3}), b = Values({0.5, -1, 2, 3, -0.25, 1.5}, {2, 3});
  ExpectGradientsMatch({a, b}, [](const Scope& s, const std::vector<Output>& in) {
    return ops::Select(s, ops::Const(s, Tensor::FromVector<bool>({true, false}, {2})), in[0], in[1]);
  });
  ExpectGradientsMatch({Values({1, 2, 3}, {3}), Values({-1, 4}, {2, 1})},
                       [](const Scope& s, const std::vector<Output>& in) {
                         Tensor cond = Tensor::FromVector<bool>({true, false, true, false, false, true}, {2, 3});
                         return ops::SelectV2(s, ops::Const(s, cond), in[0], in[1]);
                       });
  ExpectGradientsMatch({a, b, a}, [](const Scope& s, const std::vector<Output>& in) {
    return ops::AddN(s, {in[0], in[1], in[2]});
  });
  for (bool adj_x : {false, true}) {
    for (bool adj_y : {false, true}) {
      SCOPED_TRACE(StrCat("adj ", adj_x, adj_y));
      Tensor x = DistinctValues(adj_x ? TensorShape({2, 3, 2}) : TensorShape({2, 2, 3}));
      Tensor y = DistinctValues(adj_y ? TensorShape({4, 3}) : TensorShape({3, 4}));
      ExpectGradientsMatch({x, y}, [&](const Scope& s, const std::vector<Output>& in) {
        return ops::BatchMatMulV2(s, in[0], in[1], {{"adj_x", adj_x}, {"adj_y", adj_y}});
      });
    }
  }
}

TEST(MathGradientsTest, MaxMinProdReductions) {
  Tensor x = DistinctValues({2, 3, 4});
  for (const char* op : {"Max", "Min", "Prod"}) {
    for (const std::vector<int>& axes : std::vector<std::vector<int>>{{1}, {0, 2}, {-1}, {0, 1, 2}}) {
      for (bool keep_dims : {false, true}) {
        SCOPED_TRACE(StrCat(op, " axes ", StrJoin(axes, ","), keep_dims ? " keep" : ""));
        ExpectGradientsMatch({x}, [&](const Scope& s, const std::vector<Output>& in) {
          Output a = ops::Const(s, Tensor::FromVector<int32_t>(std::vector<int32_t>(axes.begin(), axes.end())));
          return AddOp(s, op, {in[0], a}, {{"keep_dims", keep_dims}}).output(0);
        });
      }
    }
  }
  // Prod with rows holding one zero, two zeros and none.
  Tensor zeros = Values({1.5, 0, 2, -0.5, 0, 0, 1.2, 0.7, 0.8, -1.1, 1.3, 0.9}, {3, 4});
  ExpectGradientsMatch({zeros}, [](const Scope& s, const std::vector<Output>& in) {
    return ops::Prod(s, in[0], 1);
  });
}

TEST(MathGradientsTest, FusedBatchNormTraining) {
  Tensor x = DistinctValues({2, 2, 3, 3});
  Tensor scale = Values({0.5, 1.5, -1}, {3}), offset = Values({0.1, 0.2, 0.3}, {3});
  ExpectGradientsMatch({x, scale, offset}, [](const Scope& s, const std::vector<Output>& in) {
    Tensor empty(DT_DOUBLE, TensorShape({0}));
    return ops::FusedBatchNormV3(s, in[0], in[1], in[2], ops::Const(s, empty), ops::Const(s, empty),
                                 {{"epsilon", 0.001f}})
        .output(0);
  }, 1e-5);
}

}  // namespace
}  // namespace weir
