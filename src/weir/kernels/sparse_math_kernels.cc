// Sparse kernels that compute on values: SparseAdd (+Grad), SparseReduceSum
// (dense and sparse results), SparseSoftmax and the sparse segment
// reductions SparseSegmentSum/Mean/SqrtN (with and without num_segments)
// and their gradients. Indices and segment ids are checked before any
// element moves (InvalidArgument naming the op and the offending entry).
#include <algorithm>
#include <cmath>
#include <complex>
#include <map>
#include <type_traits>

#include "weir/base/checked_math.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/shape_util.h"
#include "weir/kernels/sparse_util.h"

namespace weir {
namespace {

template <typename T>
double Magnitude(T v) {
  if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) {
    return static_cast<double>(std::abs(v));
  } else {
    return std::abs(static_cast<double>(v));
  }
}

double ScalarAsDouble(const Tensor& t) {
  switch (t.dtype()) {
    case DT_FLOAT: return t.data<float>()[0];
    case DT_DOUBLE: return t.data<double>()[0];
    case DT_INT32: return t.data<int32_t>()[0];
    case DT_INT64: return static_cast<double>(t.data<int64_t>()[0]);
    case DT_HALF: return static_cast<double>(t.data<Eigen::half>()[0]);
    default: return 0.0;
  }
}

template <typename T>
class SparseAddOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    constexpr std::string_view op = "SparseAdd";
    StatusOr<SparseParts> a =
        ReadSparse("SparseAdd (a)", context->input(0), context->input(1), context->input(2));
    OP_REQUIRES_OK(context, a.status());
    StatusOr<SparseParts> b =
        ReadSparse("SparseAdd (b)", context->input(3), context->input(4), context->input(5));
    OP_REQUIRES_OK(context, b.status());
    OP_REQUIRES(
        context, a->dims == b->dims,
        errors::InvalidArgument(op, ": a dense_shape ", IndexString(a->dims), " and b dense_shape ",
                                IndexString(b->dims), " must be equal"));
    const Tensor& thresh_t = context->input(6);
    OP_REQUIRES(
        context, thresh_t.dims() == 0,
        errors::InvalidArgument(op, ": thresh must be a scalar but has shape ", thresh_t.shape()));
    const double thresh = ScalarAsDouble(thresh_t);
    const T* av = context->input(1).data<T>();
    const T* bv = context->input(4).data<T>();
    std::vector<std::pair<bool, int64_t>> from;  // (from a, entry)
    std::vector<T> values;
    int64_t i = 0, j = 0;
    while (i < a->num && j < b->num) {
      const int cmp = CompareIndex(a->Index(i), b->Index(j));
      if (cmp < 0) {
        from.emplace_back(true, i);
        values.push_back(av[i++]);
      } else if (cmp > 0) {
        from.emplace_back(false, j);
        values.push_back(bv[j++]);
      } else {
        const T s = av[i] + bv[j];
        if (Magnitude(s) >= thresh) {
          from.emplace_back(true, i);
          values.push_back(s);
        }
        ++i;
        ++j;
      }
    }
    for (; i < a->num; ++i) {
      from.emplace_back(true, i);
      values.push_back(av[i]);
    }
    for (; j < b->num; ++j) {
      from.emplace_back(false, j);
      values.push_back(bv[j]);
    }
    const int64_t num = static_cast<int64_t>(values.size());
    const int rank = a->rank;
    Tensor* indices;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape({num, rank}), &indices));
    for (int64_t k = 0; k < num; ++k) {
      std::span<const int64_t> index =
          from[k].first ? a->Index(from[k].second) : b->Index(from[k].second);
      std::copy(index.begin(), index.end(), indices->data<int64_t>() + k * rank);
    }
    Tensor* out_values;
    OP_REQUIRES_OK(context, context->allocate_output(1, TensorShape({num}), &out_values));
    std::copy(values.begin(), values.end(), out_values->data<T>());
    context->set_output(2, context->input(2));
  }
};

template <typename T>
class SparseAddGradOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& grad = context->input(0);
    const Tensor* parts[3] = {&context->input(1), &context->input(2), &context->input(3)};
    for (const Tensor* t : parts) {
      OP_REQUIRES(
          context,
          t->dtype() == DT_INT64 && t->dims() == 2 && t->dim_size(1) == parts[2]->dim_size(1),
          errors::InvalidArgument("SparseAddGrad: a_indices ", parts[0]->shape(), ", b_indices ",
                                  parts[1]->shape(), " and sum_indices ", parts[2]->shape(),
                                  " must be int64 matrices of one width"));
    }
    OP_REQUIRES(context, grad.dims() == 1 && grad.dim_size(0) == parts[2]->dim_size(0),
                errors::InvalidArgument("SparseAddGrad: backprop_val_grad shape ", grad.shape(),
                                        " must hold one value per row of sum_indices shape ",
                                        parts[2]->shape()));
    const int rank = static_cast<int>(parts[2]->dim_size(1));
    auto row = [&](int which, int64_t r) {
      return std::span<const int64_t>(parts[which]->data<int64_t>() + r * rank,
                                      static_cast<size_t>(rank));
    };
    const int64_t na = parts[0]->dim_size(0), nb = parts[1]->dim_size(0);
    const int64_t ns = parts[2]->dim_size(0);
    Tensor *ga, *gb;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape({na}), &ga));
    OP_REQUIRES_OK(context, context->allocate_output(1, TensorShape({nb}), &gb));
    const T* g = grad.data<T>();
    // Walk a, b and the sum together; an entry of a (or b) gets the sum's
    // gradient where the sum kept its index, 0 where the sum dropped it.
    int64_t i = 0, j = 0, k = 0;
    auto take = [&](std::span<const int64_t> index) {
      if (k < ns && CompareIndex(index, row(2, k)) == 0) return g[k++];
      return T(0);
    };
    while (i < na || j < nb) {
      int cmp = i >= na ? 1 : j >= nb ? -1 : CompareIndex(row(0, i), row(1, j));
      if (cmp < 0) {
        ga->data<T>()[i] = take(row(0, i));
        ++i;
      } else if (cmp > 0) {
        gb->data<T>()[j] = take(row(1, j));
        ++j;
      } else {
        const T v = take(row(0, i));
        ga->data<T>()[i++] = v;
        gb->data<T>()[j++] = v;
      }
    }
  }
};

// The output dims of reducing `dims` over `axes` (negative from the end),
// and which dims are reduced.
Status ReducedDims(std::string_view op, const std::vector<int64_t>& dims, const Tensor& axes_t,
                   bool keep_dims, std::vector<bool>* reduced, std::vector<int64_t>* out) {
  const int rank = static_cast<int>(dims.size());
  reduced->assign(rank, axes_t.NumElements() == 0);
  for (int64_t axis : IndexValues(axes_t)) {
    if (axis < -rank || axis >= rank) {
      return errors::InvalidArgument(op, ": reduction axis ", axis, " is out of range for rank ",
                                     rank);
    }
    (*reduced)[axis < 0 ? axis + rank : axis] = true;
  }
  out->clear();
  for (int d = 0; d < rank; ++d) {
    if (!(*reduced)[d]) {
      out->push_back(dims[d]);
    } else if (keep_dims) {
      out->push_back(1);
    }
  }
  return Status::OK();
}

template <typename T, bool kSparseOutput>
class SparseReduceSumOp : public OpKernel {
 public:
  explicit SparseReduceSumOp(OpKernelConstruction* context) : OpKernel(context) {
    OP_REQUIRES_OK(context, context->GetAttr("keep_dims", &keep_dims_));
  }

  void Compute(OpKernelContext* context) override {
    const std::string_view op = kSparseOutput ? "SparseReduceSumSparse" : "SparseReduceSum";
    StatusOr<SparseParts> sparse =
        ReadSparse(op, context->input(0), context->input(1), context->input(2));
    OP_REQUIRES_OK(context, sparse.status());
    std::vector<bool> reduced;
    std::vector<int64_t> dims;
    OP_REQUIRES_OK(context,
                   ReducedDims(op, sparse->dims, context->input(3), keep_dims_, &reduced, &dims));
    StatusOr<TensorShape> shape = CheckedShape(dims, op);
    OP_REQUIRES_OK(context, shape.status());
    const T* values = context->input(1).data<T>();
    // The output index of each entry (kept dims, 0 for kept-as-1 dims).
    auto out_index = [&](int64_t i) {
      std::vector<int64_t> index;
      std::span<const int64_t> in = sparse->Index(i);
      for (int d = 0; d < sparse->rank; ++d) {
        if (!reduced[d]) {
          index.push_back(in[d]);
        } else if (keep_dims_) {
          index.push_back(0);
        }
      }
      return index;
    };
    if constexpr (!kSparseOutput) {
      Tensor* out;
      OP_REQUIRES_OK(context, context->allocate_output(0, *shape, &out));
      T* dst = out->data<T>();
      std::fill_n(dst, out->NumElements(), T(0));
      for (int64_t i = 0; i < sparse->num; ++i) {
        const std::vector<int64_t> index = out_index(i);
        int64_t offset = 0;
        for (size_t d = 0; d < dims.size(); ++d) offset = offset * dims[d] + index[d];
        dst[offset] += values[i];
      }
    } else {
      std::map<std::vector<int64_t>, T> sums;
      for (int64_t i = 0; i < sparse->num; ++i) {
        auto [it, inserted] = sums.emplace(out_index(i), values[i]);
        if (!inserted) it->second += values[i];
      }
      const int64_t num = static_cast<int64_t>(sums.size());
      const int64_t rank = static_cast<int64_t>(dims.size());
      Tensor *indices, *out_values, *out_shape;
      OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape({num, rank}), &indices));
      OP_REQUIRES_OK(context, context->allocate_output(1, TensorShape({num}), &out_values));
      OP_REQUIRES_OK(context, context->allocate_output(2, TensorShape({rank}), &out_shape));
      int64_t k = 0;
      for (const auto& [index, sum] : sums) {
        std::copy(index.begin(), index.end(), indices->data<int64_t>() + k * rank);
        out_values->data<T>()[k++] = sum;
      }
      std::copy(dims.begin(), dims.end(), out_shape->data<int64_t>());
    }
  }

 private:
  bool keep_dims_ = false;
};

template <typename T>
class SparseSoftmaxOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    constexpr std::string_view op = "SparseSoftmax";
    StatusOr<SparseParts> sparse =
        ReadSparse(op, context->input(0), context->input(1), context->input(2));
    OP_REQUIRES_OK(context, sparse.status());
    OP_REQUIRES(context, sparse->rank >= 2,
                errors::InvalidArgument(op, ": the SparseTensor must have rank >= 2 but has ",
                                        "dense_shape ", IndexString(sparse->dims)));
    const T* values = context->input(1).data<T>();
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape({sparse->num}), &out));
    T* dst = out->data<T>();
    const int prefix = sparse->rank - 1;
    // Runs of entries with the same outer index form one softmax (the input
    // is in canonical order, so each innermost row is one run).
    int64_t begin = 0;
    while (begin < sparse->num) {
      int64_t end = begin + 1;
      while (end < sparse->num && CompareIndex(sparse->Index(begin).first(prefix),
                                               sparse->Index(end).first(prefix)) == 0) {
        ++end;
      }
      double max = -INFINITY;
      for (int64_t i = begin; i < end; ++i) max = std::max(max, static_cast<double>(values[i]));
      double sum = 0;
      for (int64_t i = begin; i < end; ++i) sum += std::exp(static_cast<double>(values[i]) - max);
      for (int64_t i = begin; i < end; ++i) {
        dst[i] = static_cast<T>(std::exp(static_cast<double>(values[i]) - max) / sum);
      }
      begin = end;
    }
  }
};

enum class SegmentKind { kSum, kMean, kSqrtN };

double SegmentScale(SegmentKind kind, int64_t count) {
  if (count == 0) return 0;
  switch (kind) {
    case SegmentKind::kSum: return 1;
    case SegmentKind::kMean: return 1.0 / static_cast<double>(count);
    case SegmentKind::kSqrtN: return 1.0 / std::sqrt(static_cast<double>(count));
  }
  return 1;
}

const char* SegmentName(SegmentKind kind) {
  return kind == SegmentKind::kSum    ? "SparseSegmentSum"
         : kind == SegmentKind::kMean ? "SparseSegmentMean"
                                      : "SparseSegmentSqrtN";
}

template <typename T, SegmentKind kind, bool kWithNumSegments>
class SparseSegmentOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const std::string op = StrCat(SegmentName(kind), kWithNumSegments ? "WithNumSegments" : "");
    const Tensor& data = context->input(0);
    const Tensor& indices_t = context->input(1);
    const Tensor& ids_t = context->input(2);
    OP_REQUIRES(
        context, data.dims() >= 1,
        errors::InvalidArgument(op, ": data must have rank >= 1 but has shape ", data.shape()));
    OP_REQUIRES(
        context,
        indices_t.dims() == 1 && ids_t.dims() == 1 && indices_t.dim_size(0) == ids_t.dim_size(0),
        errors::InvalidArgument(op, ": indices shape ", indices_t.shape(),
                                " and segment_ids shape ", ids_t.shape(),
                                " must be vectors of one length"));
    const std::vector<int64_t> indices = IndexValues(indices_t);
    const std::vector<int64_t> ids = IndexValues(ids_t);
    const int64_t rows = data.dim_size(0);
    const int64_t n = static_cast<int64_t>(ids.size());
    int64_t segments = n == 0 ? 0 : ids.back() + 1;
    if constexpr (kWithNumSegments) {
      const Tensor& num_t = context->input(3);
      OP_REQUIRES(context, num_t.dims() == 0,
                  errors::InvalidArgument(op, ": num_segments must be a scalar but has shape ",
                                          num_t.shape()));
      segments = IndexValues(num_t)[0];
      OP_REQUIRES(
          context, segments >= 0,
          errors::InvalidArgument(op, ": num_segments = ", segments, " must not be negative"));
    }
    for (int64_t i = 1; i < n; ++i) {
      OP_REQUIRES(context, ids[i] >= ids[i - 1],
                  errors::InvalidArgument(op, ": segment_ids are not sorted: segment_ids[", i,
                                          "] = ", ids[i], " follows ", ids[i - 1]));
    }
    for (int64_t i = 0; i < n; ++i) {
      OP_REQUIRES(
          context, indices[i] >= 0 && indices[i] < rows,
          errors::InvalidArgument(op, ": indices[", i, "] = ", indices[i], " is out of range [0, ",
                                  rows, ") of data shape ", data.shape(), " (", data.dtype(), ")"));
      OP_REQUIRES(context, ids[i] >= 0 && ids[i] < segments,
                  errors::InvalidArgument(op, ": segment_ids[", i, "] = ", ids[i],
                                          " is out of range [0, ", segments, ")"));
    }
    std::vector<int64_t> dims(data.shape().dim_sizes().begin(), data.shape().dim_sizes().end());
    dims[0] = segments;
    StatusOr<TensorShape> shape = CheckedShape(dims, op);
    OP_REQUIRES_OK(context, shape.status());
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, *shape, &out));
    const int64_t inner = DimProduct(data.shape(), 1, data.dims());
    T* dst = out->data<T>();
    std::fill_n(dst, out->NumElements(), T(0));
    if (n == 0) return;
    const T* src = data.data<T>();
    // Accumulate in double for the floating types (half, bfloat16 lose
    // precision otherwise), in T for integers. `inner` is bounded: data
    // has rows >= 1 (an index is in range) of `inner` elements.
    using Acc = std::conditional_t<std::is_integral_v<T>, T, double>;
    std::vector<Acc> acc(inner);
    int64_t i = 0;
    while (i < n) {
      // The ids are sorted: a segment's rows are one run.
      const int64_t s = ids[i];
      const int64_t begin = i;
      std::fill(acc.begin(), acc.end(), Acc(0));
      for (; i < n && ids[i] == s; ++i) {
        const T* row = src + indices[i] * inner;
        for (int64_t c = 0; c < inner; ++c) acc[c] += static_cast<Acc>(row[c]);
      }
      const double scale = SegmentScale(kind, i - begin);
      for (int64_t c = 0; c < inner; ++c) {
        if constexpr (std::is_integral_v<T>) {
          dst[s * inner + c] = acc[c];
        } else {
          dst[s * inner + c] = static_cast<T>(acc[c] * scale);
        }
      }
    }
  }
};

// kV2: the output holds only the rows of the sorted unique indices, which
// are output 1 (TensorFlow's *GradV2, an IndexedSlices gradient).
template <typename T, SegmentKind kind, bool kV2 = false>
class SparseSegmentGradOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const std::string op = StrCat(SegmentName(kind), kV2 ? "GradV2" : "Grad");
    const Tensor& grad = context->input(0);
    const std::vector<int64_t> indices = IndexValues(context->input(1));
    const std::vector<int64_t> ids = IndexValues(context->input(2));
    const Tensor& dim0_t = context->input(3);
    OP_REQUIRES(context,
                grad.dims() >= 1 && context->input(1).dims() == 1 &&
                    context->input(2).dims() == 1 && indices.size() == ids.size() &&
                    dim0_t.dims() == 0,
                errors::InvalidArgument(op, ": grad shape ", grad.shape(), ", indices shape ",
                                        context->input(1).shape(), ", segment_ids shape ",
                                        context->input(2).shape(), " and output_dim0 shape ",
                                        dim0_t.shape(), " do not fit together"));
    const int64_t rows = dim0_t.data<int32_t>()[0];
    const int64_t segments = grad.dim_size(0);
    OP_REQUIRES(context, rows >= 0,
                errors::InvalidArgument(op, ": output_dim0 = ", rows, " must not be negative"));
    const int64_t n = static_cast<int64_t>(ids.size());
    for (int64_t i = 0; i < n; ++i) {
      OP_REQUIRES(context, indices[i] >= 0 && indices[i] < rows,
                  errors::InvalidArgument(op, ": indices[", i, "] = ", indices[i],
                                          " is out of range [0, ", rows, ")"));
      OP_REQUIRES(
          context, ids[i] >= 0 && ids[i] < segments,
          errors::InvalidArgument(op, ": segment_ids[", i, "] = ", ids[i], " is out of range [0, ",
                                  segments, ") of grad shape ", grad.shape()));
    }
    // The output row of each index: itself, or (V2) its place among the
    // sorted unique indices.
    std::vector<int64_t> unique, position(indices);
    if constexpr (kV2) {
      unique = indices;
      std::sort(unique.begin(), unique.end());
      unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
      for (int64_t& p : position) {
        p = std::lower_bound(unique.begin(), unique.end(), p) - unique.begin();
      }
    }
    std::vector<int64_t> dims(grad.shape().dim_sizes().begin(), grad.shape().dim_sizes().end());
    dims[0] = kV2 ? static_cast<int64_t>(unique.size()) : rows;
    StatusOr<TensorShape> shape = CheckedShape(dims, op);
    OP_REQUIRES_OK(context, shape.status());
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, *shape, &out));
    if constexpr (kV2) {
      Tensor* sorted;
      OP_REQUIRES_OK(context, context->allocate_output(1, TensorShape({dims[0]}), &sorted));
      for (int64_t k = 0; k < dims[0]; ++k) {
        if (sorted->dtype() == DT_INT32) {
          sorted->data<int32_t>()[k] = static_cast<int32_t>(unique[k]);
        } else {
          sorted->data<int64_t>()[k] = unique[k];
        }
      }
    }
    const int64_t inner = DimProduct(grad.shape(), 1, grad.dims());
    Tensor acc_tensor;
    OP_REQUIRES_OK(context, context->allocate_temp(DT_DOUBLE, out->shape(), &acc_tensor));
    std::span<double> acc = acc_tensor.flat<double>();
    std::fill(acc.begin(), acc.end(), 0.0);
    // Rows per segment, for the ids that occur (grad's dim 0 may be huge
    // with no elements).
    std::map<int64_t, int64_t> count;
    for (int64_t i = 0; i < n; ++i) ++count[ids[i]];
    const T* g = grad.data<T>();
    for (int64_t i = 0; i < n; ++i) {
      const double scale = SegmentScale(kind, count[ids[i]]);
      const T* src = g + ids[i] * inner;
      double* dst = acc.data() + position[i] * inner;
      for (int64_t c = 0; c < inner; ++c) dst[c] += static_cast<double>(src[c]) * scale;
    }
    T* dst = out->data<T>();
    for (size_t k = 0; k < acc.size(); ++k) dst[k] = static_cast<T>(acc[k]);
  }
};

template <typename T, SegmentKind kind>
void RegisterSegment(KernelRegistry* registry) {
  const std::string name = SegmentName(kind);
  registry->Register(KernelBuilder(name).TypeConstraint<T>("T"),
                     MakeKernel<SparseSegmentOp<T, kind, false>>);
  registry->Register(KernelBuilder(name + "WithNumSegments").TypeConstraint<T>("T"),
                     MakeKernel<SparseSegmentOp<T, kind, true>>);
}

}  // namespace

void RegisterSparseMathKernels(KernelRegistry* registry) {
  ForEachSparseNumberType([&]<typename T>() {
    registry->Register(KernelBuilder("SparseAdd").TypeConstraint<T>("T"),
                       MakeKernel<SparseAddOp<T>>);
    registry->Register(KernelBuilder("SparseAddGrad").TypeConstraint<T>("T"),
                       MakeKernel<SparseAddGradOp<T>>);
    registry->Register(KernelBuilder("SparseReduceSum").TypeConstraint<T>("T"),
                       MakeKernel<SparseReduceSumOp<T, false>>);
    registry->Register(KernelBuilder("SparseReduceSumSparse").TypeConstraint<T>("T"),
                       MakeKernel<SparseReduceSumOp<T, true>>);
  });
  ForEachType<float, double, Eigen::half>([&]<typename T>() {
    registry->Register(KernelBuilder("SparseSoftmax").TypeConstraint<T>("T"),
                       MakeKernel<SparseSoftmaxOp<T>>);
  });
  ForEachType<float, double, Eigen::half, Eigen::bfloat16>([&]<typename T>() {
    RegisterSegment<T, SegmentKind::kSum>(registry);
    RegisterSegment<T, SegmentKind::kMean>(registry);
    RegisterSegment<T, SegmentKind::kSqrtN>(registry);
    registry->Register(KernelBuilder("SparseSegmentSumGrad").TypeConstraint<T>("T"),
                       MakeKernel<SparseSegmentGradOp<T, SegmentKind::kSum>>);
    registry->Register(KernelBuilder("SparseSegmentMeanGrad").TypeConstraint<T>("T"),
                       MakeKernel<SparseSegmentGradOp<T, SegmentKind::kMean>>);
    registry->Register(KernelBuilder("SparseSegmentSqrtNGrad").TypeConstraint<T>("T"),
                       MakeKernel<SparseSegmentGradOp<T, SegmentKind::kSqrtN>>);
    registry->Register(KernelBuilder("SparseSegmentSumGradV2").TypeConstraint<T>("T"),
                       MakeKernel<SparseSegmentGradOp<T, SegmentKind::kSum, true>>);
    registry->Register(KernelBuilder("SparseSegmentMeanGradV2").TypeConstraint<T>("T"),
                       MakeKernel<SparseSegmentGradOp<T, SegmentKind::kMean, true>>);
    registry->Register(KernelBuilder("SparseSegmentSqrtNGradV2").TypeConstraint<T>("T"),
                       MakeKernel<SparseSegmentGradOp<T, SegmentKind::kSqrtN, true>>);
  });
  ForEachType<int32_t, int64_t>(
      [&]<typename T>() { RegisterSegment<T, SegmentKind::kSum>(registry); });
}

}  // namespace weir
