#include "weir/kernels/sparse_util.h"

#include <algorithm>
#include <numeric>

#include "weir/base/checked_math.h"
#include "weir/base/str_util.h"

namespace weir {

StatusOr<SparseParts> ReadSparse(std::string_view op, const Tensor& indices, const Tensor& values,
                                 const Tensor& dense_shape, bool check_bounds) {
  if (indices.dtype() != DT_INT64 || indices.dims() != 2) {
    return errors::InvalidArgument(op, ": indices must be an int64 matrix but is ", indices.dtype(),
                                   " ", indices.shape());
  }
  if (values.dims() != 1 || values.dim_size(0) != indices.dim_size(0)) {
    return errors::InvalidArgument(op, ": values shape ", values.shape(),
                                   " must be a vector of one value per row of indices shape ",
                                   indices.shape());
  }
  if (dense_shape.dtype() != DT_INT64 || dense_shape.dims() != 1 ||
      dense_shape.dim_size(0) != indices.dim_size(1)) {
    return errors::InvalidArgument(
        op, ": dense_shape (", dense_shape.dtype(), " ", dense_shape.shape(),
        ") must be an int64 vector of the rank of indices shape ", indices.shape());
  }
  SparseParts parts;
  parts.indices = indices.data<int64_t>();
  parts.num = indices.dim_size(0);
  parts.rank = static_cast<int>(indices.dim_size(1));
  parts.dims.assign(dense_shape.data<int64_t>(), dense_shape.data<int64_t>() + parts.rank);
  for (int d = 0; d < parts.rank; ++d) {
    if (parts.dims[d] < 0) {
      return errors::InvalidArgument(op, ": dense_shape ", IndexString(parts.dims),
                                     " has a negative dim");
    }
  }
  if (check_bounds) {
    for (int64_t i = 0; i < parts.num; ++i) {
      std::span<const int64_t> index = parts.Index(i);
      for (int d = 0; d < parts.rank; ++d) {
        if (index[d] < 0 || index[d] >= parts.dims[d]) {
          return errors::InvalidArgument(op, ": indices[", i, "] = ", IndexString(index),
                                         " is out of bounds for dense_shape ",
                                         IndexString(parts.dims));
        }
      }
    }
  }
  return parts;
}

std::vector<int64_t> IndexValues(const Tensor& t) {
  std::vector<int64_t> out(t.NumElements());
  if (t.dtype() == DT_INT32) {
    std::copy(t.data<int32_t>(), t.data<int32_t>() + out.size(), out.begin());
  } else {
    std::copy(t.data<int64_t>(), t.data<int64_t>() + out.size(), out.begin());
  }
  return out;
}

std::string IndexString(std::span<const int64_t> index) {
  std::string out = "[";
  for (size_t d = 0; d < index.size(); ++d) out += StrCat(d == 0 ? "" : ", ", index[d]);
  return out + "]";
}

int CompareIndex(std::span<const int64_t> a, std::span<const int64_t> b) {
  for (size_t d = 0; d < a.size(); ++d) {
    if (a[d] != b[d]) return a[d] < b[d] ? -1 : 1;
  }
  return 0;
}

std::vector<int64_t> CanonicalOrder(const SparseParts& sparse) {
  std::vector<int64_t> order(sparse.num);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return CompareIndex(sparse.Index(a), sparse.Index(b)) < 0;
  });
  return order;
}

StatusOr<int64_t> DenseElementCount(std::string_view op, std::span<const int64_t> dims) {
  return CheckedElementCount(dims, StrCat(op, ": dense shape ", IndexString(dims)));
}

}  // namespace weir
