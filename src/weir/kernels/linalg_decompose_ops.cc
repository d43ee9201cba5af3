// The linalg kernels of orthogonal decompositions: Qr (Householder), Svd
// (BDCSVD) and SelfAdjointEigV2 (the self-adjoint eigensolver), for float,
// double, complex64 and complex128. TensorFlow's CPU kernels use the same
// Eigen decompositions, so Q, R and eigenvectors come out with its signs;
// singular vectors are unique only up to sign.
#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <Eigen/QR>
#include <Eigen/SVD>
#include <algorithm>
#include <limits>

#include "weir/framework/kernel_registry.h"
#include "weir/kernels/linalg_util.h"
#include "weir/kernels/type_list.h"

namespace weir {
namespace {

using namespace linalg;

template <typename T>
class QrOp : public OpKernel {
 public:
  explicit QrOp(OpKernelConstruction* context) : OpKernel(context) {
    OP_REQUIRES_OK(context, context->GetAttr("full_matrices", &full_));
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& in = context->input(0);
    OP_REQUIRES_OK(context, CheckMatrices(in, false, "Qr", "input"));
    const int64_t m = in.dim_size(in.dims() - 2), n = in.dim_size(in.dims() - 1),
                  p = std::min(m, n);
    const int64_t q_cols = full_ ? m : p, r_rows = full_ ? m : p;
    Tensor* q = nullptr;
    Tensor* r = nullptr;
    OP_REQUIRES_OK(context, context->allocate_output(0, BatchShape(in, 2, {m, q_cols}), &q));
    OP_REQUIRES_OK(context, context->allocate_output(1, BatchShape(in, 2, {r_rows, n}), &r));
    const int64_t count = BatchShape(in, 2, {}).num_elements();
    OP_REQUIRES_OK(context, ForEachMatrix(context, count, CubeCost(std::max(m, n)), [&](int64_t b) {
                     Map<T> q_out = MatrixOf<T>(q, b, m, q_cols);
                     Map<T> r_out = MatrixOf<T>(r, b, r_rows, n);
                     if (m == 0 || n == 0) {
                       q_out.setIdentity();
                       r_out.setZero();
                       return Status::OK();
                     }
                     Eigen::HouseholderQR<ColMatrix<T>> qr(ColMatrix<T>(MatrixOf<T>(in, b, m, n)));
                     q_out = qr.householderQ() * ColMatrix<T>::Identity(m, q_cols);
                     r_out = qr.matrixQR().topRows(r_rows).template triangularView<Eigen::Upper>();
                     return Status::OK();
                   }));
  }

 private:
  bool full_ = false;
};

template <typename T>
class SvdOp : public OpKernel {
 public:
  explicit SvdOp(OpKernelConstruction* context) : OpKernel(context) {
    OP_REQUIRES_OK(context, context->GetAttr("compute_uv", &compute_uv_));
    OP_REQUIRES_OK(context, context->GetAttr("full_matrices", &full_));
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& in = context->input(0);
    OP_REQUIRES_OK(context, CheckMatrices(in, false, "Svd", "input"));
    const int64_t m = in.dim_size(in.dims() - 2), n = in.dim_size(in.dims() - 1),
                  p = std::min(m, n);
    const int64_t u_cols = full_ ? m : p, v_cols = full_ ? n : p;
    Tensor* s = nullptr;
    Tensor* u = nullptr;
    Tensor* v = nullptr;
    OP_REQUIRES_OK(context, context->allocate_output(0, BatchShape(in, 2, {p}), &s));
    OP_REQUIRES_OK(context,
                   context->allocate_output(
                       1, compute_uv_ ? BatchShape(in, 2, {m, u_cols}) : TensorShape({0}), &u));
    OP_REQUIRES_OK(context,
                   context->allocate_output(
                       2, compute_uv_ ? BatchShape(in, 2, {n, v_cols}) : TensorShape({0}), &v));
    const int64_t count = BatchShape(in, 2, {}).num_elements();
    OP_REQUIRES_OK(context, ForEachMatrix(context, count, CubeCost(std::max(m, n)), [&](int64_t b) {
                     if (m == 0 || n == 0) {
                       if (compute_uv_) {
                         MatrixOf<T>(u, b, m, u_cols).setIdentity();
                         MatrixOf<T>(v, b, n, v_cols).setIdentity();
                       }
                       return Status::OK();
                     }
                     const unsigned options = !compute_uv_ ? 0
                                              : full_ ? Eigen::ComputeFullU | Eigen::ComputeFullV
                                                      : Eigen::ComputeThinU | Eigen::ComputeThinV;
                     Eigen::BDCSVD<ColMatrix<T>> svd(ColMatrix<T>(MatrixOf<T>(in, b, m, n)),
                                                     options);
                     if (svd.info() != Eigen::Success) {
                       // Inf or NaN in the input: NaN out, as TensorFlow gives.
                       const T nan(std::numeric_limits<Real<T>>::quiet_NaN());
                       std::fill(s->data<T>() + b * p, s->data<T>() + (b + 1) * p, nan);
                       if (compute_uv_) {
                         MatrixOf<T>(u, b, m, u_cols).setConstant(nan);
                         MatrixOf<T>(v, b, n, v_cols).setConstant(nan);
                       }
                       return Status::OK();
                     }
                     for (int64_t i = 0; i < p; ++i)
                       s->data<T>()[b * p + i] = T(svd.singularValues()(i));
                     if (compute_uv_) {
                       MatrixOf<T>(u, b, m, u_cols) = svd.matrixU();
                       MatrixOf<T>(v, b, n, v_cols) = svd.matrixV();
                     }
                     return Status::OK();
                   }));
  }

 private:
  bool compute_uv_ = true;
  bool full_ = false;
};

template <typename T>
class SelfAdjointEigOp : public OpKernel {
 public:
  explicit SelfAdjointEigOp(OpKernelConstruction* context) : OpKernel(context) {
    OP_REQUIRES_OK(context, context->GetAttr("compute_v", &compute_v_));
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& in = context->input(0);
    OP_REQUIRES_OK(context, CheckMatrices(in, true, "SelfAdjointEigV2", "input"));
    const int64_t n = in.dim_size(in.dims() - 1);
    Tensor* e = nullptr;
    Tensor* v = nullptr;
    OP_REQUIRES_OK(context, context->allocate_output(0, BatchShape(in, 2, {n}), &e));
    OP_REQUIRES_OK(context,
                   context->allocate_output(1, compute_v_ ? in.shape() : TensorShape({0}), &v));
    if (in.NumElements() == 0) return;
    OP_REQUIRES_OK(context,
                   ForEachMatrix(context, in.NumElements() / (n * n), CubeCost(n), [&](int64_t b) {
                     Eigen::SelfAdjointEigenSolver<ColMatrix<T>> solver(
                         ColMatrix<T>(MatrixOf<T>(in, b, n, n)),
                         compute_v_ ? Eigen::ComputeEigenvectors : Eigen::EigenvaluesOnly);
                     if (solver.info() != Eigen::Success) {
                       return errors::InvalidArgument(
                           "SelfAdjointEigV2: the eigen decomposition of the "
                           "matrix at batch index ",
                           b, " (shape ", in.shape(), ", dtype ", in.dtype(), ") did not converge");
                     }
                     for (int64_t i = 0; i < n; ++i)
                       e->data<T>()[b * n + i] = T(solver.eigenvalues()(i));
                     if (compute_v_) MatrixOf<T>(v, b, n, n) = solver.eigenvectors();
                     return Status::OK();
                   }));
  }

 private:
  bool compute_v_ = true;
};

}  // namespace

void RegisterLinalgDecomposeKernels(KernelRegistry* registry) {
  ForEachType<float, double, complex64, complex128>([&]<typename T>() {
    registry->Register(KernelBuilder("Qr").TypeConstraint<T>("T"), MakeKernel<QrOp<T>>);
    registry->Register(KernelBuilder("Svd").TypeConstraint<T>("T"), MakeKernel<SvdOp<T>>);
    registry->Register(KernelBuilder("SelfAdjointEigV2").TypeConstraint<T>("T"),
                       MakeKernel<SelfAdjointEigOp<T>>);
  });
}

}  // namespace weir
