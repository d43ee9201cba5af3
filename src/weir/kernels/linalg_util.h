// Helpers of the linalg kernels (linalg_solve_ops.cc, linalg_decompose_ops.cc):
// Eigen views of one matrix of a batch, shape checks, and a parallel loop
// over the batch that reports the first failing matrix.
#pragma once

#include <Eigen/Core>
#include <functional>
#include <initializer_list>
#include <string_view>

#include "weir/framework/op_kernel.h"
#include "weir/framework/tensor.h"

namespace weir {
namespace linalg {

template <typename T>
using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using ColMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
template <typename T>
using ConstMap = Eigen::Map<const RowMatrix<T>>;
template <typename T>
using Map = Eigen::Map<RowMatrix<T>>;
template <typename T>
using Real = typename Eigen::NumTraits<T>::Real;

// Matrix `b` of `t` (rows x cols, row-major).
template <typename T>
ConstMap<T> MatrixOf(const Tensor& t, int64_t b, int64_t rows, int64_t cols) {
  return ConstMap<T>(t.data<T>() + b * rows * cols, rows, cols);
}
template <typename T>
Map<T> MatrixOf(Tensor* t, int64_t b, int64_t rows, int64_t cols) {
  return Map<T>(t->data<T>() + b * rows * cols, rows, cols);
}

// `t`'s dims but the last `drop`, then `tail`.
TensorShape BatchShape(const Tensor& t, int drop, std::initializer_list<int64_t> tail);

// Checks that `t` is a batch of matrices (square when `square`); the error
// names `op`, `what` (the input), its shape and dtype.
Status CheckMatrices(const Tensor& t, bool square, std::string_view op, std::string_view what);

// Runs fn(b) for b in [0, count) on the intra-op pool; the failure of the
// lowest b is the result.
Status ForEachMatrix(OpKernelContext* context, int64_t count, int64_t cost,
                     const std::function<Status(int64_t)>& fn);

// A ParallelFor cost for an n x n decomposition (n^3, capped).
int64_t CubeCost(int64_t n);

}  // namespace linalg
}  // namespace weir
