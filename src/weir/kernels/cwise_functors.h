// Elementwise functors for Eigen tensor expressions, with the semantics Weir
// promises: signed integers wrap on overflow (two's complement, as the
// SIMD instructions do) instead of being undefined behavior, integer
// division truncates toward zero with INT_MIN / -1 wrapping to INT_MIN, and
// floor division and modulo follow Python (the remainder has the divisor's
// sign). Floats use the plain IEEE operations, NaN propagating through
// Maximum and Minimum; each functor has the packet version Eigen vectorizes
// with where the type has one.
//
// A functor whose integer form rejects some divisors or exponents declares
//   static bool ValidY(T y);               // false: the kernel fails
//   static constexpr char kInvalidY[] = "Integer division by zero";
// and kernels check every y before computing anything.
#pragma once

#include <cmath>
#include <type_traits>

#include "weir/framework/eigen_tensor.h"

namespace weir::functor {

// Unsigned arithmetic of at least int's width: small unsigned types would
// promote to (signed) int and could overflow there.
template <typename T>
using WrapType =
    std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <typename T>
constexpr bool kWraps = std::is_integral_v<T> && std::is_signed_v<T>;

template <typename T, typename Result = T>
struct BinaryBase {
  using first_argument_type = T;
  using second_argument_type = T;
  using result_type = Result;
};

template <typename T>
T WrappingNeg(T a) {
  if constexpr (kWraps<T>) {
    return static_cast<T>(WrapType<T>(0) - static_cast<WrapType<T>>(a));
  } else {
    return -a;
  }
}

template <typename T>
struct Add : BinaryBase<T> {
  T operator()(const T& a, const T& b) const {
    if constexpr (kWraps<T>) {
      return static_cast<T>(static_cast<WrapType<T>>(a) + static_cast<WrapType<T>>(b));
    } else {
      return a + b;
    }
  }
  template <typename Packet>
  Packet packetOp(const Packet& a, const Packet& b) const {
    return Eigen::internal::padd(a, b);
  }
};

template <typename T>
struct Sub : BinaryBase<T> {
  T operator()(const T& a, const T& b) const {
    if constexpr (kWraps<T>) {
      return static_cast<T>(static_cast<WrapType<T>>(a) - static_cast<WrapType<T>>(b));
    } else {
      return a - b;
    }
  }
  template <typename Packet>
  Packet packetOp(const Packet& a, const Packet& b) const {
    return Eigen::internal::psub(a, b);
  }
};

template <typename T>
struct Mul : BinaryBase<T> {
  T operator()(const T& a, const T& b) const {
    if constexpr (kWraps<T>) {
      return static_cast<T>(static_cast<WrapType<T>>(a) * static_cast<WrapType<T>>(b));
    } else {
      return a * b;
    }
  }
  template <typename Packet>
  Packet packetOp(const Packet& a, const Packet& b) const {
    return Eigen::internal::pmul(a, b);
  }
};

// Integers divide toward zero.
template <typename T>
struct Div : BinaryBase<T> {
  static bool ValidY(T y) requires std::is_integral_v<T> { return y != 0; }
  static constexpr char kInvalidY[] = "Integer division by zero";
  T operator()(const T& a, const T& b) const {
    if constexpr (kWraps<T>) {
      // The one quotient that overflows (INT_MIN / -1) traps on x86.
      if (b == -1) return WrappingNeg(a);
      return a / b;
    } else {
      return a / b;
    }
  }
  template <typename Packet>
  Packet packetOp(const Packet& a, const Packet& b) const {
    return Eigen::internal::pdiv(a, b);
  }
};

// floor(a / b). Integer division by zero is an error; floats give ±inf
// or NaN as a / b does.
template <typename T>
struct FloorDiv : BinaryBase<T> {
  static bool ValidY(T y) requires std::is_integral_v<T> { return y != 0; }
  static constexpr char kInvalidY[] = "Integer division by zero";
  T operator()(const T& a, const T& b) const {
    if constexpr (std::is_integral_v<T>) {
      if (kWraps<T> && b == T(-1)) return WrappingNeg(a);
      const T quotient = a / b;
      const T remainder = a % b;
      // C++ truncates: step down when the exact quotient was negative.
      return remainder != 0 && ((remainder < 0) != (b < 0)) ? quotient - 1 : quotient;
    } else {
      return std::floor(a / b);
    }
  }
  template <typename Packet>
  Packet packetOp(const Packet& a, const Packet& b) const {
    return Eigen::internal::pfloor(Eigen::internal::pdiv(a, b));
  }
};

// a - floor(a / b) * b, computed exactly: the result is 0 or has b's sign,
// as in Python. Floats: x mod 0 and inf mod y are NaN, x mod ±inf is x or
// ±inf by sign (Python's rules).
template <typename T>
struct FloorMod : BinaryBase<T> {
  static bool ValidY(T y) requires std::is_integral_v<T> { return y != 0; }
  static constexpr char kInvalidY[] = "Integer division by zero";
  T operator()(const T& a, const T& b) const {
    if constexpr (std::is_integral_v<T>) {
      if (kWraps<T> && b == T(-1)) return 0;  // INT_MIN % -1 traps on x86
      const T remainder = a % b;
      return remainder != 0 && ((remainder < 0) != (b < 0)) ? remainder + b : remainder;
    } else {
      const T remainder = std::fmod(a, b);
      if (remainder == 0) return std::copysign(T(0), b);
      return (remainder < 0) != (b < 0) ? remainder + b : remainder;
    }
  }
};

// NaN if either side is NaN.
// x / y, or 0 where y is 0 (tf.math.divide_no_nan).
template <typename T>
struct DivNoNan : BinaryBase<T> {
  T operator()(const T& a, const T& b) const { return b == T(0) ? T(0) : a / b; }
  template <typename Packet>
  Packet packetOp(const Packet& a, const Packet& b) const {
    namespace ei = Eigen::internal;
    const Packet zero = ei::pzero(b);
    return ei::pselect(ei::pcmp_eq(b, zero), zero, ei::pdiv(a, b));
  }
};

template <typename T>
struct Maximum : BinaryBase<T> {
  T operator()(const T& a, const T& b) const { return (a > b || a != a) ? a : b; }
  template <typename Packet>
  Packet packetOp(const Packet& a, const Packet& b) const {
    if constexpr (std::is_floating_point_v<T>) {
      return Eigen::internal::pmax<Eigen::PropagateNaN>(a, b);
    } else {
      return Eigen::internal::pmax(a, b);
    }
  }
};

template <typename T>
struct Minimum : BinaryBase<T> {
  T operator()(const T& a, const T& b) const { return (a < b || a != a) ? a : b; }
  template <typename Packet>
  Packet packetOp(const Packet& a, const Packet& b) const {
    if constexpr (std::is_floating_point_v<T>) {
      return Eigen::internal::pmin<Eigen::PropagateNaN>(a, b);
    } else {
      return Eigen::internal::pmin(a, b);
    }
  }
};

// a ** b. Integers: exact, wrapping, pow(0, 0) = 1, and a negative exponent
// is an error. Floats: std::pow, unvectorized: Eigen 3.4's packet pow gets
// the sign wrong for -0 and -inf to odd integer powers.
template <typename T>
struct Pow : BinaryBase<T> {
  static bool ValidY(T y) requires std::is_integral_v<T> { return y >= 0; }
  static constexpr char kInvalidY[] = "Integers to negative integer powers are not allowed";
  T operator()(const T& a, const T& b) const {
    if constexpr (std::is_integral_v<T>) {
      using U = WrapType<T>;
      U result = 1, base = static_cast<U>(a);
      for (U exponent = static_cast<U>(b); exponent != 0; exponent >>= 1) {
        if (exponent & 1) result *= base;
        base *= base;
      }
      return static_cast<T>(result);
    } else {
      return std::pow(a, b);
    }
  }
};

// (a - b)^2, wrapping for integers.
template <typename T>
struct SquaredDifference : BinaryBase<T> {
  T operator()(const T& a, const T& b) const {
    const T difference = Sub<T>()(a, b);
    return Mul<T>()(difference, difference);
  }
  template <typename Packet>
  Packet packetOp(const Packet& a, const Packet& b) const {
    const Packet difference = Eigen::internal::psub(a, b);
    return Eigen::internal::pmul(difference, difference);
  }
};

// Selu's constants, from Klambauer et al., "Self-Normalizing Neural
// Networks" (shared by Selu and SeluGrad).
inline constexpr double kSeluScale = 1.0507009873554804934193349852946;
inline constexpr double kSeluAlpha = 1.6732632423543772848170429916717;

template <typename T>
struct Neg {
  T operator()(const T& a) const { return WrappingNeg(a); }
  template <typename Packet>
  Packet packetOp(const Packet& a) const {
    return Eigen::internal::pnegate(a);
  }
};

// max(a, 0), except that NaN stays NaN.
template <typename T>
struct Relu {
  T operator()(const T& a) const { return a < T(0) ? T(0) : a; }  // NaN < 0 is false
  template <typename Packet>
  Packet packetOp(const Packet& a) const {
    if constexpr (std::is_floating_point_v<T>) {
      return Eigen::internal::pmax<Eigen::PropagateNaN>(a, Eigen::internal::pzero(a));
    } else {
      return Eigen::internal::pmax(a, Eigen::internal::pzero(a));
    }
  }
};

}  // namespace weir::functor

namespace Eigen::internal {

template <typename T>
constexpr bool kHasPackets = packet_traits<T>::Vectorizable && packet_traits<T>::size > 1;

template <typename T>
struct functor_traits<weir::functor::Add<T>> {
  enum { Cost = NumTraits<T>::AddCost, PacketAccess = kHasPackets<T> && packet_traits<T>::HasAdd };
};
template <typename T>
struct functor_traits<weir::functor::Sub<T>> {
  enum { Cost = NumTraits<T>::AddCost, PacketAccess = kHasPackets<T> && packet_traits<T>::HasSub };
};
template <typename T>
struct functor_traits<weir::functor::Mul<T>> {
  enum { Cost = NumTraits<T>::MulCost, PacketAccess = kHasPackets<T> && packet_traits<T>::HasMul };
};
template <typename T>
struct functor_traits<weir::functor::Div<T>> {
  enum {
    Cost = scalar_div_cost<T, kHasPackets<T>>::value,
    // Integer packets have no exact division (and need the -1 case).
    PacketAccess = std::is_floating_point_v<T> && kHasPackets<T> && packet_traits<T>::HasDiv
  };
};
template <typename T>
struct functor_traits<weir::functor::DivNoNan<T>> {
  enum {
    Cost = int{scalar_div_cost<T, kHasPackets<T>>::value} + int{NumTraits<T>::AddCost},
    PacketAccess = std::is_floating_point_v<T> && kHasPackets<T> && packet_traits<T>::HasDiv &&
                   packet_traits<T>::HasCmp
  };
};
template <typename T>
struct functor_traits<weir::functor::FloorDiv<T>> {
  enum {
    Cost = int{scalar_div_cost<T, kHasPackets<T>>::value} + int{NumTraits<T>::AddCost},
    PacketAccess = std::is_floating_point_v<T> && kHasPackets<T> && packet_traits<T>::HasDiv &&
                   packet_traits<T>::HasFloor
  };
};
template <typename T>
struct functor_traits<weir::functor::FloorMod<T>> {
  enum { Cost = 4 * scalar_div_cost<T, false>::value, PacketAccess = false };
};
template <typename T>
struct functor_traits<weir::functor::Maximum<T>> {
  enum { Cost = NumTraits<T>::AddCost, PacketAccess = kHasPackets<T> && packet_traits<T>::HasMax };
};
template <typename T>
struct functor_traits<weir::functor::Minimum<T>> {
  enum { Cost = NumTraits<T>::AddCost, PacketAccess = kHasPackets<T> && packet_traits<T>::HasMin };
};
template <typename T>
struct functor_traits<weir::functor::Pow<T>> {
  enum {
    Cost = 10 * int{NumTraits<T>::MulCost} + (std::is_integral_v<T> ? 0 : 50),
    PacketAccess = false
  };
};
template <typename T>
struct functor_traits<weir::functor::SquaredDifference<T>> {
  enum {
    Cost = NumTraits<T>::AddCost + NumTraits<T>::MulCost,
    PacketAccess = kHasPackets<T> && packet_traits<T>::HasSub && packet_traits<T>::HasMul
  };
};
template <typename T>
struct functor_traits<weir::functor::Neg<T>> {
  enum { Cost = NumTraits<T>::AddCost, PacketAccess = kHasPackets<T> && packet_traits<T>::HasNegate };
};
template <typename T>
struct functor_traits<weir::functor::Relu<T>> {
  enum {
    Cost = NumTraits<T>::AddCost,
    PacketAccess = kHasPackets<T> && packet_traits<T>::HasMax
  };
};

}  // namespace Eigen::internal
