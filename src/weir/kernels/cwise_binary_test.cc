#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "weir/kernels/broadcast.h"
#include "weir/kernels/kernel_test_util.h"

namespace weir {
namespace {

bool Contains(const Status& s, const std::string& text) {
  return s.message().find(text) != std::string::npos;
}

// Small integers (exact in every type), never 0 so they can divide.
template <typename T>
Tensor Values(const TensorShape& shape, int seed) {
  std::vector<T> values(shape.num_elements());
  uint32_t state = 2654435761u * (seed + 1);
  for (T& v : values) {
    state = state * 1664525u + 1013904223u;
    int x = static_cast<int>((state >> 16) % 19) - 9;
    v = static_cast<T>(x == 0 ? 7 : x);
  }
  return Tensor::FromVector(values, shape);
}

// NumPy broadcasting by definition: each output index, mapped back to each
// input by clamping broadcast dims to 0, computed in double.
std::vector<double> ReferenceBroadcast(const Tensor& x, const Tensor& y, const TensorShape& out,
                                       const std::function<double(double, double)>& fn) {
  std::vector<double> xv = ToDoubles(x), yv = ToDoubles(y), result(out.num_elements());
  const int rank = out.rank();
  auto offset = [&](const TensorShape& in, const std::vector<int64_t>& index) {
    int64_t flat = 0;
    for (int i = 0; i < in.rank(); ++i) {
      const int64_t d = in.dim_size(i);
      flat = flat * d + (d == 1 ? 0 : index[rank - in.rank() + i]);
    }
    return flat;
  };
  std::vector<int64_t> index(rank, 0);
  for (int64_t n = 0; n < out.num_elements(); ++n) {
    int64_t rest = n;
    for (int i = rank - 1; i >= 0; --i) {
      index[i] = rest % out.dim_size(i);
      rest /= out.dim_size(i);
    }
    result[n] = fn(xv[offset(x.shape(), index)], yv[offset(y.shape(), index)]);
  }
  return result;
}

struct BinaryCase {
  TensorShape x, y, out;
};

const std::vector<BinaryCase>& BroadcastCases() {
  static const std::vector<BinaryCase> cases = {
      {{2, 3}, {2, 3}, {2, 3}},                    // same shape
      {{}, {2, 3}, {2, 3}},                        // scalar x
      {{2, 3}, {}, {2, 3}},                        // scalar y
      {{1, 1}, {2, 3}, {2, 3}},                    // one-element x of rank 2
      {{2, 3}, {3}, {2, 3}},                       // bias [N,C] + [C]
      {{3}, {2, 3}, {2, 3}},                       // bias on the left
      {{5, 1}, {5, 4}, {5, 4}},                    // column
      {{4, 1}, {1, 5}, {4, 5}},                    // outer product, size-1 both sides
      {{2, 1, 3}, {1, 4, 1}, {2, 4, 3}},           // rank 3
      {{4, 1, 2}, {3, 1, 1, 2}, {3, 4, 1, 2}},     // rank mismatch
      {{2, 3, 1, 4}, {3, 5, 1}, {2, 3, 5, 4}},     // rank 4 after collapsing
      {{5, 1, 3, 1, 2}, {1, 4, 1, 6, 1}, {5, 4, 3, 6, 2}},  // rank 5
      {{2, 1, 2, 1, 2, 1, 2, 1}, {1, 2, 1, 2, 1, 2, 1, 2}, {2, 2, 2, 2, 2, 2, 2, 2}},
      {{1, 2, 1, 2, 1, 2, 1, 2, 1, 2}, {2, 1, 2, 1, 2, 1, 2, 1, 2, 1},
       {2, 2, 2, 2, 2, 2, 2, 2, 2, 2}},            // rank 10 alternating
      {{2, 3, 1}, {2, 3, 1}, {2, 3, 1}},
      {{1}, {7}, {7}},
      {{0, 3}, {3}, {0, 3}},                       // empty
      {{0, 3}, {1, 3}, {0, 3}},
      {{2, 0}, {2, 1}, {2, 0}},
      {{0}, {}, {0}},
      {{256, 1024}, {1024}, {256, 1024}},          // large enough to use threads
      {{300, 1}, {1, 400}, {300, 400}},
      {{4, 50, 1, 30}, {1, 50, 20, 1}, {4, 50, 20, 30}},
  };
  return cases;
}

struct BinaryOpSpec {
  const char* op;
  std::function<double(double, double)> fn;
};

const std::vector<BinaryOpSpec>& BinaryOps() {
  static const std::vector<BinaryOpSpec> ops = {
      {"Add", [](double a, double b) { return a + b; }},
      {"AddV2", [](double a, double b) { return a + b; }},
      {"Sub", [](double a, double b) { return a - b; }},
      {"Mul", [](double a, double b) { return a * b; }},
      {"RealDiv", [](double a, double b) { return a / b; }},
  };
  return ops;
}

template <typename T>
void CheckBinaryOps() {
  const DType dtype = kDTypeOf<T>;
  for (const BinaryOpSpec& spec : BinaryOps()) {
    for (const BinaryCase& c : BroadcastCases()) {
      Tensor x = Values<T>(c.x, 1), y = Values<T>(c.y, 2);
      std::function<double(double, double)> fn = spec.fn;
      if (std::is_integral_v<T> && std::string(spec.op) == "RealDiv") {
        fn = [](double a, double b) { return std::trunc(a / b); };
      }
      std::vector<double> expected = ReferenceBroadcast(x, y, c.out, fn);
      auto out = RunKernel(spec.op, {{"T", dtype}}, {x, y});
      ASSERT_TRUE(out.ok()) << spec.op << " " << c.x << " " << c.y << ": " << out.status();
      const Tensor& z = (*out)[0];
      ASSERT_EQ(z.shape(), c.out) << spec.op << " " << c.x << " " << c.y;
      ASSERT_EQ(z.dtype(), dtype);
      std::vector<double> actual = ToDoubles(z);
      for (size_t i = 0; i < expected.size(); ++i) {
        const double tolerance = std::is_same_v<T, float> ? 1e-6 * std::abs(expected[i]) : 0;
        ASSERT_NEAR(actual[i], expected[i], tolerance)
            << spec.op << " " << dtype << " " << c.x << " (+) " << c.y << " at " << i;
      }
    }
  }
}

TEST(BinaryOpTest, BroadcastingFloat) { CheckBinaryOps<float>(); }
TEST(BinaryOpTest, BroadcastingDouble) { CheckBinaryOps<double>(); }
TEST(BinaryOpTest, BroadcastingInt32) { CheckBinaryOps<int32_t>(); }
TEST(BinaryOpTest, BroadcastingInt64) { CheckBinaryOps<int64_t>(); }

TEST(BinaryOpTest, IncompatibleShapes) {
  for (const BinaryOpSpec& spec : BinaryOps()) {
    auto out = RunKernel(spec.op, {{"T", DT_FLOAT}},
                         {Tensor(DT_FLOAT, TensorShape({2, 3})), Tensor(DT_FLOAT, TensorShape({4}))});
    ASSERT_FALSE(out.ok()) << spec.op;
    EXPECT_TRUE(errors::IsInvalidArgument(out.status()));
    EXPECT_EQ(out.status().message(),
              std::string(spec.op) + ": Incompatible shapes: [2,3] vs. [4]");
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
  EXPECT_EQ(run("RealDiv", min, -1), min);
  EXPECT_EQ(run("RealDiv", T(-7), T(2)), T(-3));  // toward zero
  EXPECT_EQ(run("RealDiv", T(7), T(-2)), T(-3));
  auto neg = RunKernel("Neg", {{"T", dtype}}, {Tensor::FromVector<T>({min, max, 0})});
  ASSERT_TRUE(neg.ok());
  EXPECT_EQ((*neg)[0].template data<T>()[0], min);
  EXPECT_EQ((*neg)[0].template data<T>()[1], -max);
}

TEST(BinaryOpTest, Int32Wraps) { CheckIntegerWraps<int32_t>(); }
TEST(BinaryOpTest, Int64Wraps) { CheckIntegerWraps<int64_t>(); }

TEST(BinaryOpTest, IntegerDivisionByZero) {
  for (DType dtype : {DT_INT32, DT_INT64}) {
    Tensor x = dtype == DT_INT32 ? Values<int32_t>(TensorShape({2, 3}), 0)
                                 : Values<int64_t>(TensorShape({2, 3}), 0);
    Tensor y = dtype == DT_INT32 ? Tensor::FromVector<int32_t>({1, 0, 2})
                                 : Tensor::FromVector<int64_t>({1, 0, 2});
    auto out = RunKernel("RealDiv", {{"T", dtype}}, {x, y});
    ASSERT_FALSE(out.ok());
    EXPECT_TRUE(errors::IsInvalidArgument(out.status()));
    EXPECT_TRUE(Contains(out.status(), "Integer division by zero")) << out.status();
    EXPECT_TRUE(Contains(out.status(), "[2,3]")) << out.status();
  }
  // Nothing is divided when the output is empty.
  auto out = RunKernel("RealDiv", {{"T", DT_INT32}},
                       {Tensor(DT_INT32, TensorShape({0, 1})), Tensor::FromVector<int32_t>({0})});
  EXPECT_TRUE(out.ok()) << out.status();
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

template <typename T>
void CheckUnaryOps() {
  const DType dtype = kDTypeOf<T>;
  for (const TensorShape& shape : {TensorShape({}), TensorShape({0}), TensorShape({3, 5}),
                                   TensorShape({1000, 33})}) {
    Tensor x = Values<T>(shape, 4);
    std::vector<double> xv = ToDoubles(x);
    auto neg = RunKernel("Neg", {{"T", dtype}}, {x});
    auto relu = RunKernel("Relu", {{"T", dtype}}, {x});
    ASSERT_TRUE(neg.ok() && relu.ok());
    ASSERT_EQ((*neg)[0].shape(), shape);
    ASSERT_EQ((*relu)[0].shape(), shape);
    std::vector<double> nv = ToDoubles((*neg)[0]), rv = ToDoubles((*relu)[0]);
    for (size_t i = 0; i < xv.size(); ++i) {
      ASSERT_EQ(nv[i], -xv[i]);
      ASSERT_EQ(rv[i], std::max(xv[i], 0.0));
    }
  }
}

TEST(UnaryOpTest, Float) { CheckUnaryOps<float>(); }
TEST(UnaryOpTest, Double) { CheckUnaryOps<double>(); }
TEST(UnaryOpTest, Int32) { CheckUnaryOps<int32_t>(); }
TEST(UnaryOpTest, Int64) { CheckUnaryOps<int64_t>(); }

TEST(UnaryOpTest, ReluSpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Long enough for the vector path, with specials in the tail too.
  std::vector<float> values(35, -1.0f);
  values[0] = nan, values[1] = inf, values[2] = -inf, values[33] = nan, values[34] = 2.5f;
  auto out = RunKernel("Relu", {{"T", DT_FLOAT}}, {Tensor::FromVector(values)});
  ASSERT_TRUE(out.ok());
  const float* r = (*out)[0].data<float>();
  EXPECT_TRUE(std::isnan(r[0]));
  EXPECT_EQ(r[1], inf);
  EXPECT_EQ(r[2], 0.0f);
  EXPECT_EQ(r[3], 0.0f);
  EXPECT_TRUE(std::isnan(r[33]));
  EXPECT_EQ(r[34], 2.5f);
  auto neg = RunKernel("Neg", {{"T", DT_FLOAT}}, {Tensor::FromVector(values)});
  ASSERT_TRUE(neg.ok());
  EXPECT_TRUE(std::isnan((*neg)[0].data<float>()[0]));
  EXPECT_EQ((*neg)[0].data<float>()[1], -inf);
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
}

}  // namespace
}  // namespace weir
