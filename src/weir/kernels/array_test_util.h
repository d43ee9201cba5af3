// Helpers for the array kernel tests (array_*_test.cc): inputs with
// recognizable values, index arithmetic for reference loops, and error
// checks. Test-only; header-only.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "weir/kernels/kernel_test_util.h"

namespace weir {
namespace array_test {

// Elements start, start + 1, ... in row-major order.
template <typename T>
Tensor Iota(const TensorShape& shape, int start = 0) {
  Tensor t(kDTypeOf<T>, shape);
  for (int64_t i = 0; i < t.NumElements(); ++i) t.data<T>()[i] = static_cast<T>(start + i);
  return t;
}

// Strings "s0", "s1", ... in row-major order.
inline Tensor StringIota(const TensorShape& shape) {
  Tensor t(DT_STRING, shape);
  for (int64_t i = 0; i < t.NumElements(); ++i) t.data<std::string>()[i] = StrCat("s", i);
  return t;
}

inline Tensor I32(std::vector<int32_t> values) { return Tensor::FromVector(values); }
inline Tensor I64(std::vector<int64_t> values) { return Tensor::FromVector(values); }
inline Tensor I32Scalar(int32_t v) { return Tensor::Scalar<int32_t>(v); }

// The index of flat element `flat` of `shape`, and back.
inline std::vector<int64_t> Unravel(int64_t flat, const TensorShape& shape) {
  std::vector<int64_t> index(shape.rank());
  for (int k = shape.rank() - 1; k >= 0; --k) {
    index[k] = flat % shape.dim_size(k);
    flat /= shape.dim_size(k);
  }
  return index;
}
inline int64_t Ravel(const std::vector<int64_t>& index, const TensorShape& shape) {
  int64_t flat = 0;
  for (int k = 0; k < shape.rank(); ++k) flat = flat * shape.dim_size(k) + index[k];
  return flat;
}

// Runs `op` and returns output 0 (failing the test on error).
inline Tensor Run1(const std::string& op, AttrMap attrs, std::vector<Tensor> inputs) {
  StatusOr<std::vector<Tensor>> out = RunKernel(op, std::move(attrs), std::move(inputs));
  EXPECT_TRUE(out.ok()) << op << ": " << out.status();
  return out.ok() ? (*out)[0] : Tensor();
}

// Runs `op`, expecting an InvalidArgument whose message contains every
// string in `parts`.
inline void RunError(const std::string& op, AttrMap attrs, std::vector<Tensor> inputs,
                       std::initializer_list<std::string> parts) {
  StatusOr<std::vector<Tensor>> out = RunKernel(op, std::move(attrs), std::move(inputs));
  EXPECT_FALSE(out.ok()) << op << " succeeded but should fail";
  if (out.ok()) return;
  EXPECT_TRUE(errors::IsInvalidArgument(out.status())) << out.status();
  for (const std::string& part : parts) {
    EXPECT_NE(out.status().message().find(part), std::string::npos)
        << "'" << part << "' not in: " << out.status();
  }
}

// Expects `t` to have `shape` and exactly `values`.
template <typename T>
void ExpectTensor(const Tensor& t, const TensorShape& shape, const std::vector<T>& values) {
  ASSERT_EQ(t.dtype(), kDTypeOf<T>) << t.DebugString();
  ASSERT_EQ(t.shape(), shape) << t.DebugString();
  EXPECT_TRUE(t.ContentEquals(Tensor::FromVector(values, shape)))
      << t.DebugString(100) << " vs " << Tensor::FromVector(values, shape).DebugString(100);
}

}  // namespace array_test
}  // namespace weir
