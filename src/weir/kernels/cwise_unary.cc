// Unary elementwise kernels: math functions and activations for float and
// double, the integer-meaningful ones (Abs, Neg, Sign, Square, Relu, Relu6)
// for int32 and int64 too, and the IsNan/IsInf/IsFinite predicates.
// Where Eigen's functor has TensorFlow's semantics it is used as is (its
// vectorized exp, log, sin...); the rest are defined here.
#include <cmath>
#include <limits>

#include "weir/kernels/cwise_functors.h"
#include "weir/kernels/cwise_ops.h"
#include "weir/kernels/math_kernels.h"

namespace weir {
namespace functor {
namespace {

namespace ei = Eigen::internal;

template <typename T>
using Exp = ei::scalar_exp_op<T>;
template <typename T>
using Expm1 = ei::scalar_expm1_op<T>;
template <typename T>
using Log = ei::scalar_log_op<T>;
template <typename T>
using Log1p = ei::scalar_log1p_op<T>;
template <typename T>
using Rsqrt = ei::scalar_rsqrt_op<T>;
template <typename T>
using Reciprocal = ei::scalar_inverse_op<T>;
template <typename T>
using Floor = ei::scalar_floor_op<T>;
template <typename T>
using Ceil = ei::scalar_ceil_op<T>;
// Half to even: rint in the default rounding mode, which Weir never changes.
template <typename T>
using Round = ei::scalar_rint_op<T>;
template <typename T>
using Sin = ei::scalar_sin_op<T>;
template <typename T>
using Cos = ei::scalar_cos_op<T>;
template <typename T>
using Tanh = ei::scalar_tanh_op<T>;
template <typename T>
using Erf = ei::scalar_erf_op<T>;

// Square root, correctly rounded as IEEE requires (and NumPy and PyTorch
// give). Eigen 3.4's packet sqrt under EIGEN_FAST_MATH is a reciprocal-sqrt
// estimate refined by Newton steps: a third of results 1 ulp off, and NaN
// for +inf. The x86 instructions are exact and about as fast; elsewhere
// Eigen's is used, with +inf fixed up.
template <typename Packet>
Packet ExactSqrt(const Packet& a) {
  using T = typename ei::unpacket_traits<Packet>::type;
  const Packet inf = ei::pset1<Packet>(std::numeric_limits<T>::infinity());
  return ei::pselect(ei::pcmp_eq(a, inf), a, ei::psqrt(a));
}
#if defined(EIGEN_VECTORIZE_AVX512)
inline ei::Packet16f ExactSqrt(const ei::Packet16f& a) { return _mm512_sqrt_ps(a); }
inline ei::Packet8d ExactSqrt(const ei::Packet8d& a) { return _mm512_sqrt_pd(a); }
#endif
#if defined(EIGEN_VECTORIZE_AVX)
inline ei::Packet8f ExactSqrt(const ei::Packet8f& a) { return _mm256_sqrt_ps(a); }
inline ei::Packet4d ExactSqrt(const ei::Packet4d& a) { return _mm256_sqrt_pd(a); }
#endif
#if defined(EIGEN_VECTORIZE_SSE2)
inline ei::Packet4f ExactSqrt(const ei::Packet4f& a) { return _mm_sqrt_ps(a); }
inline ei::Packet2d ExactSqrt(const ei::Packet2d& a) { return _mm_sqrt_pd(a); }
#endif

template <typename T>
struct Sqrt {
  T operator()(const T& a) const { return std::sqrt(a); }
  template <typename Packet>
  Packet packetOp(const Packet& a) const {
    return ExactSqrt(a);
  }
};

// |x|; the most negative integer stays itself (it wraps).
template <typename T>
struct Abs {
  T operator()(const T& a) const {
    if constexpr (std::is_integral_v<T>) {
      return a < 0 ? WrappingNeg(a) : a;
    } else {
      return std::abs(a);
    }
  }
  template <typename Packet>
  Packet packetOp(const Packet& a) const {
    return ei::pabs(a);
  }
};

template <typename T>
struct Square {
  T operator()(const T& a) const { return Mul<T>()(a, a); }
  template <typename Packet>
  Packet packetOp(const Packet& a) const {
    return ei::pmul(a, a);
  }
};

// -1, 0 or 1; NaN stays NaN (as in NumPy) and -0 gives 0.
template <typename T>
struct Sign {
  T operator()(const T& a) const {
    if (a != a) return a;
    return static_cast<T>((a > T(0)) - (a < T(0)));
  }
};

// 1 / (1 + exp(-x)): 0 and 1 in the limits, and relatively accurate
// everywhere (Eigen's float logistic is a rational fit that is not, far
// left of 0).
template <typename T>
struct Sigmoid {
  T operator()(const T& a) const { return T(1) / (T(1) + std::exp(-a)); }
  template <typename Packet>
  Packet packetOp(const Packet& a) const {
    const Packet one = ei::pset1<Packet>(T(1));
    return ei::pdiv(one, ei::padd(one, ei::pexp(ei::pnegate(a))));
  }
};

// min(max(x, 0), 6); NaN stays NaN.
template <typename T>
struct Relu6 {
  T operator()(const T& a) const { return a < T(0) ? T(0) : (a > T(6) ? T(6) : a); }
  template <typename Packet>
  Packet packetOp(const Packet& a) const {
    const Packet six = ei::pset1<Packet>(T(6));
    if constexpr (std::is_floating_point_v<T>) {
      return ei::pmin<Eigen::PropagateNaN>(ei::pmax<Eigen::PropagateNaN>(a, ei::pzero(a)), six);
    } else {
      return ei::pmin(ei::pmax(a, ei::pzero(a)), six);
    }
  }
};

// x for x >= 0, exp(x) - 1 below.
template <typename T>
struct Elu {
  T operator()(const T& a) const { return a < T(0) ? std::expm1(a) : a; }
  template <typename Packet>
  Packet packetOp(const Packet& a) const {
    return ei::pselect(ei::pcmp_lt(a, ei::pzero(a)), ei::pexpm1(a), a);
  }
};

// scale * x for x >= 0, scale * alpha * (exp(x) - 1) below.
template <typename T>
struct Selu {
  T operator()(const T& a) const {
    return a < T(0) ? T(kSeluScale * kSeluAlpha) * std::expm1(a) : T(kSeluScale) * a;
  }
  template <typename Packet>
  Packet packetOp(const Packet& a) const {
    const Packet negative = ei::pmul(ei::pset1<Packet>(T(kSeluScale * kSeluAlpha)), ei::pexpm1(a));
    const Packet positive = ei::pmul(ei::pset1<Packet>(T(kSeluScale)), a);
    return ei::pselect(ei::pcmp_lt(a, ei::pzero(a)), negative, positive);
  }
};

// log(1 + exp(x)) as max(x, 0) + log1p(exp(-|x|)): exp never overflows,
// large x give x exactly and very negative x give exp(x).
template <typename T>
struct Softplus {
  T operator()(const T& a) const { return std::max(a, T(0)) + std::log1p(std::exp(-std::abs(a))); }
  template <typename Packet>
  Packet packetOp(const Packet& a) const {
    return ei::padd(ei::pmax(a, ei::pzero(a)), ei::plog1p(ei::pexp(ei::pnegate(ei::pabs(a)))));
  }
};

// x / (1 + |x|).
template <typename T>
struct Softsign {
  T operator()(const T& a) const { return a / (T(1) + std::abs(a)); }
  template <typename Packet>
  Packet packetOp(const Packet& a) const {
    return ei::pdiv(a, ei::padd(ei::pset1<Packet>(T(1)), ei::pabs(a)));
  }
};

// The C library's inverse and hyperbolic trigonometry (scalar).
#define WEIR_LIBM_FUNCTOR(Name, fn)                       \
  template <typename T>                                   \
  struct Name {                                           \
    T operator()(const T& a) const { return std::fn(a); } \
  };
WEIR_LIBM_FUNCTOR(Tan, tan)
WEIR_LIBM_FUNCTOR(Asin, asin)
WEIR_LIBM_FUNCTOR(Acos, acos)
WEIR_LIBM_FUNCTOR(Atan, atan)
WEIR_LIBM_FUNCTOR(Sinh, sinh)
WEIR_LIBM_FUNCTOR(Cosh, cosh)
WEIR_LIBM_FUNCTOR(Asinh, asinh)
WEIR_LIBM_FUNCTOR(Acosh, acosh)
WEIR_LIBM_FUNCTOR(Atanh, atanh)
#undef WEIR_LIBM_FUNCTOR

// The C library's erfc: accurate in the tail where 1 - erf(x) would round
// to 0 (GELU's erfc(-x / sqrt(2)) for very negative x).
template <typename T>
struct Erfc {
  T operator()(const T& a) const { return std::erfc(a); }
};

template <typename T>
struct IsNan {
  bool operator()(const T& a) const { return std::isnan(a); }
};
template <typename T>
struct IsInf {
  bool operator()(const T& a) const { return std::isinf(a); }
};
template <typename T>
struct IsFinite {
  bool operator()(const T& a) const { return std::isfinite(a); }
};

}  // namespace
}  // namespace functor
}  // namespace weir

namespace Eigen::internal {

template <typename T>
constexpr bool kHasExpPackets = kHasPackets<T> && packet_traits<T>::HasExp;

template <typename T>
struct functor_traits<weir::functor::Sqrt<T>> {
  enum {
    Cost = int{functor_traits<scalar_sqrt_op<T>>::Cost} + int{NumTraits<T>::AddCost},
    PacketAccess = functor_traits<scalar_sqrt_op<T>>::PacketAccess && packet_traits<T>::HasCmp
  };
};
template <typename T>
struct functor_traits<weir::functor::Abs<T>> {
  enum {
    Cost = NumTraits<T>::AddCost,
    // Integer packets' abs would be fine too, but must wrap the same way.
    PacketAccess = std::is_floating_point_v<T> && kHasPackets<T> && packet_traits<T>::HasAbs
  };
};
template <typename T>
struct functor_traits<weir::functor::Square<T>> {
  enum { Cost = NumTraits<T>::MulCost, PacketAccess = kHasPackets<T> && packet_traits<T>::HasMul };
};
template <typename T>
struct functor_traits<weir::functor::Sign<T>> {
  enum { Cost = 3 * NumTraits<T>::AddCost, PacketAccess = false };
};
template <typename T>
struct functor_traits<weir::functor::Sigmoid<T>> {
  enum {
    Cost = int{functor_traits<scalar_exp_op<T>>::Cost} + int{scalar_div_cost<T, true>::value},
    PacketAccess = kHasExpPackets<T> && packet_traits<T>::HasDiv
  };
};
template <typename T>
struct functor_traits<weir::functor::Relu6<T>> {
  enum {
    Cost = 2 * NumTraits<T>::AddCost,
    PacketAccess = kHasPackets<T> && packet_traits<T>::HasMax && packet_traits<T>::HasMin
  };
};
template <typename T>
struct functor_traits<weir::functor::Elu<T>> {
  enum {
    Cost = int{functor_traits<scalar_expm1_op<T>>::Cost} + int{NumTraits<T>::AddCost},
    PacketAccess = kHasPackets<T> && packet_traits<T>::HasExpm1 && packet_traits<T>::HasCmp
  };
};
template <typename T>
struct functor_traits<weir::functor::Selu<T>> {
  enum {
    Cost = int{functor_traits<scalar_expm1_op<T>>::Cost} + 3 * int{NumTraits<T>::MulCost},
    PacketAccess = kHasPackets<T> && packet_traits<T>::HasExpm1 && packet_traits<T>::HasCmp
  };
};
template <typename T>
struct functor_traits<weir::functor::Softplus<T>> {
  enum {
    Cost =
        int{functor_traits<scalar_exp_op<T>>::Cost} + int{functor_traits<scalar_log1p_op<T>>::Cost},
    PacketAccess = kHasExpPackets<T> && packet_traits<T>::HasLog1p && packet_traits<T>::HasAbs
  };
};
template <typename T>
struct functor_traits<weir::functor::Softsign<T>> {
  enum {
    Cost = int{scalar_div_cost<T, true>::value} + 2 * int{NumTraits<T>::AddCost},
    PacketAccess = kHasPackets<T> && packet_traits<T>::HasDiv && packet_traits<T>::HasAbs
  };
};
#define WEIR_LIBM_TRAITS(Name)                                        \
  template <typename T>                                               \
  struct functor_traits<weir::functor::Name<T>> {                     \
    enum { Cost = 20 * NumTraits<T>::MulCost, PacketAccess = false }; \
  };
WEIR_LIBM_TRAITS(Tan)
WEIR_LIBM_TRAITS(Asin)
WEIR_LIBM_TRAITS(Acos)
WEIR_LIBM_TRAITS(Atan)
WEIR_LIBM_TRAITS(Sinh)
WEIR_LIBM_TRAITS(Cosh)
WEIR_LIBM_TRAITS(Asinh)
WEIR_LIBM_TRAITS(Acosh)
WEIR_LIBM_TRAITS(Atanh)
#undef WEIR_LIBM_TRAITS
template <typename T>
struct functor_traits<weir::functor::Erfc<T>> {
  enum { Cost = 20 * NumTraits<T>::MulCost, PacketAccess = false };
};
template <typename T>
struct functor_traits<weir::functor::IsNan<T>> {
  enum { Cost = NumTraits<T>::AddCost, PacketAccess = false };
};
template <typename T>
struct functor_traits<weir::functor::IsInf<T>> {
  enum { Cost = NumTraits<T>::AddCost, PacketAccess = false };
};
template <typename T>
struct functor_traits<weir::functor::IsFinite<T>> {
  enum { Cost = NumTraits<T>::AddCost, PacketAccess = false };
};

}  // namespace Eigen::internal

namespace weir {

void RegisterCwiseUnaryKernels(KernelRegistry* registry) {
  using namespace functor;  // NOLINT: the functor names are the op names
  RegisterUnary<Neg, float, double, int32_t, int64_t>(registry, "Neg");
  RegisterUnary<Abs, float, double, int32_t, int64_t>(registry, "Abs");
  RegisterUnary<Sign, float, double, int32_t, int64_t>(registry, "Sign");
  RegisterUnary<Square, float, double, int32_t, int64_t>(registry, "Square");
  RegisterUnary<Relu, float, double, int32_t, int64_t>(registry, "Relu");
  RegisterUnary<Relu6, float, double, int32_t, int64_t>(registry, "Relu6");
  RegisterUnary<Exp, float, double>(registry, "Exp");
  RegisterUnary<Expm1, float, double>(registry, "Expm1");
  RegisterUnary<Log, float, double>(registry, "Log");
  RegisterUnary<Log1p, float, double>(registry, "Log1p");
  RegisterUnary<Sqrt, float, double>(registry, "Sqrt");
  RegisterUnary<Rsqrt, float, double>(registry, "Rsqrt");
  RegisterUnary<Reciprocal, float, double>(registry, "Reciprocal");
  RegisterUnary<Floor, float, double>(registry, "Floor");
  RegisterUnary<Ceil, float, double>(registry, "Ceil");
  RegisterUnary<Round, float, double>(registry, "Round");
  RegisterUnary<Sin, float, double>(registry, "Sin");
  RegisterUnary<Cos, float, double>(registry, "Cos");
  RegisterUnary<Tanh, float, double>(registry, "Tanh");
  RegisterUnary<Sigmoid, float, double>(registry, "Sigmoid");
  RegisterUnary<Elu, float, double>(registry, "Elu");
  RegisterUnary<Selu, float, double>(registry, "Selu");
  RegisterUnary<Softplus, float, double>(registry, "Softplus");
  RegisterUnary<Erf, float, double>(registry, "Erf");
  RegisterUnary<Erfc, float, double>(registry, "Erfc");
  RegisterUnary<Softsign, float, double>(registry, "Softsign");
  RegisterUnary<Tan, float, double>(registry, "Tan");
  RegisterUnary<Asin, float, double>(registry, "Asin");
  RegisterUnary<Acos, float, double>(registry, "Acos");
  RegisterUnary<Atan, float, double>(registry, "Atan");
  RegisterUnary<Sinh, float, double>(registry, "Sinh");
  RegisterUnary<Cosh, float, double>(registry, "Cosh");
  RegisterUnary<Asinh, float, double>(registry, "Asinh");
  RegisterUnary<Acosh, float, double>(registry, "Acosh");
  RegisterUnary<Atanh, float, double>(registry, "Atanh");
  RegisterUnary<IsNan, float, double>(registry, "IsNan");
  RegisterUnary<IsInf, float, double>(registry, "IsInf");
  RegisterUnary<IsFinite, float, double>(registry, "IsFinite");
}

}  // namespace weir
