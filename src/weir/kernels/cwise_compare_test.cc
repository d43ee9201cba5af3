// Comparison and logic kernels: bool outputs on every broadcasting case,
// NaN rules, bool inputs, and Equal/NotEqual's incompatible_shape_error.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "weir/framework/op_kernel.h"
#include "weir/kernels/cwise_test_util.h"
#include "weir/kernels/kernel_test_util.h"

namespace weir {
namespace {

const std::vector<std::pair<const char*, std::function<bool(double, double)>>>& Comparisons() {
  static const std::vector<std::pair<const char*, std::function<bool(double, double)>>> ops = {
      {"Less", [](double a, double b) { return a < b; }},
      {"LessEqual", [](double a, double b) { return a <= b; }},
      {"Greater", [](double a, double b) { return a > b; }},
      {"GreaterEqual", [](double a, double b) { return a >= b; }},
      {"Equal", [](double a, double b) { return a == b; }},
      {"NotEqual", [](double a, double b) { return a != b; }},
  };
  return ops;
}

// Values in [-2, 2] so that ties are common.
template <typename T>
Tensor SmallValues(const TensorShape& shape, int seed) {
  Tensor t = Values<T>(shape, seed);
  for (T& v : t.flat<T>()) v = static_cast<T>(static_cast<int>(v) % 3);
  return t;
}

template <typename T>
void CheckComparisons() {
  for (const auto& [op, fn] : Comparisons()) {
    for (const BinaryCase& c : BroadcastCases()) {
      Tensor x = SmallValues<T>(c.x, 1), y = SmallValues<T>(c.y, 2);
      std::vector<double> expected = ReferenceBroadcast(
          x, y, c.out, [&fn = fn](double a, double b) { return fn(a, b) ? 1.0 : 0.0; });
      auto out = RunKernel(op, {{"T", kDTypeOf<T>}}, {x, y});
      ASSERT_TRUE(out.ok()) << op << " " << c.x << " " << c.y << ": " << out.status();
      ASSERT_EQ((*out)[0].dtype(), DT_BOOL);
      ASSERT_EQ((*out)[0].shape(), c.out) << op << " " << c.x << " " << c.y;
      ASSERT_EQ(ToDoubles((*out)[0]), expected) << op << " " << c.x << " " << c.y;
    }
  }
}

TEST(CompareOpTest, BroadcastingFloat) { CheckComparisons<float>(); }
TEST(CompareOpTest, BroadcastingDouble) { CheckComparisons<double>(); }
TEST(CompareOpTest, BroadcastingInt32) { CheckComparisons<int32_t>(); }
TEST(CompareOpTest, BroadcastingInt64) { CheckComparisons<int64_t>(); }

TEST(CompareOpTest, AScalarResultIsSharedButNeverWrittenInPlace) {
  // Scalar comparisons hand on one of two tensors their kernel keeps: a
  // consumer that reuses an input it holds alone (LogicalNot) must not
  // reuse those, or the kernel's later results would change.
  auto less = CreateTestKernel("Less", {{"T", DT_INT32}}, 2);
  ASSERT_TRUE(less.ok()) << less.status();
  auto logical_not = CreateTestKernel("LogicalNot", {}, 1);
  ASSERT_TRUE(logical_not.ok()) << logical_not.status();
  for (int round = 0; round < 3; ++round) {
    for (auto [x, y] : {std::pair{1, 2}, std::pair{2, 1}}) {
      auto out = ComputeTestKernel(less->get(), TestCpuDevice(),
                                   {Tensor::Scalar<int32_t>(x), Tensor::Scalar<int32_t>(y)});
      ASSERT_TRUE(out.ok()) << out.status();
      ASSERT_EQ((*out)[0].dtype(), DT_BOOL);
      ASSERT_EQ((*out)[0].dims(), 0);
      EXPECT_EQ((*out)[0].scalar<bool>(), x < y) << x << " < " << y << ", round " << round;
      Tensor result = std::move((*out)[0]);
      out->clear();  // the kernel's reference is now the only other one
      auto negated = ComputeTestKernel(logical_not->get(), TestCpuDevice(), {std::move(result)});
      ASSERT_TRUE(negated.ok()) << negated.status();
      EXPECT_EQ((*negated)[0].scalar<bool>(), !(x < y));
    }
  }
}

TEST(CompareOpTest, NanComparesFalseExceptNotEqual) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> xs = {nan, 1, nan, inf, -inf, inf, 0, -0.0};
  std::vector<double> ys = {1, nan, nan, inf, inf, nan, -0.0, 0};
  for (const auto& [op, fn] : Comparisons()) {
    for (DType dtype : {DT_FLOAT, DT_DOUBLE}) {
      Tensor x = dtype == DT_FLOAT ? Tensor::FromVector(std::vector<float>(xs.begin(), xs.end()))
                                   : Tensor::FromVector(xs);
      Tensor y = dtype == DT_FLOAT ? Tensor::FromVector(std::vector<float>(ys.begin(), ys.end()))
                                   : Tensor::FromVector(ys);
      auto out = RunKernel(op, {{"T", dtype}}, {x, y});
      ASSERT_TRUE(out.ok());
      for (size_t i = 0; i < xs.size(); ++i) {
        EXPECT_EQ((*out)[0].data<bool>()[i], fn(xs[i], ys[i]))
            << op << "(" << xs[i] << ", " << ys[i] << ")";
      }
      // A NaN scalar against a vector: the scalar paths.
      auto scalar = RunKernel(op, {{"T", dtype}}, {x, dtype == DT_FLOAT
                                                         ? Tensor::Scalar<float>(NAN)
                                                         : Tensor::Scalar<double>(nan)});
      ASSERT_TRUE(scalar.ok());
      for (size_t i = 0; i < xs.size(); ++i) {
        EXPECT_EQ((*scalar)[0].data<bool>()[i], std::string(op) == "NotEqual") << op;
      }
    }
  }
}

TEST(CompareOpTest, EqualityOfBools) {
  Tensor x = Tensor::FromVector<bool>({true, true, false, false}, TensorShape({2, 2}));
  Tensor y = Tensor::FromVector<bool>({true, false});
  auto equal = RunKernel("Equal", {{"T", DT_BOOL}}, {x, y});
  auto not_equal = RunKernel("NotEqual", {{"T", DT_BOOL}}, {x, y});
  ASSERT_TRUE(equal.ok() && not_equal.ok()) << equal.status() << not_equal.status();
  EXPECT_EQ(ToDoubles((*equal)[0]), (std::vector<double>{1, 0, 0, 1}));
  EXPECT_EQ(ToDoubles((*not_equal)[0]), (std::vector<double>{0, 1, 1, 0}));
}

TEST(CompareOpTest, IncompatibleShapes) {
  const Tensor x(DT_INT32, TensorShape({2, 3})), y(DT_INT32, TensorShape({4}));
  for (const auto& [op, fn] : Comparisons()) {
    auto out = RunKernel(op, {{"T", DT_INT32}}, {x, y});
    ASSERT_FALSE(out.ok()) << op;
    EXPECT_TRUE(errors::IsInvalidArgument(out.status()));
    EXPECT_EQ(out.status().message(),
              StrCat(op, ": Incompatible shapes: [2,3] vs. [4] (dtype int32)"));
  }
  // Equal and NotEqual can answer "not equal" instead.
  for (const char* op : {"Equal", "NotEqual"}) {
    auto out = RunKernel(op, {{"T", DT_INT32}, {"incompatible_shape_error", false}}, {x, y});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape(), TensorShape());
    EXPECT_EQ((*out)[0].scalar<bool>(), std::string(op) == "NotEqual");
    // Compatible shapes still compare elementwise.
    auto same = RunKernel(op, {{"T", DT_INT32}, {"incompatible_shape_error", false}},
                          {Tensor::FromVector<int32_t>({1, 2}), Tensor::Scalar<int32_t>(2)});
    ASSERT_TRUE(same.ok());
    const std::vector<double> expected =
        std::string(op) == "Equal" ? std::vector<double>{0, 1} : std::vector<double>{1, 0};
    EXPECT_EQ(ToDoubles((*same)[0]), expected);
  }
}

TEST(LogicalOpTest, TruthTablesWithBroadcasting) {
  Tensor x = Tensor::FromVector<bool>({false, true}, TensorShape({2, 1}));
  Tensor y = Tensor::FromVector<bool>({false, true}, TensorShape({1, 2}));
  auto both = RunKernel("LogicalAnd", {}, {x, y});
  auto either = RunKernel("LogicalOr", {}, {x, y});
  ASSERT_TRUE(both.ok() && either.ok()) << both.status() << either.status();
  EXPECT_EQ((*both)[0].shape(), TensorShape({2, 2}));
  EXPECT_EQ(ToDoubles((*both)[0]), (std::vector<double>{0, 0, 0, 1}));
  EXPECT_EQ(ToDoubles((*either)[0]), (std::vector<double>{0, 1, 1, 1}));
  for (const BinaryCase& c : BroadcastCases()) {
    Tensor a = Values<int32_t>(c.x, 3), b = Values<int32_t>(c.y, 4);
    std::vector<bool> av, bv;
    for (int32_t v : a.flat<int32_t>()) av.push_back(v > 0);
    for (int32_t v : b.flat<int32_t>()) bv.push_back(v > 0);
    Tensor ab = Tensor(DT_BOOL, c.x), bb = Tensor(DT_BOOL, c.y);
    std::copy(av.begin(), av.end(), ab.data<bool>());
    std::copy(bv.begin(), bv.end(), bb.data<bool>());
    for (const char* op : {"LogicalAnd", "LogicalOr"}) {
      const bool is_and = std::string(op) == "LogicalAnd";
      std::vector<double> expected = ReferenceBroadcast(ab, bb, c.out, [&](double p, double q) {
        return is_and ? (p != 0 && q != 0) : (p != 0 || q != 0);
      });
      auto out = RunKernel(op, {}, {ab, bb});
      ASSERT_TRUE(out.ok()) << op << " " << c.x << " " << c.y << out.status();
      ASSERT_EQ(ToDoubles((*out)[0]), expected) << op << " " << c.x << " " << c.y;
    }
  }
  auto negated = RunKernel("LogicalNot", {}, {Tensor::FromVector<bool>({true, false, true})});
  ASSERT_TRUE(negated.ok());
  EXPECT_EQ(ToDoubles((*negated)[0]), (std::vector<double>{0, 1, 0}));
  auto scalar = RunKernel("LogicalNot", {}, {Tensor::Scalar<bool>(false)});
  ASSERT_TRUE(scalar.ok());
  EXPECT_TRUE((*scalar)[0].scalar<bool>());
}

}  // namespace
}  // namespace weir
