#include "weir/kernels/shape_util.h"

#include <limits>

namespace weir {

StatusOr<TensorShape> CheckedShape(std::span<const int64_t> dims, std::string_view op) {
  StatusOr<TensorShape> shape = TensorShape::FromDims(dims);
  if (!shape.ok()) return shape.status().WithContext(StrCat(op, ": output"));
  return shape;
}

StatusOr<TensorShape> CheckedShape(const PartialShape& shape, std::string_view op) {
  if (!shape.known_rank()) {
    return errors::Internal(op, ": the output shape has unknown rank");
  }
  return CheckedShape(std::span<const int64_t>(shape.dim_sizes()), op);
}

int64_t DimProduct(const TensorShape& shape, int begin, int end) {
  int64_t n = 1;
  for (int i = begin; i < end; ++i) {
    if (__builtin_mul_overflow(n, shape.dim_size(i), &n)) {
      return std::numeric_limits<int64_t>::max();
    }
  }
  return n;
}

}  // namespace weir
