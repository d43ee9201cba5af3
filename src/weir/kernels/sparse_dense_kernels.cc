// Sparse kernels whose other side is dense: SparseToDense,
// SparseTensorDenseMatMul, SparseTensorDenseAdd and SparseDenseCwise
// Mul/Div/Add. Every index is checked against its dense shape before any
// element moves, and every dense size goes through checked arithmetic, so a
// hostile index or a 2^62 x 2^62 shape is an InvalidArgument, never a write
// out of bounds.
#include <Eigen/Core>
#include <complex>
#include <limits>
#include <type_traits>

#include "weir/base/checked_math.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/array_copy.h"
#include "weir/kernels/shape_util.h"
#include "weir/kernels/sparse_util.h"
#include "weir/kernels/type_list.h"

namespace weir {
namespace {

template <typename T>
T Conj(T v) {
  if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) {
    return std::conj(v);
  } else {
    return v;
  }
}

// Row-major offset of `index` in `dims`. REQUIRES: index inside dims.
int64_t Offset(std::span<const int64_t> index, std::span<const int64_t> dims) {
  int64_t offset = 0;
  for (size_t d = 0; d < dims.size(); ++d) offset = offset * dims[d] + index[d];
  return offset;
}

class SparseToDenseOp : public OpKernel {
 public:
  explicit SparseToDenseOp(OpKernelConstruction* context) : OpKernel(context) {
    OP_REQUIRES_OK(context, context->GetAttr("validate_indices", &validate_indices_));
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& indices = context->input(0);
    const Tensor& output_shape = context->input(1);
    const Tensor& values = context->input(2);
    const Tensor& default_value = context->input(3);
    OP_REQUIRES(context, indices.dims() <= 2,
                errors::InvalidArgument("SparseToDense: sparse_indices must have rank <= 2 but "
                                        "has shape ",
                                        indices.shape()));
    OP_REQUIRES(context, output_shape.dims() == 1,
                errors::InvalidArgument("SparseToDense: output_shape must be a vector but has "
                                        "shape ",
                                        output_shape.shape()));
    const std::vector<int64_t> dims = IndexValues(output_shape);
    const int64_t num = indices.dims() == 0 ? 1 : indices.dim_size(0);
    const int64_t rank = indices.dims() == 2 ? indices.dim_size(1) : 1;
    OP_REQUIRES(context, rank == static_cast<int64_t>(dims.size()),
                errors::InvalidArgument("SparseToDense: sparse_indices shape ", indices.shape(),
                                        " gives rank ", rank, " but output_shape has ", dims.size(),
                                        " dims"));
    OP_REQUIRES(context, values.dims() == 0 || (values.dims() == 1 && values.dim_size(0) == num),
                errors::InvalidArgument("SparseToDense: sparse_values shape ", values.shape(),
                                        " must be a scalar or hold one value per index (", num,
                                        ") of sparse_indices shape ", indices.shape()));
    OP_REQUIRES(context, default_value.dims() == 0,
                errors::InvalidArgument("SparseToDense: default_value must be a scalar but has "
                                        "shape ",
                                        default_value.shape()));
    StatusOr<TensorShape> shape = CheckedShape(dims, "SparseToDense: output_shape");
    OP_REQUIRES_OK(context, shape.status());
    const std::vector<int64_t> flat = IndexValues(indices);
    for (int64_t i = 0; i < num; ++i) {
      std::span<const int64_t> index(flat.data() + i * rank, static_cast<size_t>(rank));
      for (int64_t d = 0; d < rank; ++d) {
        OP_REQUIRES(
            context, index[d] >= 0 && index[d] < dims[d],
            errors::InvalidArgument("SparseToDense: sparse_indices[", i, "] = ", IndexString(index),
                                    " is out of bounds for "
                                    "output_shape ",
                                    IndexString(dims)));
      }
      if (validate_indices_ && i > 0) {
        std::span<const int64_t> prev(flat.data() + (i - 1) * rank, static_cast<size_t>(rank));
        const int order = CompareIndex(prev, index);
        OP_REQUIRES(context, order != 0,
                    errors::InvalidArgument("SparseToDense: sparse_indices[", i, "] = ",
                                            IndexString(index), " repeats the index before it"));
        OP_REQUIRES(
            context, order < 0,
            errors::InvalidArgument("SparseToDense: sparse_indices[", i, "] = ", IndexString(index),
                                    " is out of order (after ", IndexString(prev), ")"));
      }
    }
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, *shape, &out));
    DispatchByElementSize(values.dtype(), [&]<typename T>() {
      T* dst = ElementsAs<T>(*out);
      const T fill = ElementsAs<T>(default_value)[0];
      std::fill_n(dst, out->NumElements(), fill);
      const T* src = ElementsAs<T>(values);
      for (int64_t i = 0; i < num; ++i) {
        std::span<const int64_t> index(flat.data() + i * rank, static_cast<size_t>(rank));
        dst[Offset(index, dims)] = src[values.dims() == 0 ? 0 : i];
      }
    });
  }

 private:
  bool validate_indices_ = true;
};

template <typename T>
class SparseTensorDenseMatMulOp : public OpKernel {
 public:
  explicit SparseTensorDenseMatMulOp(OpKernelConstruction* context) : OpKernel(context) {
    OP_REQUIRES_OK(context, context->GetAttr("adjoint_a", &adjoint_a_));
    OP_REQUIRES_OK(context, context->GetAttr("adjoint_b", &adjoint_b_));
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& a_indices = context->input(0);
    const Tensor& a_values = context->input(1);
    const Tensor& a_shape = context->input(2);
    const Tensor& b = context->input(3);
    constexpr std::string_view op = "SparseTensorDenseMatMul";
    OP_REQUIRES(context, a_indices.dims() == 2 && a_indices.dim_size(1) == 2,
                errors::InvalidArgument(op,
                                        ": a_indices must be a [nnz, 2] matrix but has "
                                        "shape ",
                                        a_indices.shape()));
    OP_REQUIRES(context, a_values.dims() == 1 && a_values.dim_size(0) == a_indices.dim_size(0),
                errors::InvalidArgument(op, ": a_values shape ", a_values.shape(),
                                        " must hold one value per row of a_indices shape ",
                                        a_indices.shape()));
    OP_REQUIRES(context, a_shape.dims() == 1 && a_shape.dim_size(0) == 2,
                errors::InvalidArgument(op, ": a_shape must have 2 elements but has shape ",
                                        a_shape.shape()));
    OP_REQUIRES(context, b.dims() == 2,
                errors::InvalidArgument(op, ": b must be a matrix but has shape ", b.shape(), " (",
                                        b.dtype(), ")"));
    const std::vector<int64_t> dims = IndexValues(a_shape);
    OP_REQUIRES(
        context, dims[0] >= 0 && dims[1] >= 0,
        errors::InvalidArgument(op, ": a_shape ", IndexString(dims), " has a negative dim"));
    const int64_t rows = adjoint_a_ ? dims[1] : dims[0];
    const int64_t inner = adjoint_a_ ? dims[0] : dims[1];
    const int64_t b_inner = b.dim_size(adjoint_b_ ? 1 : 0);
    const int64_t cols = b.dim_size(adjoint_b_ ? 0 : 1);
    OP_REQUIRES(context, inner == b_inner,
                errors::InvalidArgument(op, ": cannot multiply A of shape ", IndexString(dims),
                                        (adjoint_a_ ? " (adjoint)" : ""), " by b of shape ",
                                        b.shape(), (adjoint_b_ ? " (adjoint)" : ""),
                                        ": inner dims ", inner, " and ", b_inner, " differ"));
    StatusOr<TensorShape> shape = CheckedShape(std::vector<int64_t>{rows, cols}, op);
    OP_REQUIRES_OK(context, shape.status());
    const std::vector<int64_t> idx = IndexValues(a_indices);
    const int64_t nnz = a_indices.dim_size(0);
    for (int64_t i = 0; i < nnz; ++i) {
      OP_REQUIRES(
          context,
          idx[2 * i] >= 0 && idx[2 * i] < dims[0] && idx[2 * i + 1] >= 0 &&
              idx[2 * i + 1] < dims[1],
          errors::InvalidArgument(op, ": a_indices[", i, "] = [", idx[2 * i], ", ", idx[2 * i + 1],
                                  "] is out of bounds for a_shape ", IndexString(dims)));
    }
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, *shape, &out));
    T* dst = out->data<T>();
    std::fill_n(dst, out->NumElements(), T(0));
    const T* values = a_values.data<T>();
    const T* bd = b.data<T>();
    const int64_t b_cols = b.dim_size(1);
    for (int64_t i = 0; i < nnz; ++i) {
      int64_t r = idx[2 * i], k = idx[2 * i + 1];
      T v = values[i];
      if (adjoint_a_) {
        std::swap(r, k);
        v = Conj(v);
      }
      T* row = dst + r * cols;
      if (adjoint_b_) {
        for (int64_t c = 0; c < cols; ++c) row[c] += v * Conj(bd[c * b_cols + k]);
      } else {
        const T* b_row = bd + k * b_cols;
        for (int64_t c = 0; c < cols; ++c) row[c] += v * b_row[c];
      }
    }
  }

 private:
  bool adjoint_a_ = false;
  bool adjoint_b_ = false;
};

template <typename T>
class SparseTensorDenseAddOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& a_indices = context->input(0);
    const Tensor& a_values = context->input(1);
    const Tensor& a_shape = context->input(2);
    const Tensor& b = context->input(3);
    constexpr std::string_view op = "SparseTensorDenseAdd";
    OP_REQUIRES(
        context,
        a_indices.dims() == 2 && a_shape.dims() == 1 &&
            a_indices.dim_size(1) == a_shape.dim_size(0),
        errors::InvalidArgument(op, ": a_indices shape ", a_indices.shape(), " and a_shape shape ",
                                a_shape.shape(), " must be a matrix and a vector of its width"));
    OP_REQUIRES(context, a_values.dims() == 1 && a_values.dim_size(0) == a_indices.dim_size(0),
                errors::InvalidArgument(op, ": a_values shape ", a_values.shape(),
                                        " must hold one value per row of a_indices shape ",
                                        a_indices.shape()));
    const std::vector<int64_t> dims = IndexValues(a_shape);
    const std::vector<int64_t> b_dims(b.shape().dim_sizes().begin(), b.shape().dim_sizes().end());
    OP_REQUIRES(context, dims == b_dims,
                errors::InvalidArgument(op, ": a_shape ", IndexString(dims), " and b shape ",
                                        b.shape(), " (", b.dtype(), ") must be equal"));
    const std::vector<int64_t> idx = IndexValues(a_indices);
    const int64_t nnz = a_indices.dim_size(0);
    const size_t rank = dims.size();
    for (int64_t i = 0; i < nnz; ++i) {
      std::span<const int64_t> index(idx.data() + i * rank, rank);
      for (size_t d = 0; d < rank; ++d) {
        OP_REQUIRES(context, index[d] >= 0 && index[d] < dims[d],
                    errors::InvalidArgument(op, ": a_indices[", i, "] = ", IndexString(index),
                                            " is out of bounds for a_shape ", IndexString(dims)));
      }
    }
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, b.shape(), &out));
    T* dst = out->data<T>();
    std::copy_n(b.data<T>(), b.NumElements(), dst);
    const T* values = a_values.data<T>();
    for (int64_t i = 0; i < nnz; ++i) {
      dst[Offset({idx.data() + i * rank, rank}, dims)] += values[i];
    }
  }
};

enum class Cwise { kMul, kDiv, kAdd };

template <typename T, Cwise kind>
class SparseDenseCwiseOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const char* op = kind == Cwise::kMul   ? "SparseDenseCwiseMul"
                     : kind == Cwise::kDiv ? "SparseDenseCwiseDiv"
                                           : "SparseDenseCwiseAdd";
    const Tensor& dense = context->input(3);
    StatusOr<SparseParts> sparse =
        ReadSparse(op, context->input(0), context->input(1), context->input(2));
    OP_REQUIRES_OK(context, sparse.status());
    // dense broadcasts to the sparse shape (aligned at the end); only that
    // direction, as in TensorFlow.
    const int rank = sparse->rank;
    const int dense_rank = dense.dims();
    bool fits = dense_rank <= rank;
    for (int d = 0; fits && d < dense_rank; ++d) {
      const int64_t dim = dense.dim_size(dense_rank - 1 - d);
      fits = dim == 1 || dim == sparse->dims[rank - 1 - d];
    }
    OP_REQUIRES(context, fits,
                errors::InvalidArgument(op, ": dense shape ", dense.shape(), " (", dense.dtype(),
                                        ") does not broadcast to the sparse shape ",
                                        IndexString(sparse->dims)));
    std::vector<int64_t> strides(rank, 0);
    int64_t stride = 1;
    for (int d = 0; d < dense_rank; ++d) {
      const int64_t dim = dense.dim_size(dense_rank - 1 - d);
      if (dim != 1) strides[rank - 1 - d] = stride;
      stride *= dim;
    }
    const T* values = context->input(1).data<T>();
    const T* dense_data = dense.data<T>();
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape({sparse->num}), &out));
    T* dst = out->data<T>();
    for (int64_t i = 0; i < sparse->num; ++i) {
      std::span<const int64_t> index = sparse->Index(i);
      int64_t offset = 0;
      for (int d = 0; d < rank; ++d) offset += index[d] * strides[d];
      const T v = dense_data[offset];
      if constexpr (kind == Cwise::kMul) {
        dst[i] = values[i] * v;
      } else if constexpr (kind == Cwise::kAdd) {
        dst[i] = values[i] + v;
      } else {
        if constexpr (std::is_integral_v<T>) {
          OP_REQUIRES(context, v != T(0),
                      errors::InvalidArgument(op, ": integer division by zero at indices[", i,
                                              "] = ", IndexString(index)));
          if constexpr (std::is_signed_v<T>) {
            OP_REQUIRES(context, !(v == T(-1) && values[i] == std::numeric_limits<T>::min()),
                        errors::InvalidArgument(op, ": integer division overflows at indices[", i,
                                                "] = ", IndexString(index)));
          }
        }
        dst[i] = values[i] / v;
      }
    }
  }
};

}  // namespace

void RegisterSparseDenseKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("SparseToDense"), MakeKernel<SparseToDenseOp>);
  ForEachSparseNumberType([&]<typename T>() {
    registry->Register(KernelBuilder("SparseTensorDenseMatMul").TypeConstraint<T>("T"),
                       MakeKernel<SparseTensorDenseMatMulOp<T>>);
    registry->Register(KernelBuilder("SparseTensorDenseAdd").TypeConstraint<T>("T"),
                       MakeKernel<SparseTensorDenseAddOp<T>>);
    registry->Register(KernelBuilder("SparseDenseCwiseMul").TypeConstraint<T>("T"),
                       MakeKernel<SparseDenseCwiseOp<T, Cwise::kMul>>);
    registry->Register(KernelBuilder("SparseDenseCwiseDiv").TypeConstraint<T>("T"),
                       MakeKernel<SparseDenseCwiseOp<T, Cwise::kDiv>>);
    registry->Register(KernelBuilder("SparseDenseCwiseAdd").TypeConstraint<T>("T"),
                       MakeKernel<SparseDenseCwiseOp<T, Cwise::kAdd>>);
  });
}

}  // namespace weir
