// Einsum for one or two operands, as strided copies around a batched
// matrix product. Each operand is copied into the layout
// [batch, free, contracted, summed] (a strided copy also takes diagonals,
// where a label repeats and its strides add, and broadcasts, where a "..."
// dim of size 1 has stride 0), the labels only it has and the output lacks
// are summed, the two are multiplied batch by batch, and the product is
// copied (or, for labels repeated in the output, scattered onto a
// diagonal) into the output's order; an operand already in that layout is
// used in place. float multiplies with oneDNN's sgemm (one thread per call,
// blocks over the intra-op pool, as MatMul does), double with Eigen.
#include <algorithm>
#include <mutex>
#include <numeric>
#include <string>
#include <vector>
#include <oneapi/dnnl/dnnl.h>

#include "weir/base/checked_math.h"
#include "weir/base/denormal.h"
#include "weir/base/threadpool.h"
#include "weir/framework/eigen_tensor.h"
#include "weir/framework/einsum_spec.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/math_kernels.h"
#include "weir/kernels/openmp_threads.h"
#include "weir/kernels/type_list.h"

namespace weir {
namespace {

// dst (contiguous, `sizes`) <- src at offsets sum_k index_k * strides_k,
// or, with kScatter, the other way round.
template <bool kScatter, typename T>
void StridedCopy(const T* src, T* dst, const std::vector<int64_t>& sizes,
                 const std::vector<int64_t>& strides) {
  const int rank = static_cast<int>(sizes.size());
  int64_t total = 1;
  for (int64_t s : sizes) total *= s;
  if (total == 0) return;
  if (rank == 0) {
    *dst = *src;
    return;
  }
  const int64_t inner = sizes[rank - 1], inner_stride = strides[rank - 1];
  std::vector<int64_t> index(rank, 0);
  int64_t offset = 0;
  for (int64_t done = 0; done < total; done += inner) {
    for (int64_t i = 0; i < inner; ++i) {
      if constexpr (kScatter) {
        dst[offset + i * inner_stride] = src[done + i];
      } else {
        dst[done + i] = src[offset + i * inner_stride];
      }
    }
    // Advance the outer dims like an odometer.
    for (int d = rank - 2; d >= 0; --d) {
      offset += strides[d];
      if (++index[d] < sizes[d]) break;
      offset -= strides[d] * sizes[d];
      index[d] = 0;
    }
  }
}

// Row-major strides of each label in one tensor's axes, added where a label
// repeats (a diagonal) and 0 on a broadcast axis.
std::vector<int64_t> LabelStrides(const EinsumDims& dims, const std::vector<int>& axis_labels,
                                  const std::vector<bool>* broadcast, const TensorShape& shape) {
  std::vector<int64_t> strides(dims.num_labels, 0);
  int64_t stride = 1;
  for (int axis = static_cast<int>(axis_labels.size()) - 1; axis >= 0; --axis) {
    if (broadcast == nullptr || !(*broadcast)[axis]) strides[axis_labels[axis]] += stride;
    stride *= shape.dim_size(axis);
  }
  return strides;
}

template <typename T>
class EinsumOp : public OpKernel {
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

 public:
  explicit EinsumOp(OpKernelConstruction* context) : OpKernel(context) {
    Status status = context->GetAttr("equation", &equation_);
    if (status.ok()) {
      StatusOr<EinsumEquation> parsed = ParseEinsumEquation(equation_, num_inputs());
      status = parsed.status();
      if (parsed.ok()) parsed_ = *parsed;
    }
    context->SetStatus(status);
  }

  bool IsExpensive() const override { return true; }

  void Compute(OpKernelContext* context) override {
    ScopedFlushDenormals flush_denormals;
    const int n = context->num_inputs();
    std::vector<PartialShape> shapes;
    for (int i = 0; i < n; ++i) shapes.emplace_back(context->input(i).shape());
    StatusOr<EinsumDims> resolved = ResolveEinsum(parsed_, equation_, shapes);
    OP_REQUIRES_OK(context, resolved.status());
    const EinsumDims& dims = *resolved;
    std::vector<int64_t> out_dims;
    for (int label : dims.output) out_dims.push_back(dims.label_size[label]);
    OP_REQUIRES_OK(context, CheckedElementCount(out_dims, "Einsum's output").status());
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape(out_dims), &out));
    if (out->NumElements() == 0) return;

    // Where each label occurs.
    std::vector<int> in_x(dims.num_labels, 0), in_y(dims.num_labels, 0), in_out(dims.num_labels, 0);
    for (int label : dims.inputs[0]) in_x[label] = 1;
    if (n == 2) for (int label : dims.inputs[1]) in_y[label] = 1;
    for (int label : dims.output) in_out[label] = 1;
    // The output's labels once each, in output order, split by role.
    std::vector<int> batch, free_x, free_y, contracted, sum_x, sum_y, seen(dims.num_labels, 0);
    for (int label : dims.output) {
      if (seen[label]++) continue;
      (in_x[label] && in_y[label] ? batch : in_x[label] ? free_x : free_y).push_back(label);
    }
    for (int label : dims.inputs[0]) {
      if (seen[label]++) continue;
      (in_y[label] ? contracted : sum_x).push_back(label);
    }
    if (n == 2) {
      for (int label : dims.inputs[1]) {
        if (!seen[label]++) sum_y.push_back(label);
      }
    }
    auto size_of = [&](const std::vector<int>& labels) {
      int64_t size = 1;
      for (int label : labels) size *= dims.label_size[label];  // bounded by an operand or the output
      return size;
    };
    const int64_t b = size_of(batch), m = size_of(free_x), k = size_of(contracted),
                  nn = size_of(free_y);

    // x as [batch, free_x, contracted] (free_y is empty for one operand).
    Tensor x_packed, y_packed;
    bool x_transposed = false, y_transposed = false;
    OP_REQUIRES_OK(context, Pack(context, 0, dims, batch, free_x, contracted, sum_x, &x_packed,
                                 &x_transposed));
    Tensor product;
    std::vector<int> product_labels = batch;
    product_labels.insert(product_labels.end(), free_x.begin(), free_x.end());
    if (n == 1) {
      product = x_packed;  // contracted is empty, so never transposed
    } else {
      product_labels.insert(product_labels.end(), free_y.begin(), free_y.end());
      OP_REQUIRES_OK(context, Pack(context, 1, dims, batch, contracted, free_y, sum_y, &y_packed,
                                   &y_transposed));
      OP_REQUIRES_OK(context, context->allocate_temp(kDTypeOf<T>, TensorShape({b, m, nn}),
                                                     &product));
      OP_REQUIRES_OK(context, Multiply(context, b, m, k, nn, x_packed.data<T>(), x_transposed,
                                       y_packed.data<T>(), y_transposed, product.data<T>()));
    }
    Unpack(dims, product_labels, product.data<T>(), out);
  }

 private:
  // Operand i copied into the concatenated label groups [batch, rows,
  // cols], with `summed` (labels only it has) added up. When nothing is
  // summed and the operand already is [batch, rows, cols] or [batch, cols,
  // rows] in memory, it is used in place, and `*transposed` says which.
  Status Pack(OpKernelContext* context, int i, const EinsumDims& dims, const std::vector<int>& batch,
              const std::vector<int>& rows, const std::vector<int>& cols,
              const std::vector<int>& summed, Tensor* packed, bool* transposed) {
    const Tensor& input = context->input(i);
    const std::vector<int64_t> label_strides =
        LabelStrides(dims, dims.inputs[i], &dims.broadcast[i], input.shape());
    auto concat = [](std::initializer_list<const std::vector<int>*> groups) {
      std::vector<int> labels;
      for (const std::vector<int>* group : groups) labels.insert(labels.end(), group->begin(), group->end());
      return labels;
    };
    *transposed = false;
    if (summed.empty()) {
      // Row-major over `labels`, covering the whole operand once.
      auto in_place = [&](const std::vector<int>& labels) {
        int64_t stride = 1;
        for (int j = static_cast<int>(labels.size()) - 1; j >= 0; --j) {
          const int64_t size = dims.label_size[labels[j]];
          if (size != 1 && label_strides[labels[j]] != stride) return false;
          stride *= size;
        }
        return stride == input.NumElements();
      };
      for (bool swap : {false, true}) {
        if (in_place(swap ? concat({&batch, &cols, &rows}) : concat({&batch, &rows, &cols}))) {
          *packed = input;
          *transposed = swap;
          return Status::OK();
        }
      }
    }
    std::vector<int> labels = concat({&batch, &rows, &cols});
    std::vector<int64_t> kept_sizes;
    for (int label : labels) kept_sizes.push_back(dims.label_size[label]);
    labels.insert(labels.end(), summed.begin(), summed.end());
    std::vector<int64_t> sizes, strides;
    for (int label : labels) {
      sizes.push_back(dims.label_size[label]);
      strides.push_back(label_strides[label]);
    }
    WEIR_ASSIGN_OR_RETURN(int64_t kept, CheckedElementCount(kept_sizes, "an Einsum operand"));
    WEIR_ASSIGN_OR_RETURN(int64_t total, CheckedElementCount(sizes, "an Einsum operand"));
    WEIR_RETURN_IF_ERROR(context->allocate_temp(kDTypeOf<T>, TensorShape({kept}), packed));
    T* dst = packed->data<T>();
    const T* src = input.data<T>();
    if (summed.empty()) {
      StridedCopy<false>(src, dst, sizes, strides);
      return Status::OK();
    }
    const int64_t run = kept == 0 ? 0 : total / kept;
    Tensor spread;
    WEIR_RETURN_IF_ERROR(context->allocate_temp(kDTypeOf<T>, TensorShape({total}), &spread));
    StridedCopy<false>(src, spread.data<T>(), sizes, strides);
    const T* spread_rows = spread.data<T>();
    for (int64_t r = 0; r < kept; ++r) {
      T sum(0);
      for (int64_t j = 0; j < run; ++j) sum += spread_rows[r * run + j];
      dst[r] = sum;
    }
    return Status::OK();
  }

  // z[b] = x[b] (m x k) * y[b] (k x n), over the intra-op pool; a
  // transposed operand is stored as k x m (x) or n x k (y).
  Status Multiply(OpKernelContext* context, int64_t batches, int64_t m, int64_t k, int64_t n,
                  const T* x, bool tx, const T* y, bool ty, T* z) {
    if (k == 0) {
      std::fill_n(z, batches * m * n, T(0));
      return Status::OK();
    }
    ThreadPool* pool = context->device()->intra_op_pool();
    const double flops = 2.0 * m * n * k;
    std::mutex mu;
    Status status;
    // Rows [begin, end) of product b.
    auto rows = [&](int64_t b, int64_t begin, int64_t end) {
      // Rows of op(x): a row offset in x, or a column offset when stored k x m.
      const T* a = x + b * m * k + begin * (tx ? 1 : k);
      const T* bb = y + b * k * n;
      const int64_t lda = tx ? m : k, ldb = ty ? k : n;
      T* c = z + b * m * n + begin * n;
      const int64_t r = end - begin;
      if constexpr (std::is_same_v<T, float>) {
        const ScopedOpenMpSingleThread single_thread;
        const dnnl_status_t s = dnnl_sgemm(tx ? 'T' : 'N', ty ? 'T' : 'N', r, n, k, 1.0f, a, lda, bb,
                                           ldb, 0.0f, c, n);
        if (s != dnnl_success) {
          std::lock_guard<std::mutex> lock(mu);
          status.Update(errors::Internal("Einsum: dnnl_sgemm failed with status ", s));
        }
      } else {
        using Strided = Eigen::Map<const Matrix, 0, Eigen::OuterStride<>>;
        Eigen::Map<Matrix> out(c, r, n);
        const Strided a_map(a, tx ? k : r, tx ? r : k, Eigen::OuterStride<>(lda));
        const Strided b_map(bb, ty ? n : k, ty ? k : n, Eigen::OuterStride<>(ldb));
        if (tx && ty) {
          out.noalias() = a_map.transpose() * b_map.transpose();
        } else if (tx) {
          out.noalias() = a_map.transpose() * b_map;
        } else if (ty) {
          out.noalias() = a_map * b_map.transpose();
        } else {
          out.noalias() = a_map * b_map;
        }
      }
    };
    if (batches >= pool->NumThreads()) {
      pool->ParallelFor(batches, static_cast<int64_t>(flops), [&](int64_t first, int64_t last) {
        for (int64_t b = first; b < last; ++b) rows(b, 0, m);
      });
      return status;
    }
    // Few products: each one split into row blocks over the pool (a block
    // under ~2^18 flops costs more to hand over than it saves).
    const int64_t blocks = std::clamp<int64_t>(static_cast<int64_t>(flops / (1 << 18)), 1,
                                               std::min<int64_t>(pool->NumThreads(), m));
    const int64_t step = (m + blocks - 1) / blocks;
    for (int64_t b = 0; b < batches; ++b) {
      if (blocks == 1) {
        rows(b, 0, m);
        continue;
      }
      pool->ParallelFor(blocks, int64_t{1} << 40, [&](int64_t first, int64_t last) {
        for (int64_t i = first; i < last; ++i) rows(b, i * step, std::min(m, (i + 1) * step));
      });
    }
    return status;
  }

  // The product (its labels in `labels` order, contiguous) into the output.
  void Unpack(const EinsumDims& dims, const std::vector<int>& labels, const T* product, Tensor* out) {
    T* dst = out->data<T>();
    if (labels == dims.output) {
      std::copy_n(product, out->NumElements(), dst);
      return;
    }
    std::vector<int64_t> sizes;
    for (int label : labels) sizes.push_back(dims.label_size[label]);
    const bool repeats = labels.size() != dims.output.size();
    if (!repeats) {
      // A transpose: read the product at the output's positions.
      std::vector<int64_t> product_strides(dims.num_labels, 0), out_sizes, strides;
      int64_t stride = 1;
      for (int j = static_cast<int>(labels.size()) - 1; j >= 0; --j) {
        product_strides[labels[j]] = stride;
        stride *= sizes[j];
      }
      for (int label : dims.output) {
        out_sizes.push_back(dims.label_size[label]);
        strides.push_back(product_strides[label]);
      }
      StridedCopy<false>(product, dst, out_sizes, strides);
      return;
    }
    // Labels repeated in the output: the product goes on their diagonal.
    std::fill_n(dst, out->NumElements(), T(0));
    const std::vector<int64_t> out_strides = LabelStrides(dims, dims.output, nullptr, out->shape());
    std::vector<int64_t> strides;
    for (int label : labels) strides.push_back(out_strides[label]);
    StridedCopy<true>(product, dst, sizes, strides);
  }

  std::string equation_;
  EinsumEquation parsed_;
};

}  // namespace

void RegisterEinsumKernels(KernelRegistry* registry) {
  ForEachType<float, double>([&]<typename T>() {
    registry->Register(KernelBuilder("Einsum").TypeConstraint<T>("T"), MakeKernel<EinsumOp<T>>);
  });
}

}  // namespace weir
