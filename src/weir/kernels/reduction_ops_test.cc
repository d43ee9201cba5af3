#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "weir/kernels/kernel_test_util.h"

namespace weir {
namespace {

bool Contains(const Status& s, const std::string& text) {
  return s.message().find(text) != std::string::npos;
}

template <typename T>
Tensor Values(const TensorShape& shape, int seed) {
  std::vector<T> values(shape.num_elements());
  uint32_t state = 2654435761u * (seed + 1);
  for (T& v : values) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<T>(static_cast<int>((state >> 16) % 21) - 10);
  }
  return Tensor::FromVector(values, shape);
}

// The reduction `op` over `axes` (normalized, distinct) by the definition,
// in double: integer means truncate toward zero.
std::vector<double> Reference(const std::string& op, const Tensor& x, const std::vector<int>& axes,
                              TensorShape* out_shape, bool keep_dims) {
  const TensorShape& shape = x.shape();
  auto reduced = [&](int d) { return std::find(axes.begin(), axes.end(), d) != axes.end(); };
  *out_shape = TensorShape();
  int64_t count = 1;
  for (int d = 0; d < shape.rank(); ++d) {
    if (!reduced(d)) out_shape->AddDim(shape.dim_size(d));
    else if (keep_dims) out_shape->AddDim(1);
    if (reduced(d)) count *= shape.dim_size(d);
  }
  const double inf = std::numeric_limits<double>::infinity();
  double identity = 0;
  if (op == "Prod" || op == "All") identity = 1;
  if (op == "Max") identity = -inf;
  if (op == "Min") identity = inf;
  std::vector<double> xv = ToDoubles(x), result(out_shape->num_elements(), identity);
  for (int64_t n = 0; n < shape.num_elements(); ++n) {
    // Output index: the input index with reduced dims dropped.
    int64_t rest = n, out = 0, stride = 1;
    for (int d = shape.rank() - 1; d >= 0; --d) {
      const int64_t i = rest % shape.dim_size(d);
      rest /= shape.dim_size(d);
      if (!reduced(d)) {
        out += i * stride;
        stride *= shape.dim_size(d);
      }
    }
    double& r = result[out];
    if (op == "Sum" || op == "Mean") r += xv[n];
    if (op == "Prod") r *= xv[n];
    if (op == "Max") r = std::max(r, xv[n]);
    if (op == "Min") r = std::min(r, xv[n]);
    if (op == "All") r = r && xv[n];
    if (op == "Any") r = r || xv[n];
  }
  if (op == "Mean") {
    for (double& r : result) {
      r /= count;
      if (IsIntegerDType(x.dtype())) r = std::trunc(r);
    }
  }
  return result;
}

// Test values for `op`: small integers, exact in every type and order; for
// Prod mostly 1 and -1 so products stay small; for All and Any, bools.
template <typename T>
Tensor ValuesFor(const std::string& op, const TensorShape& shape, int seed) {
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> bits(shape.num_elements());
    uint32_t state = 2654435761u * (seed + 1);
    // Mostly one value, so that both all-true and mixed rows occur.
    const int rare = op == "All" ? 0 : 1;
    for (uint8_t& b : bits) {
      state = state * 1664525u + 1013904223u;
      b = (state >> 16) % 5 == 0 ? rare : 1 - rare;
    }
    Tensor t(DT_BOOL, shape);
    std::copy(bits.begin(), bits.end(), t.data<bool>());
    return t;
  } else {
    Tensor t = Values<T>(shape, seed);
    if (op == "Prod") {
      // A few 2s where the product stays exact.
      const bool small = shape.num_elements() <= 100;
      for (T& v : t.flat<T>()) v = static_cast<T>(v == 0 && small ? 2 : (v > 0 ? 1 : -1));
    }
    return t;
  }
}

template <typename T, typename Index>
void CheckEveryAxisSubset(const std::string& op, const TensorShape& shape) {
  Tensor x = ValuesFor<T>(op, shape, shape.rank());
  const int rank = shape.rank();
  AttrMap attrs = {{"Tidx", kDTypeOf<Index>}};
  if (!std::is_same_v<T, bool>) attrs["T"] = kDTypeOf<T>;
  for (int mask = 0; mask < (1 << rank); ++mask) {
    for (bool keep_dims : {false, true}) {
      std::vector<int> axes;
      std::vector<Index> given;
      for (int d = 0; d < rank; ++d) {
        if (!(mask & (1 << d))) continue;
        axes.push_back(d);
        // Alternate between positive and negative spellings of an axis.
        given.push_back(static_cast<Index>((mask + d) % 2 ? d - rank : d));
      }
      TensorShape expected_shape;
      std::vector<double> expected = Reference(op, x, axes, &expected_shape, keep_dims);
      attrs["keep_dims"] = keep_dims;
      auto out = RunKernel(op, attrs, {x, Tensor::FromVector(given)});
      ASSERT_TRUE(out.ok()) << op << " " << shape << " mask " << mask << ": " << out.status();
      ASSERT_EQ((*out)[0].shape(), expected_shape) << op << " " << shape << " mask " << mask;
      std::vector<double> actual = ToDoubles((*out)[0]);
      for (size_t i = 0; i < expected.size(); ++i) {
        // Small integers: every partial result is exact, in any order; a
        // float mean rounds once, in the division.
        ASSERT_NEAR(actual[i], expected[i], std::abs(expected[i]) * 1e-6)
            << op << " " << shape << " mask " << mask << " keep_dims " << keep_dims << " at "
            << i;
      }
    }
  }
}

template <typename T, typename Index>
void CheckEveryAxisSubset(const TensorShape& shape) {
  CheckEveryAxisSubset<T, Index>("Sum", shape);
}

TEST(SumOpTest, EveryAxisSubsetFloat) {
  CheckEveryAxisSubset<float, int32_t>(TensorShape({2, 3, 4}));
  CheckEveryAxisSubset<float, int64_t>(TensorShape({3, 1, 5, 2}));
  CheckEveryAxisSubset<float, int32_t>(TensorShape({2, 3, 2, 3, 2}));
}

TEST(SumOpTest, EveryAxisSubsetOtherTypes) {
  CheckEveryAxisSubset<double, int32_t>(TensorShape({2, 3, 4}));
  CheckEveryAxisSubset<int32_t, int64_t>(TensorShape({3, 1, 5, 2}));
  CheckEveryAxisSubset<int64_t, int32_t>(TensorShape({2, 3, 2, 3, 2}));
  CheckEveryAxisSubset<int32_t, int32_t>(TensorShape({7}));
}

TEST(SumOpTest, LargeReductions) {
  CheckEveryAxisSubset<float, int32_t>(TensorShape({64, 1000}));
  CheckEveryAxisSubset<double, int32_t>(TensorShape({8, 100, 16}));
  CheckEveryAxisSubset<int32_t, int32_t>(TensorShape({300, 7, 50}));
}

TEST(SumOpTest, ScalarAndEmptyAxes) {
  Tensor x = Values<float>(TensorShape({2, 3}), 0);
  auto out = RunKernel("Sum", {{"T", DT_FLOAT}}, {x, Tensor::Scalar<int32_t>(-1)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({2}));
  // No axes: the input itself, sharing its buffer.
  out = RunKernel("Sum", {{"T", DT_FLOAT}}, {x, Tensor::FromVector<int32_t>({})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE((*out)[0].SharesBufferWith(x));
  EXPECT_EQ((*out)[0].shape(), TensorShape({2, 3}));
  // A scalar input reduced over nothing.
  out = RunKernel("Sum", {{"T", DT_INT64}},
                  {Tensor::Scalar<int64_t>(5), Tensor::FromVector<int32_t>({})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<int64_t>(), 5);
}

TEST(SumOpTest, EmptyInputs) {
  Tensor x(DT_FLOAT, TensorShape({0, 3}));
  auto out = RunKernel("Sum", {{"T", DT_FLOAT}}, {x, Tensor::FromVector<int32_t>({0})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({3}));
  EXPECT_EQ(ToDoubles((*out)[0]), (std::vector<double>{0, 0, 0}));
  out = RunKernel("Sum", {{"T", DT_FLOAT}, {"keep_dims", true}},
                  {x, Tensor::FromVector<int32_t>({1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({0, 1}));
  out = RunKernel("Sum", {{"T", DT_INT32}},
                  {Tensor(DT_INT32, TensorShape({2, 0})), Tensor::FromVector<int32_t>({0, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<int32_t>(), 0);
}

TEST(SumOpTest, IntegerSumsWrap) {
  const int32_t max = std::numeric_limits<int32_t>::max();
  auto out = RunKernel("Sum", {{"T", DT_INT32}},
                       {Tensor::FromVector<int32_t>({max, 1, max, 1}),
                        Tensor::FromVector<int32_t>({0})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<int32_t>(), 0);  // 2 * 2^31 wraps to 0
}

TEST(SumOpTest, NanAndInfPropagate) {
  const float inf = std::numeric_limits<float>::infinity();
  auto out = RunKernel("Sum", {{"T", DT_FLOAT}},
                       {Tensor::FromVector<float>({1, inf, 2, std::nanf(""), inf, -inf},
                                                  TensorShape({3, 2})),
                        Tensor::FromVector<int32_t>({1})});
  ASSERT_TRUE(out.ok()) << out.status();
  const float* s = (*out)[0].data<float>();
  EXPECT_EQ(s[0], inf);
  EXPECT_TRUE(std::isnan(s[1]));
  EXPECT_TRUE(std::isnan(s[2]));
}

TEST(SumOpTest, FloatAccuracy) {
  // 10^6 copies of 0.1: a naive float loop drifts by ~1%.
  Tensor x = Tensor::FromVector(std::vector<float>(1000000, 0.1f));
  auto out = RunKernel("Sum", {{"T", DT_FLOAT}}, {x, Tensor::FromVector<int32_t>({0})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NEAR((*out)[0].scalar<float>(), 100000.0, 10.0);
}

TEST(SumOpTest, BadAxes) {
  Tensor x(DT_FLOAT, TensorShape({2, 3}));
  auto out = RunKernel("Sum", {{"T", DT_FLOAT}}, {x, Tensor::FromVector<int32_t>({2})});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(out.status()));
  EXPECT_TRUE(Contains(out.status(), "Sum")) << out.status();
  EXPECT_TRUE(Contains(out.status(), "[2,3]")) << out.status();
  EXPECT_TRUE(Contains(out.status(), "axis 2")) << out.status();

  out = RunKernel("Sum", {{"T", DT_FLOAT}}, {x, Tensor::FromVector<int32_t>({-3})});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(out.status()));

  out = RunKernel("Sum", {{"T", DT_FLOAT}}, {x, Tensor::FromVector<int32_t>({1, -1})});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(out.status()));
  EXPECT_TRUE(Contains(out.status(), "twice")) << out.status();

  out = RunKernel("Sum", {{"T", DT_FLOAT}},
                  {x, Tensor::FromVector<int32_t>({0, 1}, TensorShape({1, 2}))});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(out.status()));
  EXPECT_TRUE(Contains(out.status(), "[1,2]")) << out.status();
}


constexpr const char* kNumericReductions[] = {"Mean", "Prod", "Max", "Min"};

TEST(ReductionOpTest, EveryAxisSubsetOfRank3) {
  for (const char* op : kNumericReductions) {
    CheckEveryAxisSubset<float, int32_t>(op, TensorShape({2, 3, 4}));
    CheckEveryAxisSubset<double, int64_t>(op, TensorShape({3, 1, 5}));
    CheckEveryAxisSubset<int32_t, int32_t>(op, TensorShape({4, 3, 2}));
    CheckEveryAxisSubset<int64_t, int64_t>(op, TensorShape({2, 5, 3}));
  }
  for (const char* op : {"All", "Any"}) {
    CheckEveryAxisSubset<bool, int32_t>(op, TensorShape({2, 3, 4}));
    CheckEveryAxisSubset<bool, int64_t>(op, TensorShape({3, 1, 5}));
  }
}

TEST(ReductionOpTest, HigherRanksAndLargeReductions) {
  for (const char* op : kNumericReductions) {
    CheckEveryAxisSubset<float, int32_t>(op, TensorShape({2, 3, 2, 3, 2}));
    CheckEveryAxisSubset<int32_t, int32_t>(op, TensorShape({300, 7, 50}));
    CheckEveryAxisSubset<double, int32_t>(op, TensorShape({64, 1000}));
  }
  for (const char* op : {"All", "Any"}) {
    CheckEveryAxisSubset<bool, int32_t>(op, TensorShape({2, 3, 2, 3, 2}));
    CheckEveryAxisSubset<bool, int32_t>(op, TensorShape({300, 7, 50}));
  }
}

// Reducing nothing: the identity of each reduction (NaN for a float mean).
TEST(ReductionOpTest, EmptyReductions) {
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    const char* op;
    double float_value;
    double int32_value;
  } cases[] = {
      {"Sum", 0, 0},
      {"Prod", 1, 1},
      {"Max", -inf, std::numeric_limits<int32_t>::lowest()},
      {"Min", inf, std::numeric_limits<int32_t>::max()},
      {"Mean", std::nan(""), 0},
  };
  for (const Case& c : cases) {
    for (bool keep_dims : {false, true}) {
      auto out = RunKernel(c.op, {{"T", DT_FLOAT}, {"keep_dims", keep_dims}},
                           {Tensor(DT_FLOAT, TensorShape({0, 3})), Tensor::Scalar<int32_t>(0)});
      ASSERT_TRUE(out.ok()) << c.op << ": " << out.status();
      EXPECT_EQ((*out)[0].shape(), keep_dims ? TensorShape({1, 3}) : TensorShape({3})) << c.op;
      for (double v : ToDoubles((*out)[0])) {
        if (std::isnan(c.float_value)) {
          EXPECT_TRUE(std::isnan(v)) << c.op;
        } else {
          EXPECT_EQ(v, c.float_value) << c.op;
        }
      }
    }
    auto out = RunKernel(c.op, {{"T", DT_INT32}},
                         {Tensor(DT_INT32, TensorShape({2, 0})), Tensor::Scalar<int32_t>(1)});
    ASSERT_TRUE(out.ok()) << c.op << ": " << out.status();
    EXPECT_EQ(ToDoubles((*out)[0]), (std::vector<double>{c.int32_value, c.int32_value}))
        << c.op;
    // Every dim reduced, and an empty output.
    out = RunKernel(c.op, {{"T", DT_INT64}},
                    {Tensor(DT_INT64, TensorShape({0, 4})), Tensor::FromVector<int32_t>({0, 1})});
    ASSERT_TRUE(out.ok()) << c.op << ": " << out.status();
    EXPECT_EQ((*out)[0].shape(), TensorShape());
    out = RunKernel(c.op, {{"T", DT_DOUBLE}},
                    {Tensor(DT_DOUBLE, TensorShape({0, 4})), Tensor::Scalar<int32_t>(1)});
    ASSERT_TRUE(out.ok()) << c.op << ": " << out.status();
    EXPECT_EQ((*out)[0].shape(), TensorShape({0}));
  }
  auto all = RunKernel("All", {}, {Tensor(DT_BOOL, TensorShape({0})), Tensor::Scalar<int32_t>(0)});
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_TRUE((*all)[0].scalar<bool>());
  auto any = RunKernel("Any", {}, {Tensor(DT_BOOL, TensorShape({0})), Tensor::Scalar<int32_t>(0)});
  ASSERT_TRUE(any.ok()) << any.status();
  EXPECT_FALSE((*any)[0].scalar<bool>());
}

// NaN wins in Max and Min along every path: down columns, along rows,
// whole tensors, and wherever in the reduced values it sits.
TEST(ReductionOpTest, MaxAndMinPropagateNan) {
  const float nan = std::nanf("");
  for (const char* op : {"Max", "Min"}) {
    for (int where : {0, 5, 11}) {
      std::vector<float> values = {1, 7, -2, 3, 9, 0, 4, 4, -8, 6, 2, 5};
      values[where] = nan;
      Tensor x = Tensor::FromVector(values, TensorShape({3, 4}));
      auto columns = RunKernel(op, {{"T", DT_FLOAT}}, {x, Tensor::Scalar<int32_t>(0)});
      auto rows = RunKernel(op, {{"T", DT_FLOAT}}, {x, Tensor::Scalar<int32_t>(1)});
      auto whole = RunKernel(op, {{"T", DT_FLOAT}}, {x, Tensor::FromVector<int32_t>({0, 1})});
      ASSERT_TRUE(columns.ok() && rows.ok() && whole.ok());
      for (int c = 0; c < 4; ++c) {
        EXPECT_EQ(std::isnan((*columns)[0].data<float>()[c]), c == where % 4) << op << where;
      }
      for (int r = 0; r < 3; ++r) {
        EXPECT_EQ(std::isnan((*rows)[0].data<float>()[r]), r == where / 4) << op << where;
      }
      EXPECT_TRUE(std::isnan((*whole)[0].scalar<float>())) << op << where;
    }
    // Large enough for the pool to split a whole-tensor reduction.
    for (int64_t where : {int64_t{0}, int64_t{123457}, int64_t{299999}}) {
      std::vector<double> values(300000, 1.0);
      values[where] = std::nan("");
      auto out = RunKernel(op, {{"T", DT_DOUBLE}},
                           {Tensor::FromVector(values), Tensor::Scalar<int32_t>(0)});
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_TRUE(std::isnan((*out)[0].scalar<double>())) << op << " " << where;
    }
  }
  // Mean and Prod propagate NaN by arithmetic.
  for (const char* op : {"Mean", "Prod"}) {
    auto out = RunKernel(op, {{"T", DT_FLOAT}},
                         {Tensor::FromVector<float>({1, nan, 2}), Tensor::Scalar<int32_t>(0)});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_TRUE(std::isnan((*out)[0].scalar<float>())) << op;
  }
}

TEST(ReductionOpTest, IntegerMeanTruncatesAndProdWraps) {
  auto mean = RunKernel("Mean", {{"T", DT_INT32}},
                        {Tensor::FromVector<int32_t>({-3, -4, 7, 8}, TensorShape({2, 2})),
                         Tensor::Scalar<int32_t>(1)});
  ASSERT_TRUE(mean.ok()) << mean.status();
  EXPECT_EQ(ToDoubles((*mean)[0]), (std::vector<double>{-3, 7}));
  auto prod = RunKernel("Prod", {{"T", DT_INT32}},
                        {Tensor::FromVector<int32_t>({65536, 65536, 3}),
                         Tensor::Scalar<int32_t>(0)});
  ASSERT_TRUE(prod.ok()) << prod.status();
  EXPECT_EQ((*prod)[0].scalar<int32_t>(), 0);  // 2^32 * 3 wraps to 0
}

TEST(ReductionOpTest, BadAxesNameTheOp) {
  Tensor x(DT_FLOAT, TensorShape({2, 3}));
  for (const char* op : kNumericReductions) {
    auto out = RunKernel(op, {{"T", DT_FLOAT}}, {x, Tensor::FromVector<int32_t>({0, 2})});
    ASSERT_FALSE(out.ok());
    EXPECT_TRUE(errors::IsInvalidArgument(out.status()));
    EXPECT_TRUE(Contains(out.status(), op)) << out.status();
    EXPECT_TRUE(Contains(out.status(), "[2,3]")) << out.status();
    out = RunKernel(op, {{"T", DT_FLOAT}}, {x, Tensor::FromVector<int32_t>({-2, 0})});
    ASSERT_FALSE(out.ok());
    EXPECT_TRUE(Contains(out.status(), "twice")) << out.status();
  }
  auto out = RunKernel("Any", {{"Tidx", DT_INT64}},
                       {Tensor(DT_BOOL, TensorShape({2})), Tensor::Scalar<int64_t>(1)});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(Contains(out.status(), "Any")) << out.status();
}

// ArgMax / ArgMin along `axis` of x by the definition: first index of the
// extreme value.
template <typename T>
std::vector<double> ReferenceArg(bool max, const Tensor& x, int axis) {
  const TensorShape& shape = x.shape();
  int64_t prefix = 1, suffix = 1;
  for (int d = 0; d < axis; ++d) prefix *= shape.dim_size(d);
  for (int d = axis + 1; d < shape.rank(); ++d) suffix *= shape.dim_size(d);
  const int64_t n = shape.dim_size(axis);
  std::vector<double> xv = ToDoubles(x), result;
  for (int64_t p = 0; p < prefix; ++p) {
    for (int64_t s = 0; s < suffix; ++s) {
      int64_t best = 0;
      for (int64_t r = 1; r < n; ++r) {
        const double v = xv[(p * n + r) * suffix + s], b = xv[(p * n + best) * suffix + s];
        if (max ? v > b : v < b) best = r;
      }
      result.push_back(best);
    }
  }
  return result;
}

template <typename T, typename Index>
void CheckArgReductions(const TensorShape& shape) {
  // Values from a small range, so ties are common.
  Tensor x = Values<T>(shape, 7);
  for (T& v : x.flat<T>()) v = static_cast<T>(static_cast<int>(v) % 4);
  for (const char* op : {"ArgMax", "ArgMin"}) {
    for (int axis = -shape.rank(); axis < shape.rank(); ++axis) {
      auto out = RunKernel(op, {{"T", kDTypeOf<T>}, {"output_type", kDTypeOf<Index>}},
                           {x, Tensor::Scalar<int32_t>(axis)});
      ASSERT_TRUE(out.ok()) << op << " " << shape << " axis " << axis << ": " << out.status();
      const int normalized = axis < 0 ? axis + shape.rank() : axis;
      TensorShape expected_shape = shape;
      expected_shape.RemoveDim(normalized);
      ASSERT_EQ((*out)[0].shape(), expected_shape);
      EXPECT_EQ(ToDoubles((*out)[0]),
                ReferenceArg<T>(std::string(op) == "ArgMax", x, normalized))
          << op << " " << shape << " axis " << axis;
    }
  }
}

TEST(ArgReductionOpTest, EveryAxisVersusDefinition) {
  CheckArgReductions<float, int64_t>(TensorShape({2, 3, 4}));
  CheckArgReductions<double, int32_t>(TensorShape({5, 1, 3}));
  CheckArgReductions<int32_t, int64_t>(TensorShape({3, 700, 5}));
  CheckArgReductions<int64_t, int32_t>(TensorShape({1000, 3}));
  CheckArgReductions<float, int32_t>(TensorShape({7}));
}

TEST(ArgReductionOpTest, TiesGiveTheFirstIndex) {
  Tensor x = Tensor::FromVector<float>({3, 1, 3, 1, 2, 2}, TensorShape({2, 3}));
  auto max = RunKernel("ArgMax", {{"T", DT_FLOAT}}, {x, Tensor::Scalar<int32_t>(1)});
  auto min = RunKernel("ArgMin", {{"T", DT_FLOAT}}, {x, Tensor::Scalar<int32_t>(1)});
  ASSERT_TRUE(max.ok() && min.ok());
  EXPECT_EQ((*max)[0].dtype(), DT_INT64);  // output_type defaults to int64
  EXPECT_EQ(ToDoubles((*max)[0]), (std::vector<double>{0, 1}));
  EXPECT_EQ(ToDoubles((*min)[0]), (std::vector<double>{1, 0}));
  // Down columns too.
  Tensor y = Tensor::FromVector<int32_t>({5, 0, 5, 0}, TensorShape({2, 2}));
  max = RunKernel("ArgMax", {{"T", DT_INT32}, {"Tidx", DT_INT64}},
                  {y, Tensor::Scalar<int64_t>(0)});
  ASSERT_TRUE(max.ok()) << max.status();
  EXPECT_EQ(ToDoubles((*max)[0]), (std::vector<double>{0, 0}));
}

// NaN counts as the extreme for both ArgMax and ArgMin, and the first NaN
// wins, along rows and down columns.
TEST(ArgReductionOpTest, FirstNanWins) {
  const float nan = std::nanf("");
  Tensor x = Tensor::FromVector<float>({1, nan, 9, nan, -5}, TensorShape({5}));
  Tensor columns = Tensor::FromVector<float>({1, 2, nan, 0, 5, nan}, TensorShape({3, 2}));
  for (const char* op : {"ArgMax", "ArgMin"}) {
    auto out = RunKernel(op, {{"T", DT_FLOAT}}, {x, Tensor::Scalar<int32_t>(0)});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].scalar<int64_t>(), 1) << op;
    out = RunKernel(op, {{"T", DT_FLOAT}}, {columns, Tensor::Scalar<int32_t>(0)});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(ToDoubles((*out)[0]), (std::vector<double>{1, 2})) << op;
  }
}

TEST(ArgReductionOpTest, Errors) {
  auto out = RunKernel("ArgMax", {{"T", DT_FLOAT}},
                       {Tensor(DT_FLOAT, TensorShape({2, 0})), Tensor::Scalar<int32_t>(1)});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(out.status()));
  EXPECT_TRUE(Contains(out.status(), "ArgMax")) << out.status();
  EXPECT_TRUE(Contains(out.status(), "[2,0]")) << out.status();
  EXPECT_TRUE(Contains(out.status(), "empty")) << out.status();
  // An empty output is fine when the reduced axis is not empty.
  out = RunKernel("ArgMin", {{"T", DT_FLOAT}},
                  {Tensor(DT_FLOAT, TensorShape({0, 2})), Tensor::Scalar<int32_t>(1)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({0}));

  out = RunKernel("ArgMin", {{"T", DT_FLOAT}},
                  {Tensor(DT_FLOAT, TensorShape({2, 3})), Tensor::Scalar<int32_t>(2)});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(Contains(out.status(), "ArgMin")) << out.status();
  EXPECT_TRUE(Contains(out.status(), "axis 2")) << out.status();
  out = RunKernel("ArgMax", {{"T", DT_FLOAT}},
                  {Tensor(DT_FLOAT, TensorShape({2, 3})), Tensor::FromVector<int32_t>({0})});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(Contains(out.status(), "scalar")) << out.status();
  out = RunKernel("ArgMax", {{"T", DT_FLOAT}},
                  {Tensor::Scalar<float>(1), Tensor::Scalar<int32_t>(0)});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(Contains(out.status(), "rank")) << out.status();
}

}  // namespace
}  // namespace weir
