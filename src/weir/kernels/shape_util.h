// Checked shape arithmetic for kernels. Every output shape a kernel builds
// from input values (shape, multiples, paddings, sizes tensors), attrs or a
// combination of input shapes goes through CheckedShape, so hostile values
// are an InvalidArgument naming the op and the dims, never a CHECK, a
// wrapped element count or an allocation of the wrong size. All of these
// are O(rank): call them before per-element loops, never inside.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "weir/base/status.h"
#include "weir/framework/tensor_shape.h"

namespace weir {

// The shape with `dims`. InvalidArgument ("Tile: output: shape [..] has ...")
// when a dim is negative, the rank exceeds TensorShape::kMaxRank or the
// element count overflows int64.
StatusOr<TensorShape> CheckedShape(std::span<const int64_t> dims, std::string_view op);
StatusOr<TensorShape> CheckedShape(const PartialShape& shape, std::string_view op);

// The product of dims [begin, end) of `shape`, saturating at INT64_MAX.
// Exact whenever the tensor has elements (every partial product is then at
// most the element count); only an empty tensor's dims can multiply past
// int64, and an empty tensor's products never address an element.
int64_t DimProduct(const TensorShape& shape, int begin, int end);

}  // namespace weir
