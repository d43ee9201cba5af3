// The linalg family's gradient functions against central finite
// differences. Cholesky and SelfAdjointEigV2 read one triangle and give
// TensorFlow's symmetric gradient, so they are checked through a
// symmetrized input (x + x^T) / 2, whose derivative that gradient is.
#include <gtest/gtest.h>

#include <cmath>

#include "weir/ops/standard_ops.h"
#include "weir/train/gradients.h"
#include "weir/train/gradients_test_util.h"

namespace weir {
namespace {

Output Op(const Scope& s, const char* type, std::vector<OpArg> args, AttrMap attrs = {},
          int output = 0) {
  return AddOp(s, type, std::move(args), std::move(attrs)).output(output);
}

Output I32(const Scope& s, std::vector<int32_t> v) {
  if (v.size() == 1) return ops::Const(s, Tensor::Scalar<int32_t>(v[0]));
  return ops::Const(s, Tensor::FromVector<int32_t>(v));
}

// [b, n, n] matrices: smooth values plus `shift` on the diagonal.
Tensor Matrices(int64_t b, int64_t n, double shift, double phase = 0.3) {
  std::vector<double> v(b * n * n);
  for (int64_t i = 0; i < b * n * n; ++i) {
    v[i] = std::sin(1.3 * i + phase) + (i % (n * n) % (n + 1) == 0 ? shift : 0);
  }
  return Tensor::FromVector<double>(v, {b, n, n});
}

Tensor Spread(TensorShape shape, double phase = 0.1) {
  std::vector<double> v(shape.num_elements());
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::cos(0.7 * i + phase);
  return Tensor::FromVector<double>(v, shape);
}

Output Symmetrized(const Scope& s, const Output& x) {
  return ops::Mul(s, ops::AddV2(s, x, ops::Transpose(s, x, {0, 2, 1})), ops::Const(s, 0.5));
}

TEST(LinalgGradientsTest, InverseDeterminantsSolves) {
  Tensor a = Matrices(2, 3, 3.0);
  for (bool adjoint : {false, true}) {
    ExpectGradientsMatch({a}, [&](const Scope& s, const std::vector<Output>& in) {
      return Op(s, "MatrixInverse", {in[0]}, {{"adjoint", adjoint}});
    });
  }
  ExpectGradientsMatch({a}, [](const Scope& s, const std::vector<Output>& in) {
    return Op(s, "MatrixDeterminant", {in[0]});
  });
  ExpectGradientsMatch({a}, [](const Scope& s, const std::vector<Output>& in) {
    return Op(s, "LogMatrixDeterminant", {in[0]}, {}, 1);
  });
  Tensor rhs = Spread({2, 3, 2});
  for (bool adjoint : {false, true}) {
    ExpectGradientsMatch({a, rhs}, [&](const Scope& s, const std::vector<Output>& in) {
      return Op(s, "MatrixSolve", {in[0], in[1]}, {{"adjoint", adjoint}});
    });
  }
}

TEST(LinalgGradientsTest, TriangularSolveWithBroadcastBatch) {
  Tensor a = Matrices(1, 3, 3.0);
  Tensor rhs = Spread({2, 3, 2});
  for (bool lower : {true, false}) {
    for (bool adjoint : {false, true}) {
      SCOPED_TRACE(testing::Message() << "lower " << lower << " adjoint " << adjoint);
      ExpectGradientsMatch({a, rhs}, [&](const Scope& s, const std::vector<Output>& in) {
        return Op(s, "MatrixTriangularSolve", {in[0], in[1]},
                  {{"lower", lower}, {"adjoint", adjoint}});
      });
    }
  }
}

TEST(LinalgGradientsTest, CholeskyAndEigOfSymmetrizedInput) {
  // Positive definite: diagonally dominant.
  Tensor spd = Matrices(2, 3, 4.0);
  ExpectGradientsMatch({spd}, [](const Scope& s, const std::vector<Output>& in) {
    return Op(s, "Cholesky", {Symmetrized(s, in[0])});
  });
  // Distinct eigenvalues; eigenvectors enter squared (their sign is arbitrary).
  Tensor sym = Matrices(2, 3, 0.0, 1.1);
  ExpectGradientsMatch({sym}, [](const Scope& s, const std::vector<Output>& in) {
    return Op(s, "SelfAdjointEigV2", {Symmetrized(s, in[0])}, {}, 0);
  });
  ExpectGradientsMatch({sym}, [](const Scope& s, const std::vector<Output>& in) {
    Output v = Op(s, "SelfAdjointEigV2", {Symmetrized(s, in[0])}, {}, 1);
    return ops::Mul(s, v, v);
  });
  ExpectGradientsMatch({sym}, [](const Scope& s, const std::vector<Output>& in) {
    return Op(s, "SelfAdjointEigV2", {Symmetrized(s, in[0])}, {{"compute_v", false}}, 0);
  });
}

TEST(LinalgGradientsTest, QrDeepSquareAndWide) {
  for (TensorShape shape : {TensorShape({2, 4, 3}), TensorShape({3, 3}), TensorShape({2, 3, 5})}) {
    SCOPED_TRACE(shape.DebugString());
    Tensor x = DistinctValues(shape);  // full rank (Spread's cosines have rank 2)
    for (int output : {0, 1}) {
      ExpectGradientsMatch({x}, [&](const Scope& s, const std::vector<Output>& in) {
        return Op(s, "Qr", {in[0]}, {}, output);
      });
    }
  }
}

TEST(LinalgGradientsTest, DiagonalFamilyAndCross) {
  Tensor m = Spread({2, 3, 4});
  Tensor d = Spread({2, 3});
  ExpectGradientsMatch(
      {d}, [](const Scope& s, const std::vector<Output>& in) { return Op(s, "Diag", {in[0]}); });
  ExpectGradientsMatch({Spread({2, 3, 2, 3})}, [](const Scope& s, const std::vector<Output>& in) {
    return Op(s, "DiagPart", {in[0]});
  });
  ExpectGradientsMatch({d}, [](const Scope& s, const std::vector<Output>& in) {
    return Op(s, "MatrixDiag", {in[0]});
  });
  ExpectGradientsMatch({m}, [](const Scope& s, const std::vector<Output>& in) {
    return Op(s, "MatrixDiagPart", {in[0]});
  });
  ExpectGradientsMatch({m, d}, [](const Scope& s, const std::vector<Output>& in) {
    return Op(s, "MatrixSetDiag", {in[0], in[1]});
  });
  for (const char* align : {"RIGHT_LEFT", "LEFT_RIGHT"}) {
    SCOPED_TRACE(align);
    AttrMap attrs = {{"align", std::string(align)}};
    ExpectGradientsMatch({m}, [&](const Scope& s, const std::vector<Output>& in) {
      return Op(s, "MatrixDiagPartV3", {in[0], I32(s, {-1, 2}), ops::Const(s, 0.0)}, attrs);
    });
    // Diagonals -1..1 of a 3x4 matrix: 3 diagonals of up to 3 elements.
    ExpectGradientsMatch({Spread({2, 3, 3})}, [&](const Scope& s, const std::vector<Output>& in) {
      return Op(s, "MatrixDiagV3",
                {in[0], I32(s, {-1, 1}), I32(s, {3}), I32(s, {4}), ops::Const(s, 0.0)}, attrs);
    });
    ExpectGradientsMatch({m, Spread({2, 2, 3})},
                         [&](const Scope& s, const std::vector<Output>& in) {
                           return Op(s, "MatrixSetDiagV3", {in[0], in[1], I32(s, {0, 1})}, attrs);
                         });
  }
  ExpectGradientsMatch({Spread({2, 3}), Spread({2, 3}, 1.7)},
                       [](const Scope& s, const std::vector<Output>& in) {
                         return Op(s, "Cross", {in[0], in[1]});
                       });
}

TEST(LinalgGradientsTest, SvdValuesAndSquaredVectors) {
  for (TensorShape shape : {TensorShape({3, 3}), TensorShape({2, 4, 3}), TensorShape({2, 3, 4})}) {
    SCOPED_TRACE(shape.DebugString());
    Tensor x = DistinctValues(shape);  // full rank (Spread's cosines have rank 2)
    ExpectGradientsMatch({x}, [](const Scope& s, const std::vector<Output>& in) {
      return Op(s, "Svd", {in[0]}, {{"compute_uv", false}}, 0);
    });
    for (bool full : {false, true}) {
      for (int output : {0, 1, 2}) {
        ExpectGradientsMatch({x}, [&](const Scope& s, const std::vector<Output>& in) {
          Output y = Op(s, "Svd", {in[0]}, {{"full_matrices", full}}, output);
          return ops::Mul(s, y, y);  // singular vectors are unique up to sign
        });
      }
    }
  }
}

TEST(LinalgGradientsTest, LuPackedFactors) {
  // Partial pivoting swaps rows here: column 0's largest entry is in row 1,
  // then column 1's in row 2.
  Tensor a = Values({0.5, 2.0, 1.0, 3.0, 1.0, -1.0, 1.0, -2.5, 4.0}, {3, 3});
  Tensor batch = Matrices(2, 4, 3.0);
  for (const Tensor& x : {a, batch}) {
    ExpectGradientsMatch({x}, [](const Scope& s, const std::vector<Output>& in) {
      return Op(s, "Lu", {in[0]}, {{"output_idx_type", DT_INT32}}, 0);
    });
  }
}

TEST(LinalgGradientsTest, MissingGradientsAreErrorsNotZeros) {
  Scope s = Scope::NewRootScope();
  Output x = ops::Const(s, Spread({3, 3}));
  Output y = Op(s, "MatrixSolveLs", {x, x, ops::Const(s, 0.0)}, {}, 0);
  std::vector<Output> grads;
  Status status = AddSymbolicGradients(s, {y}, {x}, &grads);
  EXPECT_TRUE(errors::IsUnimplemented(status)) << status;
}

}  // namespace
}  // namespace weir
