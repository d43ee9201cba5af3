// Binary arithmetic kernels against references computed in double, on
// every broadcasting case, plus the rules for special values: NaN and Inf,
// integer wrap-around, division and modulo by zero, floor signs.
//
// Tolerances: integers exact; float 1e-6 relative (one rounding of the
// result, and Pow's vectorized pow); double 1e-12 relative.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "weir/kernels/broadcast.h"
#include "weir/kernels/cwise_test_util.h"
#include "weir/kernels/kernel_test_util.h"

namespace weir {
namespace {

template <typename T>
constexpr double kRelativeTolerance = std::is_same_v<T, float>    ? 1e-6
                                      : std::is_same_v<T, double> ? 1e-12
                                                                  : 0;

struct BinaryOpSpec {
  const char* op;
  std::function<double(double, double)> fn;
  bool non_negative_y = false;  // integer Pow rejects negative exponents
};

double FloorDivide(double a, double b) { return std::floor(a / b); }

const std::vector<BinaryOpSpec>& BinaryOps() {
  static const std::vector<BinaryOpSpec> ops = {
      {"Add", [](double a, double b) { return a + b; }},
      {"AddV2", [](double a, double b) { return a + b; }},
      {"Sub", [](double a, double b) { return a - b; }},
      {"Mul", [](double a, double b) { return a * b; }},
      {"RealDiv", [](double a, double b) { return a / b; }},
      {"Div", [](double a, double b) { return a / b; }},
      {"FloorDiv", FloorDivide},
      {"FloorMod", [](double a, double b) { return a - FloorDivide(a, b) * b; }},
      {"Maximum", [](double a, double b) { return std::max(a, b); }},
      {"Minimum", [](double a, double b) { return std::min(a, b); }},
      {"Pow", [](double a, double b) { return std::pow(a, b); }, true},
      {"SquaredDifference", [](double a, double b) { return (a - b) * (a - b); }},
  };
  return ops;
}

template <typename T>
void CheckBinaryOps() {
  const DType dtype = kDTypeOf<T>;
  for (const BinaryOpSpec& spec : BinaryOps()) {
    const std::string op = spec.op;
    for (const BinaryCase& c : BroadcastCases()) {
      Tensor x = Values<T>(c.x, 1), y = Values<T>(c.y, 2);
      if (spec.non_negative_y) {
        for (T& v : y.flat<T>()) v = v < 0 ? T(-v) : v;
      }
      std::function<double(double, double)> fn = spec.fn;
      if (std::is_integral_v<T> && (op == "RealDiv" || op == "Div")) {
        fn = [](double a, double b) { return std::trunc(a / b); };
      }
      std::vector<double> expected = ReferenceBroadcast(x, y, c.out, fn);
      auto out = RunKernel(op, {{"T", dtype}}, {x, y});
      ASSERT_TRUE(out.ok()) << op << " " << c.x << " " << c.y << ": " << out.status();
      const Tensor& z = (*out)[0];
      ASSERT_EQ(z.shape(), c.out) << op << " " << c.x << " " << c.y;
      ASSERT_EQ(z.dtype(), dtype);
      std::vector<double> actual = ToDoubles(z);
      for (size_t i = 0; i < expected.size(); ++i) {
        ASSERT_TRUE(IsClose(actual[i], expected[i], kRelativeTolerance<T>, 0))
            << op << " " << dtype << " " << c.x << " (+) " << c.y << " at " << i << ": "
            << actual[i] << " vs. " << expected[i];
      }
    }
  }
}

TEST(BinaryOpTest, BroadcastingFloat) { CheckBinaryOps<float>(); }
TEST(BinaryOpTest, BroadcastingDouble) { CheckBinaryOps<double>(); }
TEST(BinaryOpTest, BroadcastingInt32) { CheckBinaryOps<int32_t>(); }
TEST(BinaryOpTest, BroadcastingInt64) { CheckBinaryOps<int64_t>(); }

TEST(BinaryOpTest, IncompatibleShapesNameTheOpShapesAndDtype) {
  for (const BinaryOpSpec& spec : BinaryOps()) {
    for (const auto& [x, y] : std::vector<std::pair<TensorShape, TensorShape>>{
             {{2, 3}, {4}}, {{2, 3}, {3, 2}}, {{0}, {2}}}) {
      auto out = RunKernel(spec.op, {{"T", DT_FLOAT}},
                           {Tensor(DT_FLOAT, x), Tensor(DT_FLOAT, y)});
      ASSERT_FALSE(out.ok()) << spec.op;
      EXPECT_TRUE(errors::IsInvalidArgument(out.status()));
      EXPECT_EQ(out.status().message(), StrCat(spec.op, ": Incompatible shapes: ", x, " vs. ", y,
                                               " (dtype float)"));
    }
  }
}

TEST(BinaryOpTest, NanAndInfPropagate) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x = Tensor::FromVector<float>({nan, inf, -inf, inf, 0, 1, -1, 0});
  Tensor y = Tensor::FromVector<float>({1, 1, inf, 0, 0, 0, 0, nan});
  auto add = RunKernel("Add", {{"T", DT_FLOAT}}, {x, y});
  auto mul = RunKernel("Mul", {{"T", DT_FLOAT}}, {x, y});
  auto div = RunKernel("RealDiv", {{"T", DT_FLOAT}}, {x, y});
  ASSERT_TRUE(add.ok() && mul.ok() && div.ok());
  const float* a = (*add)[0].data<float>();
  const float* m = (*mul)[0].data<float>();
  const float* d = (*div)[0].data<float>();
  EXPECT_TRUE(std::isnan(a[0]));
  EXPECT_EQ(a[1], inf);
  EXPECT_TRUE(std::isnan(a[2]));  // -inf + inf
  EXPECT_TRUE(std::isnan(a[7]));
  EXPECT_TRUE(std::isnan(m[3]));  // inf * 0
  EXPECT_EQ(m[2], -inf);
  EXPECT_EQ(d[5], inf);           // 1 / 0
  EXPECT_EQ(d[6], -inf);          // -1 / 0
  EXPECT_TRUE(std::isnan(d[4]));  // 0 / 0
  EXPECT_TRUE(std::isnan(d[7]));

  // A NaN scalar spreads through a broadcast.
  auto spread = RunKernel("Sub", {{"T", DT_DOUBLE}},
                          {Values<double>(TensorShape({3, 4}), 0),
                           Tensor::Scalar<double>(std::numeric_limits<double>::quiet_NaN())});
  ASSERT_TRUE(spread.ok());
  for (double v : ToDoubles((*spread)[0])) EXPECT_TRUE(std::isnan(v));
}

// Maximum and Minimum return NaN when either side is NaN, on the vector
// path (long inputs), the scalar paths and the broadcast path.
template <typename T>
void CheckMinMaxPropagateNan() {
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const T inf = std::numeric_limits<T>::infinity();
  std::vector<T> xs(37), ys(37);
  for (int i = 0; i < 37; ++i) {
    xs[i] = static_cast<T>(i % 5) - 2;
    ys[i] = static_cast<T>(i % 3) - 1;
  }
  xs[3] = nan, ys[4] = nan, xs[5] = nan, ys[5] = nan, xs[36] = nan, ys[35] = nan;
  xs[6] = inf, ys[7] = -inf;
  for (const char* op : {"Maximum", "Minimum"}) {
    const bool is_max = std::string(op) == "Maximum";
    auto out = RunKernel(op, {{"T", kDTypeOf<T>}},
                         {Tensor::FromVector(xs), Tensor::FromVector(ys)});
    ASSERT_TRUE(out.ok()) << out.status();
    const T* z = (*out)[0].template data<T>();
    for (int i = 0; i < 37; ++i) {
      if (std::isnan(xs[i]) || std::isnan(ys[i])) {
        EXPECT_TRUE(std::isnan(z[i])) << op << " at " << i;
      } else {
        EXPECT_EQ(z[i], is_max ? std::max(xs[i], ys[i]) : std::min(xs[i], ys[i])) << op << i;
      }
    }
    for (bool nan_left : {true, false}) {
      Tensor scalar = Tensor::Scalar<T>(nan);
      Tensor vector = Tensor::FromVector(ys);
      auto spread = RunKernel(op, {{"T", kDTypeOf<T>}},
                              nan_left ? std::vector<Tensor>{scalar, vector}
                                       : std::vector<Tensor>{vector, scalar});
      ASSERT_TRUE(spread.ok());
      for (double v : ToDoubles((*spread)[0])) EXPECT_TRUE(std::isnan(v)) << op;
    }
    Tensor column = Tensor::FromVector<T>({1, nan}, TensorShape({2, 1}));
    auto broadcast = RunKernel(op, {{"T", kDTypeOf<T>}},
                               {column, Tensor::FromVector<T>({0, nan, 2})});
    ASSERT_TRUE(broadcast.ok());
    std::vector<double> b = ToDoubles((*broadcast)[0]);
    EXPECT_EQ(b[0], is_max ? 1 : 0);
    EXPECT_TRUE(std::isnan(b[1]));
    EXPECT_EQ(b[2], is_max ? 2 : 1);
    for (int i = 3; i < 6; ++i) EXPECT_TRUE(std::isnan(b[i]));
  }
}

TEST(BinaryOpTest, MaximumMinimumPropagateNanFloat) { CheckMinMaxPropagateNan<float>(); }
TEST(BinaryOpTest, MaximumMinimumPropagateNanDouble) { CheckMinMaxPropagateNan<double>(); }

template <typename T>
void CheckIntegerWraps() {
  const DType dtype = kDTypeOf<T>;
  const T max = std::numeric_limits<T>::max(), min = std::numeric_limits<T>::min();
  auto run = [&](const char* op, T a, T b) {
    auto out = RunKernel(op, {{"T", dtype}},
                         {Tensor::FromVector<T>({a, a}), Tensor::FromVector<T>({b, b})});
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? (*out)[0].template data<T>()[0] : T(0);
  };
  EXPECT_EQ(run("Add", max, 1), min);
  EXPECT_EQ(run("AddV2", min, -1), max);
  EXPECT_EQ(run("Sub", min, 1), max);
  EXPECT_EQ(run("Mul", max, 2), T(-2));
  const T half_bits = T(1) << (sizeof(T) * 4);
  EXPECT_EQ(run("Mul", half_bits, half_bits), T(0));
  for (const char* op : {"RealDiv", "Div", "FloorDiv"}) EXPECT_EQ(run(op, min, -1), min) << op;
  EXPECT_EQ(run("FloorMod", min, -1), T(0));
  EXPECT_EQ(run("SquaredDifference", max, min), T(1));  // (2^n - 1)^2 mod 2^n
  EXPECT_EQ(run("SquaredDifference", T(-3), T(4)), T(49));
  EXPECT_EQ(run("Pow", T(2), T(sizeof(T) * 8)), T(0));
  EXPECT_EQ(run("Pow", T(2), T(sizeof(T) * 8 - 1)), min);
  EXPECT_EQ(run("Pow", T(3), T(5)), T(243));
  EXPECT_EQ(run("Pow", T(-3), T(3)), T(-27));
  EXPECT_EQ(run("Pow", T(0), T(0)), T(1));
  EXPECT_EQ(run("Pow", T(-1), max), T(-1));
  EXPECT_EQ(run("Maximum", min, max), max);
  EXPECT_EQ(run("Minimum", min, max), min);
  auto neg = RunKernel("Neg", {{"T", dtype}}, {Tensor::FromVector<T>({min, max, 0})});
  ASSERT_TRUE(neg.ok());
  EXPECT_EQ((*neg)[0].template data<T>()[0], min);
  EXPECT_EQ((*neg)[0].template data<T>()[1], -max);
}

TEST(BinaryOpTest, Int32Wraps) { CheckIntegerWraps<int32_t>(); }
TEST(BinaryOpTest, Int64Wraps) { CheckIntegerWraps<int64_t>(); }

// Every sign combination, against Python's // and %: the remainder is 0 or
// has the divisor's sign, and x == (x // y) * y + x % y.
template <typename T>
void CheckFloorSigns() {
  struct Case {
    T x, y, quotient, remainder;
  };
  const std::vector<Case> cases = {
      {7, 2, 3, 1},    {-7, 2, -4, 1},  {7, -2, -4, -1}, {-7, -2, 3, -1},
      {6, 3, 2, 0},    {-6, 3, -2, 0},  {6, -3, -2, 0},  {-6, -3, 2, 0},
      {0, 5, 0, 0},    {0, -5, 0, 0},   {1, 5, 0, 1},    {-1, 5, -1, 4},
      {1, -5, -1, -4}, {-1, -5, 0, -1}, {5, 1, 5, 0},    {-5, -1, 5, 0},
  };
  std::vector<T> xs, ys;
  for (const Case& c : cases) xs.push_back(c.x), ys.push_back(c.y);
  auto div = RunKernel("FloorDiv", {{"T", kDTypeOf<T>}},
                       {Tensor::FromVector(xs), Tensor::FromVector(ys)});
  auto mod = RunKernel("FloorMod", {{"T", kDTypeOf<T>}},
                       {Tensor::FromVector(xs), Tensor::FromVector(ys)});
  ASSERT_TRUE(div.ok() && mod.ok()) << div.status() << mod.status();
  for (size_t i = 0; i < cases.size(); ++i) {
    const T q = (*div)[0].template data<T>()[i];
    const T r = (*mod)[0].template data<T>()[i];
    EXPECT_EQ(q, cases[i].quotient) << cases[i].x << " // " << cases[i].y;
    EXPECT_EQ(r, cases[i].remainder) << cases[i].x << " % " << cases[i].y;
    if constexpr (std::is_floating_point_v<T>) {
      // Python's zero remainder takes the divisor's sign too.
      if (r == 0) {
        EXPECT_EQ(std::signbit(r), std::signbit(cases[i].y)) << cases[i].x;
      }
    }
  }
}

TEST(BinaryOpTest, FloorDivAndFloorModSignsInt32) { CheckFloorSigns<int32_t>(); }
TEST(BinaryOpTest, FloorDivAndFloorModSignsInt64) { CheckFloorSigns<int64_t>(); }
TEST(BinaryOpTest, FloorDivAndFloorModSignsFloat) { CheckFloorSigns<float>(); }
TEST(BinaryOpTest, FloorDivAndFloorModSignsDouble) { CheckFloorSigns<double>(); }

TEST(BinaryOpTest, FloatFloorModOfFractionsAndInfinities) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor x = Tensor::FromVector<double>({5.5, -5.5, 5.5, -5.5, 1, -1, inf, 1, nan, 1});
  Tensor y = Tensor::FromVector<double>({2, 2, -2, -2, inf, inf, 2, 0, 2, nan});
  auto mod = RunKernel("FloorMod", {{"T", DT_DOUBLE}}, {x, y});
  auto div = RunKernel("FloorDiv", {{"T", DT_DOUBLE}}, {x, y});
  ASSERT_TRUE(mod.ok() && div.ok());
  std::vector<double> r = ToDoubles((*mod)[0]), q = ToDoubles((*div)[0]);
  EXPECT_EQ(r[0], 1.5);
  EXPECT_EQ(r[1], 0.5);
  EXPECT_EQ(r[2], -0.5);
  EXPECT_EQ(r[3], -1.5);
  EXPECT_EQ(r[4], 1);    // Python: 1.0 % inf == 1.0
  EXPECT_EQ(r[5], inf);  // Python: -1.0 % inf == inf
  for (int i : {6, 7, 8, 9}) EXPECT_TRUE(std::isnan(r[i])) << i;
  EXPECT_EQ(q[0], 2);
  EXPECT_EQ(q[1], -3);
  EXPECT_EQ(q[7], inf);  // 1 // 0 is floor(inf): float division by zero is not an error
}

TEST(BinaryOpTest, IntegerDivisionByZeroIsAnError) {
  for (const char* op : {"RealDiv", "Div", "FloorDiv", "FloorMod"}) {
    for (DType dtype : {DT_INT32, DT_INT64}) {
      Tensor x = dtype == DT_INT32 ? Values<int32_t>(TensorShape({2, 3}), 0)
                                   : Values<int64_t>(TensorShape({2, 3}), 0);
      Tensor y = dtype == DT_INT32 ? Tensor::FromVector<int32_t>({1, 0, 2})
                                   : Tensor::FromVector<int64_t>({1, 0, 2});
      auto out = RunKernel(op, {{"T", dtype}}, {x, y});
      ASSERT_FALSE(out.ok()) << op;
      EXPECT_TRUE(errors::IsInvalidArgument(out.status()));
      EXPECT_EQ(out.status().message(),
                StrCat(op, ": Integer division by zero (x [2,3], y [3], dtype ", dtype, ")"));
    }
    // Nothing is divided when the output is empty.
    auto out = RunKernel(op, {{"T", DT_INT32}},
                         {Tensor(DT_INT32, TensorShape({0, 1})), Tensor::FromVector<int32_t>({0})});
    EXPECT_TRUE(out.ok()) << out.status();
  }
}

TEST(BinaryOpTest, IntegerPowOfNegativeExponentIsAnError) {
  auto out = RunKernel("Pow", {{"T", DT_INT64}},
                       {Tensor::FromVector<int64_t>({2, 3}), Tensor::Scalar<int64_t>(-1)});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(out.status()));
  EXPECT_TRUE(Contains(out.status(), "Pow: Integers to negative integer powers are not allowed"))
      << out.status();
  EXPECT_TRUE(Contains(out.status(), "int64")) << out.status();
}

TEST(BinaryOpTest, FloatPowSpecialValues) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Long enough for the vector path; each pair checked against std::pow.
  std::vector<double> xs = {-2, -2, -8, 0,  0,   -0.0, 1,   nan, 2,    0.5, inf, -inf, -inf,
                            2,  10, 10, 1e-3, 3, 7, 1.5, -1,  -1,  inf, 0, 4, 9, 2.5, -3};
  std::vector<double> ys = {3,  0.5, 1.0 / 3, -1, 0, -1, nan, 0, -inf, -inf, -1, 3, 2,
                            0.5, 300, -300, 2,  -2, 1, 2.5, inf, -inf, 0, 2, 0.5, -0.5, 3, 4};
  for (DType dtype : {DT_FLOAT, DT_DOUBLE}) {
    Tensor x = dtype == DT_FLOAT
                   ? Tensor::FromVector(std::vector<float>(xs.begin(), xs.end()))
                   : Tensor::FromVector(xs);
    Tensor y = dtype == DT_FLOAT
                   ? Tensor::FromVector(std::vector<float>(ys.begin(), ys.end()))
                   : Tensor::FromVector(ys);
    auto out = RunKernel("Pow", {{"T", dtype}}, {x, y});
    ASSERT_TRUE(out.ok());
    std::vector<double> z = ToDoubles((*out)[0]), xv = ToDoubles(x), yv = ToDoubles(y);
    for (size_t i = 0; i < xs.size(); ++i) {
      double expected = std::pow(xv[i], yv[i]);
      if (dtype == DT_FLOAT) expected = static_cast<float>(expected);
      EXPECT_TRUE(IsClose(z[i], expected, dtype == DT_FLOAT ? 1e-6 : 1e-12, 0))
          << dtype << " pow(" << xv[i] << ", " << yv[i] << ") = " << z[i] << ", not "
          << expected;
    }
  }
}

TEST(BinaryOpTest, ReusesAnInputBufferItOwns) {
  Tensor x = Values<float>(TensorShape({4, 8}), 3);
  const void* x_data = x.raw_data();
  // Not an initializer list: its elements are copied, which would share x.
  std::vector<Tensor> inputs;
  inputs.push_back(std::move(x));
  inputs.push_back(Tensor::FromVector<float>({2, 2, 2, 2, 2, 2, 2, 2}));
  auto out = RunKernel("Mul", {{"T", DT_FLOAT}}, std::move(inputs));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].raw_data(), x_data);

  // A buffer someone else holds is never written.
  Tensor shared = Values<float>(TensorShape({4, 8}), 3);
  std::vector<double> before = ToDoubles(shared);
  out = RunKernel("Add", {{"T", DT_FLOAT}}, {shared, Tensor::Scalar<float>(1)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NE((*out)[0].raw_data(), shared.raw_data());
  EXPECT_EQ(ToDoubles(shared), before);
}

// Two scalars take a path of their own (no broadcast plan, no Eigen
// expression): the values are checked by CheckBinaryOps' [] (+) [] case;
// here its errors, wrap-around and buffer reuse, which must be those of
// the general path.
TEST(BinaryOpTest, TwoScalarsFailReuseAndWrapAsTheGeneralPath) {
  for (const char* op : {"RealDiv", "Div", "FloorDiv", "FloorMod"}) {
    auto out =
        RunKernel(op, {{"T", DT_INT64}}, {Tensor::Scalar<int64_t>(7), Tensor::Scalar<int64_t>(0)});
    ASSERT_FALSE(out.ok()) << op;
    EXPECT_TRUE(errors::IsInvalidArgument(out.status()));
    EXPECT_EQ(out.status().message(),
              StrCat(op, ": Integer division by zero (x [], y [], dtype ", DT_INT64, ")"));
  }
  auto out = RunKernel(
      "Div", {{"T", DT_INT32}},
      {Tensor::Scalar<int32_t>(std::numeric_limits<int32_t>::min()), Tensor::Scalar<int32_t>(-1)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<int32_t>(), std::numeric_limits<int32_t>::min());
  out = RunKernel(
      "Add", {{"T", DT_INT32}},
      {Tensor::Scalar<int32_t>(std::numeric_limits<int32_t>::max()), Tensor::Scalar<int32_t>(1)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<int32_t>(), std::numeric_limits<int32_t>::min());
  EXPECT_EQ((*out)[0].shape(), TensorShape());

  // An input the kernel owns alone becomes the output (y here: x is shared).
  Tensor x = Tensor::Scalar<int32_t>(40);
  std::vector<Tensor> inputs;
  inputs.push_back(x);
  inputs.push_back(Tensor::Scalar<int32_t>(2));
  const void* y_data = inputs[1].raw_data();
  out = RunKernel("Add", {{"T", DT_INT32}}, std::move(inputs));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<int32_t>(), 42);
  EXPECT_EQ((*out)[0].raw_data(), y_data);
  EXPECT_EQ(x.scalar<int32_t>(), 40);
  // A comparison's bool output never reuses a numeric input.
  out = RunKernel("Less", {{"T", DT_INT32}},
                  {Tensor::Scalar<int32_t>(1), Tensor::Scalar<int32_t>(2)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), DT_BOOL);
  EXPECT_TRUE((*out)[0].scalar<bool>());
}

TEST(BroadcastPlanTest, CollapsesDims) {
  auto plan = MakeBroadcastPlan(TensorShape({2, 3, 4}), TensorShape({4}));
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->kind, BroadcastPlan::Kind::kGeneral);
  EXPECT_EQ(plan->out_dims, (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(plan->x_dims, (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(plan->y_dims, (std::vector<int64_t>{1, 4}));
  plan = MakeBroadcastPlan(TensorShape({2, 1, 3, 1}), TensorShape({1, 5, 1, 1}));
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->out_dims, (std::vector<int64_t>{2, 5, 3}));
  EXPECT_EQ(plan->x_dims, (std::vector<int64_t>{2, 1, 3}));
  EXPECT_EQ(plan->y_dims, (std::vector<int64_t>{1, 5, 1}));
  plan = MakeBroadcastPlan(TensorShape({1, 3}), TensorShape({3}));
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->kind, BroadcastPlan::Kind::kSameShape);
  EXPECT_EQ(plan->output_shape, TensorShape({1, 3}));
  plan = MakeBroadcastPlan(TensorShape({1, 1}), TensorShape({3}));
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->kind, BroadcastPlan::Kind::kScalarX);
  EXPECT_EQ(plan->output_shape, TensorShape({1, 3}));
  plan = MakeBroadcastPlan(TensorShape({5}), TensorShape({1}));
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->kind, BroadcastPlan::Kind::kScalarY);
  EXPECT_EQ(plan->output_shape, TensorShape({5}));
  plan = MakeBroadcastPlan(TensorShape({1}), TensorShape({0}));
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->output_shape, TensorShape({0}));
}

TEST(BroadcastPlanTest, CollapsesThreeInputs) {
  const TensorShape out({2, 3, 4, 5}), a({3, 1, 5}), b({2, 1, 1, 1}), c({});
  CollapsedBroadcast collapsed = CollapseBroadcast(out, {&a, &b, &c});
  EXPECT_EQ(collapsed.out_dims, (std::vector<int64_t>{2, 3, 4, 5}));
  EXPECT_EQ(collapsed.in_dims[0], (std::vector<int64_t>{1, 3, 1, 5}));
  EXPECT_EQ(collapsed.in_dims[1], (std::vector<int64_t>{2, 1, 1, 1}));
  EXPECT_EQ(collapsed.in_dims[2], (std::vector<int64_t>{1, 1, 1, 1}));
  const TensorShape same({2, 3});
  collapsed = CollapseBroadcast(same, {&same, &same, &c});
  EXPECT_EQ(collapsed.out_dims, (std::vector<int64_t>{6}));
  EXPECT_EQ(collapsed.in_dims[2], (std::vector<int64_t>{1}));
  const TensorShape one({1, 1});
  collapsed = CollapseBroadcast(one, {&one, &c});
  EXPECT_EQ(collapsed.out_dims, (std::vector<int64_t>{1}));
}

}  // namespace
}  // namespace weir
