#include "weir/framework/matrix_diag_shape.h"

#include <algorithm>

#include "weir/base/checked_math.h"
#include "weir/base/str_util.h"

namespace weir {
namespace {

// Dims as "[2,3]" (never a TensorShape: a hostile dim must not CHECK).
std::string DimsString(std::span<const int64_t> dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

}  // namespace

StatusOr<DiagBand> DiagBandFromValues(std::span<const int64_t> k, std::string_view op) {
  if (k.empty() || k.size() > 2) {
    return errors::InvalidArgument(op, ": k must have 1 or 2 values but has ", k.size());
  }
  DiagBand band{k[0], k.size() == 2 ? k[1] : k[0]};
  if (band.lower > band.upper) {
    return errors::InvalidArgument(op, ": k[0] = ", band.lower,
                                   " must not be greater than k[1] = ", band.upper);
  }
  return band;
}

StatusOr<DiagAlign> ParseDiagAlign(const std::string& align) {
  if (align == "LEFT_LEFT") return DiagAlign{true, true};
  if (align == "LEFT_RIGHT") return DiagAlign{true, false};
  if (align == "RIGHT_LEFT") return DiagAlign{false, true};
  if (align == "RIGHT_RIGHT") return DiagAlign{false, false};
  return errors::InvalidArgument(
      "align must be LEFT_LEFT, LEFT_RIGHT, RIGHT_LEFT or RIGHT_RIGHT, got '", align, "'");
}

StatusOr<std::vector<int64_t>> MatrixDiagOutputDims(std::span<const int64_t> diagonal_dims,
                                                    DiagBand band, int64_t num_rows,
                                                    int64_t num_cols, std::string_view op) {
  const int64_t rank = static_cast<int64_t>(diagonal_dims.size());
  const bool single = band.lower == band.upper;
  if (rank < (single ? 1 : 2)) {
    return errors::InvalidArgument(op, ": diagonal must have rank >= ", single ? 1 : 2,
                                   " for k = [", band.lower, ", ", band.upper, "] but has shape ",
                                   DimsString(diagonal_dims));
  }
  if (!single && diagonal_dims[rank - 2] != band.num_diags()) {
    return errors::InvalidArgument(
        op, ": diagonal of shape ", DimsString(diagonal_dims), " must have ", band.num_diags(),
        " diagonals in dim -2 for k = [", band.lower, ", ", band.upper, "]");
  }
  if (num_rows < -1 || num_cols < -1) {
    return errors::InvalidArgument(op, ": num_rows ", num_rows, " and num_cols ", num_cols,
                                   " must be -1 or non-negative");
  }
  const int64_t max_diag_len = diagonal_dims[rank - 1];
  int64_t min_rows = 0, min_cols = 0;
  WEIR_RETURN_IF_ERROR(CheckedSubtract(max_diag_len, std::min<int64_t>(band.upper, 0), &min_rows,
                                       "MatrixDiag rows"));
  WEIR_RETURN_IF_ERROR(
      CheckedAdd(max_diag_len, std::max<int64_t>(band.lower, 0), &min_cols, "MatrixDiag cols"));
  if (num_rows == -1 && num_cols == -1) {
    num_rows = num_cols = std::max(min_rows, min_cols);
  } else if (num_rows == -1) {
    num_rows = min_rows;
  } else if (num_cols == -1) {
    num_cols = min_cols;
  }
  if (num_rows < min_rows || num_cols < min_cols ||
      (num_rows != min_rows && num_cols != min_cols)) {
    return errors::InvalidArgument(
        op, ": num_rows ", num_rows, " and num_cols ", num_cols, " are not consistent with k = [",
        band.lower, ", ", band.upper, "] and a diagonal of shape ", DimsString(diagonal_dims),
        " (at least ", min_rows, " x ", min_cols, ", one of them exactly)");
  }
  std::vector<int64_t> dims(diagonal_dims.begin(), diagonal_dims.end() - (single ? 1 : 2));
  dims.push_back(num_rows);
  dims.push_back(num_cols);
  WEIR_RETURN_IF_ERROR(CheckedElementCount(dims, op).status());
  return dims;
}

int64_t MaxDiagLength(DiagBand band, int64_t rows, int64_t cols) {
  return std::max<int64_t>(0, std::min(rows + std::min<int64_t>(band.upper, 0),
                                       cols - std::max<int64_t>(band.lower, 0)));
}

StatusOr<std::vector<int64_t>> MatrixDiagPartOutputDims(std::span<const int64_t> input_dims,
                                                        DiagBand band, std::string_view op) {
  const int64_t rank = static_cast<int64_t>(input_dims.size());
  if (rank < 2) {
    return errors::InvalidArgument(op, ": input must have rank >= 2 but has shape ",
                                   DimsString(input_dims));
  }
  const int64_t rows = input_dims[rank - 2], cols = input_dims[rank - 1];
  for (int64_t d : {band.lower, band.upper}) {
    if (d != 0 && !(-rows < d && d < cols)) {
      return errors::InvalidArgument(op, ": diagonal ", d, " of k = [", band.lower, ", ",
                                     band.upper, "] is outside (", -rows, ", ", cols,
                                     ") for an input of shape ", DimsString(input_dims));
    }
  }
  std::vector<int64_t> dims(input_dims.begin(), input_dims.end() - 2);
  if (band.lower != band.upper) dims.push_back(band.num_diags());
  dims.push_back(MaxDiagLength(band, rows, cols));
  return dims;
}

}  // namespace weir
