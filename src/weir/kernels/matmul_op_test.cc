#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>

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
  const double epsilon = std::is_same_v<T, float> ? 1e-6 : 1e-14;
  for (int64_t i = 0; i < m * n; ++i) {
    ASSERT_NEAR(actual[i], expected[i], epsilon * (k + 1) * (magnitude[i] + 1))
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

TEST(MatMulOpTest, EmptyMatrices) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      CheckMatMul<float>(0, 5, 3, ta, tb);
      CheckMatMul<float>(4, 5, 0, ta, tb);
      CheckMatMul<double>(0, 5, 3, ta, tb);
      // An empty inner dimension sums nothing: zeros.
      CheckMatMul<float>(3, 0, 4, ta, tb);
      CheckMatMul<double>(3, 0, 4, ta, tb);
    }
  }
}

TEST(MatMulOpTest, LargeProductsSplitAcrossThreads) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      CheckMatMul<float>(300, 200, 256, ta, tb);  // split by rows
      CheckMatMul<float>(2, 512, 1500, ta, tb);   // split by columns
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
  EXPECT_EQ(ThreadsInProcess(), before);
}
#endif

TEST(MatMulOpTest, KnownValues) {
  Tensor a = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3}));
  Tensor b = Tensor::FromVector<float>({7, 8, 9, 10, 11, 12}, TensorShape({3, 2}));
  auto out = RunKernel("MatMul", {{"T", DT_FLOAT}}, {a, b});
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

}  // namespace
}  // namespace weir
