#include "weir/kernels/array_copy.h"

#include <algorithm>
#include <limits>

#if defined(__AVX__)
#include <immintrin.h>
#endif

#include "weir/base/threadpool.h"
#include "weir/framework/op_kernel.h"

namespace weir {
namespace {

// ParallelFor's cost unit is a CPU cycle; memory moves at roughly a byte a
// cycle per core once it leaves the cache, so cost is bytes moved. Copies
// under ~100 KB then stay on the calling thread.
int64_t CopyCost(int64_t elements, size_t element_size) {
  return std::max<int64_t>(1, elements * static_cast<int64_t>(element_size));
}

// One dim of a strided copy.
struct Dim {
  int64_t size;
  int64_t in_stride;
  int64_t out_stride;
};

// Drops dims of 1 and merges neighbours that are contiguous in both
// layouts, so most copies become one or two dims. Empty if a dim is 0 (and
// `*empty` is set).
std::vector<Dim> Simplify(std::span<const int64_t> dims, std::span<const int64_t> in_strides,
                          std::span<const int64_t> out_strides, bool* empty) {
  *empty = false;
  std::vector<Dim> result;
  for (size_t k = 0; k < dims.size(); ++k) {
    if (dims[k] == 0) {
      *empty = true;
      return {};
    }
    if (dims[k] == 1) continue;
    result.push_back({dims[k], in_strides[k], out_strides.empty() ? 0 : out_strides[k]});
  }
  std::vector<Dim> merged;
  for (const Dim& d : result) {
    if (!merged.empty()) {
      Dim& outer = merged.back();
      if (outer.in_stride == d.in_stride * d.size && outer.out_stride == d.out_stride * d.size) {
        outer = {outer.size * d.size, d.in_stride, d.out_stride};
        continue;
      }
    }
    merged.push_back(d);
  }
  return merged;
}

// Walks the outer dims of a copy in row-major order, tracking the input and
// output offsets of the current position.
class OuterWalker {
 public:
  explicit OuterWalker(std::span<const Dim> dims) : dims_(dims), index_(dims.size(), 0) {}

  void Seek(int64_t linear, int64_t in_base, int64_t out_base) {
    in_ = in_base;
    out_ = out_base;
    for (int k = static_cast<int>(dims_.size()) - 1; k >= 0; --k) {
      index_[k] = linear % dims_[k].size;
      linear /= dims_[k].size;
      in_ += index_[k] * dims_[k].in_stride;
      out_ += index_[k] * dims_[k].out_stride;
    }
  }
  void Next() {
    for (int k = static_cast<int>(dims_.size()) - 1; k >= 0; --k) {
      in_ += dims_[k].in_stride;
      out_ += dims_[k].out_stride;
      if (++index_[k] < dims_[k].size) return;
      in_ -= dims_[k].size * dims_[k].in_stride;
      out_ -= dims_[k].size * dims_[k].out_stride;
      index_[k] = 0;
    }
  }
  int64_t in() const { return in_; }
  int64_t out() const { return out_; }

 private:
  std::span<const Dim> dims_;
  std::vector<int64_t> index_;
  int64_t in_ = 0, out_ = 0;
};

int64_t Product(std::span<const Dim> dims) {
  int64_t n = 1;
  for (const Dim& d : dims) n *= d.size;
  return n;
}

// The innermost dim is the row; every outer position copies one row.
template <typename T>
void CopyRows(ThreadPool* pool, const std::vector<Dim>& dims, const T* in, int64_t in_offset,
              T* out, int64_t out_offset) {
  const Dim row = dims.back();
  std::span<const Dim> outer(dims.data(), dims.size() - 1);
  pool->ParallelFor(Product(outer), CopyCost(row.size, sizeof(T)), [&](int64_t first,
                                                                       int64_t last) {
    OuterWalker walker(outer);
    walker.Seek(first, in_offset, out_offset);
    for (int64_t r = first; r < last; ++r, walker.Next()) {
      const T* src = in + walker.in();
      T* dst = out + walker.out();
      if (row.in_stride == 1 && row.out_stride == 1) {
        CopyElements(src, row.size, dst);
      } else if (row.in_stride == 0 && row.out_stride == 1) {
        std::fill_n(dst, row.size, *src);
      } else {
        for (int64_t i = 0; i < row.size; ++i) {
          dst[i * row.out_stride] = src[i * row.in_stride];
        }
      }
    }
  });
}

// Micro-transposes of a square of k x k elements held in SIMD registers:
// dst[m * dst_stride + r] = src[r * src_stride + m] for r, m < k. Written
// for element sizes, since the bits move unchanged.
#if defined(__AVX__)
inline void Transpose8x8(const uint32_t* src, int64_t src_stride, uint32_t* dst,
                         int64_t dst_stride) {
  const float* s = reinterpret_cast<const float*>(src);
  float* d = reinterpret_cast<float*>(dst);
  __m256 r[8], t[8], u[8];
  for (int k = 0; k < 8; ++k) r[k] = _mm256_loadu_ps(s + k * src_stride);
  for (int k = 0; k < 8; k += 2) {
    t[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);
    t[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
  }
  for (int k = 0; k < 8; k += 4) {
    u[k] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int k = 0; k < 4; ++k) {
    _mm256_storeu_ps(d + k * dst_stride, _mm256_permute2f128_ps(u[k], u[k + 4], 0x20));
    _mm256_storeu_ps(d + (k + 4) * dst_stride, _mm256_permute2f128_ps(u[k], u[k + 4], 0x31));
  }
}

inline void Transpose4x4(const uint64_t* src, int64_t src_stride, uint64_t* dst,
                         int64_t dst_stride) {
  const double* s = reinterpret_cast<const double*>(src);
  double* d = reinterpret_cast<double*>(dst);
  __m256d r[4], t[4];
  for (int k = 0; k < 4; ++k) r[k] = _mm256_loadu_pd(s + k * src_stride);
  for (int k = 0; k < 4; k += 2) {
    t[k] = _mm256_unpacklo_pd(r[k], r[k + 1]);
    t[k + 1] = _mm256_unpackhi_pd(r[k], r[k + 1]);
  }
  for (int k = 0; k < 2; ++k) {
    _mm256_storeu_pd(d + k * dst_stride, _mm256_permute2f128_pd(t[k], t[k + 2], 0x20));
    _mm256_storeu_pd(d + (k + 2) * dst_stride, _mm256_permute2f128_pd(t[k], t[k + 2], 0x31));
  }
}
#endif

// The side of the SIMD micro-transpose for T, or 0 when there is none.
template <typename T>
constexpr int MicroTile() {
#if defined(__AVX__)
  if constexpr (std::is_same_v<T, uint32_t>) return 8;
  if constexpr (std::is_same_v<T, uint64_t>) return 4;
#endif
  return 0;
}

// dst[a * dst_stride + b] = src[a + b * src_stride] for a < rows, b < cols:
// columns of src (contiguous in a) become rows of dst (contiguous in b).
// Each pass writes kMicro dst rows left to right: with power-of-two strides
// every row maps to one cache set, so a pass touches few lines of any set.
template <typename T>
void TransposeBlock(const T* src, int64_t src_stride, T* dst, int64_t dst_stride, int64_t rows,
                    int64_t cols) {
  constexpr int kMicro = MicroTile<T>() > 0 ? MicroTile<T>() : 8;
  for (int64_t a = 0; a < rows; a += kMicro) {
    const int64_t height = std::min<int64_t>(kMicro, rows - a);
    const T* s = src + a;
    T* d = dst + a * dst_stride;
    int64_t b = 0;
    if constexpr (MicroTile<T>() > 0) {
      if (height == kMicro) {
        for (; b + kMicro <= cols; b += kMicro) {
          if constexpr (kMicro == 8) {
            Transpose8x8(s + b * src_stride, src_stride, d + b, dst_stride);
          } else {
            Transpose4x4(s + b * src_stride, src_stride, d + b, dst_stride);
          }
        }
      }
    }
    for (; b < cols; ++b) {
      for (int64_t k = 0; k < height; ++k) d[k * dst_stride + b] = s[k + b * src_stride];
    }
  }
}

// A transposing copy: dim `a` is contiguous in the input, the last dim in
// the output. Each task takes kTile positions of `a` across the whole last
// dim, so its reads are kTile-element runs of the input and its writes
// fill kTile output rows left to right while they stay in cache.
template <typename T>
void CopyTiles(ThreadPool* pool, std::vector<Dim> dims, int a, const T* in, int64_t in_offset,
               T* out, int64_t out_offset) {
  constexpr int64_t kTile = 64;
  const Dim along = dims[a];       // in_stride 1
  const Dim across = dims.back();  // out_stride 1
  dims.pop_back();
  dims.erase(dims.begin() + a);
  const int64_t blocks = (along.size + kTile - 1) / kTile;
  pool->ParallelFor(Product(dims) * blocks, CopyCost(kTile * across.size, sizeof(T)),
                    [&](int64_t first, int64_t last) {
    OuterWalker walker(dims);
    walker.Seek(first / blocks, in_offset, out_offset);
    for (int64_t task = first; task < last; ++task) {
      if (task != first && task % blocks == 0) walker.Next();
      const int64_t i0 = (task % blocks) * kTile;
      const int64_t rows = std::min(along.size, i0 + kTile) - i0;
      TransposeBlock(in + walker.in() + i0, across.in_stride,
                     out + walker.out() + i0 * along.out_stride, along.out_stride, rows,
                     across.size);
    }
  });
}

template <typename T>
void CopyStridedTyped(ThreadPool* pool, const std::vector<Dim>& dims, const T* in,
                      int64_t in_offset, T* out, int64_t out_offset) {
  if (dims.empty()) {
    out[out_offset] = in[in_offset];
    return;
  }
  const Dim& row = dims.back();
  if (row.out_stride == 1 && row.in_stride != 1 && row.in_stride != 0 && dims.size() >= 2) {
    // A dim read contiguously but written with a stride: tile it against
    // the row. Worth it only when the row is long enough to stride far.
    for (int a = static_cast<int>(dims.size()) - 2; a >= 0; --a) {
      if (dims[a].in_stride == 1 && dims[a].size >= 4 && row.size >= 4) {
        CopyTiles(pool, dims, a, in, in_offset, out, out_offset);
        return;
      }
    }
  }
  CopyRows(pool, dims, in, in_offset, out, out_offset);
}

}  // namespace

namespace {

// Row-major strides of `dims`. A stride past int64 saturates: that needs a
// 0 dim further out, so the tensor is empty and the stride never used.
std::vector<int64_t> DenseStridesOf(std::span<const int64_t> dims) {
  std::vector<int64_t> strides(dims.size());
  int64_t stride = 1;
  for (int k = static_cast<int>(dims.size()) - 1; k >= 0; --k) {
    strides[k] = stride;
    if (__builtin_mul_overflow(stride, dims[k], &stride)) {
      stride = std::numeric_limits<int64_t>::max();
    }
  }
  return strides;
}

}  // namespace

std::vector<int64_t> DenseStrides(const TensorShape& shape) {
  return DenseStridesOf(shape.dim_sizes());
}

void CopyStrided(ThreadPool* pool, std::span<const int64_t> dims, const Tensor& in,
                 int64_t in_offset, std::span<const int64_t> in_strides, Tensor* out,
                 int64_t out_offset, std::span<const int64_t> out_strides) {
  DCHECK(in.dtype() == out->dtype());
  bool empty;
  std::vector<Dim> simple = Simplify(dims, in_strides, out_strides, &empty);
  if (empty) return;
  DispatchByElementSize(in.dtype(), [&]<typename T>() {
    CopyStridedTyped(pool, simple, ElementsAs<T>(in), in_offset, ElementsAs<T>(*out),
                     out_offset);
  });
}

bool IsContiguousRead(std::span<const int64_t> dims, std::span<const int64_t> in_strides) {
  const std::vector<int64_t> dense = DenseStridesOf(dims);
  bool empty;
  std::vector<Dim> simple = Simplify(dims, in_strides, dense, &empty);
  return empty || simple.empty() || (simple.size() == 1 && simple[0].in_stride == 1);
}

Tensor ShareElements(const Tensor& in, int64_t offset, const TensorShape& shape) {
  Tensor flat;
  CHECK(flat.CopyFrom(in, TensorShape({in.NumElements()})));
  Tensor result;
  CHECK(result.CopyFrom(flat.Slice(offset, offset + shape.num_elements()), shape));
  return result;
}

namespace {

// Copies between `wide` ([rows, sum(cols)]) and the pieces ([rows, cols[k]]
// side by side in it), in the direction `to_wide`.
void CopyColumnBlocks(ThreadPool* pool, DType dtype, int64_t rows,
                      std::span<const int64_t> cols, std::span<void* const> pieces, void* wide,
                      bool to_wide) {
  int64_t total_cols = 0;
  std::vector<int64_t> starts;  // first column of each piece
  for (int64_t c : cols) {
    starts.push_back(total_cols);
    total_cols += c;
  }
  if (rows == 0 || total_cols == 0) return;
  DispatchByElementSize(dtype, [&]<typename T>() {
    T* wide_data = static_cast<T*>(wide);
    // Work is split by element of `wide`, so a few huge pieces (axis 0)
    // spread over the pool as well as many small rows do.
    pool->ParallelFor(rows * total_cols, CopyCost(1, sizeof(T)), [&](int64_t first,
                                                                     int64_t last) {
      int64_t row = first / total_cols;
      int64_t col = first % total_cols;
      size_t k = std::upper_bound(starts.begin(), starts.end(), col) - starts.begin() - 1;
      for (int64_t pos = first; pos < last;) {
        while (cols[k] == 0 || col >= starts[k] + cols[k]) ++k;
        const int64_t offset = col - starts[k];
        const int64_t n = std::min(cols[k] - offset, last - pos);
        T* piece = static_cast<T*>(pieces[k]) + row * cols[k] + offset;
        if (to_wide) {
          CopyElements(piece, n, wide_data + pos);
        } else {
          CopyElements(wide_data + pos, n, piece);
        }
        pos += n;
        col += n;
        if (col == total_cols) {
          col = 0;
          k = 0;
          ++row;
        }
      }
    });
  });
}

}  // namespace

void SetOutputToView(OpKernelContext* context, const Tensor& in, const TensorShape& out_shape,
                     std::span<const int64_t> dims, int64_t in_offset,
                     std::span<const int64_t> in_strides) {
  // A view larger than its output would write past the buffer (a kernel
  // whose dims wrapped): a broken invariant, never reached from input.
  // (An empty view only needs a 0 dim: its other dims may multiply past
  // int64.)
  int64_t view_elements = 1;
  bool overflow = false;
  for (int64_t d : dims) {
    CHECK_GE(d, 0) << "view dims [" << StrJoin(dims, ",") << "]";
    overflow |= __builtin_mul_overflow(view_elements, d, &view_elements);
  }
  const bool empty = std::find(dims.begin(), dims.end(), 0) != dims.end();
  CHECK(empty ? out_shape.num_elements() == 0
              : !overflow && view_elements == out_shape.num_elements())
      << "view dims [" << StrJoin(dims, ",") << "] for output " << out_shape;
  if (out_shape.num_elements() > 0 && IsContiguousRead(dims, in_strides)) {
    context->set_output(0, ShareElements(in, in_offset, out_shape));
    return;
  }
  Tensor* out;
  OP_REQUIRES_OK(context, context->allocate_output(0, out_shape, &out));
  if (out_shape.num_elements() == 0) return;
  const std::vector<int64_t> out_strides = DenseStridesOf(dims);
  CopyStrided(context->device()->intra_op_pool(), dims, in, in_offset, in_strides, out, 0,
              out_strides);
}

void ConcatColumns(ThreadPool* pool, int64_t rows, std::span<const int64_t> cols,
                   std::span<const Tensor* const> pieces, Tensor* out) {
  std::vector<void*> data;
  for (const Tensor* piece : pieces) data.push_back(piece->raw_data());
  CopyColumnBlocks(pool, out->dtype(), rows, cols, data, out->raw_data(), true);
}

void SplitColumns(ThreadPool* pool, int64_t rows, std::span<const int64_t> cols,
                  const Tensor& in, std::span<Tensor* const> pieces) {
  std::vector<void*> data;
  for (Tensor* piece : pieces) data.push_back(piece->raw_data());
  CopyColumnBlocks(pool, in.dtype(), rows, cols, data, in.raw_data(), false);
}

void CopyWithIndexMaps(ThreadPool* pool, const Tensor& in,
                       const std::vector<std::vector<int64_t>>& maps, const Tensor* fill,
                       Tensor* out) {
  const int rank = out->dims();
  if (out->NumElements() == 0) return;
  const std::vector<int64_t> in_strides = DenseStrides(in.shape());
  DispatchByElementSize(in.dtype(), [&]<typename T>() {
    const T pad = fill == nullptr ? T{} : *ElementsAs<T>(*fill);
    const T* src = ElementsAs<T>(in);
    T* dst = ElementsAs<T>(*out);
    if (rank == 0) {
      dst[0] = src[0];
      return;
    }
    // The row (last dim) as runs: consecutive input elements, or fill.
    struct Run {
      int64_t out_start, length, in_start;  // in_start -1: fill
    };
    std::vector<Run> runs;
    const std::vector<int64_t>& inner = maps[rank - 1];
    for (int64_t o = 0; o < static_cast<int64_t>(inner.size()); ++o) {
      const int64_t i = inner[o];
      if (!runs.empty()) {
        Run& last = runs.back();
        const bool extends = i < 0 ? last.in_start < 0
                                   : last.in_start >= 0 && last.in_start + last.length == i;
        if (extends) {
          ++last.length;
          continue;
        }
      }
      runs.push_back({o, 1, i});
    }
    const int64_t row_length = out->dim_size(rank - 1);
    const int64_t rows = out->NumElements() / row_length;
    pool->ParallelFor(rows, CopyCost(row_length, sizeof(T)), [&](int64_t first, int64_t last) {
      for (int64_t r = first; r < last; ++r) {
        int64_t rest = r, base = 0;
        bool padded = false;
        for (int k = rank - 2; k >= 0; --k) {
          const int64_t size = out->dim_size(k);
          const int64_t mapped = maps[k][rest % size];
          rest /= size;
          padded |= mapped < 0;
          base += mapped * in_strides[k];
        }
        T* row = dst + r * row_length;
        if (padded) {
          std::fill_n(row, row_length, pad);
          continue;
        }
        for (const Run& run : runs) {
          if (run.in_start < 0) {
            std::fill_n(row + run.out_start, run.length, pad);
          } else {
            CopyElements(src + base + run.in_start, run.length, row + run.out_start);
          }
        }
      }
    });
  });
}

}  // namespace weir
