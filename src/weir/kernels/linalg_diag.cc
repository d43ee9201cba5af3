// The diagonal family: Diag and DiagPart (a tensor's diagonal, shape s <->
// s + s) and MatrixDiag, MatrixDiagPart, MatrixSetDiag in their V1, V2 and
// V3 forms, all one geometry (framework/matrix_diag_shape.h): V1 is the
// band k = 0, V2 aligns every diagonal left, V3 aligns as `align` says.
// Elements are only moved, so one kernel per op serves every dtype by its
// element size.
#include <string>
#include <type_traits>

#include "weir/base/checked_math.h"
#include "weir/base/threadpool.h"
#include "weir/framework/int_tensor_values.h"
#include "weir/framework/kernel_registry.h"
#include "weir/framework/matrix_diag_shape.h"
#include "weir/kernels/array_copy.h"

namespace weir {
namespace {

template <typename T>
constexpr bool kMovable = !std::is_same_v<T, ResourceHandle> && !std::is_same_v<T, Variant>;

Status CheckMovableDType(DType dtype, std::string_view op) {
  if (dtype == DT_RESOURCE || dtype == DT_VARIANT) {
    return errors::InvalidArgument(op, ": no kernel for dtype ", dtype);
  }
  return Status::OK();
}

// Diag: out[i, i] = in[i] over the flattened input of n elements.
class DiagOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& in = context->input(0);
    OP_REQUIRES_OK(context, CheckMovableDType(in.dtype(), "Diag"));
    OP_REQUIRES(
        context, in.dims() >= 1,
        errors::InvalidArgument("Diag: diagonal must have rank >= 1 but has shape ", in.shape()));
    std::vector<int64_t> dims(in.shape().dim_sizes().begin(), in.shape().dim_sizes().end());
    dims.insert(dims.end(), in.shape().dim_sizes().begin(), in.shape().dim_sizes().end());
    StatusOr<TensorShape> shape = TensorShape::FromDims(dims);
    OP_REQUIRES(context, shape.ok(),
                errors::InvalidArgument("Diag: the output for a diagonal of shape ", in.shape(),
                                        " has too many elements: ", shape.status().message()));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(context, context->allocate_output(0, *shape, &out));
    const int64_t n = in.NumElements();
    DispatchByElementSize(in.dtype(), [&]<typename T>() {
      if constexpr (kMovable<T>) {
        const T* src = ElementsAs<T>(in);
        T* dst = ElementsAs<T>(*out);
        for (int64_t i = 0; i < n; ++i) {
          std::fill(dst + i * n, dst + (i + 1) * n, T{});
          dst[i * n + i] = src[i];
        }
      }
    });
  }
};

class DiagPartOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& in = context->input(0);
    OP_REQUIRES_OK(context, CheckMovableDType(in.dtype(), "DiagPart"));
    const int rank = in.dims();
    OP_REQUIRES(context, rank >= 2 && rank % 2 == 0,
                errors::InvalidArgument(
                    "DiagPart: input must have an even rank >= 2 but has shape ", in.shape()));
    std::vector<int64_t> dims;
    for (int i = 0; i < rank / 2; ++i) {
      OP_REQUIRES(context, in.dim_size(i) == in.dim_size(i + rank / 2),
                  errors::InvalidArgument("DiagPart: input of shape ", in.shape(),
                                          " must be s + s for a shape s (dims ", i, " and ",
                                          i + rank / 2, " differ)"));
      dims.push_back(in.dim_size(i));
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape(dims), &out));
    const int64_t n = out->NumElements();
    DispatchByElementSize(in.dtype(), [&]<typename T>() {
      if constexpr (kMovable<T>) {
        const T* src = ElementsAs<T>(in);
        T* dst = ElementsAs<T>(*out);
        for (int64_t i = 0; i < n; ++i) dst[i] = src[i * n + i];
      }
    });
  }
};

// The band, alignment and padding of one MatrixDiag*-family node.
struct DiagArgs {
  DiagBand band;
  DiagAlign align;
};

Status ReadBand(const Tensor& k, std::string_view op, DiagBand* band) {
  if (k.dims() > 1) {
    return errors::InvalidArgument(op, ": k must be a scalar or vector but has shape ", k.shape());
  }
  StatusOr<std::vector<int64_t>> values = IntTensorValues(k, StrCat(op, ": k"));
  WEIR_RETURN_IF_ERROR(values.status());
  StatusOr<DiagBand> b = DiagBandFromValues(*values, op);
  WEIR_RETURN_IF_ERROR(b.status());
  *band = *b;
  return Status::OK();
}

Status ReadScalar(const Tensor& t, std::string_view op, std::string_view what, int64_t* value) {
  if (t.dims() != 0) {
    return errors::InvalidArgument(op, ": ", what, " must be a scalar but has shape ", t.shape());
  }
  StatusOr<std::vector<int64_t>> values = IntTensorValues(t, StrCat(op, ": ", what));
  WEIR_RETURN_IF_ERROR(values.status());
  *value = (*values)[0];
  return Status::OK();
}

// The kernels' shared setup: version 1 has no k and aligns left; version 3
// reads `align`.
class DiagFamilyOp : public OpKernel {
 public:
  DiagFamilyOp(OpKernelConstruction* context, int version, std::string op)
      : OpKernel(context), version_(version), op_(std::move(op)) {
    if (version_ == 3) {
      std::string align;
      OP_REQUIRES_OK(context, context->GetAttr("align", &align));
      StatusOr<DiagAlign> parsed = ParseDiagAlign(align);
      OP_REQUIRES_OK(context, parsed.status());
      align_ = *parsed;
    }
  }

 protected:
  int version_;
  std::string op_;
  DiagAlign align_;
};

// MatrixDiag (V1: diagonal; V2/V3: diagonal, k, num_rows, num_cols, padding_value).
class MatrixDiagOp : public DiagFamilyOp {
 public:
  MatrixDiagOp(OpKernelConstruction* context, int version)
      : DiagFamilyOp(context, version,
                     version == 1 ? "MatrixDiag" : StrCat("MatrixDiagV", version)) {}

  void Compute(OpKernelContext* context) override {
    const Tensor& diag = context->input(0);
    OP_REQUIRES_OK(context, CheckMovableDType(diag.dtype(), op_));
    DiagBand band;
    int64_t num_rows = -1, num_cols = -1;
    if (version_ > 1) {
      OP_REQUIRES_OK(context, ReadBand(context->input(1), op_, &band));
      OP_REQUIRES_OK(context, ReadScalar(context->input(2), op_, "num_rows", &num_rows));
      OP_REQUIRES_OK(context, ReadScalar(context->input(3), op_, "num_cols", &num_cols));
      OP_REQUIRES(context, context->input(4).dims() == 0,
                  errors::InvalidArgument(op_, ": padding_value must be a scalar but has shape ",
                                          context->input(4).shape()));
    }
    StatusOr<std::vector<int64_t>> dims = MatrixDiagOutputDims(
        std::vector<int64_t>(diag.shape().dim_sizes().begin(), diag.shape().dim_sizes().end()),
        band, num_rows, num_cols, op_);
    OP_REQUIRES_OK(context, dims.status());
    Tensor* out = nullptr;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape(*dims), &out));
    const int64_t rows = dims->at(dims->size() - 2), cols = dims->back();
    const int64_t max_len = diag.dims() > 0 ? diag.dim_size(diag.dims() - 1) : 0;
    if (out->NumElements() == 0) return;
    const int64_t matrices = out->NumElements() / (rows * cols);
    const int64_t diag_stride = band.num_diags() * max_len;
    DispatchByElementSize(diag.dtype(), [&]<typename T>() {
      if constexpr (kMovable<T>) {
        const T pad = version_ > 1 ? ElementsAs<T>(context->input(4))[0] : T{};
        const T* src = ElementsAs<T>(diag);
        T* dst = ElementsAs<T>(*out);
        context->device()->intra_op_pool()->ParallelFor(
            matrices * rows, cols + 1, [&](int64_t first, int64_t last) {
              for (int64_t r = first; r < last; ++r) {
                const int64_t b = r / rows, i = r % rows;
                T* row = dst + r * cols;
                for (int64_t j = 0; j < cols; ++j) {
                  const int64_t d = j - i;
                  if (d < band.lower || d > band.upper) {
                    row[j] = pad;
                    continue;
                  }
                  const int64_t len = DiagLength(d, rows, cols);
                  const int64_t offset = DiagOffset(d, len, max_len, align_);
                  const int64_t n = (d >= 0 ? i : j) + offset;
                  row[j] = src[b * diag_stride + (band.upper - d) * max_len + n];
                }
              }
            });
      }
    });
  }
};

// MatrixDiagPart (V1: input; V2/V3: input, k, padding_value).
class MatrixDiagPartOp : public DiagFamilyOp {
 public:
  MatrixDiagPartOp(OpKernelConstruction* context, int version)
      : DiagFamilyOp(context, version,
                     version == 1 ? "MatrixDiagPart" : StrCat("MatrixDiagPartV", version)) {}

  void Compute(OpKernelContext* context) override {
    const Tensor& in = context->input(0);
    OP_REQUIRES_OK(context, CheckMovableDType(in.dtype(), op_));
    DiagBand band;
    if (version_ > 1) {
      OP_REQUIRES_OK(context, ReadBand(context->input(1), op_, &band));
      OP_REQUIRES(context, context->input(2).dims() == 0,
                  errors::InvalidArgument(op_, ": padding_value must be a scalar but has shape ",
                                          context->input(2).shape()));
    }
    std::vector<int64_t> in_dims(in.shape().dim_sizes().begin(), in.shape().dim_sizes().end());
    StatusOr<std::vector<int64_t>> dims = MatrixDiagPartOutputDims(in_dims, band, op_);
    OP_REQUIRES_OK(context, dims.status());
    Tensor* out = nullptr;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape(*dims), &out));
    if (out->NumElements() == 0) return;
    const int64_t rows = in_dims[in_dims.size() - 2], cols = in_dims.back();
    const int64_t max_len = dims->back();
    const int64_t lines = out->NumElements() / max_len;  // (matrix, diagonal) pairs
    DispatchByElementSize(in.dtype(), [&]<typename T>() {
      if constexpr (kMovable<T>) {
        const T pad = version_ > 1 ? ElementsAs<T>(context->input(2))[0] : T{};
        const T* src = ElementsAs<T>(in);
        T* dst = ElementsAs<T>(*out);
        context->device()->intra_op_pool()->ParallelFor(
            lines, max_len + 1, [&](int64_t first, int64_t last) {
              for (int64_t line = first; line < last; ++line) {
                const int64_t b = line / band.num_diags();
                const int64_t d = band.upper - line % band.num_diags();
                const int64_t len = DiagLength(d, rows, cols);
                const int64_t offset = DiagOffset(d, len, max_len, align_);
                const T* matrix = src + b * rows * cols;
                T* line_out = dst + line * max_len;
                for (int64_t m = 0; m < max_len; ++m) {
                  const int64_t n = m - offset;
                  if (n < 0 || n >= len) {
                    line_out[m] = pad;
                  } else {
                    line_out[m] = d >= 0 ? matrix[n * cols + n + d] : matrix[(n - d) * cols + n];
                  }
                }
              }
            });
      }
    });
  }
};

// MatrixSetDiag (V1: input, diagonal; V2/V3: input, diagonal, k).
class MatrixSetDiagOp : public DiagFamilyOp {
 public:
  MatrixSetDiagOp(OpKernelConstruction* context, int version)
      : DiagFamilyOp(context, version,
                     version == 1 ? "MatrixSetDiag" : StrCat("MatrixSetDiagV", version)) {}

  void Compute(OpKernelContext* context) override {
    const Tensor& in = context->input(0);
    const Tensor& diag = context->input(1);
    OP_REQUIRES_OK(context, CheckMovableDType(in.dtype(), op_));
    DiagBand band;
    if (version_ > 1) OP_REQUIRES_OK(context, ReadBand(context->input(2), op_, &band));
    std::vector<int64_t> in_dims(in.shape().dim_sizes().begin(), in.shape().dim_sizes().end());
    StatusOr<std::vector<int64_t>> expected = MatrixDiagPartOutputDims(in_dims, band, op_);
    OP_REQUIRES_OK(context, expected.status());
    OP_REQUIRES(
        context, diag.shape() == TensorShape(*expected),
        errors::InvalidArgument(op_, ": diagonal must have shape ", TensorShape(*expected),
                                " for an input of shape ", in.shape(), " and k = [", band.lower,
                                ", ", band.upper, "] but has shape ", diag.shape()));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(context, context->allocate_output(0, in.shape(), &out));
    if (out->NumElements() == 0) return;
    const int64_t rows = in_dims[in_dims.size() - 2], cols = in_dims.back();
    const int64_t max_len = expected->back();
    const int64_t matrices = out->NumElements() / (rows * cols);
    DispatchByElementSize(in.dtype(), [&]<typename T>() {
      if constexpr (kMovable<T>) {
        const T* src = ElementsAs<T>(in);
        const T* values = ElementsAs<T>(diag);
        T* dst = ElementsAs<T>(*out);
        context->device()->intra_op_pool()->ParallelFor(
            matrices, rows * cols + 1, [&](int64_t first, int64_t last) {
              for (int64_t b = first; b < last; ++b) {
                T* matrix = dst + b * rows * cols;
                CopyElements(src + b * rows * cols, rows * cols, matrix);
                for (int64_t d = band.lower; d <= band.upper; ++d) {
                  const int64_t len = DiagLength(d, rows, cols);
                  const int64_t offset = DiagOffset(d, len, max_len, align_);
                  const T* line =
                      values + (b * band.num_diags() + band.upper - d) * max_len + offset;
                  for (int64_t n = 0; n < len; ++n) {
                    const int64_t i = d >= 0 ? n : n - d;
                    matrix[i * cols + i + d] = line[n];
                  }
                }
              }
            });
      }
    });
  }
};

template <typename Kernel, int kVersion>
std::unique_ptr<OpKernel> MakeVersioned(OpKernelConstruction* context) {
  return std::make_unique<Kernel>(context, kVersion);
}

}  // namespace

void RegisterLinalgDiagKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("Diag"), MakeKernel<DiagOp>);
  registry->Register(KernelBuilder("DiagPart"), MakeKernel<DiagPartOp>);
  registry->Register(KernelBuilder("MatrixDiag"), MakeVersioned<MatrixDiagOp, 1>);
  registry->Register(KernelBuilder("MatrixDiagV2"), MakeVersioned<MatrixDiagOp, 2>);
  registry->Register(KernelBuilder("MatrixDiagV3"), MakeVersioned<MatrixDiagOp, 3>);
  registry->Register(KernelBuilder("MatrixDiagPart"), MakeVersioned<MatrixDiagPartOp, 1>);
  registry->Register(KernelBuilder("MatrixDiagPartV2"), MakeVersioned<MatrixDiagPartOp, 2>);
  registry->Register(KernelBuilder("MatrixDiagPartV3"), MakeVersioned<MatrixDiagPartOp, 3>);
  registry->Register(KernelBuilder("MatrixSetDiag"), MakeVersioned<MatrixSetDiagOp, 1>);
  registry->Register(KernelBuilder("MatrixSetDiagV2"), MakeVersioned<MatrixSetDiagOp, 2>);
  registry->Register(KernelBuilder("MatrixSetDiagV3"), MakeVersioned<MatrixSetDiagOp, 3>);
}

}  // namespace weir
