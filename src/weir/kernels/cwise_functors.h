// Elementwise functors for Eigen tensor expressions, with the semantics Weir
// promises: signed integers wrap on overflow (two's complement, as the
// SIMD instructions do) instead of being undefined behavior, and integer
// division truncates toward zero with INT_MIN / -1 wrapping to INT_MIN.
// Floats use the plain IEEE operations; each functor has the packet
// version Eigen vectorizes with where the type has one.
#pragma once

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

template <typename T>
struct BinaryBase {
  using first_argument_type = T;
  using second_argument_type = T;
  using result_type = T;
};

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

// REQUIRES for integers: b != 0 (kernels check the divisor first).
template <typename T>
struct Div : BinaryBase<T> {
  T operator()(const T& a, const T& b) const {
    if constexpr (kWraps<T>) {
      // The one quotient that overflows (INT_MIN / -1) traps on x86.
      if (b == -1) return static_cast<T>(WrapType<T>(0) - static_cast<WrapType<T>>(a));
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

template <typename T>
struct Neg {
  T operator()(const T& a) const {
    if constexpr (kWraps<T>) {
      return static_cast<T>(WrapType<T>(0) - static_cast<WrapType<T>>(a));
    } else {
      return -a;
    }
  }
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
