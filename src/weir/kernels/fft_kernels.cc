// FFT, IFFT, RFFT and IRFFT over the innermost 1, 2 or 3 dims
// (ops/signal_ops.cc), on Eigen's TensorFFT (Cooley-Tukey for powers of
// two, Bluestein otherwise), for complex64 and complex128. The dims in
// front of the transformed ones are one batch dim here. Sizes from
// fft_length go through CheckedShape before anything is allocated.
#include <array>
#include <complex>
#include <unsupported/Eigen/CXX11/Tensor>

#include "weir/framework/eigen_tensor.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/shape_util.h"
#include "weir/kernels/type_list.h"

namespace weir {
namespace {

// Copies the [batch, src_dims...] block into [batch, dst_dims...], the
// overlap of the two, zeros elsewhere (crop or zero-pad per dim).
template <typename From, typename To>
void CropOrPad(const From* src, const std::vector<int64_t>& src_dims, To* dst,
               const std::vector<int64_t>& dst_dims, int64_t batch) {
  const int rank = static_cast<int>(src_dims.size());
  int64_t src_size = 1, dst_size = 1;
  for (int k = 0; k < rank; ++k) src_size *= src_dims[k], dst_size *= dst_dims[k];
  std::fill_n(dst, batch * dst_size, To(0));
  std::vector<int64_t> index(rank, 0);
  const int64_t inner = std::min(src_dims[rank - 1], dst_dims[rank - 1]);
  for (int64_t b = 0; b < batch; ++b) {
    std::fill(index.begin(), index.end(), 0);
    while (true) {
      // Offsets of row `index` (the last dim walks inside the row).
      int64_t s = 0, d = 0;
      bool inside = true;
      for (int k = 0; k < rank - 1; ++k) {
        if (index[k] >= std::min(src_dims[k], dst_dims[k])) inside = false;
        s = s * src_dims[k] + index[k];
        d = d * dst_dims[k] + index[k];
      }
      if (inside) {
        const From* from = src + b * src_size + s * src_dims[rank - 1];
        To* to = dst + b * dst_size + d * dst_dims[rank - 1];
        for (int64_t j = 0; j < inner; ++j) to[j] = To(from[j]);
      }
      int k = rank - 2;
      for (; k >= 0; --k) {
        if (++index[k] < std::min(src_dims[k], dst_dims[k])) break;
        index[k] = 0;
      }
      if (k < 0) break;
    }
  }
}

// FFTs of `data` ([batch, dims...], row-major) over dims [first, last]
// (1-based: dim 0 is the batch), in place.
template <typename C, int R>
void Transform(C* data, int64_t batch, const std::vector<int64_t>& dims, int first, int last,
               bool forward) {
  if (first > last) return;
  Eigen::array<Eigen::Index, R + 1> shape;
  shape[0] = batch;
  for (int k = 0; k < R; ++k) shape[k + 1] = dims[k];
  for (Eigen::Index d : shape) {
    if (d == 0) return;
  }
  Eigen::TensorMap<Eigen::Tensor<C, R + 1, Eigen::RowMajor, Eigen::Index>> map(data, shape);
  std::vector<int> axes;
  for (int k = first; k <= last; ++k) axes.push_back(k);
  // In place: the FFT evaluator copies its input into the destination
  // buffer element by element before transforming there.
  if (forward) {
    map = map.template fft<Eigen::BothParts, Eigen::FFT_FORWARD>(axes);
  } else {
    map = map.template fft<Eigen::BothParts, Eigen::FFT_REVERSE>(axes);
  }
}

std::string Where(OpKernel* kernel, const Tensor& input) {
  return StrCat(kernel->type_string(), " (node ", kernel->name(), ", input ", input.shape(), " of ",
                input.dtype(), ")");
}

template <typename C, int R, bool kForward>
class ComplexFftOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    OP_REQUIRES(context, input.dims() >= R,
                errors::InvalidArgument(Where(this, input), ": input must have rank >= ", R));
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, input.shape(), &out));
    std::vector<int64_t> dims(R);
    for (int k = 0; k < R; ++k) dims[k] = input.dim_size(input.dims() - R + k);
    const int64_t batch = DimProduct(input.shape(), 0, input.dims() - R);
    std::copy_n(input.data<C>(), input.NumElements(), out->data<C>());
    Transform<C, R>(out->data<C>(), batch, dims, 1, R, kForward);
  }
};

// The largest transform fft_length may ask for (2^28 points, 2 GiB of
// complex64 scratch per batch element): a value from the graph must not
// make a kernel allocate and transform for minutes (Eigen's line loops
// count in int, too).
constexpr int64_t kMaxFftPoints = int64_t{1} << 28;

// The fft_length vector, checked: R non-negative int32 values of at most
// kMaxFftPoints points together.
template <int R>
StatusOr<std::vector<int64_t>> FftLength(const Tensor& t, const std::string& where) {
  if (t.dims() != 1 || t.NumElements() != R) {
    return errors::InvalidArgument(where, ": fft_length must be a vector of ", R, " elements, not ",
                                   t.shape());
  }
  std::vector<int64_t> length(R);
  int64_t points = 1;
  for (int k = 0; k < R; ++k) {
    length[k] = t.data<int32_t>()[k];
    if (length[k] < 0) {
      return errors::InvalidArgument(where, ": fft_length ", length[k], " must not be negative");
    }
    points = std::min(points * std::max<int64_t>(length[k], 1), kMaxFftPoints + 1);
  }
  if (points > kMaxFftPoints) {
    return errors::InvalidArgument(where, ": fft_length [", StrJoin(length, ","),
                                   "] asks for more than ", kMaxFftPoints, " points");
  }
  return length;
}

template <typename T, int R>
class RealFftOp : public OpKernel {
 public:
  using C = std::complex<T>;
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    const std::string where = Where(this, input);
    OP_REQUIRES(context, input.dims() >= R,
                errors::InvalidArgument(where, ": input must have rank >= ", R));
    StatusOr<std::vector<int64_t>> length = FftLength<R>(context->input(1), where);
    OP_REQUIRES_OK(context, length.status());
    std::vector<int64_t> out_dims(input.shape().dim_sizes().begin(),
                                  input.shape().dim_sizes().end());
    std::vector<int64_t> in_dims(R), half = *length;
    half[R - 1] = (*length)[R - 1] / 2 + 1;
    for (int k = 0; k < R; ++k) {
      in_dims[k] = input.dim_size(input.dims() - R + k);
      out_dims[input.dims() - R + k] = half[k];
    }
    StatusOr<TensorShape> out_shape = CheckedShape(out_dims, where);
    OP_REQUIRES_OK(context, out_shape.status());
    // The full transform is as large as the output, twice over at most.
    std::vector<int64_t> full_dims = out_dims;
    full_dims.back() = (*length)[R - 1];
    StatusOr<TensorShape> full_shape = CheckedShape(full_dims, where);
    OP_REQUIRES_OK(context, full_shape.status());
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, *out_shape, &out));
    const int64_t batch = DimProduct(input.shape(), 0, input.dims() - R);
    if (out->NumElements() == 0) return;
    // Scratch through the device's allocator, so its size limits apply.
    Tensor full;
    OP_REQUIRES_OK(context, context->allocate_temp(kDTypeOf<C>, *full_shape, &full));
    CropOrPad(input.data<T>(), in_dims, full.data<C>(), *length, batch);
    Transform<C, R>(full.data<C>(), batch, *length, 1, R, true);
    CropOrPad(full.data<C>(), *length, out->data<C>(), half, batch);
  }
};

template <typename T, int R>
class InverseRealFftOp : public OpKernel {
 public:
  using C = std::complex<T>;
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    const std::string where = Where(this, input);
    OP_REQUIRES(context, input.dims() >= R,
                errors::InvalidArgument(where, ": input must have rank >= ", R));
    StatusOr<std::vector<int64_t>> length = FftLength<R>(context->input(1), where);
    OP_REQUIRES_OK(context, length.status());
    std::vector<int64_t> out_dims(input.shape().dim_sizes().begin(),
                                  input.shape().dim_sizes().end());
    std::vector<int64_t> in_dims(R), half = *length;
    const int64_t last = (*length)[R - 1];
    half[R - 1] = last / 2 + 1;
    for (int k = 0; k < R; ++k) {
      in_dims[k] = input.dim_size(input.dims() - R + k);
      out_dims[input.dims() - R + k] = (*length)[k];
    }
    StatusOr<TensorShape> out_shape = CheckedShape(out_dims, where);
    OP_REQUIRES_OK(context, out_shape.status());
    std::vector<int64_t> half_dims = out_dims;
    half_dims.back() = half[R - 1];
    StatusOr<TensorShape> half_shape = CheckedShape(half_dims, where);
    OP_REQUIRES_OK(context, half_shape.status());
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, *out_shape, &out));
    const int64_t batch = DimProduct(input.shape(), 0, input.dims() - R);
    if (out->NumElements() == 0) return;
    // The half spectrum, inverted over all but the last dim.
    Tensor spectrum_tensor;
    OP_REQUIRES_OK(context, context->allocate_temp(kDTypeOf<C>, *half_shape, &spectrum_tensor));
    C* spectrum = spectrum_tensor.data<C>();
    CropOrPad(input.data<C>(), in_dims, spectrum, half, batch);
    Transform<C, R>(spectrum, batch, half, 1, R - 1, false);
    // Each row extended by Hermitian symmetry and inverted: the imaginary
    // parts of the zero and Nyquist terms drop out with the real part.
    const int64_t rows = out->NumElements() / last;
    std::vector<C> row(last);
    T* dst = out->data<T>();
    for (int64_t r = 0; r < rows; ++r) {
      const C* h = spectrum + r * half[R - 1];
      for (int64_t j = 0; j < last; ++j) {
        row[j] = j < half[R - 1] ? h[j] : std::conj(h[last - j]);
      }
      Transform<C, 1>(row.data(), 1, {last}, 1, 1, false);
      for (int64_t j = 0; j < last; ++j) dst[r * last + j] = row[j].real();
    }
  }
};

template <int R>
void RegisterRank(KernelRegistry* registry) {
  const std::string suffix = R == 1 ? "" : std::to_string(R) + "D";
  ForEachType<float, double>([&]<typename T>() {
    using C = std::complex<T>;
    registry->Register(KernelBuilder("FFT" + suffix).TypeConstraint("Tcomplex", kDTypeOf<C>),
                       MakeKernel<ComplexFftOp<C, R, true>>);
    registry->Register(KernelBuilder("IFFT" + suffix).TypeConstraint("Tcomplex", kDTypeOf<C>),
                       MakeKernel<ComplexFftOp<C, R, false>>);
    registry->Register(KernelBuilder("RFFT" + suffix)
                           .TypeConstraint("Treal", kDTypeOf<T>)
                           .TypeConstraint("Tcomplex", kDTypeOf<C>),
                       MakeKernel<RealFftOp<T, R>>);
    registry->Register(KernelBuilder("IRFFT" + suffix)
                           .TypeConstraint("Treal", kDTypeOf<T>)
                           .TypeConstraint("Tcomplex", kDTypeOf<C>),
                       MakeKernel<InverseRealFftOp<T, R>>);
  });
}

}  // namespace

void RegisterFftKernels(KernelRegistry* registry) {
  RegisterRank<1>(registry);
  RegisterRank<2>(registry);
  RegisterRank<3>(registry);
}

}  // namespace weir
