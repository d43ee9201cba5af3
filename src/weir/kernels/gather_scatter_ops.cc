// GatherV2, GatherNd, ScatterNd and OneHot: ops that read or write at index
// values. Every index is checked before any element moves, so a bad index
// is an InvalidArgument naming its position and value, never a read or
// write outside a buffer. Gathers move whole slices (memcpy, or one element
// when slices are single elements) over the intra-op pool.
#include <type_traits>

#include <Eigen/Core>

#include "weir/base/threadpool.h"
#include "weir/framework/gather_scatter_shape.h"
#include "weir/framework/int_tensor_values.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/array_copy.h"
#include "weir/kernels/array_kernels.h"
#include "weir/kernels/shape_util.h"
#include "weir/kernels/type_list.h"

namespace weir {
namespace {

// "[1,2]": the position of flat element `flat` of a tensor of `shape`.
std::string Position(int64_t flat, const TensorShape& shape) {
  std::vector<int64_t> index(shape.rank());
  for (int k = shape.rank() - 1; k >= 0; --k) {
    index[k] = shape.dim_size(k) == 0 ? 0 : flat % shape.dim_size(k);
    flat = shape.dim_size(k) == 0 ? 0 : flat / shape.dim_size(k);
  }
  return StrCat("[", StrJoin(index, ","), "]");
}

// The values of an integer index tensor (uint8, int8, int32, int64).
std::vector<int64_t> IndexValues(const Tensor& t) {
  std::vector<int64_t> values(t.NumElements());
  auto copy = [&]<typename I>() {
    std::copy(t.data<I>(), t.data<I>() + t.NumElements(), values.begin());
  };
  switch (t.dtype()) {
    case DT_UINT8: copy.template operator()<uint8_t>(); break;
    case DT_INT8: copy.template operator()<int8_t>(); break;
    case DT_INT16: copy.template operator()<int16_t>(); break;  // ScatterNd's Tindices
    case DT_INT32: copy.template operator()<int32_t>(); break;
    case DT_INT64: copy.template operator()<int64_t>(); break;
    default: LOG(Fatal) << "index dtype " << t.dtype();
  }
  return values;
}

// "", "DEFAULT" and "ERROR" make bad indices errors; "IGNORE" skips them.
Status ParseBadIndicesPolicy(OpKernelConstruction* context, bool* ignore) {
  std::string policy;
  WEIR_RETURN_IF_ERROR(context->GetAttr("bad_indices_policy", &policy));
  if (policy != "" && policy != "DEFAULT" && policy != "ERROR" && policy != "IGNORE") {
    return errors::InvalidArgument(context->node().op, ": bad_indices_policy '", policy,
                                   "' is not one of DEFAULT, ERROR, IGNORE");
  }
  *ignore = policy == "IGNORE";
  return Status::OK();
}

template <typename Index>
class GatherV2Op : public OpKernel {
 public:
  explicit GatherV2Op(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("batch_dims", &batch_dims_));
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& params = context->input(0);
    const Tensor& indices = context->input(1);
    const Tensor& axis_tensor = context->input(2);
    auto describe = [&] {
      return StrCat("params shape ", params.shape(), ", indices shape ", indices.shape());
    };
    OP_REQUIRES(context, axis_tensor.dims() == 0,
                errors::InvalidArgument("GatherV2: axis must be a scalar but has shape ",
                                        axis_tensor.shape(), " (", describe(), ")"));
    OP_REQUIRES(context, params.dims() >= 1,
                errors::InvalidArgument("GatherV2: params must have rank at least 1 (",
                                        describe(), ")"));
    StatusOr<std::vector<int64_t>> axis_values = IntTensorValues(axis_tensor, "GatherV2: axis");
    OP_REQUIRES_OK(context, axis_values.status());
    const int64_t axis_value = axis_values->front();
    int axis, batch_dims;
    OP_REQUIRES_OK(context, NormalizeGatherAxes(axis_value, batch_dims_, params.shape(),
                                                indices.shape(), &axis, &batch_dims)
                                .WithContext("GatherV2"));
    StatusOr<PartialShape> out_shape =
        GatherOutputShape(params.shape(), indices.shape(), axis, batch_dims);
    OP_REQUIRES_OK(context, out_shape.status().WithContext("GatherV2"));
    StatusOr<TensorShape> checked_shape = CheckedShape(*out_shape, "GatherV2");
    OP_REQUIRES_OK(context, checked_shape.status());

    const int64_t batches = DimProduct(params.shape(), 0, batch_dims);
    const int64_t outer = DimProduct(params.shape(), batch_dims, axis);
    const int64_t limit = params.dim_size(axis);
    const int64_t inner = DimProduct(params.shape(), axis + 1, params.dims());
    const int64_t count = DimProduct(indices.shape(), batch_dims, indices.dims());
    const Index* index = indices.data<Index>();
    for (int64_t i = 0; i < indices.NumElements(); ++i) {
      OP_REQUIRES(context, index[i] >= 0 && index[i] < limit,
                  errors::InvalidArgument("GatherV2: indices", Position(i, indices.shape()),
                                          " = ", index[i], " is not in [0, ", limit, ") (",
                                          describe(), ", axis ", axis, ")"));
    }
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, *checked_shape, &out));
    if (out->NumElements() == 0) return;
    DispatchByElementSize(params.dtype(), [&]<typename T>() {
      const T* src = ElementsAs<T>(params);
      T* dst = ElementsAs<T>(*out);
      // Task t = (batch b, outer o, index position n) fills out[b, o, n, :].
      context->device()->intra_op_pool()->ParallelFor(
          batches * outer * count, std::max<int64_t>(1, inner * sizeof(T)),
          [&](int64_t first, int64_t last) {
            int64_t n = first % count;
            int64_t bo = first / count;  // b * outer + o
            const Index* batch_index = index + (bo / outer) * count;
            for (int64_t t = first; t < last; ++t) {
              const T* row = src + (bo * limit + batch_index[n]) * inner;
              if (inner == 1) {
                dst[t] = *row;
              } else {
                CopyElements(row, inner, dst + t * inner);
              }
              if (++n == count) {
                n = 0;
                ++bo;
                batch_index = index + (bo / outer) * count;
              }
            }
          });
    });
  }

 private:
  int64_t batch_dims_ = 0;
};

template <typename Index>
class GatherNdOp : public OpKernel {
 public:
  explicit GatherNdOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(ParseBadIndicesPolicy(context, &ignore_bad_indices_));
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& params = context->input(0);
    const Tensor& indices = context->input(1);
    StatusOr<PartialShape> out_shape = GatherNdOutputShape(params.shape(), indices.shape());
    OP_REQUIRES_OK(context, out_shape.status().WithContext("GatherNd"));
    StatusOr<TensorShape> checked_shape = CheckedShape(*out_shape, "GatherNd");
    OP_REQUIRES_OK(context, checked_shape.status());
    const int depth = static_cast<int>(indices.dim_size(indices.dims() - 1));
    const int64_t count = DimProduct(indices.shape(), 0, indices.dims() - 1);
    const int64_t slice = DimProduct(params.shape(), depth, params.dims());
    const std::vector<int64_t> strides = DenseStrides(params.shape());
    // The element offset of each slice, or -1 for an ignored bad index.
    // With an index depth of 0 every slice is all of params and there are
    // no offsets: their count is then not bounded by the indices' size
    // (2^40 empty tuples), and the output's allocation bounds it instead.
    std::vector<int64_t> offsets(depth > 0 ? count : 0);
    const Index* index = indices.data<Index>();
    for (int64_t i = 0; i < static_cast<int64_t>(offsets.size()); ++i) {
      int64_t offset = 0;
      for (int k = 0; k < depth && offset >= 0; ++k) {
        const Index v = index[i * depth + k];
        if (v >= 0 && v < params.dim_size(k)) {
          offset += v * strides[k];
        } else if (ignore_bad_indices_) {
          offset = -1;
        } else {
          std::vector<int64_t> tuple(index + i * depth, index + (i + 1) * depth);
          OP_REQUIRES(context, false,
                      errors::InvalidArgument(
                          "GatherNd: indices",
                          Position(i, TensorShape(std::span<const int64_t>(
                                          indices.shape().dim_sizes().data(),
                                          indices.dims() - 1))),
                          " = [", StrJoin(tuple, ","), "] does not index into params of shape ",
                          params.shape(), " (indices shape ", indices.shape(), ")"));
        }
      }
      offsets[i] = offset;
    }
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, *checked_shape, &out));
    if (out->NumElements() == 0) return;
    DispatchByElementSize(params.dtype(), [&]<typename T>() {
      const T* src = ElementsAs<T>(params);
      T* dst = ElementsAs<T>(*out);
      context->device()->intra_op_pool()->ParallelFor(
          count, std::max<int64_t>(1, slice * sizeof(T)), [&](int64_t first, int64_t last) {
            for (int64_t i = first; i < last; ++i) {
              const int64_t offset = depth > 0 ? offsets[i] : 0;
              if (offset < 0) {
                std::fill_n(dst + i * slice, slice, T{});
              } else {
                CopyElements(src + offset, slice, dst + i * slice);
              }
            }
          });
    });
  }

 private:
  bool ignore_bad_indices_ = false;
};

// dst += src, wrapping for integers (computed unsigned) and or-ing bools.
template <typename T>
void Accumulate(const T& src, T* dst) {
  if constexpr (std::is_same_v<T, bool>) {
    *dst = *dst || src;
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    *dst = static_cast<T>(static_cast<U>(*dst) + static_cast<U>(src));
  } else {
    *dst += src;
  }
}

template <typename T>
class ScatterNdOp : public OpKernel {
 public:
  explicit ScatterNdOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(ParseBadIndicesPolicy(context, &ignore_bad_indices_));
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& indices = context->input(0);
    const Tensor& updates = context->input(1);
    const Tensor& shape_tensor = context->input(2);
    OP_REQUIRES(context, shape_tensor.dims() == 1,
                errors::InvalidArgument("ScatterNd: shape must be a vector but has shape ",
                                        shape_tensor.shape()));
    StatusOr<std::vector<int64_t>> dims = IntTensorValues(shape_tensor, "ScatterNd: shape");
    OP_REQUIRES_OK(context, dims.status());
    StatusOr<TensorShape> shape = CheckedShape(*dims, "ScatterNd");
    OP_REQUIRES_OK(context, shape.status());
    OP_REQUIRES_OK(context, CheckScatterNdShapes(indices.shape(), updates.shape(), *shape)
                                .WithContext("ScatterNd"));
    const int depth = static_cast<int>(indices.dim_size(indices.dims() - 1));
    const int64_t count = DimProduct(indices.shape(), 0, indices.dims() - 1);
    const int64_t slice = DimProduct(*shape, depth, shape->rank());
    const std::vector<int64_t> strides = DenseStrides(*shape);
    const std::vector<int64_t> index = IndexValues(indices);
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, *shape, &out));
    T* dst = out->data<T>();
    std::fill_n(dst, out->NumElements(), T{});
    const T* src = updates.data<T>();
    // Sequential: duplicate indices add into the same slice.
    for (int64_t i = 0; i < count; ++i) {
      int64_t offset = 0;
      bool skip = false;
      for (int k = 0; k < depth; ++k) {
        const int64_t v = index[i * depth + k];
        if (v >= 0 && v < shape->dim_size(k)) {
          offset += v * strides[k];
          continue;
        }
        std::vector<int64_t> tuple(index.begin() + i * depth, index.begin() + (i + 1) * depth);
        OP_REQUIRES(context, ignore_bad_indices_,
                    errors::InvalidArgument(
                        "ScatterNd: indices",
                        Position(i, TensorShape(std::span<const int64_t>(
                                        indices.shape().dim_sizes().data(), indices.dims() - 1))),
                        " = [", StrJoin(tuple, ","), "] does not index into the output shape ",
                        *shape, " (indices shape ", indices.shape(), ")"));
        skip = true;
        break;
      }
      if (skip) continue;
      for (int64_t j = 0; j < slice; ++j) Accumulate(src[i * slice + j], dst + offset + j);
    }
  }

 private:
  bool ignore_bad_indices_ = false;
};

class OneHotOp : public OpKernel {
 public:
  explicit OneHotOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("axis", &axis_));
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& indices = context->input(0);
    const Tensor& depth_tensor = context->input(1);
    const Tensor& on = context->input(2);
    const Tensor& off = context->input(3);
    OP_REQUIRES(context, depth_tensor.dims() == 0 && on.dims() == 0 && off.dims() == 0,
                errors::InvalidArgument("OneHot: depth, on_value and off_value must be "
                                        "scalars but have shapes ", depth_tensor.shape(), ", ",
                                        on.shape(), " and ", off.shape()));
    const int64_t depth = depth_tensor.scalar<int32_t>();
    OP_REQUIRES(context, depth >= 0,
                errors::InvalidArgument("OneHot: depth ", depth, " must not be negative"));
    StatusOr<PartialShape> out_shape = OneHotOutputShape(indices.shape(), depth, axis_);
    OP_REQUIRES_OK(context, out_shape.status().WithContext("OneHot"));
    StatusOr<TensorShape> checked_shape = CheckedShape(*out_shape, "OneHot");
    OP_REQUIRES_OK(context, checked_shape.status());
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, *checked_shape, &out));
    if (out->NumElements() == 0) return;
    const int axis = axis_ == -1 ? indices.dims() : static_cast<int>(axis_);
    const int64_t prefix = DimProduct(indices.shape(), 0, axis);
    const int64_t suffix = DimProduct(indices.shape(), axis, indices.dims());
    const std::vector<int64_t> index = IndexValues(indices);
    DispatchByElementSize(on.dtype(), [&]<typename T>() {
      const T on_value = *ElementsAs<T>(on);
      const T off_value = *ElementsAs<T>(off);
      T* dst = ElementsAs<T>(*out);
      // Block p is out[p, :, :] ([depth, suffix]): off everywhere, then on
      // at the row each index names.
      context->device()->intra_op_pool()->ParallelFor(
          prefix, std::max<int64_t>(1, depth * suffix * sizeof(T)),
          [&](int64_t first, int64_t last) {
            for (int64_t p = first; p < last; ++p) {
              T* block = dst + p * depth * suffix;
              std::fill_n(block, depth * suffix, off_value);
              for (int64_t s = 0; s < suffix; ++s) {
                const int64_t d = index[p * suffix + s];
                if (d >= 0 && d < depth) block[d * suffix + s] = on_value;
              }
            }
          });
    });
  }

 private:
  int64_t axis_ = -1;
};

}  // namespace

void RegisterGatherScatterKernels(KernelRegistry* registry) {
  ForEachType<int32_t, int64_t>([&]<typename Index>() {
    registry->Register(KernelBuilder("GatherV2").TypeConstraint<Index>("Tindices"),
                       MakeKernel<GatherV2Op<Index>>);
    registry->Register(KernelBuilder("GatherNd").TypeConstraint<Index>("Tindices"),
                       MakeKernel<GatherNdOp<Index>>);
  });
  ForEachType<float, double, Eigen::half, Eigen::bfloat16, int32_t, int64_t, uint8_t, int8_t,
              int16_t, uint16_t, complex64, complex128, bool>([&]<typename T>() {
    registry->Register(KernelBuilder("ScatterNd").TypeConstraint<T>("T"),
                       MakeKernel<ScatterNdOp<T>>);
  });
  registry->Register(KernelBuilder("OneHot"), MakeKernel<OneHotOp>);
}

}  // namespace weir
