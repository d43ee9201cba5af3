// Element moving for the array kernels. They never compute on elements, so
// their loops are instantiated per element size (1, 2, 4, 8 and 16 bytes)
// plus the two non-POD dtypes (string, resource) rather than per dtype:
// seven instantiations serve every dtype. POD rows move with memcpy; large
// copies are split over the device's intra-op pool.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "weir/base/logging.h"
#include "weir/framework/tensor.h"

namespace weir {

class OpKernelContext;
class ThreadPool;

// The element of 16-byte dtypes (complex128), moved as bytes.
struct Bytes16 {
  uint64_t lo, hi;
};

// Calls `fn.template operator()<T>()` with T a type of the dtype's element
// size (or std::string / ResourceHandle for the non-POD dtypes).
template <typename Fn>
void DispatchByElementSize(DType dtype, Fn&& fn) {
  if (dtype == DT_STRING) return fn.template operator()<std::string>();
  if (dtype == DT_RESOURCE) return fn.template operator()<ResourceHandle>();
  if (dtype == DT_VARIANT) return fn.template operator()<Variant>();
  switch (DTypeSize(dtype)) {
    case 1: return fn.template operator()<uint8_t>();
    case 2: return fn.template operator()<uint16_t>();
    case 4: return fn.template operator()<uint32_t>();
    case 8: return fn.template operator()<uint64_t>();
    case 16: return fn.template operator()<Bytes16>();
    default: LOG(Fatal) << "no element size for dtype " << dtype;
  }
}

// The tensor's elements as T. REQUIRES: T matches the dtype's element size
// (as DispatchByElementSize chooses it).
template <typename T>
T* ElementsAs(Tensor& t) {
  return static_cast<T*>(t.raw_data());
}
template <typename T>
const T* ElementsAs(const Tensor& t) {
  return static_cast<const T*>(t.raw_data());
}

// Copies n elements (memcpy for POD).
template <typename T>
inline void CopyElements(const T* src, int64_t n, T* dst) {
  if constexpr (std::is_trivially_copyable_v<T>) {
    if (n > 0) std::memcpy(dst, src, n * sizeof(T));
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
  }
}

// Row-major strides of `shape`, in elements.
std::vector<int64_t> DenseStrides(const TensorShape& shape);

// Copies a `dims`-shaped block between strided layouts (strides in elements,
// any sign, 0 for broadcast reads):
//   out[out_offset + sum_k i_k * out_strides[k]] =
//       in[in_offset + sum_k i_k * in_strides[k]].
// Transposed layouts are copied in cache-sized tiles.
// REQUIRES: in and out have one dtype; every address is inside its tensor.
void CopyStrided(ThreadPool* pool, std::span<const int64_t> dims, const Tensor& in,
                 int64_t in_offset, std::span<const int64_t> in_strides, Tensor* out,
                 int64_t out_offset, std::span<const int64_t> out_strides);

// True when reading `dims` with `in_strides` in row-major order visits
// consecutive elements, so a dense result could share the input's buffer.
bool IsContiguousRead(std::span<const int64_t> dims, std::span<const int64_t> in_strides);

// A tensor of `shape` sharing `in`'s buffer from element `offset` on.
// REQUIRES: offset + shape.num_elements() <= in.NumElements().
Tensor ShareElements(const Tensor& in, int64_t offset, const TensorShape& shape);

// Concat and split along a dim: `wide` is a row-major [rows, sum(cols)]
// matrix whose rows are the rows of pieces k (row-major [rows, cols[k]])
// side by side. ConcatColumns fills `out` from the pieces; SplitColumns
// fills the pieces from `in`.
void ConcatColumns(ThreadPool* pool, int64_t rows, std::span<const int64_t> cols,
                   std::span<const Tensor* const> pieces, Tensor* out);
void SplitColumns(ThreadPool* pool, int64_t rows, std::span<const int64_t> cols,
                  const Tensor& in, std::span<Tensor* const> pieces);

// Sets output 0 of `context` to the `out_shape` tensor whose elements, in
// row-major order, are those of `in` read as a `dims`-shaped view (in
// elements: in_offset + sum_k i_k * in_strides[k]). Shares `in`'s buffer
// when the view is contiguous, else copies over the intra-op pool.
// REQUIRES: prod(dims) == out_shape.num_elements(); the view lies in `in`.
void SetOutputToView(OpKernelContext* context, const Tensor& in, const TensorShape& out_shape,
                     std::span<const int64_t> dims, int64_t in_offset,
                     std::span<const int64_t> in_strides);

// out[o_0, ..., o_n] = in[maps[0][o_0], ..., maps[n][o_n]], or `fill` where
// any map entry is -1: `fill` is a scalar of the dtype, or null for zeros.
// Serves Pad, PadV2 and MirrorPad. REQUIRES: maps[k].size() == out dim k and
// entries are -1 or in [0, in dim k).
void CopyWithIndexMaps(ThreadPool* pool, const Tensor& in,
                       const std::vector<std::vector<int64_t>>& maps, const Tensor* fill,
                       Tensor* out);

}  // namespace weir
