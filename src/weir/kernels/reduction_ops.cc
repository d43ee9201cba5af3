// Reductions over a set of axes (Sum, Mean, Prod, Max, Min, All, Any) and
// index reductions along one axis (ArgMax, ArgMin).
//
// The input's dims are collapsed into alternating kept and reduced groups
// (dims of 1 dropped, neighbours of the same kind merged), and each reduced
// group is reduced out as the middle of a [prefix, reduced, suffix] view.
// Most reductions are one such step (all dims, inner rows, outer columns, a
// middle axis); rarer patterns take one step per reduced group. Eigen
// reduces whole tensors and rows; reductions down columns have their own
// loop (ReduceColumns). One template serves every reduction: a reducer type
// says how two values combine and what reducing nothing gives.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "weir/base/denormal.h"
#include "weir/base/str_util.h"
#include "weir/base/threadpool.h"
#include "weir/framework/axes.h"
#include "weir/framework/eigen_tensor.h"
#include "weir/framework/int_tensor_values.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/math_kernels.h"
#include "weir/kernels/shape_util.h"
#include "weir/kernels/type_list.h"

namespace weir {
namespace {

struct DimGroup {
  int64_t size;
  bool reduced;
};

// Groups of `shape` after dropping dims of 1 and merging neighbours.
std::vector<DimGroup> CollapseDims(const TensorShape& shape, const std::vector<int>& axes) {
  std::vector<DimGroup> groups;
  for (int i = 0; i < shape.rank(); ++i) {
    if (shape.dim_size(i) == 1) continue;
    const bool reduced = std::binary_search(axes.begin(), axes.end(), i);
    if (!groups.empty() && groups.back().reduced == reduced) {
      groups.back().size *= shape.dim_size(i);
    } else {
      groups.push_back({shape.dim_size(i), reduced});
    }
  }
  return groups;
}

// The type integer sums and products are computed in: unsigned, so they wrap
// without undefined behavior.
template <typename T, bool = std::is_integral_v<T> && !std::is_same_v<T, bool>>
struct WrappingType {
  using type = T;
};
template <typename T>
struct WrappingType<T, true> {
  using type = std::make_unsigned_t<T>;
};

template <typename U>
auto RowMap(const U* row, int64_t n) {
  return Eigen::Map<const Eigen::Array<U, Eigen::Dynamic, 1>>(row, n);
}

// A reducer for element type T computes in type U (same size as T) and has
//   Identity()        what reducing nothing gives
//   Combine(a, b)     one step, associative
//   Row(p, n)         the reduction of n contiguous values (n >= 1)
//   Whole(expr)       an Eigen Tensor expression reducing a rank-1 map
//   Finish(out, count)  applied to each output; count values were reduced
template <typename T>
struct SumReducer {
  using Element = T;
  using U = typename WrappingType<T>::type;
  static U Identity() { return U(0); }
  static U Combine(U a, U b) { return a + b; }
  static U Row(const U* row, int64_t n) { return RowMap(row, n).sum(); }
  template <typename Expr>
  static auto Whole(const Expr& e) { return e.sum(); }
  static void Finish(T* out, int64_t size, int64_t count) {}
};

template <typename T>
struct MeanReducer : SumReducer<T> {
  // Integers divide toward zero; the mean of nothing is NaN for floats (0/0)
  // and 0 for integers.
  static void Finish(T* out, int64_t size, int64_t count) {
    if constexpr (std::is_integral_v<T>) {
      if (count == 0) return;
      for (int64_t i = 0; i < size; ++i) out[i] = static_cast<T>(out[i] / count);
    } else {
      const T divisor = static_cast<T>(count);
      for (int64_t i = 0; i < size; ++i) out[i] /= divisor;
    }
  }
};

template <typename T>
struct ProdReducer {
  using Element = T;
  using U = typename WrappingType<T>::type;
  static U Identity() { return U(1); }
  static U Combine(U a, U b) { return a * b; }
  static U Row(const U* row, int64_t n) { return RowMap(row, n).prod(); }
  template <typename Expr>
  static auto Whole(const Expr& e) { return e.prod(); }
  static void Finish(T* out, int64_t size, int64_t count) {}
};

// Max and Min propagate NaN: a NaN anywhere in the reduced values is the
// result, as in NumPy and PyTorch.
constexpr int kNanPropagation = Eigen::PropagateNaN;

template <typename T>
struct MaxReducer {
  using Element = T;
  using U = T;
  static U Identity() {
    if constexpr (std::numeric_limits<T>::has_infinity) return -std::numeric_limits<T>::infinity();
    return std::numeric_limits<T>::lowest();
  }
  static U Combine(U a, U b) { return a > b || a != a ? a : b; }
  static U Row(const U* row, int64_t n) {
    return RowMap(row, n).template maxCoeff<kNanPropagation>();
  }
  template <typename Expr>
  static auto Whole(const Expr& e) { return e.template maximum<kNanPropagation>(); }
  static void Finish(T* out, int64_t size, int64_t count) {}
};

template <typename T>
struct MinReducer {
  using Element = T;
  using U = T;
  static U Identity() {
    if constexpr (std::numeric_limits<T>::has_infinity) return std::numeric_limits<T>::infinity();
    return std::numeric_limits<T>::max();
  }
  static U Combine(U a, U b) { return a < b || a != a ? a : b; }
  static U Row(const U* row, int64_t n) {
    return RowMap(row, n).template minCoeff<kNanPropagation>();
  }
  template <typename Expr>
  static auto Whole(const Expr& e) { return e.template minimum<kNanPropagation>(); }
  static void Finish(T* out, int64_t size, int64_t count) {}
};

struct AllReducer {
  using Element = bool;
  using U = bool;
  static U Identity() { return true; }
  static U Combine(U a, U b) { return a && b; }
  static U Row(const U* row, int64_t n) { return RowMap(row, n).all(); }
  template <typename Expr>
  static auto Whole(const Expr& e) { return e.all(); }
  static void Finish(bool* out, int64_t size, int64_t count) {}
};

struct AnyReducer {
  using Element = bool;
  using U = bool;
  static U Identity() { return false; }
  static U Combine(U a, U b) { return a || b; }
  static U Row(const U* row, int64_t n) { return RowMap(row, n).any(); }
  template <typename Expr>
  static auto Whole(const Expr& e) { return e.any(); }
  static void Finish(bool* out, int64_t size, int64_t count) {}
};

// out[p, s] = reduction over r of in[p, r, s] where s is the innermost dim:
// each task owns a block of output columns and combines rows into it, so
// reads are contiguous and the loop vectorizes. (Eigen's evaluator reduces
// such "column" sums one output at a time with strided reads, ~15x slower.)
// Rows are combined in chunks whose partial results are then combined,
// which keeps float rounding error of sums growing with chunk count, not
// row count.
template <typename R, typename U = typename R::U>
void ReduceColumns(ThreadPool* pool, const U* in, int64_t prefix, int64_t reduced,
                   int64_t suffix, U* out) {
  constexpr int64_t kColumns = 512;
  constexpr int64_t kRowChunk = 128;
  const int64_t column_blocks = (suffix + kColumns - 1) / kColumns;
  const int64_t cost = reduced * std::min(suffix, kColumns);
  pool->ParallelFor(prefix * column_blocks, cost, [&](int64_t first, int64_t last) {
    U partial[kColumns];
    for (int64_t task = first; task < last; ++task) {
      const int64_t p = task / column_blocks;
      const int64_t c0 = (task % column_blocks) * kColumns;
      const int64_t width = std::min(kColumns, suffix - c0);
      const U* src = in + p * reduced * suffix + c0;
      U* dst = out + p * suffix + c0;
      std::fill_n(dst, width, R::Identity());
      for (int64_t r0 = 0; r0 < reduced; r0 += kRowChunk) {
        const int64_t r1 = std::min(reduced, r0 + kRowChunk);
        std::copy_n(src + r0 * suffix, width, partial);
        for (int64_t r = r0 + 1; r < r1; ++r) {
          const U* row = src + r * suffix;
          for (int64_t c = 0; c < width; ++c) partial[c] = R::Combine(partial[c], row[c]);
        }
        for (int64_t c = 0; c < width; ++c) dst[c] = R::Combine(dst[c], partial[c]);
      }
    }
  });
}

// out[p, s] = reduction over r of in[p, r, s].
template <typename R, typename U = typename R::U>
void ReduceMiddle(OpKernelContext* context, const Tensor& in, int64_t prefix, int64_t reduced,
                  int64_t suffix, Tensor* out) {
  const U* src = RawElements<U>(in);
  U* dst = RawElements<U>(*out);
  if (suffix > 1) {
    ReduceColumns<R>(context->device()->intra_op_pool(), src, prefix, reduced, suffix, dst);
  } else if (prefix == 1) {
    Eigen::TensorMap<Eigen::Tensor<U, 0, Eigen::RowMajor, Eigen::Index>> total(dst);
    total.device(context->eigen_cpu_device()) = R::Whole(ConstEigenTensorMap<U, 1>(src, reduced));
  } else {
    // Row reductions: blocks of rows per task, each row reduced by Eigen's
    // vectorized dense reduction (measured ~3x faster than a Tensor
    // reduction expression on the pool for [4096,1024]).
    context->device()->intra_op_pool()->ParallelFor(
        prefix, reduced, [&](int64_t first, int64_t last) {
          for (int64_t p = first; p < last; ++p) dst[p] = R::Row(src + p * reduced, reduced);
        });
  }
}

template <typename R>
class ReductionOp : public OpKernel {
  using T = typename R::Element;
  using U = typename R::U;

 public:
  explicit ReductionOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("keep_dims", &keep_dims_));
  }

  void Compute(OpKernelContext* context) override {
    ScopedFlushDenormals flush_denormals;
    const Tensor& input = context->input(0);
    StatusOr<std::vector<int64_t>> axes =
        IntTensorValues(context->input(1), StrCat(type_string(), ": reduction axes"));
    OP_REQUIRES_OK(context, axes.status());
    StatusOr<std::vector<int>> reduced =
        NormalizeReductionAxes(*axes, input.dims(), input.shape());
    OP_REQUIRES_OK(context, reduced.status().WithContext(type_string()));

    std::vector<int64_t> out_dims;
    int64_t count = 1;  // values reduced into each output
    for (int i = 0; i < input.dims(); ++i) {
      if (!std::binary_search(reduced->begin(), reduced->end(), i)) {
        out_dims.push_back(input.dim_size(i));
      } else {
        // Saturating: only an empty input's reduced dims pass int64, and
        // an empty input's count only divides a mean of nothing.
        if (__builtin_mul_overflow(count, input.dim_size(i), &count)) {
          count = std::numeric_limits<int64_t>::max();
        }
        if (keep_dims_) out_dims.push_back(1);
      }
    }
    // The kept dims of an empty input may multiply past int64 once the
    // reduced 0 is gone (Sum over axis 0 of [0, 2^62, 2^62]).
    StatusOr<TensorShape> checked_shape = CheckedShape(out_dims, type_string());
    OP_REQUIRES_OK(context, checked_shape.status());
    const TensorShape& out_shape = *checked_shape;
    if (input.NumElements() == 0) {
      // Reducing nothing gives the identity (when the output has any
      // elements).
      Tensor* out;
      OP_REQUIRES_OK(context, context->allocate_output(0, out_shape, &out));
      std::fill_n(RawElements<U>(*out), out->NumElements(), R::Identity());
      R::Finish(out->data<T>(), out->NumElements(), count);
      return;
    }

    std::vector<DimGroup> groups = CollapseDims(input.shape(), *reduced);
    auto is_reduced = [](const DimGroup& g) { return g.reduced; };
    if (std::none_of(groups.begin(), groups.end(), is_reduced)) {
      // Only dims of 1 are reduced: the values are already the answer.
      Tensor out;
      CHECK(out.CopyFrom(input, out_shape));
      context->set_output(0, std::move(out));
      return;
    }
    Tensor current = input;
    while (true) {
      // Reduce out the last reduced group.
      auto last = std::find_if(groups.rbegin(), groups.rend(), is_reduced);
      const size_t g = groups.size() - 1 - (last - groups.rbegin());
      int64_t prefix = 1, suffix = 1;
      for (size_t i = 0; i < g; ++i) prefix *= groups[i].size;
      for (size_t i = g + 1; i < groups.size(); ++i) suffix *= groups[i].size;
      const int64_t size = groups[g].size;
      groups.erase(groups.begin() + g);
      if (g > 0 && g < groups.size() && !groups[g - 1].reduced && !groups[g].reduced) {
        groups[g - 1].size *= groups[g].size;
        groups.erase(groups.begin() + g);
      }
      const bool final_step = std::none_of(groups.begin(), groups.end(), is_reduced);
      Tensor next;
      if (final_step) {
        Tensor* out;
        OP_REQUIRES_OK(context, context->allocate_output(0, out_shape, &out));
        next = *out;
      } else {
        OP_REQUIRES_OK(context,
                       context->allocate_temp(input.dtype(), TensorShape({prefix * suffix}),
                                              &next));
      }
      ReduceMiddle<R>(context, current, prefix, size, suffix, &next);
      if (final_step) {
        R::Finish(next.data<T>(), next.NumElements(), count);
        return;
      }
      current = std::move(next);
    }
  }

 private:
  bool keep_dims_ = false;
};

// Whether `x` replaces `best` as the ArgMax (or ArgMin) candidate. Only a
// strictly better value does, so ties keep the first index; a NaN beats
// every number and no later NaN replaces it, so the first NaN wins (as in
// NumPy's argmax/argmin, and consistent with Max/Min propagating NaN).
struct Greater {
  template <typename T>
  static bool Better(T x, T best) {
    return x > best || (x != x && best == best);
  }
};
struct Less {
  template <typename T>
  static bool Better(T x, T best) {
    return x < best || (x != x && best == best);
  }
};

template <typename T, typename Index, typename Compare>
class ArgReductionOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    const Tensor& dimension = context->input(1);
    OP_REQUIRES(context, dimension.dims() == 0,
                errors::InvalidArgument(type_string(), ": dimension must be a scalar but has "
                                        "shape ", dimension.shape()));
    OP_REQUIRES(context, input.dims() >= 1,
                errors::InvalidArgument(type_string(), ": input must have rank at least 1 "
                                        "but has shape ", input.shape()));
    StatusOr<std::vector<int64_t>> axis =
        IntTensorValues(dimension, StrCat(type_string(), ": dimension"));
    OP_REQUIRES_OK(context, axis.status());
    StatusOr<std::vector<int>> normalized =
        NormalizeReductionAxes(*axis, input.dims(), input.shape());
    OP_REQUIRES_OK(context, normalized.status().WithContext(type_string()));
    const int d = normalized->at(0);
    const int64_t n = input.dim_size(d);
    OP_REQUIRES(context, n > 0,
                errors::InvalidArgument(type_string(), ": reduction axis ", d,
                                        " is empty in input of shape ", input.shape()));
    OP_REQUIRES(context, n - 1 <= std::numeric_limits<Index>::max(),
                errors::InvalidArgument(type_string(), ": axis ", d, " of input of shape ",
                                        input.shape(), " is too long for output_type ",
                                        kDTypeOf<Index>));
    TensorShape out_shape = input.shape();
    out_shape.RemoveDim(d);
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, out_shape, &out));
    if (out->NumElements() == 0) return;

    int64_t prefix = 1, suffix = 1;
    for (int i = 0; i < d; ++i) prefix *= input.dim_size(i);
    for (int i = d + 1; i < input.dims(); ++i) suffix *= input.dim_size(i);
    const T* src = input.data<T>();
    Index* dst = out->data<Index>();
    ThreadPool* pool = context->device()->intra_op_pool();
    if (suffix == 1) {
      pool->ParallelFor(prefix, n, [&](int64_t first, int64_t last) {
        for (int64_t p = first; p < last; ++p) {
          const T* row = src + p * n;
          int64_t best = 0;
          for (int64_t r = 1; r < n; ++r) {
            if (Compare::Better(row[r], row[best])) best = r;
          }
          dst[p] = static_cast<Index>(best);
        }
      });
      return;
    }
    // Down columns: each task keeps the best value and index of a block of
    // columns and walks the rows, reading contiguously.
    constexpr int64_t kColumns = 256;
    const int64_t column_blocks = (suffix + kColumns - 1) / kColumns;
    pool->ParallelFor(prefix * column_blocks, n * std::min(suffix, kColumns),
                      [&](int64_t first, int64_t last) {
      T best[kColumns];
      for (int64_t task = first; task < last; ++task) {
        const int64_t p = task / column_blocks;
        const int64_t c0 = (task % column_blocks) * kColumns;
        const int64_t width = std::min(kColumns, suffix - c0);
        const T* block = src + p * n * suffix + c0;
        Index* index = dst + p * suffix + c0;
        std::copy_n(block, width, best);
        std::fill_n(index, width, Index(0));
        for (int64_t r = 1; r < n; ++r) {
          const T* row = block + r * suffix;
          for (int64_t c = 0; c < width; ++c) {
            if (Compare::Better(row[c], best[c])) {
              best[c] = row[c];
              index[c] = static_cast<Index>(r);
            }
          }
        }
      }
    });
  }
};

}  // namespace

void RegisterReductionKernels(KernelRegistry* registry) {
  auto reduction = [&]<typename R>(const char* op) {
    registry->Register(KernelBuilder(op)
                           .TypeConstraint("T", kDTypeOf<typename R::Element>)
                           .TypeConstraint("Tidx", DT_INT32)
                           .TypeConstraint("Tidx", DT_INT64),
                       MakeKernel<ReductionOp<R>>);
  };
  ForEachType<float, double, int32_t, int64_t>([&]<typename T>() {
    reduction.template operator()<SumReducer<T>>("Sum");
    reduction.template operator()<MeanReducer<T>>("Mean");
    reduction.template operator()<ProdReducer<T>>("Prod");
    reduction.template operator()<MaxReducer<T>>("Max");
    reduction.template operator()<MinReducer<T>>("Min");
  });
  // Complex sums, means and products (TensorFlow has them; complex has no
  // order, so no Max or Min).
  ForEachType<complex64, complex128>([&]<typename T>() {
    reduction.template operator()<SumReducer<T>>("Sum");
    reduction.template operator()<MeanReducer<T>>("Mean");
    reduction.template operator()<ProdReducer<T>>("Prod");
  });
  // All and Any have no T attr: their input is always bool.
  for (auto [op, factory] : {std::pair{"All", &MakeKernel<ReductionOp<AllReducer>>},
                             std::pair{"Any", &MakeKernel<ReductionOp<AnyReducer>>}}) {
    registry->Register(
        KernelBuilder(op).TypeConstraint("Tidx", DT_INT32).TypeConstraint("Tidx", DT_INT64),
        factory);
  }
  ForEachType<float, double, int32_t, int64_t, bool>([&]<typename T>() {
    ForEachType<int32_t, int64_t>([&]<typename Index>() {
      auto arg = [&](const char* op, KernelFactory factory) {
        registry->Register(KernelBuilder(op)
                               .TypeConstraint("T", kDTypeOf<T>)
                               .TypeConstraint("Tidx", DT_INT32)
                               .TypeConstraint("Tidx", DT_INT64)
                               .TypeConstraint("output_type", kDTypeOf<Index>),
                           std::move(factory));
      };
      arg("ArgMax", MakeKernel<ArgReductionOp<T, Index, Greater>>);
      arg("ArgMin", MakeKernel<ArgReductionOp<T, Index, Less>>);
    });
  });
}

}  // namespace weir
