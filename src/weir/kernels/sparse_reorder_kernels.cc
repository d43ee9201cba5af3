// Sparse kernels that move entries without computing on them:
// SparseReorder, SparseReshape, SparseFillEmptyRows (+Grad), SparseConcat,
// SparseSlice (+Grad). Values of any dtype move by element size
// (array_copy.h); index arithmetic goes through checked helpers.
#include <algorithm>

#include "weir/base/checked_math.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/array_copy.h"
#include "weir/kernels/shape_util.h"
#include "weir/kernels/sparse_util.h"

namespace weir {
namespace {

// out[i] = in[order[i]] for a values vector of any dtype.
void GatherValues(const Tensor& in, const std::vector<int64_t>& order, Tensor* out) {
  DispatchByElementSize(in.dtype(), [&]<typename T>() {
    const T* src = ElementsAs<T>(in);
    T* dst = ElementsAs<T>(*out);
    for (size_t i = 0; i < order.size(); ++i) dst[i] = src[order[i]];
  });
}

Status AllocateIndices(OpKernelContext* context, int output, int64_t num, int rank,
                       int64_t** data) {
  Tensor* out;
  WEIR_RETURN_IF_ERROR(context->allocate_output(output, TensorShape({num, rank}), &out));
  *data = out->data<int64_t>();
  return Status::OK();
}

Status OutputVector(OpKernelContext* context, int output, const std::vector<int64_t>& v) {
  Tensor* out;
  WEIR_RETURN_IF_ERROR(
      context->allocate_output(output, TensorShape({static_cast<int64_t>(v.size())}), &out));
  std::copy(v.begin(), v.end(), out->data<int64_t>());
  return Status::OK();
}

class SparseReorderOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& values = context->input(1);
    StatusOr<SparseParts> sparse =
        ReadSparse("SparseReorder", context->input(0), values, context->input(2));
    OP_REQUIRES_OK(context, sparse.status());
    const std::vector<int64_t> order = CanonicalOrder(*sparse);
    int64_t* indices;
    OP_REQUIRES_OK(context, AllocateIndices(context, 0, sparse->num, sparse->rank, &indices));
    for (int64_t i = 0; i < sparse->num; ++i) {
      std::span<const int64_t> index = sparse->Index(order[i]);
      std::copy(index.begin(), index.end(), indices + i * sparse->rank);
    }
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(1, values.shape(), &out));
    GatherValues(values, order, out);
  }
};

class SparseReshapeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    constexpr std::string_view op = "SparseReshape";
    const Tensor& indices = context->input(0);
    const Tensor& input_shape = context->input(1);
    const Tensor& new_shape = context->input(2);
    OP_REQUIRES(context, new_shape.dims() == 1,
                errors::InvalidArgument(op, ": new_shape must be a vector but has shape ",
                                        new_shape.shape()));
    // Values are not an input: check indices against a stand-in of N rows.
    Tensor rows(DT_INT8, TensorShape({indices.dims() == 2 ? indices.dim_size(0) : 0}));
    StatusOr<SparseParts> sparse = ReadSparse(op, indices, rows, input_shape);
    OP_REQUIRES_OK(context, sparse.status());
    StatusOr<int64_t> total = DenseElementCount(op, sparse->dims);
    OP_REQUIRES_OK(context, total.status());
    std::vector<int64_t> dims = IndexValues(new_shape);
    int unknown = -1;
    int64_t known = 1;
    for (int d = 0; d < static_cast<int>(dims.size()); ++d) {
      if (dims[d] == -1) {
        OP_REQUIRES(context, unknown < 0,
                    errors::InvalidArgument(op, ": new_shape ", IndexString(dims),
                                            " has more than one -1"));
        unknown = d;
        continue;
      }
      OP_REQUIRES(
          context, dims[d] >= 0,
          errors::InvalidArgument(op, ": new_shape ", IndexString(dims), " has a negative dim"));
      OP_REQUIRES_OK(context, CheckedMultiply(known, dims[d], &known, "SparseReshape new_shape"));
    }
    if (unknown >= 0) {
      OP_REQUIRES(
          context, known > 0 && *total % known == 0,
          errors::InvalidArgument(op, ": cannot reshape dense shape ", IndexString(sparse->dims),
                                  " (", *total, " elements) to ", IndexString(dims)));
      dims[unknown] = *total / known;
      known = *total;
    }
    OP_REQUIRES(context, known == *total,
                errors::InvalidArgument(op, ": cannot reshape dense shape ",
                                        IndexString(sparse->dims), " (", *total, " elements) to ",
                                        IndexString(dims), " (", known, " elements)"));
    const int new_rank = static_cast<int>(dims.size());
    int64_t* out;
    OP_REQUIRES_OK(context, AllocateIndices(context, 0, sparse->num, new_rank, &out));
    for (int64_t i = 0; i < sparse->num; ++i) {
      std::span<const int64_t> index = sparse->Index(i);
      int64_t offset = 0;
      for (int d = 0; d < sparse->rank; ++d) offset = offset * sparse->dims[d] + index[d];
      for (int d = new_rank - 1; d >= 0; --d) {
        out[i * new_rank + d] = dims[d] == 0 ? 0 : offset % dims[d];
        offset = dims[d] == 0 ? 0 : offset / dims[d];
      }
    }
    OP_REQUIRES_OK(context, OutputVector(context, 1, dims));
  }
};

class SparseFillEmptyRowsOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    constexpr std::string_view op = "SparseFillEmptyRows";
    const Tensor& values = context->input(1);
    const Tensor& default_value = context->input(3);
    OP_REQUIRES(context, default_value.dims() == 0,
                errors::InvalidArgument(op, ": default_value must be a scalar but has shape ",
                                        default_value.shape()));
    StatusOr<SparseParts> sparse =
        ReadSparse(op, context->input(0), values, context->input(2), /*check_bounds=*/false);
    OP_REQUIRES_OK(context, sparse.status());
    OP_REQUIRES(context, sparse->rank >= 1,
                errors::InvalidArgument(op, ": the SparseTensor must have rank >= 1"));
    const int64_t rows = sparse->dims[0];
    const int rank = sparse->rank;
    // Per-row arrays come from the allocator (a hostile dense_shape[0] is
    // then a ResourceExhausted status, not a bad_alloc).
    Tensor* indicator;
    OP_REQUIRES_OK(context, context->allocate_output(2, TensorShape({rows}), &indicator));
    Tensor count_tensor;
    OP_REQUIRES_OK(context, context->allocate_temp(DT_INT64, TensorShape({rows}), &count_tensor));
    int64_t* count = count_tensor.data<int64_t>();
    std::fill_n(count, rows, 0);
    for (int64_t i = 0; i < sparse->num; ++i) {
      const int64_t row = sparse->Index(i)[0];
      OP_REQUIRES(context, row >= 0 && row < rows,
                  errors::InvalidArgument(
                      op, ": indices[", i, "] = ", IndexString(sparse->Index(i)),
                      " has a row out of bounds for dense_shape ", IndexString(sparse->dims)));
      ++count[row];
    }
    // count[r] becomes row r's first output position (an empty row holds
    // its one default entry there).
    int64_t total = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t c = count[r];
      indicator->data<bool>()[r] = c == 0;
      count[r] = total;
      total += std::max<int64_t>(c, 1);  // <= num + rows: no overflow
    }
    int64_t* indices;
    OP_REQUIRES_OK(context, AllocateIndices(context, 0, total, rank, &indices));
    Tensor* out_values;
    OP_REQUIRES_OK(context, context->allocate_output(1, TensorShape({total}), &out_values));
    Tensor source_tensor;  // the input entry of each output, -1 for a default
    OP_REQUIRES_OK(context, context->allocate_temp(DT_INT64, TensorShape({total}), &source_tensor));
    int64_t* source = source_tensor.data<int64_t>();
    std::fill_n(source, total, -1);
    std::vector<int64_t> reverse(sparse->num);
    for (int64_t i = 0; i < sparse->num; ++i) {
      reverse[i] = count[sparse->Index(i)[0]]++;
      source[reverse[i]] = i;
    }
    for (int64_t r = 0; r < rows; ++r) {
      if (!indicator->data<bool>()[r]) continue;
      int64_t* index = indices + count[r] * rank;
      std::fill_n(index, rank, 0);
      index[0] = r;
    }
    for (int64_t i = 0; i < sparse->num; ++i) {
      std::span<const int64_t> index = sparse->Index(i);
      std::copy(index.begin(), index.end(), indices + reverse[i] * rank);
    }
    DispatchByElementSize(values.dtype(), [&]<typename T>() {
      const T* src = ElementsAs<T>(values);
      const T fill = ElementsAs<T>(default_value)[0];
      T* dst = ElementsAs<T>(*out_values);
      for (int64_t k = 0; k < total; ++k) dst[k] = source[k] < 0 ? fill : src[source[k]];
    });
    OP_REQUIRES_OK(context, OutputVector(context, 3, reverse));
  }
};

template <typename T>
class SparseFillEmptyRowsGradOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& reverse = context->input(0);
    const Tensor& grad = context->input(1);
    OP_REQUIRES(context, reverse.dims() == 1 && grad.dims() == 1,
                errors::InvalidArgument("SparseFillEmptyRowsGrad: reverse_index_map shape ",
                                        reverse.shape(), " and grad_values shape ", grad.shape(),
                                        " must be vectors"));
    const int64_t n = reverse.dim_size(0);
    const int64_t m = grad.dim_size(0);
    const int64_t* map = reverse.data<int64_t>();
    std::vector<bool> used(m, false);
    for (int64_t i = 0; i < n; ++i) {
      OP_REQUIRES(context, map[i] >= 0 && map[i] < m,
                  errors::InvalidArgument("SparseFillEmptyRowsGrad: reverse_index_map[", i,
                                          "] = ", map[i], " is out of range [0, ", m, ")"));
      used[map[i]] = true;
    }
    Tensor* d_values;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape({n}), &d_values));
    Tensor* d_default;
    OP_REQUIRES_OK(context, context->allocate_output(1, TensorShape({}), &d_default));
    const T* g = grad.data<T>();
    for (int64_t i = 0; i < n; ++i) d_values->data<T>()[i] = g[map[i]];
    T sum(0);
    for (int64_t k = 0; k < m; ++k) {
      if (!used[k]) sum += g[k];
    }
    d_default->data<T>()[0] = sum;
  }
};

class SparseConcatOp : public OpKernel {
 public:
  explicit SparseConcatOp(OpKernelConstruction* context) : OpKernel(context) {
    OP_REQUIRES_OK(context, context->GetAttr("concat_dim", &concat_dim_));
  }

  void Compute(OpKernelContext* context) override {
    constexpr std::string_view op = "SparseConcat";
    const int n = context->num_inputs() / 3;
    std::vector<SparseParts> parts;
    for (int k = 0; k < n; ++k) {
      StatusOr<SparseParts> sparse =
          ReadSparse(op, context->input(k), context->input(n + k), context->input(2 * n + k));
      OP_REQUIRES_OK(context, sparse.status());
      parts.push_back(*std::move(sparse));
    }
    const int rank = parts[0].rank;
    OP_REQUIRES(context, concat_dim_ >= -rank && concat_dim_ < rank,
                errors::InvalidArgument(op, ": concat_dim ", concat_dim_,
                                        " is out of range for rank ", rank));
    const int axis = static_cast<int>(concat_dim_ < 0 ? concat_dim_ + rank : concat_dim_);
    std::vector<int64_t> dims = parts[0].dims;
    std::vector<int64_t> offsets = {0};
    for (int k = 1; k < n; ++k) {
      bool same = parts[k].rank == rank;
      for (int d = 0; same && d < rank; ++d) same = d == axis || parts[k].dims[d] == dims[d];
      OP_REQUIRES(
          context, same,
          errors::InvalidArgument(op, ": input ", k, " has dense shape ",
                                  IndexString(parts[k].dims), " which does not match input 0's ",
                                  IndexString(parts[0].dims), " outside concat_dim ", axis));
      offsets.push_back(dims[axis]);
      OP_REQUIRES_OK(context, CheckedAdd(dims[axis], parts[k].dims[axis], &dims[axis],
                                         "SparseConcat output dim"));
    }
    int64_t total = 0;
    for (const SparseParts& p : parts) total += p.num;
    std::vector<int64_t> all(total * rank);
    std::vector<std::pair<int, int64_t>> source;  // (input, entry)
    int64_t row = 0;
    for (int k = 0; k < n; ++k) {
      for (int64_t i = 0; i < parts[k].num; ++i, ++row) {
        std::span<const int64_t> index = parts[k].Index(i);
        std::copy(index.begin(), index.end(), all.begin() + row * rank);
        all[row * rank + axis] += offsets[k];
        source.emplace_back(k, i);
      }
    }
    SparseParts joined;
    joined.indices = all.data();
    joined.num = total;
    joined.rank = rank;
    const std::vector<int64_t> order = CanonicalOrder(joined);
    int64_t* indices;
    OP_REQUIRES_OK(context, AllocateIndices(context, 0, total, rank, &indices));
    for (int64_t i = 0; i < total; ++i) {
      std::copy_n(all.begin() + order[i] * rank, rank, indices + i * rank);
    }
    Tensor* values;
    OP_REQUIRES_OK(context, context->allocate_output(1, TensorShape({total}), &values));
    DispatchByElementSize(values->dtype(), [&]<typename T>() {
      T* dst = ElementsAs<T>(*values);
      for (int64_t i = 0; i < total; ++i) {
        const auto [k, e] = source[order[i]];
        dst[i] = ElementsAs<T>(context->input(n + k))[e];
      }
    });
    OP_REQUIRES_OK(context, OutputVector(context, 2, dims));
  }

 private:
  int64_t concat_dim_ = 0;
};

class SparseSliceOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    constexpr std::string_view op = "SparseSlice";
    const Tensor& values = context->input(1);
    const Tensor& start_t = context->input(3);
    const Tensor& size_t_ = context->input(4);
    StatusOr<SparseParts> sparse = ReadSparse(op, context->input(0), values, context->input(2));
    OP_REQUIRES_OK(context, sparse.status());
    const int rank = sparse->rank;
    OP_REQUIRES(context,
                start_t.dims() == 1 && start_t.dim_size(0) == rank && size_t_.dims() == 1 &&
                    size_t_.dim_size(0) == rank,
                errors::InvalidArgument(op, ": start shape ", start_t.shape(), " and size shape ",
                                        size_t_.shape(), " must be vectors of the rank ", rank));
    const std::vector<int64_t> start = IndexValues(start_t);
    const std::vector<int64_t> size = IndexValues(size_t_);
    std::vector<int64_t> out_dims(rank), limit(rank);
    for (int d = 0; d < rank; ++d) {
      OP_REQUIRES(context, start[d] >= 0 && size[d] >= 0,
                  errors::InvalidArgument(op, ": start ", IndexString(start), " and size ",
                                          IndexString(size), " must not be negative"));
      // The limit clipped to the shape; no overflow since both are >= 0.
      limit[d] = start[d] > sparse->dims[d] - size[d] ? sparse->dims[d] : start[d] + size[d];
      out_dims[d] = std::max<int64_t>(limit[d] - start[d], 0);
    }
    std::vector<int64_t> kept;
    for (int64_t i = 0; i < sparse->num; ++i) {
      std::span<const int64_t> index = sparse->Index(i);
      bool inside = true;
      for (int d = 0; inside && d < rank; ++d) inside = index[d] >= start[d] && index[d] < limit[d];
      if (inside) kept.push_back(i);
    }
    const int64_t num = static_cast<int64_t>(kept.size());
    int64_t* indices;
    OP_REQUIRES_OK(context, AllocateIndices(context, 0, num, rank, &indices));
    for (int64_t k = 0; k < num; ++k) {
      std::span<const int64_t> index = sparse->Index(kept[k]);
      for (int d = 0; d < rank; ++d) indices[k * rank + d] = index[d] - start[d];
    }
    Tensor* out_values;
    OP_REQUIRES_OK(context, context->allocate_output(1, TensorShape({num}), &out_values));
    GatherValues(values, kept, out_values);
    OP_REQUIRES_OK(context, OutputVector(context, 2, out_dims));
  }
};

template <typename T>
class SparseSliceGradOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    constexpr std::string_view op = "SparseSliceGrad";
    const Tensor& grad = context->input(0);
    const Tensor& in = context->input(1);
    const Tensor& start_t = context->input(2);
    const Tensor& out = context->input(3);
    OP_REQUIRES(context,
                grad.dims() == 1 && in.dims() == 2 && out.dims() == 2 && start_t.dims() == 1 &&
                    out.dim_size(0) == grad.dim_size(0) && in.dim_size(1) == out.dim_size(1) &&
                    start_t.dim_size(0) == in.dim_size(1),
                errors::InvalidArgument(
                    op, ": backprop_val_grad shape ", grad.shape(), ", input_indices shape ",
                    in.shape(), ", input_start shape ", start_t.shape(),
                    " and output_indices shape ", out.shape(), " do not fit together"));
    const int64_t rank = in.dim_size(1);
    const int64_t* a = in.data<int64_t>();
    const int64_t* b = out.data<int64_t>();
    const int64_t* start = start_t.data<int64_t>();
    Tensor* result;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape({in.dim_size(0)}), &result));
    T* dst = result->data<T>();
    const T* g = grad.data<T>();
    int64_t k = 0;
    for (int64_t i = 0; i < in.dim_size(0); ++i) {
      bool match = k < out.dim_size(0);
      for (int64_t d = 0; match && d < rank; ++d) {
        // Wrapping subtraction: hostile values must not overflow.
        match = static_cast<uint64_t>(a[i * rank + d]) - static_cast<uint64_t>(start[d]) ==
                static_cast<uint64_t>(b[k * rank + d]);
      }
      dst[i] = match ? g[k++] : T(0);
    }
    OP_REQUIRES(context, k == out.dim_size(0),
                errors::InvalidArgument(op,
                                        ": output_indices are not the kept input_indices "
                                        "shifted by input_start (matched ",
                                        k, " of ", out.dim_size(0), ")"));
  }
};

}  // namespace

void RegisterSparseReorderKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("SparseReorder"), MakeKernel<SparseReorderOp>);
  registry->Register(KernelBuilder("SparseReshape"), MakeKernel<SparseReshapeOp>);
  registry->Register(KernelBuilder("SparseFillEmptyRows"), MakeKernel<SparseFillEmptyRowsOp>);
  registry->Register(KernelBuilder("SparseConcat"), MakeKernel<SparseConcatOp>);
  registry->Register(KernelBuilder("SparseSlice"), MakeKernel<SparseSliceOp>);
  ForEachSparseNumberType([&]<typename T>() {
    registry->Register(KernelBuilder("SparseFillEmptyRowsGrad").TypeConstraint<T>("T"),
                       MakeKernel<SparseFillEmptyRowsGradOp<T>>);
    registry->Register(KernelBuilder("SparseSliceGrad").TypeConstraint<T>("T"),
                       MakeKernel<SparseSliceGradOp<T>>);
  });
}

}  // namespace weir
