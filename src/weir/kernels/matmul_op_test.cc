// MatMul and BatchMatMulV2 against products computed here in double from
// the very values the kernels read (bfloat16 inputs are generated rounded
// to bfloat16, so they are exact).
#include <gtest/gtest.h>

#include <omp.h>

#include <Eigen/Core>
#include <cmath>
#include <fstream>
#include <string>
#include <type_traits>
#include <vector>

#include "weir/kernels/kernel_test_util.h"

namespace weir {
namespace {

template <typename T>
Tensor RandomMatrix(int64_t rows, int64_t cols, int seed) {
  std::vector<T> values(rows * cols);
  uint64_t state = 0x9E3779B97F4A7C15ull * (seed + 1);
  for (T& v : values) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v = static_cast<T>(static_cast<double>(state >> 11) / 9007199254740992.0 * 2 - 1);
  }
  return Tensor::FromVector(values, TensorShape({rows, cols}));
}

// op(a) * op(b) in double by the definition, with the sum of |terms| per
// element to scale the tolerance.
void ReferenceMatMul(const Tensor& a, const Tensor& b, bool ta, bool tb,
                     std::vector<double>* product, std::vector<double>* magnitude) {
  std::vector<double> av = ToDoubles(a), bv = ToDoubles(b);
  const int64_t m = a.dim_size(ta ? 1 : 0), k = a.dim_size(ta ? 0 : 1);
  const int64_t n = b.dim_size(tb ? 0 : 1);
  product->assign(m * n, 0);
  magnitude->assign(m * n, 0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t p = 0; p < k; ++p) {
        const double x = ta ? av[p * m + i] : av[i * k + p];
        const double y = tb ? bv[j * k + p] : bv[p * n + j];
        (*product)[i * n + j] += x * y;
        (*magnitude)[i * n + j] += std::abs(x * y);
      }
    }
  }
}

// How far an element with `k` terms whose |terms| sum to `magnitude` may
// be from the exact product: float and double by rounding over the k
// terms; bfloat16 accumulates in float and rounds the result once to an
// 8-bit significand (relative 2^-8, about 4e-3), allowed 1e-2.
template <typename T>
double Tolerance(int64_t k, double magnitude) {
  if constexpr (std::is_same_v<T, Eigen::bfloat16>) {
    return 1e-2 * magnitude;
  } else {
    const double epsilon = std::is_same_v<T, float> ? 1e-6 : 1e-14;
    return epsilon * (k + 1) * (magnitude + 1);
  }
}

template <typename T>
void CheckMatMul(int64_t m, int64_t k, int64_t n, bool ta, bool tb) {
  Tensor a = ta ? RandomMatrix<T>(k, m, 1) : RandomMatrix<T>(m, k, 1);
  Tensor b = tb ? RandomMatrix<T>(n, k, 2) : RandomMatrix<T>(k, n, 2);
  auto out = RunKernel("MatMul",
                       {{"T", kDTypeOf<T>}, {"transpose_a", ta}, {"transpose_b", tb}}, {a, b});
  ASSERT_TRUE(out.ok()) << out.status();
  const Tensor& c = (*out)[0];
  ASSERT_EQ(c.shape(), TensorShape({m, n}));
  std::vector<double> expected, magnitude;
  ReferenceMatMul(a, b, ta, tb, &expected, &magnitude);
  std::vector<double> actual = ToDoubles(c);
  for (int64_t i = 0; i < m * n; ++i) {
    ASSERT_NEAR(actual[i], expected[i], Tolerance<T>(k, magnitude[i]))
        << "[" << m << "," << k << "] x [" << k << "," << n << "] ta=" << ta << " tb=" << tb
        << " at " << i;
  }
}

template <typename T>
void CheckAllSizes() {
  const int64_t sizes[] = {1, 17, 64, 129};
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      for (int64_t m : sizes) {
        for (int64_t k : sizes) {
          for (int64_t n : sizes) CheckMatMul<T>(m, k, n, ta, tb);
        }
      }
    }
  }
}

TEST(MatMulOpTest, FloatAllSizesAndTransposes) { CheckAllSizes<float>(); }
TEST(MatMulOpTest, DoubleAllSizesAndTransposes) { CheckAllSizes<double>(); }
TEST(MatMulOpTest, BFloat16AllSizesAndTransposes) { CheckAllSizes<Eigen::bfloat16>(); }

TEST(MatMulOpTest, EmptyMatrices) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      CheckMatMul<float>(0, 5, 3, ta, tb);
      CheckMatMul<float>(4, 5, 0, ta, tb);
      CheckMatMul<double>(0, 5, 3, ta, tb);
      CheckMatMul<Eigen::bfloat16>(0, 5, 3, ta, tb);
      CheckMatMul<Eigen::bfloat16>(4, 5, 0, ta, tb);
      // An empty inner dimension sums nothing: zeros.
      CheckMatMul<float>(3, 0, 4, ta, tb);
      CheckMatMul<double>(3, 0, 4, ta, tb);
      CheckMatMul<Eigen::bfloat16>(3, 0, 4, ta, tb);
    }
  }
}

TEST(MatMulOpTest, LargeProductsSplitAcrossThreads) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      CheckMatMul<float>(300, 200, 256, ta, tb);  // split by rows
      CheckMatMul<float>(2, 4096, 1500, ta, tb);  // split by columns
      CheckMatMul<Eigen::bfloat16>(300, 200, 256, ta, tb);
      CheckMatMul<Eigen::bfloat16>(2, 4096, 1500, ta, tb);
    }
  }
  CheckMatMul<double>(200, 150, 170, false, true);
}

#if defined(__linux__)
int ThreadsInProcess() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  return -1;
}

// oneDNN's OpenMP must not start a second pool next to the device's.
TEST(MatMulOpTest, StartsNoThreadsOfItsOwn) {
  CheckMatMul<float>(4, 4, 4, false, false);  // the test device exists now
  const int before = ThreadsInProcess();
  CheckMatMul<float>(512, 512, 512, false, false);
  CheckMatMul<float>(8, 256, 4096, true, true);
  CheckMatMul<float>(512, 512, 512, false, true);  // float's matmul primitive
  CheckMatMul<Eigen::bfloat16>(512, 512, 512, false, false);
  CheckMatMul<Eigen::bfloat16>(8, 256, 4096, true, true);
  EXPECT_EQ(ThreadsInProcess(), before);
}
#endif

// The calling thread runs the product (or shards of it) itself; the OpenMP
// thread count it had before, its own setting and perhaps the user's, is
// back afterwards.
TEST(MatMulOpTest, LeavesTheCallersOpenMpThreadCountAsItWas) {
  const int previous = omp_get_max_threads();
  omp_set_num_threads(3);
  CheckMatMul<float>(512, 512, 512, false, false);
  CheckMatMul<float>(512, 512, 512, false, true);
  CheckMatMul<float>(16, 16, 16, false, false);
  CheckMatMul<Eigen::bfloat16>(64, 64, 64, false, false);
  EXPECT_EQ(omp_get_max_threads(), 3);
  omp_set_num_threads(previous);
}

std::vector<Eigen::bfloat16> ToBFloat16(const std::vector<float>& values) {
  return std::vector<Eigen::bfloat16>(values.begin(), values.end());
}

TEST(MatMulOpTest, KnownValues) {
  Tensor a = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3}));
  Tensor b = Tensor::FromVector<float>({7, 8, 9, 10, 11, 12}, TensorShape({3, 2}));
  auto out = RunKernel("MatMul", {{"T", DT_FLOAT}}, {a, b});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToDoubles((*out)[0]), (std::vector<double>{58, 64, 139, 154}));
  // Small integers and their products are exact in bfloat16.
  out = RunKernel("MatMul", {{"T", DT_BFLOAT16}},
                  {Tensor::FromVector(ToBFloat16({1, 2, 3, 4, 5, 6}), TensorShape({2, 3})),
                   Tensor::FromVector(ToBFloat16({7, 8, 9, 10, 11, 12}), TensorShape({3, 2}))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToDoubles((*out)[0]), (std::vector<double>{58, 64, 139, 154}));
}

TEST(MatMulOpTest, Errors) {
  auto out = RunKernel("MatMul", {{"T", DT_FLOAT}},
                       {RandomMatrix<float>(2, 3, 0), RandomMatrix<float>(4, 5, 0)});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(out.status()));
  const std::string& message = out.status().message();
  EXPECT_NE(message.find("MatMul"), std::string::npos) << message;
  EXPECT_NE(message.find("[2,3]"), std::string::npos) << message;
  EXPECT_NE(message.find("[4,5]"), std::string::npos) << message;

  out = RunKernel("MatMul", {{"T", DT_DOUBLE}, {"transpose_b", true}},
                  {RandomMatrix<double>(2, 3, 0), RandomMatrix<double>(3, 5, 0)});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("transpose_b=true"), std::string::npos)
      << out.status();

  out = RunKernel("MatMul", {{"T", DT_FLOAT}},
                  {Tensor(DT_FLOAT, TensorShape({2, 3, 4})), RandomMatrix<float>(4, 5, 0)});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(out.status()));
  EXPECT_NE(out.status().message().find("[2,3,4]"), std::string::npos) << out.status();

  // int32 is a valid MatMul type with no CPU kernel yet.
  out = RunKernel("MatMul", {{"T", DT_INT32}},
                  {Tensor(DT_INT32, TensorShape({2, 2})), Tensor(DT_INT32, TensorShape({2, 2}))});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(errors::IsNotFound(out.status())) << out.status();
}


template <typename T>
Tensor RandomTensor(const TensorShape& shape, int seed) {
  Tensor flat = RandomMatrix<T>(1, shape.num_elements(), seed);
  Tensor t;
  CHECK(t.CopyFrom(flat, shape));
  return t;
}

// BatchMatMulV2 against nested loops over the broadcast batch, in double.
template <typename T>
void CheckBatchMatMul(const TensorShape& x_shape, const TensorShape& y_shape, bool adj_x,
                      bool adj_y, const TensorShape& expected_shape) {
  Tensor x = RandomTensor<T>(x_shape, 3), y = RandomTensor<T>(y_shape, 4);
  auto out = RunKernel("BatchMatMulV2", {{"T", kDTypeOf<T>}, {"adj_x", adj_x}, {"adj_y", adj_y}},
                       {x, y});
  const std::string where = StrCat(x_shape.DebugString(), " x ", y_shape.DebugString(),
                                   " adj_x=", adj_x, " adj_y=", adj_y);
  ASSERT_TRUE(out.ok()) << where << ": " << out.status();
  const Tensor& z = (*out)[0];
  ASSERT_EQ(z.shape(), expected_shape) << where;
  const int rx = x_shape.rank(), ry = y_shape.rank(), rz = expected_shape.rank();
  const int64_t m = expected_shape.dim_size(rz - 2), n = expected_shape.dim_size(rz - 1);
  const int64_t k = x_shape.dim_size(adj_x ? rx - 2 : rx - 1);
  std::vector<double> xv = ToDoubles(x), yv = ToDoubles(y), zv = ToDoubles(z);
  const int64_t batches = expected_shape.num_elements() / std::max<int64_t>(m * n, 1);
  for (int64_t b = 0; b < batches && m * n > 0; ++b) {
    // The batch index of each operand: the output's, with broadcast dims at 0.
    int64_t rest = b, xb = 0, yb = 0, x_stride = 1, y_stride = 1;
    for (int d = rz - 3; d >= 0; --d) {
      const int64_t i = rest % expected_shape.dim_size(d);
      rest /= expected_shape.dim_size(d);
      const int dx = d - (rz - rx), dy = d - (rz - ry);
      if (dx >= 0) {
        if (x_shape.dim_size(dx) != 1) xb += i * x_stride;
        x_stride *= x_shape.dim_size(dx);
      }
      if (dy >= 0) {
        if (y_shape.dim_size(dy) != 1) yb += i * y_stride;
        y_stride *= y_shape.dim_size(dy);
      }
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0, magnitude = 0;
        for (int64_t p = 0; p < k; ++p) {
          const double a = xv[xb * m * k + (adj_x ? p * m + i : i * k + p)];
          const double c = yv[yb * k * n + (adj_y ? j * k + p : p * n + j)];
          sum += a * c;
          magnitude += std::abs(a * c);
        }
        ASSERT_NEAR(zv[(b * m + i) * n + j], sum, Tolerance<T>(k, magnitude))
            << where << " batch " << b << " at " << i << "," << j;
      }
    }
  }
}

template <typename T>
void CheckBatchMatMulShapes() {
  for (bool adj_x : {false, true}) {
    for (bool adj_y : {false, true}) {
      // Operand shapes before the adjoints: x [.., m, k], y [.., k, n].
      auto check = [&](std::vector<int64_t> x, std::vector<int64_t> y,
                       const TensorShape& expected) {
        if (adj_x) std::swap(x[x.size() - 1], x[x.size() - 2]);
        if (adj_y) std::swap(y[y.size() - 1], y[y.size() - 2]);
        CheckBatchMatMul<T>(TensorShape(x), TensorShape(y), adj_x, adj_y, expected);
      };
      check({3, 4}, {4, 5}, TensorShape({3, 5}));
      check({2, 3, 4}, {2, 4, 5}, TensorShape({2, 3, 5}));
      check({2, 3, 4}, {4, 5}, TensorShape({2, 3, 5}));           // y broadcast
      check({3, 4}, {6, 4, 5}, TensorShape({6, 3, 5}));           // x broadcast
      check({2, 1, 3, 4}, {3, 4, 5}, TensorShape({2, 3, 3, 5}));  // both broadcast
      check({1, 3, 3, 4}, {2, 1, 4, 5}, TensorShape({2, 3, 3, 5}));
      check({5, 1, 2, 7, 4}, {3, 1, 4, 6}, TensorShape({5, 3, 2, 7, 6}));
      check({40, 17, 33}, {40, 33, 9}, TensorShape({40, 17, 9}));  // many per task
      check({1, 150, 130}, {130, 140}, TensorShape({1, 150, 140}));  // split over the pool
      // Empty batches and matrices, and an empty inner dimension (zeros).
      check({0, 3, 4}, {4, 5}, TensorShape({0, 3, 5}));
      check({2, 0, 4}, {2, 4, 5}, TensorShape({2, 0, 5}));
      check({2, 3, 0}, {1, 0, 5}, TensorShape({2, 3, 5}));
    }
  }
}

TEST(BatchMatMulV2Test, FloatBroadcastingAndAdjoints) { CheckBatchMatMulShapes<float>(); }
TEST(BatchMatMulV2Test, DoubleBroadcastingAndAdjoints) { CheckBatchMatMulShapes<double>(); }
TEST(BatchMatMulV2Test, BFloat16BroadcastingAndAdjoints) {
  CheckBatchMatMulShapes<Eigen::bfloat16>();
}

TEST(BatchMatMulV2Test, Errors) {
  auto out = RunKernel("BatchMatMulV2", {{"T", DT_FLOAT}},
                       {RandomTensor<float>(TensorShape({2, 3, 4}), 0),
                        RandomTensor<float>(TensorShape({2, 5, 6}), 0)});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(out.status()));
  std::string message = out.status().message();
  EXPECT_NE(message.find("BatchMatMulV2"), std::string::npos) << message;
  EXPECT_NE(message.find("[2,3,4]"), std::string::npos) << message;
  EXPECT_NE(message.find("[2,5,6]"), std::string::npos) << message;

  out = RunKernel("BatchMatMulV2", {{"T", DT_DOUBLE}},
                  {RandomTensor<double>(TensorShape({2, 3, 4}), 0),
                   RandomTensor<double>(TensorShape({3, 4, 6}), 0)});
  ASSERT_FALSE(out.ok());
  message = out.status().message();
  EXPECT_NE(message.find("broadcast"), std::string::npos) << message;
  EXPECT_NE(message.find("[3,4,6]"), std::string::npos) << message;

  out = RunKernel("BatchMatMulV2", {{"T", DT_FLOAT}},
                  {RandomTensor<float>(TensorShape({4}), 0),
                   RandomTensor<float>(TensorShape({4, 6}), 0)});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(out.status()));
  EXPECT_NE(out.status().message().find("rank"), std::string::npos) << out.status();
}
}  // namespace
}  // namespace weir
