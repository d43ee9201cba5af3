#include "weir/kernels/conv_im2col.h"

#include <Eigen/Core>
#include <algorithm>
#include <vector>

#include "weir/base/threadpool.h"
#include "weir/framework/window_shape.h"

namespace weir {
namespace {

template <typename T>
using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using MatrixMap = Eigen::Map<Matrix<T>>;
template <typename T>
using ConstMatrixMap = Eigen::Map<const Matrix<T>>;

// Patch matrices are built a block of output pixels at a time, about this
// many elements, so they stay in cache and batch 1 still splits.
constexpr int64_t kPatchElements = 1 << 16;
// Filter gradients are summed in this many fixed groups of blocks: results
// do not depend on the thread count.
constexpr int64_t kFilterGroups = 16;

struct Geometry {
  const Window2DDims& d;
  int64_t patch;   // rows * cols * in_depth of the filter: one patch row
  int64_t pixels;  // output pixels per image
  int64_t block;   // output pixels per block
  int64_t blocks;  // blocks per image

  explicit Geometry(const Window2DDims& dims)
      : d(dims),
        patch(dims.rows.window * dims.cols.window * dims.in_depth),
        pixels(dims.rows.output * dims.cols.output),
        block(std::clamp<int64_t>(kPatchElements / std::max<int64_t>(patch, 1), 1,
                                  std::max<int64_t>(pixels, 1))),
        blocks((pixels + block - 1) / block) {}

  // Calls fn(pixel_in_block, offset_in_patch, input_pixel) for every filter
  // tap of output pixels [p0, p1) of an image that lands inside the image;
  // input_pixel indexes the image's [rows * cols] pixels.
  template <typename Fn>
  void ForEachTap(int64_t p0, int64_t p1, const Fn& fn) const {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t oh = p / d.cols.output, ow = p % d.cols.output;
      for (int64_t kh = 0; kh < d.rows.window; ++kh) {
        const int64_t h = oh * d.rows.stride - d.rows.pad_before + kh * d.rows.dilation;
        if (h < 0 || h >= d.rows.input) continue;
        for (int64_t kw = 0; kw < d.cols.window; ++kw) {
          const int64_t w = ow * d.cols.stride - d.cols.pad_before + kw * d.cols.dilation;
          if (w < 0 || w >= d.cols.input) continue;
          fn(p - p0, (kh * d.cols.window + kw) * d.in_depth, h * d.cols.input + w);
        }
      }
    }
  }

  // The patch matrix [p1 - p0, patch] of output pixels [p0, p1) of `image`.
  template <typename T>
  void Im2Col(const T* image, int64_t p0, int64_t p1, T* patches) const {
    std::fill_n(patches, (p1 - p0) * patch, T(0));
    const int64_t depth = d.in_depth;
    ForEachTap(p0, p1, [&](int64_t row, int64_t offset, int64_t pixel) {
      std::copy_n(image + pixel * depth, depth, patches + row * patch + offset);
    });
  }

  // Adds the patch matrix of output pixels [p0, p1) back into `image`.
  template <typename T>
  void Col2Im(const T* patches, int64_t p0, int64_t p1, T* image) const {
    const int64_t depth = d.in_depth;
    ForEachTap(p0, p1, [&](int64_t row, int64_t offset, int64_t pixel) {
      const T* src = patches + row * patch + offset;
      T* dst = image + pixel * depth;
      for (int64_t c = 0; c < depth; ++c) dst[c] += src[c];
    });
  }

  int64_t input_image() const { return d.rows.input * d.cols.input * d.in_depth; }
  int64_t output_image() const { return pixels * d.out_depth; }
  int64_t block_cost() const { return block * patch * d.out_depth; }
};

}  // namespace

template <typename T>
void Im2ColConv2D(ThreadPool* pool, const Window2DDims& dims, const T* input, const T* filter,
                  T* output) {
  const Geometry g(dims);
  const ConstMatrixMap<T> weights(filter, g.patch, dims.out_depth);
  pool->ParallelFor(dims.batch * g.blocks, g.block_cost(), [&](int64_t first, int64_t last) {
    std::vector<T> patches(g.block * g.patch);
    for (int64_t i = first; i < last; ++i) {
      const int64_t n = i / g.blocks;
      const int64_t p0 = (i % g.blocks) * g.block, p1 = std::min(g.pixels, p0 + g.block);
      g.Im2Col(input + n * g.input_image(), p0, p1, patches.data());
      MatrixMap<T>(output + n * g.output_image() + p0 * dims.out_depth, p1 - p0, dims.out_depth)
          .noalias() = ConstMatrixMap<T>(patches.data(), p1 - p0, g.patch) * weights;
    }
  });
}

template <typename T>
void Im2ColConv2DBackpropInput(ThreadPool* pool, const Window2DDims& dims, const T* filter,
                               const T* out_backprop, T* in_backprop) {
  const Geometry g(dims);
  const ConstMatrixMap<T> weights(filter, g.patch, dims.out_depth);
  // Blocks of one image scatter into overlapping pixels: one task per image.
  pool->ParallelFor(dims.batch, g.block_cost() * g.blocks, [&](int64_t first, int64_t last) {
    std::vector<T> patches(g.block * g.patch);
    for (int64_t n = first; n < last; ++n) {
      T* image = in_backprop + n * g.input_image();
      std::fill_n(image, g.input_image(), T(0));
      for (int64_t p0 = 0; p0 < g.pixels; p0 += g.block) {
        const int64_t p1 = std::min(g.pixels, p0 + g.block);
        MatrixMap<T>(patches.data(), p1 - p0, g.patch).noalias() =
            ConstMatrixMap<T>(out_backprop + n * g.output_image() + p0 * dims.out_depth, p1 - p0,
                              dims.out_depth) *
            weights.transpose();
        g.Col2Im(patches.data(), p0, p1, image);
      }
    }
  });
}

template <typename T>
void Im2ColConv2DBackpropFilter(ThreadPool* pool, const Window2DDims& dims, const T* input,
                                const T* out_backprop, T* filter_backprop) {
  const Geometry g(dims);
  const int64_t units = dims.batch * g.blocks;
  const int64_t groups = std::min(units, kFilterGroups);
  const int64_t filter_size = g.patch * dims.out_depth;
  std::vector<T> partial(groups * filter_size, T(0));
  pool->ParallelFor(
      groups, g.block_cost() * (units / std::max<int64_t>(groups, 1) + 1),
      [&](int64_t first, int64_t last) {
        std::vector<T> patches(g.block * g.patch);
        for (int64_t group = first; group < last; ++group) {
          MatrixMap<T> sum(partial.data() + group * filter_size, g.patch, dims.out_depth);
          for (int64_t i = group * units / groups; i < (group + 1) * units / groups; ++i) {
            const int64_t n = i / g.blocks;
            const int64_t p0 = (i % g.blocks) * g.block, p1 = std::min(g.pixels, p0 + g.block);
            g.Im2Col(input + n * g.input_image(), p0, p1, patches.data());
            sum.noalias() +=
                ConstMatrixMap<T>(patches.data(), p1 - p0, g.patch).transpose() *
                ConstMatrixMap<T>(out_backprop + n * g.output_image() + p0 * dims.out_depth,
                                  p1 - p0, dims.out_depth);
          }
        }
      });
  std::fill_n(filter_backprop, filter_size, T(0));
  for (int64_t group = 0; group < groups; ++group) {
    const T* p = partial.data() + group * filter_size;
    for (int64_t i = 0; i < filter_size; ++i) filter_backprop[i] += p[i];
  }
}

template void Im2ColConv2D<double>(ThreadPool*, const Window2DDims&, const double*, const double*,
                                   double*);
template void Im2ColConv2DBackpropInput<double>(ThreadPool*, const Window2DDims&, const double*,
                                                const double*, double*);
template void Im2ColConv2DBackpropFilter<double>(ThreadPool*, const Window2DDims&, const double*,
                                                 const double*, double*);

}  // namespace weir
