// Cast between float, double, half, bfloat16, int8, int16, int32, int64,
// uint8 and bool. One kernel serves every pair: its constructor picks the
// element conversion for (SrcT, DstT, Truncate) from a table built by
// templates, and Compute runs it over blocks on the intra-op pool.
//
// Conversion rules, chosen to be defined for every input (C++ leaves
// out-of-range float-to-int undefined):
//   float -> integer: rounds toward zero, saturates at the integer's range,
//                     NaN becomes 0.
//   integer -> integer: keeps the low bits (two's complement wrap).
//   x -> bool: x != 0 (NaN is true); bool -> x: 0 or 1.
//   float -> narrower float: rounds to nearest even, or toward zero with
//                     Truncate (overflow then gives the largest finite value).
//   double -> half/bfloat16 goes through float.
#include <bit>
#include <cmath>
#include <limits>
#include <type_traits>

#include "weir/base/denormal.h"
#include "weir/base/threadpool.h"
#include "weir/framework/eigen_tensor.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/float16_convert.h"
#include "weir/kernels/math_kernels.h"
#include "weir/kernels/type_list.h"

namespace weir {
namespace {

template <typename T>
constexpr bool kIsFloat = std::is_floating_point_v<T> || std::is_same_v<T, Eigen::half> ||
                          std::is_same_v<T, Eigen::bfloat16>;

// The unsigned integer with T's bits.
template <typename T>
using Bits = std::conditional_t<sizeof(T) == 2, uint16_t,
                                std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>;

template <typename T>
double ToDouble(T x) {
  if constexpr (std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16>) {
    return static_cast<float>(x);
  } else {
    return static_cast<double>(x);
  }
}

template <typename Dst, typename Src>
Dst FloatToFloat(Src x, bool truncate) {
  Dst rounded;
  if constexpr (std::is_same_v<Dst, Eigen::half> || std::is_same_v<Dst, Eigen::bfloat16>) {
    rounded = static_cast<Dst>(static_cast<float>(x));
  } else if constexpr (std::is_same_v<Src, Eigen::half> ||
                       std::is_same_v<Src, Eigen::bfloat16>) {
    rounded = static_cast<Dst>(static_cast<float>(x));
  } else {
    rounded = static_cast<Dst>(x);
  }
  if (truncate && std::abs(ToDouble(rounded)) > std::abs(ToDouble(x))) {
    // Rounding went away from zero: step one unit toward zero. In a
    // sign-magnitude format that is the bit pattern minus one, and from
    // infinity it lands on the largest finite value.
    rounded = std::bit_cast<Dst>(static_cast<Bits<Dst>>(std::bit_cast<Bits<Dst>>(rounded) - 1));
  }
  return rounded;
}

template <typename Dst, typename Src>
Dst FloatToInt(Src x) {
  const double v = ToDouble(x);
  if (std::isnan(v)) return 0;
  // Both limits are powers of two (or one less), exact in double.
  if (v <= static_cast<double>(std::numeric_limits<Dst>::min())) {
    return std::numeric_limits<Dst>::min();
  }
  if (v >= static_cast<double>(std::numeric_limits<Dst>::max())) {
    return std::numeric_limits<Dst>::max();
  }
  return static_cast<Dst>(v);
}

template <typename T>
constexpr bool kIsComplex = std::is_same_v<T, complex64> || std::is_same_v<T, complex128>;

template <typename Dst, typename Src>
Dst Convert(Src x, bool truncate) {
  // Complex values: a real source becomes the real part; a complex one
  // converts its parts, or to a real type its real part (as TensorFlow).
  if constexpr (kIsComplex<Dst> && kIsComplex<Src>) {
    using Part = typename Dst::value_type;
    return Dst(static_cast<Part>(x.real()), static_cast<Part>(x.imag()));
  } else if constexpr (kIsComplex<Dst>) {
    return Dst(Convert<typename Dst::value_type>(x, truncate), 0);
  } else if constexpr (kIsComplex<Src>) {
    if constexpr (std::is_same_v<Dst, bool>) return x != Src(0);
    else return Convert<Dst>(x.real(), truncate);
  } else if constexpr (std::is_same_v<Dst, bool>) {
    return ToDouble(x) != 0;
  } else if constexpr (std::is_same_v<Src, bool>) {
    return static_cast<Dst>(x ? 1.0f : 0.0f);
  } else if constexpr (kIsFloat<Src> && kIsFloat<Dst>) {
    return FloatToFloat<Dst>(x, truncate);
  } else if constexpr (kIsFloat<Src>) {
    return FloatToInt<Dst>(x);
  } else if constexpr (std::is_same_v<Dst, Eigen::half> || std::is_same_v<Dst, Eigen::bfloat16>) {
    return static_cast<Dst>(static_cast<float>(x));
  } else {
    return static_cast<Dst>(x);
  }
}

using CastFn = void (*)(const void* in, void* out, int64_t begin, int64_t end, bool truncate);

template <typename Src, typename Dst>
void CastRange(const void* in, void* out, int64_t begin, int64_t end, bool truncate) {
  const Src* src = static_cast<const Src*>(in);
  Dst* dst = static_cast<Dst*>(out);
  for (int64_t i = begin; i < end; ++i) dst[i] = Convert<Dst>(src[i], truncate);
}

// The pairs of a mixed-precision graph, vectorized (float16_convert.h);
// the same results as CastRange.
template <auto kConvert, typename Src, typename Dst>
void BulkCastRange(const void* in, void* out, int64_t begin, int64_t end, bool) {
  kConvert(static_cast<const Src*>(in) + begin, static_cast<Dst*>(out) + begin, end - begin);
}

CastFn BulkCast(DType src, DType dst, bool truncate) {
  if (src == DT_HALF && dst == DT_FLOAT) return &BulkCastRange<&HalfToFloat, Eigen::half, float>;
  if (src == DT_BFLOAT16 && dst == DT_FLOAT) {
    return &BulkCastRange<&Bfloat16ToFloat, Eigen::bfloat16, float>;
  }
  if (truncate) return nullptr;
  if (src == DT_FLOAT && dst == DT_HALF) return &BulkCastRange<&FloatToHalf, float, Eigen::half>;
  if (src == DT_FLOAT && dst == DT_BFLOAT16) {
    return &BulkCastRange<&FloatToBfloat16, float, Eigen::bfloat16>;
  }
  return nullptr;
}

template <typename Fn>
bool DispatchCastType(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DT_FLOAT: fn.template operator()<float>(); return true;
    case DT_DOUBLE: fn.template operator()<double>(); return true;
    case DT_HALF: fn.template operator()<Eigen::half>(); return true;
    case DT_BFLOAT16: fn.template operator()<Eigen::bfloat16>(); return true;
    case DT_INT8: fn.template operator()<int8_t>(); return true;
    case DT_INT16: fn.template operator()<int16_t>(); return true;
    case DT_INT32: fn.template operator()<int32_t>(); return true;
    case DT_INT64: fn.template operator()<int64_t>(); return true;
    case DT_UINT8: fn.template operator()<uint8_t>(); return true;
    case DT_BOOL: fn.template operator()<bool>(); return true;
    case DT_COMPLEX64: fn.template operator()<complex64>(); return true;
    case DT_COMPLEX128: fn.template operator()<complex128>(); return true;
    default: return false;
  }
}

constexpr DType kCastTypes[] = {DT_FLOAT, DT_DOUBLE, DT_HALF,      DT_BFLOAT16,
                                DT_INT8,  DT_INT16,  DT_INT32,     DT_INT64,
                                DT_UINT8, DT_BOOL,   DT_COMPLEX64, DT_COMPLEX128};

class CastOp : public OpKernel {
 public:
  explicit CastOp(OpKernelConstruction* context) : OpKernel(context) {
    DType src, dst;
    Status status = context->GetAttr("SrcT", &src);
    status.Update(context->GetAttr("DstT", &dst));
    status.Update(context->GetAttr("Truncate", &truncate_));
    if (status.ok() && src != dst) cast_ = BulkCast(src, dst, truncate_);
    if (status.ok() && src != dst && cast_ == nullptr) {
      DispatchCastType(src, [&]<typename Src>() {
        DispatchCastType(dst, [&]<typename Dst>() { cast_ = &CastRange<Src, Dst>; });
      });
      if (cast_ == nullptr) {
        status = errors::InvalidArgument("Cast: no conversion from ", src, " to ", dst);
      }
    }
    context->SetStatus(status);
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& x = context->input(0);
    if (cast_ == nullptr) {  // SrcT == DstT
      context->set_output(0, x);
      return;
    }
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, x.shape(), &out));
    ScopedFlushDenormals flush_denormals;
    const void* in_data = x.raw_data();
    void* out_data = out->raw_data();
    context->device()->intra_op_pool()->ParallelFor(
        x.NumElements(), 4, [&](int64_t begin, int64_t end) {
          cast_(in_data, out_data, begin, end, truncate_);
        });
  }

 private:
  CastFn cast_ = nullptr;
  bool truncate_ = false;
};

}  // namespace

void RegisterCastKernels(KernelRegistry* registry) {
  KernelBuilder builder("Cast");
  for (DType dtype : kCastTypes) {
    builder.TypeConstraint("SrcT", dtype).TypeConstraint("DstT", dtype);
  }
  registry->Register(builder, MakeKernel<CastOp>);
}

}  // namespace weir
