// Eigen tensor views of weir::Tensor, for kernels that compute with Eigen's
// Tensor module on a device's thread pool:
//
//   FlatMap<float>(*out).device(ctx->eigen_cpu_device()) =
//       FlatMap<float>(x) + FlatMap<float>(y);
//
// Views borrow the tensor's buffer: they are valid while the tensor lives.
// Maps are unaligned because slices share a buffer at any row offset.
#pragma once

#ifndef EIGEN_USE_THREADS
#define EIGEN_USE_THREADS
#endif
#include <array>
#include <span>

// GCC 12 reports false "(may be) used uninitialized" (_mm512_undefined_ps)
// and array-bounds warnings inside Eigen's AVX-512 packet code; they drown
// real warnings in kernels.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
#include <unsupported/Eigen/CXX11/Tensor>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include "weir/base/logging.h"
#include "weir/framework/tensor.h"

namespace weir {

template <typename T, int Rank>
using EigenTensorMap = Eigen::TensorMap<Eigen::Tensor<T, Rank, Eigen::RowMajor, Eigen::Index>>;
template <typename T, int Rank>
using ConstEigenTensorMap =
    Eigen::TensorMap<Eigen::Tensor<const T, Rank, Eigen::RowMajor, Eigen::Index>>;

// The tensor's elements as `T`. Kernels use a `T` of the dtype's size but
// another type where that helps (unsigned views of signed integers give
// wrapping arithmetic without undefined behavior).
// REQUIRES: sizeof(T) == DTypeSize(t.dtype()).
template <typename T>
T* RawElements(Tensor& t) {
  DCHECK(sizeof(T) == DTypeSize(t.dtype()));
  return static_cast<T*>(t.raw_data());
}
template <typename T>
const T* RawElements(const Tensor& t) {
  DCHECK(sizeof(T) == DTypeSize(t.dtype()));
  return static_cast<const T*>(t.raw_data());
}

// All elements as a rank-1 view.
template <typename T>
EigenTensorMap<T, 1> FlatMap(Tensor& t) {
  return EigenTensorMap<T, 1>(RawElements<T>(t), t.NumElements());
}
template <typename T>
ConstEigenTensorMap<T, 1> FlatMap(const Tensor& t) {
  return ConstEigenTensorMap<T, 1>(RawElements<T>(t), t.NumElements());
}

// The elements viewed with `dims`. REQUIRES: the product of `dims` is
// t.NumElements().
template <typename T, int Rank>
EigenTensorMap<T, Rank> ShapedMap(Tensor& t, std::span<const int64_t> dims) {
  CHECK_EQ(dims.size(), static_cast<size_t>(Rank));
  std::array<Eigen::Index, Rank> sizes;
  for (int i = 0; i < Rank; ++i) sizes[i] = dims[i];
  return EigenTensorMap<T, Rank>(RawElements<T>(t), sizes);
}
template <typename T, int Rank>
ConstEigenTensorMap<T, Rank> ShapedMap(const Tensor& t, std::span<const int64_t> dims) {
  CHECK_EQ(dims.size(), static_cast<size_t>(Rank));
  std::array<Eigen::Index, Rank> sizes;
  for (int i = 0; i < Rank; ++i) sizes[i] = dims[i];
  return ConstEigenTensorMap<T, Rank>(RawElements<T>(t), sizes);
}

// The tensor with its own shape. REQUIRES: t.dims() == Rank.
template <typename T, int Rank>
EigenTensorMap<T, Rank> TensorMapOf(Tensor& t) {
  return ShapedMap<T, Rank>(t, t.shape().dim_sizes());
}
template <typename T, int Rank>
ConstEigenTensorMap<T, Rank> TensorMapOf(const Tensor& t) {
  return ShapedMap<T, Rank>(t, t.shape().dim_sizes());
}

}  // namespace weir
