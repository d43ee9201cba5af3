// Per-channel sums over the rows of channels-last data viewed as
// [rows, channels], for the reductions of BiasAddGrad and batch
// normalization. Rows are summed in blocks fixed by the shape alone, each
// block on one thread, and the block sums are added in order: the result
// does not depend on the thread count or the schedule (bit-identical runs),
// and rounding error grows with the block count rather than the row count.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "weir/base/threadpool.h"

namespace weir {

// Calls add_rows(begin, end, sums) for blocks of rows covering [0, rows);
// each call adds its rows' terms into sums[k * channels + c] (k < num_sums
// kinds of sum, c < channels), a zeroed buffer of its own. Writes the
// totals to out[k * channels + c].
template <typename Acc, typename AddRows>
void SumRowBlocks(ThreadPool* pool, int64_t rows, int64_t channels, int num_sums,
                  const AddRows& add_rows, Acc* out) {
  const int64_t width = num_sums * channels;
  std::fill_n(out, width, Acc(0));
  if (rows == 0 || channels == 0) return;
  // About 16K elements per block: large enough to amortize a task, small
  // enough that a batch of images makes dozens of blocks.
  const int64_t block_rows = std::max<int64_t>(1, (int64_t{1} << 14) / channels);
  const int64_t blocks = (rows + block_rows - 1) / block_rows;
  if (blocks == 1) {
    add_rows(int64_t{0}, rows, out);
    return;
  }
  std::vector<Acc> partial(blocks * width, Acc(0));
  pool->ParallelFor(blocks, block_rows * width * 2, [&](int64_t first, int64_t last) {
    for (int64_t b = first; b < last; ++b) {
      add_rows(b * block_rows, std::min(rows, (b + 1) * block_rows), &partial[b * width]);
    }
  });
  for (int64_t b = 0; b < blocks; ++b) {
    const Acc* p = &partial[b * width];
    for (int64_t i = 0; i < width; ++i) out[i] += p[i];
  }
}

}  // namespace weir
