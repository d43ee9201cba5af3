// The arithmetic gradients against finite differences, and the driver's
// rules: sums of partials, stops, and errors for unreachable xs.
#include "weir/train/gradients.h"

#include <gtest/gtest.h>

#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"
#include "weir/train/gradients_test_util.h"

namespace weir {
namespace {

TEST(GradientsTest, AddSubMulDivWithBroadcasting) {
  Tensor a = Values({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = Values({0.5, -1.5, 2.5}, {3});
  Tensor c = Values({2}, {});
  for (const char* op : {"Add", "AddV2", "Sub", "Mul", "RealDiv"}) {
    SCOPED_TRACE(op);
    for (const auto& pair : std::vector<std::pair<Tensor, Tensor>>{{a, a}, {a, b}, {b, a}, {a, c}, {c, b}}) {
      ExpectGradientsMatch({pair.first, pair.second}, [&](const Scope& s, const std::vector<Output>& x) {
        return AddOp(s, op, {x[0], x[1]}).output(0);
      });
    }
  }
}

TEST(GradientsTest, MatMulAllTransposes) {
  Tensor a = Values({1, -2, 3, 0.5, 5, -6}, {2, 3});
  Tensor b = Values({0.1, 0.2, -0.3, 0.4, 0.5, 0.6}, {3, 2});
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      // Shapes such that op(a)·op(b) is defined: transpose the value too.
      Tensor av = ta ? Values({1, 0.5, -2, 5, 3, -6}, {3, 2}) : a;
      Tensor bv = tb ? Values({0.1, -0.3, 0.5, 0.2, 0.4, 0.6}, {2, 3}) : b;
      ExpectGradientsMatch({av, bv}, [&](const Scope& s, const std::vector<Output>& x) {
        return ops::MatMul(s, x[0], x[1], {{"transpose_a", ta}, {"transpose_b", tb}});
      });
    }
  }
}

TEST(GradientsTest, NegIdentityReshapeCastAndReuse) {
  Tensor a = Values({1, 2, 3, 4, 5, 6}, {2, 3});
  ExpectGradientsMatch({a}, [](const Scope& s, const std::vector<Output>& x) {
    // x used three times: partial gradients must be summed.
    Output r = ops::Reshape(s, ops::Neg(s, x[0]), {3, 2});
    Output back = ops::Cast(s, ops::Cast(s, ops::Identity(s, x[0]), DT_FLOAT), DT_DOUBLE);
    return ops::Mul(s, ops::Reshape(s, r, {2, 3}), ops::Add(s, back, x[0]));
  },
  // The float round trip rounds x by up to 6e-8 relative; y is quadratic in
  // x, so a large step is exact apart from that rounding (<= 2e-4 here).
  /*tolerance=*/1e-3, /*delta=*/1e-2);
}

TEST(GradientsTest, SeedAndStructure) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_DOUBLE);
  auto y = ops::Mul(root.WithOpName("y"), x, 3.0);
  std::vector<Output> grads;
  ASSERT_TRUE(AddSymbolicGradients(root, {y}, {x}, {ops::Const(root, 2.0)}, &grads).ok());
  auto session = Session::New(SessionOptions());
  ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE((*session)->Run({{"x", Tensor::Scalar<double>(5)}}, {grads[0].name()}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<double>(), 6.0);
}

TEST(GradientsTest, UnreachableAndIntegerXsAreErrors) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_DOUBLE);
  auto unrelated = ops::Placeholder(root.WithOpName("unrelated"), DT_DOUBLE);
  auto n = ops::Placeholder(root.WithOpName("n"), DT_INT32);
  auto through_int = ops::Cast(root, ops::Cast(root, x, DT_INT32), DT_DOUBLE);
  auto y = ops::Add(root.WithOpName("y"), through_int, ops::Cast(root, n, DT_DOUBLE));
  std::vector<Output> grads;
  Status s = AddSymbolicGradients(root, {y}, {unrelated}, &grads);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("'unrelated'"), std::string::npos) << s;
  s = AddSymbolicGradients(root, {y}, {n}, &grads);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("int32"), std::string::npos) << s;
  s = AddSymbolicGradients(root, {y}, {x}, &grads);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("'x'"), std::string::npos) << s;
}

TEST(GradientsTest, UnreachableXsCanBeInvalidInsteadOfErrors) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_DOUBLE);
  auto unrelated = ops::Placeholder(root.WithOpName("unrelated"), DT_DOUBLE);
  auto y = ops::Mul(root.WithOpName("y"), x, x);
  SymbolicGradientsOptions options;
  options.unreachable_is_invalid = true;
  std::vector<Gradient> grads;
  ASSERT_TRUE(AddSymbolicGradients(root, {y}, {unrelated, x}, {}, options, &grads).ok());
  ASSERT_EQ(grads.size(), 2u);
  EXPECT_FALSE(grads[0].valid());
  ASSERT_TRUE(grads[1].valid());
  auto session = Session::New(SessionOptions());
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE((*session)->Run({{"x", Tensor::Scalar<double>(3)}}, {grads[1].dense.name()}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<double>(), 6.0);  // d(x*x)/dx at 3
  // Without the option the same call is still the error.
  EXPECT_FALSE(AddSymbolicGradients(root, {y}, {unrelated}, {}, &grads).ok());
}

}  // namespace
}  // namespace weir
