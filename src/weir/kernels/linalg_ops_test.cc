// The linalg kernels on small analytic cases (known inverses, triangular
// determinants, hand-computed factors), the identities each decomposition
// must satisfy on a batch, empty batches, 0x0 matrices, and the errors of
// bad or hostile inputs. tests in python/tests/test_linalg.py compare every
// op with TensorFlow.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "weir/kernels/array_test_util.h"

namespace weir {
namespace {

using namespace array_test;

Tensor D(std::vector<double> v, TensorShape shape) { return Tensor::FromVector<double>(v, shape); }
Tensor F(std::vector<float> v, TensorShape shape) { return Tensor::FromVector<float>(v, shape); }

std::vector<Tensor> RunOp(const std::string& op, AttrMap attrs, std::vector<Tensor> in) {
  attrs["T"] = in[0].dtype();
  StatusOr<std::vector<Tensor>> out = RunKernel(op, std::move(attrs), std::move(in));
  EXPECT_TRUE(out.ok()) << op << ": " << out.status();
  return out.ok() ? *out : std::vector<Tensor>();
}

void Err(const std::string& op, AttrMap attrs, std::vector<Tensor> in,
         std::initializer_list<std::string> parts) {
  attrs["T"] = in[0].dtype();
  RunError(op, std::move(attrs), std::move(in), parts);
}

void ExpectNear(const Tensor& t, const TensorShape& shape, const std::vector<double>& want,
                double tol = 1e-12) {
  ASSERT_EQ(t.shape(), shape) << t.DebugString();
  std::vector<double> got = ToDoubles(t);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

// Row-major n x k times k x m, batched over `batch`.
std::vector<double> MatMul(const std::vector<double>& a, const std::vector<double>& b,
                           int64_t batch, int64_t n, int64_t k, int64_t m) {
  std::vector<double> c(batch * n * m, 0);
  for (int64_t z = 0; z < batch; ++z)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j)
        for (int64_t l = 0; l < k; ++l)
          c[(z * n + i) * m + j] += a[(z * n + i) * k + l] * b[(z * k + l) * m + j];
  return c;
}

TEST(LinalgOpsTest, InverseOfKnownMatrix) {
  Tensor a = D({4, 7, 2, 6, 2, 0, 0, 4}, {2, 2, 2});
  ExpectNear(RunOp("MatrixInverse", {}, {a})[0], {2, 2, 2},
             {0.6, -0.7, -0.2, 0.4, 0.5, 0, 0, 0.25});
  // adjoint: the inverse of the transpose.
  ExpectNear(RunOp("MatrixInverse", {{"adjoint", true}}, {a})[0], {2, 2, 2},
             {0.6, -0.2, -0.7, 0.4, 0.5, 0, 0, 0.25});
  ExpectNear(RunOp("MatrixInverse", {}, {F({4, 7, 2, 6}, {2, 2})})[0], {2, 2},
             {0.6, -0.7, -0.2, 0.4}, 1e-6);
}

TEST(LinalgOpsTest, InverseErrorsAndEmpty) {
  Err("MatrixInverse", {}, {D({1, 0, 0, 1, 1, 2, 2, 4}, {2, 2, 2})},
      {"batch index 1", "not invertible"});
  Err("MatrixInverse", {}, {D({1, 2, 3, 4, 5, 6}, {2, 3})}, {"square", "[2,3]"});
  Err("MatrixInverse", {}, {D({1, 2}, {2})}, {"rank >= 2"});
  EXPECT_EQ(RunOp("MatrixInverse", {}, {D({}, {0, 3, 3})})[0].shape(), TensorShape({0, 3, 3}));
  EXPECT_EQ(RunOp("MatrixInverse", {}, {D({}, {2, 0, 0})})[0].shape(), TensorShape({2, 0, 0}));
}

TEST(LinalgOpsTest, DeterminantsOfTriangularAndPermuted) {
  // Triangular: the product of the diagonal; a row swap flips the sign.
  Tensor a = D({2, 5, 7, 0, 3, 1, 0, 0, -4, 0, 2, 0, 3, 0, 0, 0, 0, 1}, {2, 3, 3});
  ExpectNear(RunOp("MatrixDeterminant", {}, {a})[0], {2}, {-24, -6}, 1e-12);
  std::vector<Tensor> log = RunOp("LogMatrixDeterminant", {}, {a});
  ExpectNear(log[0], {2}, {-1, -1});
  ExpectNear(log[1], {2}, {std::log(24.0), std::log(6.0)});
  // Singular: sign 0, log|det| -inf; 0x0: det 1.
  std::vector<Tensor> singular = RunOp("LogMatrixDeterminant", {}, {D({1, 2, 2, 4}, {2, 2})});
  EXPECT_EQ(singular[0].scalar<double>(), 0);
  EXPECT_EQ(singular[1].scalar<double>(), -std::numeric_limits<double>::infinity());
  ExpectNear(RunOp("MatrixDeterminant", {}, {D({}, {3, 0, 0})})[0], {3}, {1, 1, 1});
  ExpectNear(RunOp("LogMatrixDeterminant", {}, {D({}, {1, 0, 0})})[1], {1}, {0});
  Err("MatrixDeterminant", {}, {D({1, 2, 3}, {1, 3})}, {"square"});
}

TEST(LinalgOpsTest, CholeskyOfKnownMatrix) {
  // Only the lower triangle is read: the 99 above is ignored.
  ExpectNear(RunOp("Cholesky", {}, {D({4, 99, 2, 3}, {2, 2})})[0], {2, 2},
             {2, 0, 1, std::sqrt(2.0)});
  Err("Cholesky", {}, {D({1, 0, 0, 1, 1, 2, 2, 1}, {2, 2, 2})},
      {"batch index 1", "not positive definite"});
  EXPECT_EQ(RunOp("Cholesky", {}, {D({}, {0, 0})})[0].shape(), TensorShape({0, 0}));
}

TEST(LinalgOpsTest, SolveAndTriangularSolve) {
  Tensor a = D({4, 7, 2, 6}, {1, 2, 2});
  Tensor b = D({1, 2, 3, 4}, {1, 2, 2});
  // x = A^-1 b with A^-1 = [[.6,-.7],[-.2,.4]].
  ExpectNear(RunOp("MatrixSolve", {}, {a, b})[0], {1, 2, 2},
             {0.6 - 2.1, 1.2 - 2.8, -0.2 + 1.2, -0.4 + 1.6});
  Err("MatrixSolve", {}, {D({1, 2, 2, 4}, {2, 2}), D({1, 1}, {2, 1})}, {"not invertible"});
  Err("MatrixSolve", {}, {a, D({1, 2, 3}, {1, 3, 1})}, {"same batch dims and rows"});
  // Lower triangular [[2,0],[1,4]] (the 9 is ignored), broadcast over rhs's batch of 3.
  Tensor l = D({2, 9, 1, 4}, {1, 2, 2});
  Tensor rhs = D({2, 9, 4, 8, 0, 4}, {3, 2, 1});
  ExpectNear(RunOp("MatrixTriangularSolve", {}, {l, rhs})[0], {3, 2, 1}, {1, 2, 2, 1.5, 0, 1});
  // Upper with adjoint: solves U^T x = rhs, U = [[2,9],[0,4]] -> [[2,0],[9,4]].
  ExpectNear(RunOp("MatrixTriangularSolve", {{"lower", false}, {"adjoint", true}},
                   {l, D({2, 13}, {2, 1})})[0],
             {1, 2, 1}, {1, 1});
  Err("MatrixTriangularSolve", {},
      {D({1, 0, 0, 1, 1, 0, 0, 1}, {2, 2, 2}), D({1, 2, 3, 4, 5, 6}, {3, 2, 1})}, {"broadcast"});
}

TEST(LinalgOpsTest, QrReconstructsWithOrthonormalQ) {
  const std::vector<double> a = {1, 2, 3, 4, 5, 6, 7, 8, 10, 2, -1, 0};  // 4x3
  for (bool full : {false, true}) {
    std::vector<Tensor> qr = RunOp("Qr", {{"full_matrices", full}}, {D(a, {4, 3})});
    const int64_t k = full ? 4 : 3;
    ASSERT_EQ(qr[0].shape(), TensorShape({4, k}));
    ASSERT_EQ(qr[1].shape(), TensorShape({k, 3}));
    std::vector<double> q = ToDoubles(qr[0]), r = ToDoubles(qr[1]);
    std::vector<double> product = MatMul(q, r, 1, 4, k, 3);
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(product[i], a[i], 1e-12);
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < 3; ++j)
        if (i > j) EXPECT_EQ(r[i * 3 + j], 0);  // R upper triangular
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < k; ++j) {
        double dot = 0;
        for (int64_t l = 0; l < 4; ++l) dot += q[l * k + i] * q[l * k + j];
        EXPECT_NEAR(dot, i == j ? 1 : 0, 1e-12);
      }
  }
}

TEST(LinalgOpsTest, SvdAndEigOfKnownMatrices) {
  std::vector<Tensor> svd = RunOp("Svd", {}, {D({0, -2, 3, 0}, {2, 2})});
  ExpectNear(svd[0], {2}, {3, 2});
  std::vector<double> u = ToDoubles(svd[1]), v = ToDoubles(svd[2]);
  // u diag(s) v^T reproduces the input.
  std::vector<double> us = {u[0] * 3, u[1] * 2, u[2] * 3, u[3] * 2};
  std::vector<double> vt = {v[0], v[2], v[1], v[3]};
  std::vector<double> back = MatMul(us, vt, 1, 2, 2, 2);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(back[i], (std::vector<double>{0, -2, 3, 0})[i], 1e-12);
  std::vector<Tensor> s_only =
      RunOp("Svd", {{"compute_uv", false}}, {D({1, 2, 3, 4, 5, 6}, {2, 3})});
  EXPECT_EQ(s_only[1].shape(), TensorShape({0}));
  EXPECT_EQ(s_only[0].shape(), TensorShape({2}));
  std::vector<Tensor> eig = RunOp("SelfAdjointEigV2", {}, {D({2, 1, 1, 2}, {1, 2, 2})});
  ExpectNear(eig[0], {1, 2}, {1, 3});
  std::vector<double> vec = ToDoubles(eig[1]);
  EXPECT_NEAR(std::abs(vec[0]), std::sqrt(0.5), 1e-12);
  EXPECT_NEAR(vec[0] * vec[1] + vec[2] * vec[3], 0, 1e-12);  // columns orthogonal
  EXPECT_EQ(RunOp("SelfAdjointEigV2", {{"compute_v", false}}, {D({1, 0, 0, 1}, {2, 2})})[1].shape(),
            TensorShape({0}));
}

TEST(LinalgOpsTest, LuPermutesRowsOfInput) {
  // Partial pivoting picks row 1 (|3| > |1|) first.
  std::vector<Tensor> lu = RunOp("Lu", {{"output_idx_type", DT_INT32}}, {D({1, 2, 3, 4}, {2, 2})});
  ExpectTensor<int32_t>(lu[1], {2}, {1, 0});
  ExpectNear(lu[0], {2, 2}, {3, 4, 1.0 / 3, 2 - 4.0 / 3});
}

TEST(LinalgOpsTest, LeastSquaresAndCross) {
  // Fits y = 1 + 2x through exact points.
  Tensor a = D({1, 0, 1, 1, 1, 2}, {3, 2});
  Tensor y = D({1, 3, 5}, {3, 1});
  ExpectNear(RunOp("MatrixSolveLs", {}, {a, y, Tensor::Scalar<double>(0)})[0], {2, 1}, {1, 2},
             1e-10);
  ExpectNear(RunOp("MatrixSolveLs", {{"fast", false}}, {a, y, Tensor::Scalar<double>(0)})[0],
             {2, 1}, {1, 2}, 1e-10);
  ExpectNear(RunOp("Cross", {}, {D({1, 0, 0, 0, 1, 0}, {2, 3}), D({0, 1, 0, 0, 0, 1}, {2, 3})})[0],
             {2, 3}, {0, 0, 1, 1, 0, 0});
  Err("Cross", {}, {D({1, 2}, {2}), D({1, 2}, {2})}, {"must be 3"});
  ExpectTensor<int32_t>(RunOp("Cross", {}, {I32({1, 2, 3}), I32({4, 5, 6})})[0], {3}, {-3, 6, -3});
}

// ---- the diagonal family ----

AttrMap Align(const char* align) { return {{"align", std::string(align)}}; }

TEST(LinalgDiagTest, DiagAndDiagPart) {
  ExpectTensor<float>(RunOp("Diag", {}, {F({1, 2}, {2})})[0], {2, 2}, {1, 0, 0, 2});
  Tensor d = RunOp("Diag", {}, {F({1, 2, 3, 4}, {2, 2})})[0];
  ASSERT_EQ(d.shape(), TensorShape({2, 2, 2, 2}));
  ExpectTensor<float>(RunOp("DiagPart", {}, {d})[0], {2, 2}, {1, 2, 3, 4});
  Err("DiagPart", {}, {F({1, 2, 3, 4, 5, 6}, {2, 3})}, {"s + s"});
  Err("DiagPart", {}, {F({1, 2}, {2})}, {"even rank"});
}

TEST(LinalgDiagTest, V1Forms) {
  ExpectTensor<float>(RunOp("MatrixDiag", {}, {F({1, 2, 3, 4}, {2, 2})})[0], {2, 2, 2},
                      {1, 0, 0, 2, 3, 0, 0, 4});
  ExpectTensor<float>(RunOp("MatrixDiagPart", {}, {F({1, 2, 3, 4, 5, 6}, {2, 3})})[0], {2}, {1, 5});
  ExpectTensor<float>(
      RunOp("MatrixSetDiag", {}, {F({1, 2, 3, 4, 5, 6}, {2, 3}), F({7, 8}, {2})})[0], {2, 3},
      {7, 2, 3, 4, 8, 6});
  Err("MatrixSetDiag", {}, {F({1, 2, 3, 4, 5, 6}, {2, 3}), F({7, 8, 9}, {3})},
      {"diagonal must have shape [2]"});
  // bool and int32 move like any dtype.
  Tensor flags = Tensor::FromVector<bool>({true, true}, {2});
  EXPECT_EQ(RunOp("MatrixDiag", {}, {flags})[0].shape(), TensorShape({2, 2}));
}

TEST(LinalgDiagTest, BandsWithEveryAlignment) {
  Tensor m = F({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  Tensor k = I32({-1, 1});
  Tensor pad = Tensor::Scalar<float>(9);
  // Diagonals 1, 0, -1 (rows of the result in that order).
  ExpectTensor<float>(RunOp("MatrixDiagPartV3", Align("RIGHT_LEFT"), {m, k, pad})[0], {3, 3},
                      {9, 2, 6, 1, 5, 9, 4, 8, 9});
  ExpectTensor<float>(RunOp("MatrixDiagPartV3", Align("LEFT_RIGHT"), {m, k, pad})[0], {3, 3},
                      {2, 6, 9, 1, 5, 9, 9, 4, 8});
  ExpectTensor<float>(RunOp("MatrixDiagPartV2", {}, {m, k, pad})[0], {3, 3},
                      {2, 6, 9, 1, 5, 9, 4, 8, 9});
  // MatrixDiagV3 puts them back (padding_value 0 off the band).
  Tensor band = RunOp("MatrixDiagPartV3", Align("RIGHT_LEFT"), {m, k, pad})[0];
  ExpectTensor<float>(RunOp("MatrixDiagV3", Align("RIGHT_LEFT"),
                            {band, k, I32Scalar(-1), I32Scalar(-1), Tensor::Scalar<float>(0)})[0],
                      {3, 3}, {1, 2, 0, 4, 5, 6, 0, 8, 9});
  // MatrixSetDiagV3 writes the band into a matrix of 7s.
  Tensor sevens = F(std::vector<float>(9, 7), {3, 3});
  ExpectTensor<float>(RunOp("MatrixSetDiagV3", Align("RIGHT_LEFT"), {sevens, band, k})[0], {3, 3},
                      {1, 2, 7, 4, 5, 6, 7, 8, 9});
  // A superdiagonal alone on a non-square output: diag [1, 2], k = 1 -> 2x3.
  ExpectTensor<float>(RunOp("MatrixDiagV2", {},
                            {F({1, 2}, {2}), I32Scalar(1), I32Scalar(2), I32Scalar(-1),
                             Tensor::Scalar<float>(-1)})[0],
                      {2, 3}, {-1, 1, -1, -1, -1, 2});
}

TEST(LinalgDiagTest, HostileBandsAndSizes) {
  Tensor m = F({1, 2, 3, 4}, {2, 2});
  Tensor pad = Tensor::Scalar<float>(0);
  Err("MatrixDiagPartV2", {}, {m, I32Scalar(-5), pad}, {"outside", "(-2, 2)"});
  Err("MatrixDiagPartV2", {}, {m, I32({1, -1}), pad}, {"must not be greater"});
  Err("MatrixDiagPartV2", {}, {m, I32({-1, 0, 1}), pad}, {"1 or 2 values"});
  Err("MatrixSetDiagV2", {}, {m, F({1, 2}, {2}), I32Scalar(3)}, {"outside"});
  // num_rows inconsistent with the diagonal's length.
  Err("MatrixDiagV2", {}, {F({1, 2, 3}, {3}), I32Scalar(0), I32Scalar(5), I32Scalar(4), pad},
      {"not consistent"});
  Err("MatrixDiagV2", {}, {F({1, 2, 3}, {3}), I32Scalar(0), I32Scalar(2), I32Scalar(-1), pad},
      {"not consistent"});
  Err("MatrixDiagV2", {}, {F({1, 2, 3}, {3}), I32Scalar(0), I32Scalar(-7), I32Scalar(-1), pad},
      {"non-negative"});
  // The band's diagonal count must match the diagonal's dim -2.
  Err("MatrixDiagV2", {},
      {F({1, 2, 3, 4}, {2, 2}), I32({-2, 0}), I32Scalar(-1), I32Scalar(-1), pad}, {"3 diagonals"});
  // 2^31-1 rows by 2^31-1 columns from a 1-element diagonal: refused, never allocated.
  const int32_t big = std::numeric_limits<int32_t>::max();
  Err("MatrixDiagV2", {}, {F({1}, {1}), I32Scalar(0), I32Scalar(big), I32Scalar(big), pad},
      {"not consistent"});
  Err("MatrixDiagV3", Align("UP_DOWN"),
      {F({1}, {1}), I32Scalar(0), I32Scalar(-1), I32Scalar(-1), pad}, {"align"});
  // Empty: a batch of zero matrices, and 0x0 matrices.
  EXPECT_EQ(RunOp("MatrixDiagPartV2", {}, {F({}, {0, 2, 2}), I32Scalar(0), pad})[0].shape(),
            TensorShape({0, 2}));
  EXPECT_EQ(RunOp("MatrixDiagPartV2", {}, {F({}, {2, 0, 0}), I32Scalar(0), pad})[0].shape(),
            TensorShape({2, 0}));
}

}  // namespace
}  // namespace weir
