// _MatMulAccumulate against acc + concat(a, axis 1)^T * b written out as
// plain loops in double, with one and several pieces, sizes that split over
// the intra-op pool (by rows and by columns) and sizes that do not, acc
// broadcasting as in AddV2 (the op the fusion replaces), and its errors.
#include <gtest/gtest.h>

#include "weir/framework/op_kernel.h"
#include "weir/kernels/kernel_test_util.h"
#include "weir/kernels/nn_test_util.h"

namespace weir {
namespace {

struct Case {
  std::vector<int64_t> widths;  // m_i, the pieces' column counts
  int64_t k, n;
};

// acc + concat(a, axis 1)^T * b, in double.
std::vector<double> Reference(const Case& c, const std::vector<double>& acc,
                              const std::vector<std::vector<double>>& a,
                              const std::vector<double>& b) {
  std::vector<double> out = acc;
  int64_t row = 0;
  for (size_t p = 0; p < a.size(); ++p) {
    const int64_t width = c.widths[p];
    for (int64_t i = 0; i < width; ++i, ++row) {
      for (int64_t j = 0; j < c.n; ++j) {
        double sum = 0;
        for (int64_t l = 0; l < c.k; ++l) sum += a[p][l * width + i] * b[l * c.n + j];
        out[row * c.n + j] += sum;
      }
    }
  }
  return out;
}

AttrMap Attrs(int pieces) { return {{"T", DT_FLOAT}, {"N", int64_t{pieces}}}; }

TEST(MatMulAccumulateTest, MatchesTheProductWrittenOut) {
  // The last three are big enough (2 * m * n * k >= 2^24) to split over the
  // test device's two intra-op threads: by rows in blocks that cut a piece,
  // and by columns (m < n).
  const std::vector<Case> cases = {
      {{3}, 4, 5},           {{28, 128}, 10, 512},  {{1, 2, 3}, 7, 9},   {{17}, 1, 33},
      {{28, 128}, 100, 512}, {{100, 60}, 300, 400}, {{20, 4}, 400, 1000}};
  int seed = 1;
  for (const Case& c : cases) {
    int64_t m = 0;
    for (int64_t w : c.widths) m += w;
    SCOPED_TRACE(testing::Message()
                 << "m " << m << " k " << c.k << " n " << c.n << " pieces " << c.widths.size());
    const std::vector<double> acc = RandomValues(m * c.n, seed++, -2, 2);
    const std::vector<double> b = RandomValues(c.k * c.n, seed++, -1, 1);
    std::vector<std::vector<double>> a;
    std::vector<Tensor> inputs = {MakeTensor(DT_FLOAT, {m, c.n}, acc)};
    for (int64_t w : c.widths) {
      a.push_back(RandomValues(c.k * w, seed++, -1, 1));
      inputs.push_back(MakeTensor(DT_FLOAT, {c.k, w}, a.back()));
    }
    inputs.push_back(MakeTensor(DT_FLOAT, {c.k, c.n}, b));
    const Tensor held_acc = inputs[0];  // so the kernel may not write into it
    auto out = RunKernel("_MatMulAccumulate", Attrs(c.widths.size()), inputs);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ((*out)[0].shape(), TensorShape({m, c.n}));
    const std::vector<double> expected = Reference(c, acc, a, b);
    const std::vector<double> got = ToDoubles((*out)[0]);
    for (size_t j = 0; j < expected.size(); ++j) {
      ASSERT_NEAR(got[j], expected[j], 1e-5 * (1 + c.k)) << "element " << j;
    }
    const std::vector<double> acc_after = ToDoubles(held_acc);
    for (size_t j = 0; j < acc.size(); ++j) {
      ASSERT_EQ(acc_after[j], static_cast<float>(acc[j])) << "acc, held elsewhere, was written";
    }
    // Again with the accumulator handed over (as the loop's running sum
    // is): the same sum.
    inputs = {MakeTensor(DT_FLOAT, {m, c.n}, acc)};
    for (size_t p = 0; p < a.size(); ++p) {
      inputs.push_back(MakeTensor(DT_FLOAT, {c.k, c.widths[p]}, a[p]));
    }
    inputs.push_back(MakeTensor(DT_FLOAT, {c.k, c.n}, b));
    auto moved = RunKernel("_MatMulAccumulate", Attrs(c.widths.size()), std::move(inputs));
    ASSERT_TRUE(moved.ok()) << moved.status();
    EXPECT_EQ(ToDoubles((*moved)[0]), got);
  }
}

// acc of another shape than the product [m, n] broadcasts as AddV2 would:
// the sum has the broadcast shape.
TEST(MatMulAccumulateTest, AccBroadcastsAsInAddV2) {
  struct Broadcast {
    TensorShape acc;
    int64_t m, k, n;
    TensorShape sum;
  };
  const std::vector<Broadcast> cases = {{{}, 3, 2, 4, {3, 4}},           {{4}, 3, 2, 4, {3, 4}},
                                        {{3, 1}, 3, 2, 4, {3, 4}},       {{1, 4}, 3, 2, 4, {3, 4}},
                                        {{2, 3, 4}, 3, 2, 4, {2, 3, 4}}, {{5, 4}, 1, 2, 4, {5, 4}},
                                        {{5, 1}, 1, 3, 4, {5, 4}}};
  int seed = 40;
  for (const Broadcast& c : cases) {
    SCOPED_TRACE(testing::Message() << "acc " << c.acc << " product [" << c.m << "," << c.n << "]");
    const std::vector<double> acc = RandomValues(c.acc.num_elements(), seed++, -2, 2);
    const std::vector<double> a = RandomValues(c.k * c.m, seed++, -1, 1);
    const std::vector<double> b = RandomValues(c.k * c.n, seed++, -1, 1);
    auto out = RunKernel("_MatMulAccumulate", Attrs(1),
                         {MakeTensor(DT_FLOAT, c.acc, acc), MakeTensor(DT_FLOAT, {c.k, c.m}, a),
                          MakeTensor(DT_FLOAT, {c.k, c.n}, b)});
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ((*out)[0].shape(), c.sum);
    const std::vector<double> product =
        Reference({{c.m}, c.k, c.n}, std::vector<double>(c.m * c.n, 0.0), {a}, b);
    const std::vector<double> got = ToDoubles((*out)[0]);
    // Index the sum by (batch, row, column); a dim of 1 repeats.
    const int64_t rows = c.sum.dim_size(c.sum.dims() - 2), cols = c.sum.dim_size(c.sum.dims() - 1);
    const int r = c.acc.dims();
    const int64_t acc_rows = r >= 2 ? c.acc.dim_size(r - 2) : 1;
    const int64_t acc_cols = r >= 1 ? c.acc.dim_size(r - 1) : 1;
    for (int64_t j = 0; j < static_cast<int64_t>(got.size()); ++j) {
      const int64_t batch = j / (rows * cols), row = j / cols % rows, col = j % cols;
      const int64_t acc_index = (r == 3 ? batch * acc_rows * acc_cols : 0) +
                                (acc_rows == 1 ? 0 : row) * acc_cols + (acc_cols == 1 ? 0 : col);
      const double expected =
          acc[acc_index] + product[(c.m == 1 ? 0 : row) * c.n + (c.n == 1 ? 0 : col)];
      ASSERT_NEAR(got[j], expected, 1e-5) << "element " << j;
    }
  }
}

TEST(MatMulAccumulateTest, EmptyProductLeavesTheSum) {
  const std::vector<double> acc = {1, 2, 3, 4, 5, 6};
  auto out = RunKernel("_MatMulAccumulate", Attrs(1),
                       {MakeTensor(DT_FLOAT, {2, 3}, acc), MakeTensor(DT_FLOAT, {0, 2}, {}),
                        MakeTensor(DT_FLOAT, {0, 3}, {})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToDoubles((*out)[0]), acc);
  out = RunKernel("_MatMulAccumulate", Attrs(1),
                  {MakeTensor(DT_FLOAT, {0, 3}, {}), MakeTensor(DT_FLOAT, {4, 0}, {}),
                   MakeTensor(DT_FLOAT, {4, 3}, std::vector<double>(12, 1.0))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({0, 3}));
}

TEST(MatMulAccumulateTest, BadShapesAreErrorsThatNameThem) {
  auto t = [](TensorShape shape) {
    return MakeTensor(DT_FLOAT, shape, std::vector<double>(shape.num_elements(), 0.5));
  };
  struct Bad {
    std::vector<TensorShape> shapes;  // acc, the pieces, b
    const char* what;
  };
  const std::vector<Bad> bad = {
      {{{5, 3}, {4, 2}, {4, 2}, {4, 3}}, "pieces' widths sum to 4, acc has 5 rows"},
      {{{4, 3}, {4, 2}, {3, 2}, {4, 3}}, "a[1]'s contracted dim differs from b's"},
      {{{4, 4}, {4, 2}, {4, 2}, {4, 3}}, "acc's columns differ from b's"},
      {{{4, 3}, {4, 2, 1}, {4, 2}, {4, 3}}, "a[0] is not a matrix"},
      {{{12}, {4, 2}, {4, 2}, {4, 3}}, "acc does not broadcast with the product"},
  };
  for (const Bad& c : bad) {
    SCOPED_TRACE(c.what);
    std::vector<Tensor> inputs;
    for (const TensorShape& s : c.shapes) inputs.push_back(t(s));
    auto out = RunKernel("_MatMulAccumulate", Attrs(2), inputs);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), Code::kInvalidArgument) << out.status();
    EXPECT_NE(out.status().message().find("_MatMulAccumulate"), std::string::npos) << out.status();
  }
  // The kernel's own message names every shape (the shape function, which
  // RunKernel runs too, catches these first when shapes are known).
  std::vector<Tensor> inputs = {t({5, 3}), t({4, 2}), t({4, 2}), t({4, 3})};
  auto kernel = CreateTestKernel("_MatMulAccumulate", Attrs(2), 4);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  auto out = ComputeTestKernel(kernel->get(), TestCpuDevice(), inputs);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("got acc [5,3], a[0] [4,2], a[1] [4,2], b [4,3]"),
            std::string::npos)
      << out.status();
}

}  // namespace
}  // namespace weir
