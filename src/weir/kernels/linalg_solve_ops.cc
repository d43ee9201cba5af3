// The linalg kernels built on LU and Cholesky factorizations and
// triangular solves: MatrixInverse, MatrixDeterminant, LogMatrixDeterminant,
// Cholesky, MatrixSolve, MatrixTriangularSolve (batch dims broadcast), Lu,
// MatrixSolveLs, and Cross. float, double, complex64 and complex128 (Cross:
// every real number type); each matrix of the batch is one Eigen
// decomposition, never hand-written.
#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/LU>
#include <Eigen/QR>
#include <algorithm>
#include <limits>

#include "weir/framework/broadcast_shape.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/linalg_util.h"
#include "weir/kernels/type_list.h"

namespace weir {
namespace {

using namespace linalg;

// The smallest pivot's size: 0 for a singular matrix.
template <typename T>
Real<T> MinAbsPivot(const Eigen::PartialPivLU<RowMatrix<T>>& lu) {
  return lu.matrixLU().diagonal().cwiseAbs().minCoeff();
}

template <typename T>
class MatrixInverseOp : public OpKernel {
 public:
  explicit MatrixInverseOp(OpKernelConstruction* context) : OpKernel(context) {
    OP_REQUIRES_OK(context, context->GetAttr("adjoint", &adjoint_));
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& in = context->input(0);
    OP_REQUIRES_OK(context, CheckMatrices(in, true, "MatrixInverse", "input"));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(context, context->allocate_output(0, in.shape(), &out));
    const int64_t n = in.dim_size(in.dims() - 1);
    if (in.NumElements() == 0) return;
    OP_REQUIRES_OK(
        context, ForEachMatrix(context, in.NumElements() / (n * n), CubeCost(n), [&](int64_t b) {
          RowMatrix<T> a = MatrixOf<T>(in, b, n, n);
          if (adjoint_) a.adjointInPlace();
          Eigen::PartialPivLU<RowMatrix<T>> lu(a);
          if (!(MinAbsPivot<T>(lu) > Real<T>(0))) {
            return errors::InvalidArgument("MatrixInverse: the matrix at batch index ", b,
                                           " of the input (shape ", in.shape(), ", dtype ",
                                           in.dtype(), ") is not invertible");
          }
          MatrixOf<T>(out, b, n, n) = lu.inverse();
          return Status::OK();
        }));
  }

 private:
  bool adjoint_ = false;
};

// MatrixDeterminant (one output) and LogMatrixDeterminant (sign, log|det|).
template <typename T, bool kLog>
class DeterminantOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const char* op = kLog ? "LogMatrixDeterminant" : "MatrixDeterminant";
    const Tensor& in = context->input(0);
    OP_REQUIRES_OK(context, CheckMatrices(in, true, op, "input"));
    const int64_t n = in.dim_size(in.dims() - 1);
    const TensorShape batch = BatchShape(in, 2, {});
    Tensor* first = nullptr;
    Tensor* second = nullptr;
    OP_REQUIRES_OK(context, context->allocate_output(0, batch, &first));
    if (kLog) OP_REQUIRES_OK(context, context->allocate_output(1, batch, &second));
    const int64_t count = batch.num_elements();
    OP_REQUIRES_OK(context, ForEachMatrix(context, count, CubeCost(n), [&](int64_t b) {
                     // sign * exp(log_abs) from the LU pivots; the empty matrix has det 1.
                     T sign(1);
                     Real<T> log_abs(0);
                     if (n > 0) {
                       Eigen::PartialPivLU<RowMatrix<T>> lu(RowMatrix<T>(MatrixOf<T>(in, b, n, n)));
                       sign = T(lu.permutationP().determinant());
                       for (int64_t i = 0; i < n; ++i) {
                         const T pivot = lu.matrixLU()(i, i);
                         const Real<T> size = std::abs(pivot);
                         if (size == Real<T>(0)) {
                           sign = T(0);
                           log_abs = -std::numeric_limits<Real<T>>::infinity();
                           break;
                         }
                         sign *= pivot / size;
                         log_abs += std::log(size);
                       }
                     }
                     if (kLog) {
                       first->data<T>()[b] = sign;
                       second->data<T>()[b] = T(log_abs);
                     } else {
                       first->data<T>()[b] = sign == T(0) ? T(0) : sign * T(std::exp(log_abs));
                     }
                     return Status::OK();
                   }));
  }
};

template <typename T>
class CholeskyOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& in = context->input(0);
    OP_REQUIRES_OK(context, CheckMatrices(in, true, "Cholesky", "input"));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(context, context->allocate_output(0, in.shape(), &out));
    const int64_t n = in.dim_size(in.dims() - 1);
    if (in.NumElements() == 0) return;
    OP_REQUIRES_OK(
        context, ForEachMatrix(context, in.NumElements() / (n * n), CubeCost(n), [&](int64_t b) {
          // LLT reads only the lower triangle, as TensorFlow does.
          Eigen::LLT<RowMatrix<T>, Eigen::Lower> llt(RowMatrix<T>(MatrixOf<T>(in, b, n, n)));
          if (llt.info() != Eigen::Success) {
            return errors::InvalidArgument("Cholesky: the matrix at batch index ", b,
                                           " of the input (shape ", in.shape(), ", dtype ",
                                           in.dtype(), ") is not positive definite");
          }
          MatrixOf<T>(out, b, n, n) = llt.matrixL();
          return Status::OK();
        }));
  }
};

template <typename T>
class MatrixSolveOp : public OpKernel {
 public:
  explicit MatrixSolveOp(OpKernelConstruction* context) : OpKernel(context) {
    OP_REQUIRES_OK(context, context->GetAttr("adjoint", &adjoint_));
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& a = context->input(0);
    const Tensor& rhs = context->input(1);
    OP_REQUIRES_OK(context, CheckMatrices(a, true, "MatrixSolve", "matrix"));
    OP_REQUIRES_OK(context, CheckMatrices(rhs, false, "MatrixSolve", "rhs"));
    const int64_t n = a.dim_size(a.dims() - 1), k = rhs.dim_size(rhs.dims() - 1);
    OP_REQUIRES(
        context, BatchShape(a, 1, {}) == BatchShape(rhs, 1, {}),
        errors::InvalidArgument("MatrixSolve: matrix of shape ", a.shape(), " and rhs of shape ",
                                rhs.shape(), " must have the same batch dims and rows"));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(context, context->allocate_output(0, rhs.shape(), &out));
    if (rhs.NumElements() == 0) return;
    OP_REQUIRES_OK(
        context, ForEachMatrix(context, rhs.NumElements() / (n * k), CubeCost(n), [&](int64_t b) {
          RowMatrix<T> m = MatrixOf<T>(a, b, n, n);
          if (adjoint_) m.adjointInPlace();
          Eigen::PartialPivLU<RowMatrix<T>> lu(m);
          if (!(MinAbsPivot<T>(lu) > Real<T>(0))) {
            return errors::InvalidArgument("MatrixSolve: the matrix at batch index ", b, " (shape ",
                                           a.shape(), ", dtype ", a.dtype(), ") is not invertible");
          }
          MatrixOf<T>(out, b, n, k) = lu.solve(RowMatrix<T>(MatrixOf<T>(rhs, b, n, k)));
          return Status::OK();
        }));
  }

 private:
  bool adjoint_ = false;
};

// The index of `t`'s batch entry that output batch entry `b` reads, under
// NumPy broadcasting of the batch dims (`out_batch`, right-aligned).
int64_t BroadcastSource(const TensorShape& out_batch, const Tensor& t, int64_t b) {
  const int t_batch_rank = t.dims() - 2, offset = out_batch.dims() - t_batch_rank;
  int64_t index = 0, rest = b;
  std::vector<int64_t> coords(out_batch.dims());
  for (int i = out_batch.dims() - 1; i >= 0; --i) {
    coords[i] = rest % out_batch.dim_size(i);
    rest /= out_batch.dim_size(i);
  }
  for (int i = 0; i < t_batch_rank; ++i) {
    const int64_t size = t.dim_size(i);
    index = index * size + (size == 1 ? 0 : coords[i + offset]);
  }
  return index;
}

template <typename T>
class MatrixTriangularSolveOp : public OpKernel {
 public:
  explicit MatrixTriangularSolveOp(OpKernelConstruction* context) : OpKernel(context) {
    OP_REQUIRES_OK(context, context->GetAttr("lower", &lower_));
    OP_REQUIRES_OK(context, context->GetAttr("adjoint", &adjoint_));
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& a = context->input(0);
    const Tensor& rhs = context->input(1);
    OP_REQUIRES_OK(context, CheckMatrices(a, true, "MatrixTriangularSolve", "matrix"));
    OP_REQUIRES_OK(context, CheckMatrices(rhs, false, "MatrixTriangularSolve", "rhs"));
    const int64_t n = a.dim_size(a.dims() - 1), k = rhs.dim_size(rhs.dims() - 1);
    OP_REQUIRES(
        context, rhs.dim_size(rhs.dims() - 2) == n,
        errors::InvalidArgument("MatrixTriangularSolve: matrix of shape ", a.shape(),
                                " and rhs of shape ", rhs.shape(), " must have the same rows"));
    StatusOr<PartialShape> batch =
        BroadcastShapes(PartialShape(BatchShape(a, 2, {})), PartialShape(BatchShape(rhs, 2, {})));
    OP_REQUIRES(context, batch.ok(),
                errors::InvalidArgument("MatrixTriangularSolve: the batch dims of matrix ",
                                        a.shape(), " and rhs ", rhs.shape(), " do not broadcast"));
    const TensorShape out_batch = batch->ToTensorShape();
    TensorShape out_shape = out_batch;
    OP_REQUIRES_OK(context, out_shape.AddDimWithStatus(n));
    OP_REQUIRES_OK(context, out_shape.AddDimWithStatus(k));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(context, context->allocate_output(0, out_shape, &out));
    if (out->NumElements() == 0) return;
    OP_REQUIRES_OK(context,
                   ForEachMatrix(context, out_batch.num_elements(), CubeCost(n), [&](int64_t b) {
                     ConstMap<T> m = MatrixOf<T>(a, BroadcastSource(out_batch, a, b), n, n);
                     RowMatrix<T> x = MatrixOf<T>(rhs, BroadcastSource(out_batch, rhs, b), n, k);
                     if (lower_ && !adjoint_)
                       m.template triangularView<Eigen::Lower>().solveInPlace(x);
                     if (lower_ && adjoint_)
                       m.template triangularView<Eigen::Lower>().adjoint().solveInPlace(x);
                     if (!lower_ && !adjoint_)
                       m.template triangularView<Eigen::Upper>().solveInPlace(x);
                     if (!lower_ && adjoint_)
                       m.template triangularView<Eigen::Upper>().adjoint().solveInPlace(x);
                     MatrixOf<T>(out, b, n, k) = x;
                     return Status::OK();
                   }));
  }

 private:
  bool lower_ = true;
  bool adjoint_ = false;
};

template <typename T, typename Index>
class LuOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& in = context->input(0);
    OP_REQUIRES_OK(context, CheckMatrices(in, true, "Lu", "input"));
    const int64_t n = in.dim_size(in.dims() - 1);
    OP_REQUIRES(context, n <= std::numeric_limits<Index>::max(),
                errors::InvalidArgument("Lu: ", n, " rows do not fit output_idx_type"));
    Tensor* lu_out = nullptr;
    Tensor* p_out = nullptr;
    OP_REQUIRES_OK(context, context->allocate_output(0, in.shape(), &lu_out));
    OP_REQUIRES_OK(context, context->allocate_output(1, BatchShape(in, 2, {n}), &p_out));
    if (in.NumElements() == 0) return;
    OP_REQUIRES_OK(context,
                   ForEachMatrix(context, in.NumElements() / (n * n), CubeCost(n), [&](int64_t b) {
                     Eigen::PartialPivLU<RowMatrix<T>> lu(RowMatrix<T>(MatrixOf<T>(in, b, n, n)));
                     MatrixOf<T>(lu_out, b, n, n) = lu.matrixLU();
                     // Eigen's P moves row i to row indices[i] (P A = L U); TensorFlow's p
                     // names, for each row of L U, the input row it came from.
                     const auto& indices = lu.permutationP().indices();
                     Index* p = p_out->data<Index>() + b * n;
                     for (int64_t i = 0; i < n; ++i) p[indices(i)] = static_cast<Index>(i);
                     return Status::OK();
                   }));
  }
};

template <typename T>
class MatrixSolveLsOp : public OpKernel {
 public:
  explicit MatrixSolveLsOp(OpKernelConstruction* context) : OpKernel(context) {
    OP_REQUIRES_OK(context, context->GetAttr("fast", &fast_));
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& a = context->input(0);
    const Tensor& rhs = context->input(1);
    const Tensor& l2_tensor = context->input(2);
    OP_REQUIRES_OK(context, CheckMatrices(a, false, "MatrixSolveLs", "matrix"));
    OP_REQUIRES_OK(context, CheckMatrices(rhs, false, "MatrixSolveLs", "rhs"));
    OP_REQUIRES(
        context, l2_tensor.dims() == 0,
        errors::InvalidArgument("MatrixSolveLs: l2_regularizer must be a scalar but has shape ",
                                l2_tensor.shape()));
    const double l2 = l2_tensor.scalar<double>();
    OP_REQUIRES(context, fast_ || l2 == 0,
                errors::Unimplemented("MatrixSolveLs: fast=false with l2_regularizer ", l2,
                                      " != 0 is not supported"));
    const int64_t m = a.dim_size(a.dims() - 2), n = a.dim_size(a.dims() - 1),
                  k = rhs.dim_size(rhs.dims() - 1);
    OP_REQUIRES(
        context, BatchShape(a, 1, {}) == BatchShape(rhs, 1, {}),
        errors::InvalidArgument("MatrixSolveLs: matrix of shape ", a.shape(), " and rhs of shape ",
                                rhs.shape(), " must have the same batch dims and rows"));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(context, context->allocate_output(0, BatchShape(a, 2, {n, k}), &out));
    if (out->NumElements() == 0) return;
    const int64_t count = BatchShape(a, 2, {}).num_elements();
    OP_REQUIRES_OK(context, ForEachMatrix(context, count, CubeCost(std::max(m, n)), [&](int64_t b) {
                     ColMatrix<T> x = MatrixOf<T>(a, b, m, n);
                     ColMatrix<T> y = MatrixOf<T>(rhs, b, m, k);
                     Map<T> result = MatrixOf<T>(out, b, n, k);
                     if (m == 0) {
                       result.setZero();
                       return Status::OK();
                     }
                     if (!fast_) {
                       result = x.completeOrthogonalDecomposition().solve(y);
                       return Status::OK();
                     }
                     // The normal equations, regularized, by Cholesky: the smaller Gram matrix.
                     const bool tall = m >= n;
                     ColMatrix<T> gram =
                         tall ? ColMatrix<T>(x.adjoint() * x) : ColMatrix<T>(x * x.adjoint());
                     gram.diagonal().array() += T(static_cast<Real<T>>(l2));
                     Eigen::LLT<ColMatrix<T>> llt(gram);
                     if (llt.info() != Eigen::Success) {
                       return errors::InvalidArgument(
                           "MatrixSolveLs: the matrix at batch index ", b, " (shape ", a.shape(),
                           ") is rank deficient or ill-conditioned; set fast=false or a larger "
                           "l2_regularizer");
                     }
                     if (tall) {
                       result = llt.solve(ColMatrix<T>(x.adjoint() * y));
                     } else {
                       result = x.adjoint() * llt.solve(y);
                     }
                     return Status::OK();
                   }));
  }

 private:
  bool fast_ = true;
};

template <typename T>
class CrossOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& a = context->input(0);
    const Tensor& b = context->input(1);
    OP_REQUIRES(context, a.shape() == b.shape(),
                errors::InvalidArgument("Cross: a of shape ", a.shape(), " and b of shape ",
                                        b.shape(), " must have the same shape"));
    OP_REQUIRES(
        context, a.dims() >= 1 && a.dim_size(a.dims() - 1) == 3,
        errors::InvalidArgument("Cross: the innermost dim of a and b must be 3 but their shape is ",
                                a.shape()));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(context, context->allocate_output(0, a.shape(), &out));
    const T* x = a.data<T>();
    const T* y = b.data<T>();
    T* z = out->data<T>();
    for (int64_t i = 0; i < a.NumElements(); i += 3) {
      z[i] = x[i + 1] * y[i + 2] - x[i + 2] * y[i + 1];
      z[i + 1] = x[i + 2] * y[i] - x[i] * y[i + 2];
      z[i + 2] = x[i] * y[i + 1] - x[i + 1] * y[i];
    }
  }
};

}  // namespace

void RegisterLinalgSolveKernels(KernelRegistry* registry) {
  ForEachType<float, double, complex64, complex128>([&]<typename T>() {
    auto reg = [&](const char* op, KernelFactory factory) {
      registry->Register(KernelBuilder(op).TypeConstraint<T>("T"), std::move(factory));
    };
    reg("MatrixInverse", MakeKernel<MatrixInverseOp<T>>);
    reg("MatrixDeterminant", MakeKernel<DeterminantOp<T, false>>);
    reg("LogMatrixDeterminant", MakeKernel<DeterminantOp<T, true>>);
    reg("Cholesky", MakeKernel<CholeskyOp<T>>);
    reg("MatrixSolve", MakeKernel<MatrixSolveOp<T>>);
    reg("MatrixTriangularSolve", MakeKernel<MatrixTriangularSolveOp<T>>);
    reg("MatrixSolveLs", MakeKernel<MatrixSolveLsOp<T>>);
    registry->Register(
        KernelBuilder("Lu").TypeConstraint<T>("T").TypeConstraint("output_idx_type", DT_INT32),
        MakeKernel<LuOp<T, int32_t>>);
    registry->Register(
        KernelBuilder("Lu").TypeConstraint<T>("T").TypeConstraint("output_idx_type", DT_INT64),
        MakeKernel<LuOp<T, int64_t>>);
  });
  ForEachType<float, double, int32_t, uint8_t, int16_t, int8_t, int64_t, uint16_t, uint32_t,
              uint64_t>([&]<typename T>() {
    registry->Register(KernelBuilder("Cross").TypeConstraint<T>("T"), MakeKernel<CrossOp<T>>);
  });
}

}  // namespace weir
