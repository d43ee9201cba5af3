// What the sparse kernels share: reading a SparseTensor's three parts
// (indices [N, rank] int64, values [N], dense_shape [rank] int64) with every
// check a kernel relies on before it touches an element, and the order of
// index rows. Internal to kernels/.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "weir/base/status.h"
#include "weir/framework/tensor.h"
#include "weir/framework/types.h"
#include "weir/kernels/type_list.h"

namespace weir {

struct SparseParts {
  const int64_t* indices = nullptr;  // [num, rank], row-major
  int64_t num = 0;
  int rank = 0;
  std::vector<int64_t> dims;  // the dense shape, each >= 0

  std::span<const int64_t> Index(int64_t i) const {
    return {indices + i * rank, static_cast<size_t>(rank)};
  }
};

// Reads and checks (InvalidArgument naming `op`): indices an int64 matrix,
// values a vector of one value per index row, dense_shape an int64 vector
// of the indices' rank with no negative dim; with `check_bounds`, every
// index row inside dense_shape (the error names the row and its index).
StatusOr<SparseParts> ReadSparse(std::string_view op, const Tensor& indices, const Tensor& values,
                                 const Tensor& dense_shape, bool check_bounds = true);

// The values of an int32 or int64 tensor as int64 (any shape).
std::vector<int64_t> IndexValues(const Tensor& t);

// An index row as "[1, 2, 3]", for errors.
std::string IndexString(std::span<const int64_t> index);

// -1, 0 or 1 as index row a is before, equal to or after b (row-major).
int CompareIndex(std::span<const int64_t> a, std::span<const int64_t> b);

// The permutation that puts the rows in row-major order (stable).
std::vector<int64_t> CanonicalOrder(const SparseParts& sparse);

// Status of the dense element count of `dims` (overflow is an error).
StatusOr<int64_t> DenseElementCount(std::string_view op, std::span<const int64_t> dims);

// The element types of the numeric sparse kernels.
template <typename Fn>
void ForEachSparseNumberType(Fn&& fn) {
  ForEachType<float, double, Eigen::half, int32_t, int64_t, complex64, complex128>(fn);
}

}  // namespace weir
