// Tensors as text, as TensorFlow's printing ops show them (Print, Assert,
// StringFormat and so tf.print), for the logging kernels.
#pragma once

#include <cstdint>
#include <string>

#include "weir/framework/tensor.h"

namespace weir {

// TensorFlow 1's summary (Print, Assert): the first `limit` elements in
// row-major order (all when `limit` < 0), each row of the innermost
// dimension in brackets, "..." where elements were left out: [2, 3] with
// limit 4 is "[0 1 2][3...]...". A scalar is its value; strings are C-escaped
// (\n, \", \001...), unquoted.
std::string SummarizeTensorV1(const Tensor& t, int64_t limit);

// TensorFlow 2's summary (StringFormat, tf.print), numpy-like: each
// dimension longer than 2 * `summarize` shows its first and last
// `summarize` entries around "..." (every entry when `summarize` < 0);
// rows on separate lines, indented; strings quoted and C-escaped. A tensor
// of no elements is "[]" when its dim 0 is 0, else its dims elided ("[\n ...]").
std::string SummarizeTensorV2(const Tensor& t, int64_t summarize);

}  // namespace weir
