// The geometry of TensorFlow's diagonal ops (MatrixDiag, MatrixDiagPart,
// MatrixSetDiag and their V2/V3 forms), shared by their shape functions and
// kernels so both agree on every size and every error.
//
// A band k = [lower, upper] of diagonals (d = col - row) is stored in a
// "diagonal" tensor [..., num_diags, max_diag_len] (or [..., max_diag_len]
// when lower == upper), row i holding diagonal upper - i. A diagonal shorter
// than max_diag_len is padded on the right (aligned left) or on the left
// (aligned right): V3's `align` names the alignment of the superdiagonals
// first and of the subdiagonals second; V1 and V2 align everything left.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "weir/base/status.h"

namespace weir {

struct DiagBand {
  int64_t lower = 0;
  int64_t upper = 0;
  int64_t num_diags() const { return upper - lower + 1; }
};

// k's values (one or two): InvalidArgument unless 1 or 2 values with
// lower <= upper. `op` prefixes the error.
StatusOr<DiagBand> DiagBandFromValues(std::span<const int64_t> k, std::string_view op);

// The alignment of one V3 `align` value ("LEFT_RIGHT", ...).
struct DiagAlign {
  bool left_super = true;
  bool left_sub = true;
};
StatusOr<DiagAlign> ParseDiagAlign(const std::string& align);

// The length of diagonal d of a rows x cols matrix (0 or less when it has none).
inline int64_t DiagLength(int64_t d, int64_t rows, int64_t cols) {
  return std::min(rows + std::min<int64_t>(0, d), cols - std::max<int64_t>(0, d));
}

// Where diagonal d's first element sits in its row of the diagonal tensor.
inline int64_t DiagOffset(int64_t d, int64_t diag_len, int64_t max_diag_len, DiagAlign align) {
  const bool left = (d >= 0 && align.left_super) || (d <= 0 && align.left_sub);
  return left ? 0 : max_diag_len - diag_len;
}

// MatrixDiag: the output dims (batch dims, rows, cols) for a `diagonal` of
// `diagonal_dims`, band `band` and requested num_rows/num_cols (-1: the
// smallest that fits). Refuses a diagonal of the wrong rank or number of
// diagonals, sizes too small or inconsistent, and an element count past
// int64.
StatusOr<std::vector<int64_t>> MatrixDiagOutputDims(std::span<const int64_t> diagonal_dims,
                                                    DiagBand band, int64_t num_rows,
                                                    int64_t num_cols, std::string_view op);

// The longest diagonal of the band in a rows x cols matrix.
int64_t MaxDiagLength(DiagBand band, int64_t rows, int64_t cols);

// MatrixDiagPart: the diagonal tensor's dims for an input of `input_dims`
// (rank >= 2). Refuses a band outside (-rows, cols) (0 is always allowed).
StatusOr<std::vector<int64_t>> MatrixDiagPartOutputDims(std::span<const int64_t> input_dims,
                                                        DiagBand band, std::string_view op);

}  // namespace weir
