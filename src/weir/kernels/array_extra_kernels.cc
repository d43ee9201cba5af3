// Roll, TensorScatter{Update,Add,Sub,Min,Max}, Bitcast, Bincount and
// DenseBincount (ops/array_extra_ops.cc). Every index, axis and size from
// an input is checked before any element moves or any buffer is sized by
// it, so hostile values are an InvalidArgument naming the node, op, dtype
// and shapes.
#include <Eigen/Core>
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "weir/base/threadpool.h"
#include "weir/framework/gather_scatter_shape.h"
#include "weir/framework/int_tensor_values.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/array_copy.h"
#include "weir/kernels/shape_util.h"
#include "weir/kernels/type_list.h"

namespace weir {

void RegisterStringUnitKernels(KernelRegistry* registry);  // string_unit_kernels.cc

namespace {

// The values of an integer index tensor (int16, uint16, int32, int64).
std::vector<int64_t> IndexValues(const Tensor& t) {
  std::vector<int64_t> values(t.NumElements());
  auto copy = [&]<typename I>() {
    std::copy(t.data<I>(), t.data<I>() + t.NumElements(), values.begin());
  };
  switch (t.dtype()) {
    case DT_INT16: copy.template operator()<int16_t>(); break;
    case DT_UINT16: copy.template operator()<uint16_t>(); break;
    case DT_INT32: copy.template operator()<int32_t>(); break;
    case DT_INT64: copy.template operator()<int64_t>(); break;
    default: LOG(Fatal) << "index dtype " << t.dtype();
  }
  return values;
}

// out[(c + shift) mod n] = in[c] along each rolled axis.
class RollOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    const Tensor& shift_t = context->input(1);
    const Tensor& axis_t = context->input(2);
    const std::string where = StrCat("Roll (node ", name(), ", dtype ", input.dtype(), ")");
    OP_REQUIRES(
        context, input.dims() >= 1,
        errors::InvalidArgument(where, ": input must be at least 1-D, not ", input.shape()));
    OP_REQUIRES(
        context, shift_t.dims() <= 1 && shift_t.shape() == axis_t.shape(),
        errors::InvalidArgument(where, ": shift ", shift_t.shape(), " and axis ", axis_t.shape(),
                                " must be scalars or vectors of one length"));
    StatusOr<std::vector<int64_t>> shifts = IntTensorValues(shift_t, "Roll: shift");
    OP_REQUIRES_OK(context, shifts.status());
    StatusOr<std::vector<int64_t>> axes = IntTensorValues(axis_t, "Roll: axis");
    OP_REQUIRES_OK(context, axes.status());
    const int rank = input.dims();
    // Per-dim shift in [0, n): each shift is reduced before adding, so no
    // sum of hostile shifts overflows.
    std::vector<int64_t> offset(rank, 0);
    for (size_t i = 0; i < axes->size(); ++i) {
      int64_t axis = (*axes)[i];
      OP_REQUIRES(context, axis >= -rank && axis < rank,
                  errors::InvalidArgument(where, ": axis ", axis, " is out of range for input ",
                                          input.shape()));
      if (axis < 0) axis += rank;
      const int64_t n = input.dim_size(static_cast<int>(axis));
      if (n == 0) continue;
      int64_t s = (*shifts)[i] % n;
      if (s < 0) s += n;
      offset[axis] = (offset[axis] + s) % n;
    }
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, input.shape(), &out));
    const int64_t total = input.NumElements();
    if (total == 0) return;
    // Rows of the last dim move as two contiguous pieces.
    const int64_t cols = input.dim_size(rank - 1);
    const int64_t rows = total / cols;
    const int64_t last_shift = offset[rank - 1];
    const std::vector<int64_t> strides = DenseStrides(input.shape());
    DispatchByElementSize(input.dtype(), [&]<typename T>() {
      const T* src = ElementsAs<T>(input);
      T* dst = ElementsAs<T>(*out);
      context->device()->intra_op_pool()->ParallelFor(
          rows, std::max<int64_t>(1, cols * static_cast<int64_t>(sizeof(T))),
          [&](int64_t first, int64_t last) {
            for (int64_t r = first; r < last; ++r) {
              // The destination row of source row r.
              int64_t rest = r, dst_row = 0;
              for (int k = rank - 2; k >= 0; --k) {
                const int64_t n = input.dim_size(k);
                const int64_t c = rest % n;
                rest /= n;
                dst_row += ((c + offset[k]) % n) * (strides[k] / cols);
              }
              const T* in_row = src + r * cols;
              T* out_row = dst + dst_row * cols;
              CopyElements(in_row, cols - last_shift, out_row + last_shift);
              CopyElements(in_row + cols - last_shift, last_shift, out_row);
            }
          });
    });
  }
};

enum class ScatterMode { kUpdate, kAdd, kSub, kMin, kMax };

template <typename T, ScatterMode kMode>
void Combine(const T& update, T* dst) {
  if constexpr (kMode == ScatterMode::kUpdate) {
    *dst = update;
  } else if constexpr (kMode == ScatterMode::kMin || kMode == ScatterMode::kMax) {
    // As TensorFlow: a NaN update never replaces, a NaN element stays.
    if (kMode == ScatterMode::kMin ? update < *dst : update > *dst) *dst = update;
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    const U u = static_cast<U>(update);
    *dst = static_cast<T>(kMode == ScatterMode::kAdd ? static_cast<U>(*dst) + u
                                                     : static_cast<U>(*dst) - u);
  } else {
    *dst = kMode == ScatterMode::kAdd ? *dst + update : *dst - update;
  }
}

// output = tensor with updates combined into the slices indices name.
template <typename T, ScatterMode kMode>
class TensorScatterOp : public OpKernel {
 public:
  explicit TensorScatterOp(OpKernelConstruction* context) : OpKernel(context) {
    std::string policy;
    context->SetStatus(context->GetAttr("bad_indices_policy", &policy));
    if (policy != "" && policy != "DEFAULT" && policy != "ERROR" && policy != "IGNORE") {
      context->SetStatus(errors::InvalidArgument(context->node().op, ": bad_indices_policy '",
                                                 policy, "' is not one of DEFAULT, ERROR, IGNORE"));
    }
    ignore_bad_indices_ = policy == "IGNORE";
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& tensor = context->input(0);
    const Tensor& indices = context->input(1);
    const Tensor& updates = context->input(2);
    const std::string where =
        StrCat(type_string(), " (node ", name(), ", dtype ", tensor.dtype(), ", tensor ",
               tensor.shape(), ", indices ", indices.shape(), ", updates ", updates.shape(), ")");
    OP_REQUIRES(context, indices.dims() >= 1,
                errors::InvalidArgument(where, ": indices must be at least 1-D"));
    OP_REQUIRES(context, tensor.dims() >= 1 || indices.NumElements() == 0,
                errors::InvalidArgument(where, ": cannot scatter into a scalar"));
    const Status shapes = CheckScatterNdShapes(indices.shape(), updates.shape(), tensor.shape());
    OP_REQUIRES(context, shapes.ok(), errors::InvalidArgument(where, ": ", shapes.message()));
    const int depth = static_cast<int>(indices.dim_size(indices.dims() - 1));
    const int64_t count = DimProduct(indices.shape(), 0, indices.dims() - 1);
    const int64_t slice = DimProduct(tensor.shape(), depth, tensor.dims());
    const std::vector<int64_t> strides = DenseStrides(tensor.shape());
    const std::vector<int64_t> index = IndexValues(indices);
    // Every index checked before any element moves.
    std::vector<int64_t> offsets(count, -1);
    for (int64_t i = 0; i < count; ++i) {
      int64_t offset = 0;
      for (int k = 0; k < depth; ++k) {
        const int64_t v = index[i * depth + k];
        if (v < 0 || v >= tensor.dim_size(k)) {
          std::vector<int64_t> tuple(index.begin() + i * depth, index.begin() + (i + 1) * depth);
          OP_REQUIRES(context, ignore_bad_indices_,
                      errors::InvalidArgument(where, ": indices[", i, "] = [", StrJoin(tuple, ","),
                                              "] does not index into the tensor"));
          offset = -1;
          break;
        }
        offset += v * strides[k];
      }
      offsets[i] = offset;
    }
    Tensor* out = context->forward_input_to_output(0, 0, tensor.shape());
    if (out == nullptr) {
      OP_REQUIRES_OK(context, context->allocate_output(0, tensor.shape(), &out));
      CopyElements(tensor.data<T>(), tensor.NumElements(), out->data<T>());
    }
    T* dst = out->data<T>();
    const T* src = updates.data<T>();
    // Sequential: repeated indices combine in order (the last update wins).
    for (int64_t i = 0; i < count; ++i) {
      if (offsets[i] < 0) continue;
      for (int64_t j = 0; j < slice; ++j)
        Combine<T, kMode>(src[i * slice + j], dst + offsets[i] + j);
    }
  }

 private:
  bool ignore_bad_indices_ = false;
};

// The bytes of input as `type`.
class BitcastOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    const DType to = context->expected_output_dtype(0);
    const int64_t from_size = static_cast<int64_t>(DTypeSize(input.dtype()));
    const int64_t to_size = static_cast<int64_t>(DTypeSize(to));
    std::vector<int64_t> dims(input.shape().dim_sizes().begin(), input.shape().dim_sizes().end());
    if (from_size > to_size) {
      dims.push_back(from_size / to_size);
    } else if (from_size < to_size) {
      OP_REQUIRES(context, !dims.empty() && dims.back() == to_size / from_size,
                  errors::InvalidArgument("Bitcast (node ", name(), "): cannot bitcast ",
                                          input.shape(), " of ", input.dtype(), " to ", to,
                                          ": the last dim must be ", to_size / from_size));
      dims.pop_back();
    }
    StatusOr<TensorShape> shape = CheckedShape(dims, "Bitcast");
    OP_REQUIRES_OK(context, shape.status());
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, *shape, &out));
    if (input.TotalBytes() > 0) std::memcpy(out->raw_data(), input.raw_data(), input.TotalBytes());
  }
};

// Bincount and DenseBincount: counts (or sums of weights) of each value in
// [0, size) per row; values past size are dropped, negative ones are an
// error (as TensorFlow's CPU kernels).
template <typename Tidx, typename T>
class BincountOp : public OpKernel {
 public:
  explicit BincountOp(OpKernelConstruction* context) : OpKernel(context) {
    if (context->op_def().FindAttr("binary_output") != nullptr) {
      context->SetStatus(context->GetAttr("binary_output", &binary_output_));
    }
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    const Tensor& size_t_ = context->input(1);
    const Tensor& weights = context->input(2);
    const std::string where = StrCat(type_string(), " (node ", name(), ", input ", input.shape(),
                                     ", weights ", weights.shape(), ", dtype ", kDTypeOf<T>, ")");
    OP_REQUIRES(context, size_t_.dims() == 0,
                errors::InvalidArgument(where, ": size must be a scalar, not ", size_t_.shape()));
    const int64_t size = size_t_.scalar<Tidx>();
    OP_REQUIRES(context, size >= 0,
                errors::InvalidArgument(where, ": size ", size, " must not be negative"));
    // Bincount's size is int32; DenseBincount's int64 size gets the same
    // bound, so a hostile size is refused before anything is allocated.
    OP_REQUIRES(
        context, size <= INT32_MAX,
        errors::InvalidArgument(where, ": size ", size, " is more than ", INT32_MAX, " bins"));
    const bool dense = type_string() == "DenseBincount";
    OP_REQUIRES(context, !dense || input.dims() == 1 || input.dims() == 2,
                errors::InvalidArgument(where, ": input must be a vector or a matrix"));
    const bool weighted = weights.NumElements() > 0;
    OP_REQUIRES(context, !weighted || weights.shape() == input.shape(),
                errors::InvalidArgument(where, ": weights must be empty or have input's shape"));
    const Tidx* values = input.data<Tidx>();
    const int64_t n = input.NumElements();
    for (int64_t i = 0; i < n; ++i) {
      OP_REQUIRES(context, values[i] >= 0,
                  errors::InvalidArgument(where, ": input[", i, "] = ", values[i], " is negative"));
    }
    const int64_t rows = dense && input.dims() == 2 ? input.dim_size(0) : 1;
    const int64_t cols = rows == 0 ? 0 : n / std::max<int64_t>(rows, 1);
    std::vector<int64_t> dims = {size};
    if (dense && input.dims() == 2) dims.insert(dims.begin(), rows);
    StatusOr<TensorShape> shape = CheckedShape(dims, type_string());
    OP_REQUIRES_OK(context, shape.status());
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, *shape, &out));
    T* bins = out->data<T>();
    std::fill_n(bins, out->NumElements(), T(0));
    const T* w = weighted ? weights.data<T>() : nullptr;
    for (int64_t r = 0; r < rows; ++r) {
      T* row = bins + r * size;
      for (int64_t c = 0; c < cols; ++c) {
        const int64_t i = r * cols + c;
        const int64_t v = values[i];
        if (v >= size) continue;
        if (binary_output_) {
          row[v] = T(1);
        } else {
          row[v] += w ? w[i] : T(1);
        }
      }
    }
  }

 private:
  bool binary_output_ = false;
};

// The n-th smallest (largest with reverse) of each row of the last dim.
template <typename T>
class NthElementOp : public OpKernel {
 public:
  explicit NthElementOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("reverse", &reverse_));
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    const Tensor& n_t = context->input(1);
    const std::string where =
        StrCat("NthElement (node ", name(), ", input ", input.shape(), " of ", input.dtype(), ")");
    OP_REQUIRES(context, input.dims() >= 1 && n_t.dims() == 0,
                errors::InvalidArgument(where, ": input must be at least 1-D and n a scalar"));
    const int64_t cols = input.dim_size(input.dims() - 1);
    const int64_t n = n_t.scalar<int32_t>();
    OP_REQUIRES(context, n >= 0 && n < cols,
                errors::InvalidArgument(where, ": n ", n, " is out of range [0, ", cols, ")"));
    std::vector<int64_t> dims(input.shape().dim_sizes().begin(),
                              input.shape().dim_sizes().end() - 1);
    StatusOr<TensorShape> shape = CheckedShape(dims, "NthElement");
    OP_REQUIRES_OK(context, shape.status());
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, *shape, &out));
    const int64_t rows = out->NumElements();
    const int64_t k = reverse_ ? cols - 1 - n : n;
    const T* src = input.data<T>();
    T* dst = out->data<T>();
    context->device()->intra_op_pool()->ParallelFor(
        rows, std::max<int64_t>(1, cols * 10), [&](int64_t first, int64_t last) {
          std::vector<T> row(cols);
          for (int64_t r = first; r < last; ++r) {
            std::copy_n(src + r * cols, cols, row.begin());
            std::nth_element(row.begin(), row.begin() + k, row.end());
            dst[r] = row[k];
          }
        });
  }

 private:
  bool reverse_ = false;
};

template <ScatterMode kMode, typename... Types>
void RegisterTensorScatter(KernelRegistry* registry, const char* op) {
  ForEachType<Types...>([&]<typename T>() {
    registry->Register(KernelBuilder(op).TypeConstraint<T>("T"),
                       MakeKernel<TensorScatterOp<T, kMode>>);
  });
}

}  // namespace

void RegisterArrayExtraKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("Roll"), MakeKernel<RollOp>);
  registry->Register(KernelBuilder("Bitcast"), MakeKernel<BitcastOp>);
  RegisterTensorScatter<ScatterMode::kUpdate, float, double, Eigen::half, Eigen::bfloat16, int8_t,
                        uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t, bool,
                        complex64, complex128, std::string>(registry, "TensorScatterUpdate");
  RegisterTensorScatter<ScatterMode::kAdd, float, double, int32_t, int64_t, complex64, complex128>(
      registry, "TensorScatterAdd");
  RegisterTensorScatter<ScatterMode::kSub, float, double, int32_t, int64_t, complex64, complex128>(
      registry, "TensorScatterSub");
  RegisterTensorScatter<ScatterMode::kMin, float, double, int32_t, int64_t>(registry,
                                                                            "TensorScatterMin");
  RegisterTensorScatter<ScatterMode::kMax, float, double, int32_t, int64_t>(registry,
                                                                            "TensorScatterMax");
  ForEachType<int32_t, int64_t, float, double>([&]<typename T>() {
    registry->Register(KernelBuilder("Bincount").TypeConstraint<T>("T"),
                       MakeKernel<BincountOp<int32_t, T>>);
    ForEachType<int32_t, int64_t>([&]<typename Tidx>() {
      registry->Register(KernelBuilder("DenseBincount")
                             .TypeConstraint("T", kDTypeOf<T>)
                             .TypeConstraint("Tidx", kDTypeOf<Tidx>),
                         MakeKernel<BincountOp<Tidx, T>>);
    });
  });
  ForEachType<float, double, int32_t, uint8_t, int16_t, int8_t, int64_t, Eigen::bfloat16, uint16_t,
              Eigen::half, uint32_t, uint64_t>([&]<typename T>() {
    registry->Register(KernelBuilder("NthElement").TypeConstraint("T", kDTypeOf<T>),
                       MakeKernel<NthElementOp<T>>);
  });
  RegisterStringUnitKernels(registry);
}

}  // namespace weir
