// F(2x2, 5x5) on the points 0, 1, -1, 2, -2 and infinity (Lavin and Gray,
// "Fast Algorithms for Convolutional Neural Networks", 2016): with g a 5x5
// filter plane and d a 6x6 input block, the 2x2 outputs are
//   Y = A^T [(G g G^T) (.) (B^T d B)] A
// where (.) multiplies elementwise and, for this correlation,
//   B^T = [ 4  0 -5  0  1  0 ]   A^T = [ 1  1  1  1  1  0 ]
//         [ 0 -4 -4  1  1  0 ]         [ 0  1 -1  2 -2  1 ]
//         [ 0  4 -4 -1  1  0 ]
//         [ 0 -2 -1  2  1  0 ]   G[i][k] = p_i^k / prod_{j != i} (p_i - p_j)
//         [ 0  2 -1 -2  1  0 ]   for the five finite points p_i, and the
//         [ 0  4  0 -5  0  1 ]   last row of G (infinity) is [0 0 0 0 1].
// Summed over input channels, the elementwise products of one of the 36
// positions are a matrix product: V_p [tiles, in] x U_p [in, out].
//
// Work is cut into blocks of tiles (a tile: one image's 2x2 output block),
// sized so a block's transformed inputs and products stay in a core's L2;
// the pool hands out groups of blocks, each group with its own scratch.
#include "weir/kernels/conv_winograd.h"

#include <algorithm>
#include <cstring>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <unordered_map>
#include <vector>

#include "weir/base/checked_math.h"
#include "weir/base/threadpool.h"
#include "weir/kernels/dnnl_util.h"
#include "weir/kernels/openmp_threads.h"

namespace weir {
namespace {

using dnnl::memory;

constexpr int kTile = 6;             // input block side
constexpr int kPositions = 36;       // kTile * kTile
constexpr int kOut = 2;              // output block side
constexpr int kWindow = 5;
// Bytes of one block's transformed inputs and products: about half a
// core's L2 on the development machine (1 MiB).
constexpr int64_t kBlockBytes = 512 << 10;
constexpr int64_t kMinTilesPerBlock = 8, kMaxTilesPerBlock = 256;
// Groups of blocks per intra-op thread: enough that a thread whose core is
// taken by another process leaves its share to the others.
constexpr int64_t kGroupsPerThread = 4;
// Fewer tiles than this run faster directly (see Applies).
constexpr int64_t kMinTiles = 64;
// Scratch areas start on cache lines.
constexpr int64_t kAlignFloats = 16;

int64_t RoundUp(int64_t floats) {
  return (floats + kAlignFloats - 1) / kAlignFloats * kAlignFloats;
}

// t[i * t_stride + c] = (B^T d)[i] for the six rows d[k][c], c in
// [0, depth). The outputs never overlap the inputs (restrict: the loop is
// vectorized).
inline void InputRows(const float* const* d, float* __restrict__ t, int64_t t_stride,
                      int64_t depth) {
  const float* __restrict__ d0 = d[0];
  const float* __restrict__ d1 = d[1];
  const float* __restrict__ d2 = d[2];
  const float* __restrict__ d3 = d[3];
  const float* __restrict__ d4 = d[4];
  const float* __restrict__ d5 = d[5];
  float* __restrict__ t0 = t;
  float* __restrict__ t1 = t + t_stride;
  float* __restrict__ t2 = t + 2 * t_stride;
  float* __restrict__ t3 = t + 3 * t_stride;
  float* __restrict__ t4 = t + 4 * t_stride;
  float* __restrict__ t5 = t + 5 * t_stride;
#pragma GCC ivdep
  for (int64_t c = 0; c < depth; ++c) {
    const float a1 = d1[c], a2 = d2[c], a3 = d3[c], a4 = d4[c];
    t0[c] = 4.f * d0[c] - 5.f * a2 + a4;
    t1[c] = (a3 + a4) - 4.f * (a1 + a2);
    t2[c] = 4.f * (a1 - a2) + (a4 - a3);
    t3[c] = 2.f * (a3 - a1) + (a4 - a2);
    t4[c] = 2.f * (a1 - a3) + (a4 - a2);
    t5[c] = 4.f * a1 - 5.f * a3 + d5[c];
  }
}

// y[a * y_stride + c] = (A^T m)[a] for the six rows m[i * m_stride + c].
inline void OutputRows(const float* __restrict__ m, int64_t m_stride, float* __restrict__ y,
                       int64_t y_stride, int64_t depth) {
  const float* __restrict__ m0 = m;
  const float* __restrict__ m1 = m + m_stride;
  const float* __restrict__ m2 = m + 2 * m_stride;
  const float* __restrict__ m3 = m + 3 * m_stride;
  const float* __restrict__ m4 = m + 4 * m_stride;
  const float* __restrict__ m5 = m + 5 * m_stride;
#pragma GCC ivdep
  for (int64_t c = 0; c < depth; ++c) {
    const float a1 = m1[c], a2 = m2[c], a3 = m3[c], a4 = m4[c];
    y[c] = m0[c] + (a1 + a2) + (a3 + a4);
    y[y_stride + c] = (a1 - a2) + 2.f * (a3 - a4) + m5[c];
  }
}

// dst = src (+ bias) (then max(0, .) if relu), over `depth` channels.
inline void StoreOutput(const float* __restrict__ src, const float* __restrict__ bias, bool relu,
                        float* __restrict__ dst, int64_t depth) {
  if (bias != nullptr && relu) {
    for (int64_t o = 0; o < depth; ++o) dst[o] = std::max(src[o] + bias[o], 0.f);
  } else if (bias != nullptr) {
    for (int64_t o = 0; o < depth; ++o) dst[o] = src[o] + bias[o];
  } else if (relu) {
    for (int64_t o = 0; o < depth; ++o) dst[o] = std::max(src[o], 0.f);
  } else {
    std::memcpy(dst, src, depth * sizeof(float));
  }
}

// y[c] += coef * x[c] for c in [0, depth); x and y don't overlap.
inline void AddScaled(float coef, const float* __restrict__ x, float* __restrict__ y,
                      int64_t depth) {
  for (int64_t c = 0; c < depth; ++c) y[c] += coef * x[c];
}

// G for F(2, 5) (see the top of this file), in double.
struct FilterMatrix {
  double g[kTile][kWindow] = {};
  FilterMatrix() {
    const double points[kTile - 1] = {0, 1, -1, 2, -2};
    for (int i = 0; i < kTile - 1; ++i) {
      double norm = 1;
      for (int j = 0; j < kTile - 1; ++j) {
        if (j != i) norm *= points[i] - points[j];
      }
      double power = 1;
      for (int k = 0; k < kWindow; ++k, power *= points[i]) g[i][k] = power / norm;
    }
    g[kTile - 1][kWindow - 1] = 1;
  }
};

}  // namespace

struct WinogradConv2D::Plan {
  int64_t tiles = 0;  // per block
  dnnl::matmul matmul;
  memory::desc v, u, m, scratchpad;
};

WinogradConv2D::WinogradConv2D() = default;
WinogradConv2D::~WinogradConv2D() = default;

bool WinogradConv2D::Applies(const Window2DDims& d) {
  // Below 16 input channels the products are too thin for the transforms'
  // cost (one input channel: the first layer of an image model). Below
  // kMinTiles tiles the direct convolution wins (the convnet's 32->64
  // layer at batch 1, 49 tiles: 211 us of CPU against 170; batch 2, 98
  // tiles: 310 against 368).
  const int64_t tiles =
      d.batch * ((d.rows.output + kOut - 1) / kOut) * ((d.cols.output + kOut - 1) / kOut);
  return tiles >= kMinTiles && d.rows.window == kWindow && d.cols.window == kWindow &&
         d.rows.stride == 1 && d.cols.stride == 1 && d.rows.dilation == 1 && d.cols.dilation == 1 &&
         d.in_depth >= 16 && d.out_depth >= 16 && d.layout.channels_last;
}

namespace {

int64_t TilesPerBlock(const Window2DDims& d) {
  const int64_t per_tile = kPositions * (d.in_depth + d.out_depth) * 4;
  return std::clamp<int64_t>(kBlockBytes / per_tile, kMinTilesPerBlock, kMaxTilesPerBlock);
}

struct Layout {
  int64_t tile_rows, tile_cols, tiles, per_block, blocks, groups;
  int64_t u_floats, group_floats;  // scratch: U, then each group's V, M, patch, rows, zeros
};

Layout LayoutOf(const Window2DDims& d, int64_t threads) {
  Layout l;
  l.tile_rows = (d.rows.output + kOut - 1) / kOut;
  l.tile_cols = (d.cols.output + kOut - 1) / kOut;
  l.tiles = d.batch * l.tile_rows * l.tile_cols;
  // As many blocks as the cache allows, then tiles spread evenly over
  // them: the last block is not mostly padding.
  l.blocks = (l.tiles + TilesPerBlock(d) - 1) / TilesPerBlock(d);
  l.per_block = (l.tiles + l.blocks - 1) / l.blocks;
  l.groups = std::max<int64_t>(1, std::min(l.blocks, threads * kGroupsPerThread));
  l.u_floats = RoundUp(kPositions * d.in_depth * d.out_depth);
  l.group_floats = RoundUp(kPositions * l.per_block * d.in_depth) +
                   RoundUp(kPositions * l.per_block * d.out_depth) +
                   2 * RoundUp(kPositions * std::max(d.in_depth, d.out_depth)) +
                   RoundUp(d.in_depth);
  return l;
}

}  // namespace

StatusOr<int64_t> WinogradConv2D::ScratchFloats(const Window2DDims& d, const ThreadPool* pool) {
  // Bounds for LayoutOf's products, which then cannot overflow: the
  // transformed filter, and every group's buffers at the largest block.
  const int64_t depth = std::max(d.in_depth, d.out_depth);
  const int64_t filter_dims[] = {kPositions, d.in_depth, d.out_depth};
  WEIR_RETURN_IF_ERROR(CheckedElementCount(filter_dims, "Winograd filter transform").status());
  const int64_t group_dims[] = {kPositions, kMaxTilesPerBlock + 2, 2 * depth + 1,
                                pool->NumThreads() * kGroupsPerThread};
  WEIR_RETURN_IF_ERROR(CheckedElementCount(group_dims, "Winograd scratch").status());
  const Layout l = LayoutOf(d, pool->NumThreads());
  return l.u_floats + l.groups * l.group_floats;
}

StatusOr<std::shared_ptr<const WinogradConv2D::Plan>> WinogradConv2D::GetPlan(int64_t tiles,
                                                                              int64_t in_depth,
                                                                              int64_t out_depth) {
  const std::array<int64_t, 3> key = {tiles, in_depth, out_depth};
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second;
  }
  auto plan = std::make_shared<Plan>();
  plan->tiles = tiles;
  try {
    using Tag = memory::format_tag;
    const auto f32 = memory::data_type::f32;
    plan->v = memory::desc({kPositions, tiles, in_depth}, f32, Tag::abc);
    plan->u = memory::desc({kPositions, in_depth, out_depth}, f32, Tag::abc);
    plan->m = memory::desc({kPositions, tiles, out_depth}, f32, Tag::abc);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // thread-safe executions
    const dnnl::matmul::primitive_desc desc(DnnlCpuEngine(), plan->v, plan->u, plan->m, attr);
    plan->matmul = dnnl::matmul(desc);
    plan->scratchpad = desc.scratchpad_desc();
  } catch (const std::exception& e) {
    return DnnlErrorStatus(e, StrCat("Winograd convolution's batched matmul [36, ", tiles, ", ",
                                     in_depth, "] x [36, ", in_depth, ", ", out_depth, "] setup"));
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (plans_.size() >= 8) plans_.clear();
  return plans_.emplace(key, std::move(plan)).first->second;
}

Status WinogradConv2D::Run(ThreadPool* pool, const Window2DDims& d, const float* input,
                           const float* filter, const float* bias, bool relu, float* out,
                           float* scratch) {
  const ScopedOpenMpSingleThread single_thread;
  const Layout l = LayoutOf(d, pool->NumThreads());
  WEIR_ASSIGN_OR_RETURN(std::shared_ptr<const Plan> plan,
                        GetPlan(l.per_block, d.in_depth, d.out_depth));
  const int64_t in = d.in_depth, out_depth = d.out_depth;

  // U[p][i][o] = (G g G^T)[p] for the filter plane g of (i, o): a pass of
  // G over the filter's rows, then one over its columns, each a vector
  // operation over the out channels. It runs on every call: the filter is
  // an input and may change between calls.
  static const FilterMatrix kG;
  float* u = scratch;
  std::vector<float> rows_buffer(static_cast<size_t>(kTile * kWindow * out_depth));
  float* rows_g = rows_buffer.data();  // rows_g[a][l][o] = sum_k G[a][k] g[k][l][i][o]
  for (int64_t i = 0; i < in; ++i) {
    for (int a = 0; a < kTile; ++a) {
      for (int lc = 0; lc < kWindow; ++lc) {
        float* r = rows_g + (a * kWindow + lc) * out_depth;
        std::fill_n(r, out_depth, 0.f);
        for (int k = 0; k < kWindow; ++k) {
          const float coef = static_cast<float>(kG.g[a][k]);
          if (coef == 0) continue;
          AddScaled(coef, filter + ((k * kWindow + lc) * in + i) * out_depth, r, out_depth);
        }
      }
    }
    for (int a = 0; a < kTile; ++a) {
      for (int b = 0; b < kTile; ++b) {
        float* dst = u + ((a * kTile + b) * in + i) * out_depth;
        std::fill_n(dst, out_depth, 0.f);
        for (int lc = 0; lc < kWindow; ++lc) {
          const float coef = static_cast<float>(kG.g[b][lc]);
          if (coef == 0) continue;
          AddScaled(coef, rows_g + (a * kWindow + lc) * out_depth, dst, out_depth);
        }
      }
    }
  }

  const int64_t rows = d.rows.input, cols = d.cols.input;
  const int64_t row_stride = cols * in;
  const int64_t tiles_per_image = l.tile_rows * l.tile_cols;
  const int64_t depth_max = std::max(in, out_depth);
  std::mutex mu;
  Status status;
  auto run_group = [&](int64_t group) {
    const ScopedOpenMpSingleThread single_thread;
    float* v = scratch + l.u_floats + group * l.group_floats;
    float* m = v + RoundUp(kPositions * l.per_block * in);
    float* patch = m + RoundUp(kPositions * l.per_block * out_depth);
    float* tmp = patch + RoundUp(kPositions * depth_max);
    float* zeros = tmp + RoundUp(kPositions * depth_max);  // an input pixel in the padding
    std::fill_n(zeros, in, 0.f);
    const dnnl::engine& engine = DnnlCpuEngine();
    std::vector<float> pad_scratch(plan->scratchpad.get_size() / sizeof(float) + 1);
    // The group's blocks reuse its buffers, so one set of arguments.
    std::optional<dnnl::stream> stream;
    std::unordered_map<int, memory> args;
    try {
      stream.emplace(engine);
      args = {{DNNL_ARG_SRC, memory(plan->v, engine, v)},
              {DNNL_ARG_WEIGHTS, memory(plan->u, engine, u)},
              {DNNL_ARG_DST, memory(plan->m, engine, m)}};
      if (plan->scratchpad.get_size() > 0) {
        args.emplace(DNNL_ARG_SCRATCHPAD, memory(plan->scratchpad, engine, pad_scratch.data()));
      }
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(mu);
      status.Update(DnnlErrorStatus(e, "Winograd convolution's batched matmul"));
      return;
    }
    for (int64_t block = group; block < l.blocks; block += l.groups) {
      const int64_t first = block * l.per_block;
      const int64_t count = std::min(l.per_block, l.tiles - first);
      // V[p][t][i] = (B^T d B)[p] for the input block d of tile t.
      for (int64_t t = 0; t < l.per_block; ++t) {
        if (t >= count) {  // past the last tile: zeros, products ignored
          for (int p = 0; p < kPositions; ++p) std::fill_n(v + (p * l.per_block + t) * in, in, 0.f);
          continue;
        }
        const int64_t tile = first + t;
        const int64_t n = tile / tiles_per_image;
        const int64_t ty = tile % tiles_per_image / l.tile_cols, tx = tile % l.tile_cols;
        const int64_t y0 = ty * kOut - d.rows.pad_before, x0 = tx * kOut - d.cols.pad_before;
        const float* image = input + n * rows * row_stride;
        // Columns first: tmp[r][c] = (B^T d)[r][c]. Rows and columns in
        // the padding read zeros.
        const float* rows_of[kTile];
        for (int c = 0; c < kTile; ++c) {
          const int64_t x = x0 + c;
          for (int r = 0; r < kTile; ++r) {
            const int64_t y = y0 + r;
            rows_of[r] =
                y >= 0 && y < rows && x >= 0 && x < cols ? image + y * row_stride + x * in : zeros;
          }
          InputRows(rows_of, tmp + c * in, kTile * in, in);
        }
        // Then rows: V[r * 6 + c] = (tmp B)[r][c].
        for (int r = 0; r < kTile; ++r) {
          for (int c = 0; c < kTile; ++c) rows_of[c] = tmp + (r * kTile + c) * in;
          InputRows(rows_of, v + (r * kTile * l.per_block + t) * in, l.per_block * in, in);
        }
      }
      try {
        plan->matmul.execute(*stream, args);
        stream->wait();
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(mu);
        status.Update(DnnlErrorStatus(e, "Winograd convolution's batched matmul"));
        return;
      }
      // Y = A^T M A, plus bias, relu, stored where inside the output.
      for (int64_t t = 0; t < count; ++t) {
        const int64_t tile = first + t;
        const int64_t n = tile / tiles_per_image;
        const int64_t ty = tile % tiles_per_image / l.tile_cols, tx = tile % l.tile_cols;
        // Columns first: tmp[a][c] = (A^T M)[a][c], a < 2.
        for (int c = 0; c < kTile; ++c) {
          OutputRows(m + (c * l.per_block + t) * out_depth, kTile * l.per_block * out_depth,
                     tmp + c * out_depth, kTile * out_depth, out_depth);
        }
        for (int a = 0; a < kOut; ++a) {
          const int64_t y = ty * kOut + a;
          if (y >= d.rows.output) break;
          // patch[b] = (tmp A)[a][b], b < 2.
          OutputRows(tmp + a * kTile * out_depth, out_depth, patch, out_depth, out_depth);
          for (int b = 0; b < kOut; ++b) {
            const int64_t x = tx * kOut + b;
            if (x >= d.cols.output) break;
            float* dst = out + ((n * d.rows.output + y) * d.cols.output + x) * out_depth;
            StoreOutput(patch + b * out_depth, bias, relu, dst, out_depth);
          }
        }
      }
    }
  };
  if (l.groups == 1) {
    run_group(0);
  } else {
    // A cost far above Eigen's task size makes every group its own task.
    pool->ParallelFor(l.groups, int64_t{1} << 40, [&](int64_t first, int64_t last) {
      for (int64_t g = first; g < last; ++g) run_group(g);
    });
  }
  return status;
}

}  // namespace weir
