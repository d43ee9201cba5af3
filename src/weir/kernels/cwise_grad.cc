// Gradient kernels of the activations, with TensorFlow's names and input
// orders: ReluGrad, Relu6Grad, SoftplusGrad (gradients, features);
// EluGrad, SeluGrad (gradients, outputs); SigmoidGrad, TanhGrad,
// RsqrtGrad, SqrtGrad, ReciprocalGrad (y, dy), where y is the forward
// op's output. Both inputs have one shape; float and double.
#include "weir/kernels/cwise_functors.h"
#include "weir/kernels/cwise_ops.h"
#include "weir/kernels/math_kernels.h"

namespace weir {
namespace functor {
namespace {

namespace ei = Eigen::internal;

// gradients where features > 0, else 0.
template <typename T>
struct ReluGrad : BinaryBase<T> {
  T operator()(const T& g, const T& f) const { return f > T(0) ? g : T(0); }
  template <typename Packet>
  Packet packetOp(const Packet& g, const Packet& f) const {
    return ei::pand(g, ei::pcmp_lt(ei::pzero(f), f));
  }
};

// gradients where 0 < features < 6, else 0.
template <typename T>
struct Relu6Grad : BinaryBase<T> {
  T operator()(const T& g, const T& f) const { return f > T(0) && f < T(6) ? g : T(0); }
  template <typename Packet>
  Packet packetOp(const Packet& g, const Packet& f) const {
    const Packet inside =
        ei::pand(ei::pcmp_lt(ei::pzero(f), f), ei::pcmp_lt(f, ei::pset1<Packet>(T(6))));
    return ei::pand(g, inside);
  }
};

// Elu'(x) = 1 for x >= 0 and exp(x) = outputs + 1 below.
template <typename T>
struct EluGrad : BinaryBase<T> {
  T operator()(const T& g, const T& y) const { return y < T(0) ? g * (y + T(1)) : g; }
  template <typename Packet>
  Packet packetOp(const Packet& g, const Packet& y) const {
    const Packet negative = ei::pmul(g, ei::padd(y, ei::pset1<Packet>(T(1))));
    return ei::pselect(ei::pcmp_lt(y, ei::pzero(y)), negative, g);
  }
};

// Selu'(x) = scale for x >= 0 and scale * alpha * exp(x) = outputs +
// scale * alpha below.
template <typename T>
struct SeluGrad : BinaryBase<T> {
  T operator()(const T& g, const T& y) const {
    return y < T(0) ? g * (y + T(kSeluScale * kSeluAlpha)) : g * T(kSeluScale);
  }
  template <typename Packet>
  Packet packetOp(const Packet& g, const Packet& y) const {
    const Packet negative = ei::pmul(g, ei::padd(y, ei::pset1<Packet>(T(kSeluScale * kSeluAlpha))));
    const Packet positive = ei::pmul(g, ei::pset1<Packet>(T(kSeluScale)));
    return ei::pselect(ei::pcmp_lt(y, ei::pzero(y)), negative, positive);
  }
};

// Softplus'(x) = sigmoid(x).
template <typename T>
struct SoftplusGrad : BinaryBase<T> {
  T operator()(const T& g, const T& f) const { return g / (T(1) + std::exp(-f)); }
  template <typename Packet>
  Packet packetOp(const Packet& g, const Packet& f) const {
    return ei::pdiv(g, ei::padd(ei::pset1<Packet>(T(1)), ei::pexp(ei::pnegate(f))));
  }
};

// Softsign'(x) = 1 / (1 + |x|)^2.
template <typename T>
struct SoftsignGrad : BinaryBase<T> {
  T operator()(const T& g, const T& f) const {
    const T d = T(1) + std::abs(f);
    return g / (d * d);
  }
  template <typename Packet>
  Packet packetOp(const Packet& g, const Packet& f) const {
    const Packet d = ei::padd(ei::pset1<Packet>(T(1)), ei::pabs(f));
    return ei::pdiv(g, ei::pmul(d, d));
  }
};

// dy * y * (1 - y).
template <typename T>
struct SigmoidGrad : BinaryBase<T> {
  T operator()(const T& y, const T& dy) const { return dy * y * (T(1) - y); }
  template <typename Packet>
  Packet packetOp(const Packet& y, const Packet& dy) const {
    return ei::pmul(ei::pmul(dy, y), ei::psub(ei::pset1<Packet>(T(1)), y));
  }
};

// dy * (1 - y^2).
template <typename T>
struct TanhGrad : BinaryBase<T> {
  T operator()(const T& y, const T& dy) const { return dy * (T(1) - y * y); }
  template <typename Packet>
  Packet packetOp(const Packet& y, const Packet& dy) const {
    return ei::pmul(dy, ei::psub(ei::pset1<Packet>(T(1)), ei::pmul(y, y)));
  }
};

// d/dx x^-1/2 = -1/2 x^-3/2 = -1/2 y^3.
template <typename T>
struct RsqrtGrad : BinaryBase<T> {
  T operator()(const T& y, const T& dy) const { return T(-0.5) * dy * (y * y * y); }
  template <typename Packet>
  Packet packetOp(const Packet& y, const Packet& dy) const {
    const Packet cube = ei::pmul(ei::pmul(y, y), y);
    return ei::pmul(ei::pmul(ei::pset1<Packet>(T(-0.5)), dy), cube);
  }
};

// d/dx x^1/2 = 1 / (2 y).
template <typename T>
struct SqrtGrad : BinaryBase<T> {
  T operator()(const T& y, const T& dy) const { return T(0.5) * dy / y; }
  template <typename Packet>
  Packet packetOp(const Packet& y, const Packet& dy) const {
    return ei::pdiv(ei::pmul(ei::pset1<Packet>(T(0.5)), dy), y);
  }
};

// d/dx 1/x = -1/x^2 = -y^2.
template <typename T>
struct ReciprocalGrad : BinaryBase<T> {
  T operator()(const T& y, const T& dy) const { return -dy * (y * y); }
  template <typename Packet>
  Packet packetOp(const Packet& y, const Packet& dy) const {
    return ei::pnegate(ei::pmul(dy, ei::pmul(y, y)));
  }
};

}  // namespace
}  // namespace functor
}  // namespace weir

namespace Eigen::internal {

template <typename T, int kCost, bool kNeedsExp = false>
struct GradTraits {
  enum {
    Cost = kCost + (kNeedsExp ? int{functor_traits<scalar_exp_op<T>>::Cost} : 0),
    PacketAccess = kHasPackets<T> && packet_traits<T>::HasCmp && packet_traits<T>::HasDiv &&
                   (!kNeedsExp || packet_traits<T>::HasExp)
  };
};
template <typename T>
struct functor_traits<weir::functor::ReluGrad<T>> : GradTraits<T, 2> {};
template <typename T>
struct functor_traits<weir::functor::Relu6Grad<T>> : GradTraits<T, 3> {};
template <typename T>
struct functor_traits<weir::functor::EluGrad<T>> : GradTraits<T, 3> {};
template <typename T>
struct functor_traits<weir::functor::SeluGrad<T>> : GradTraits<T, 4> {};
template <typename T>
struct functor_traits<weir::functor::SoftplusGrad<T>> : GradTraits<T, 12, true> {};
template <typename T>
struct functor_traits<weir::functor::SoftsignGrad<T>> : GradTraits<T, 4> {};
template <typename T>
struct functor_traits<weir::functor::SigmoidGrad<T>> : GradTraits<T, 3> {};
template <typename T>
struct functor_traits<weir::functor::TanhGrad<T>> : GradTraits<T, 3> {};
template <typename T>
struct functor_traits<weir::functor::RsqrtGrad<T>> : GradTraits<T, 4> {};
template <typename T>
struct functor_traits<weir::functor::SqrtGrad<T>> : GradTraits<T, 10> {};
template <typename T>
struct functor_traits<weir::functor::ReciprocalGrad<T>> : GradTraits<T, 3> {};

}  // namespace Eigen::internal

namespace weir {
namespace {

template <template <typename> class Functor>
void RegisterGrad(KernelRegistry* registry, const char* op) {
  ForEachType<float, double>([&]<typename T>() {
    registry->Register(KernelBuilder(op).TypeConstraint<T>("T"),
                       MakeKernel<BinaryOp<T, Functor, Broadcasting::kSameShape>>);
  });
}

}  // namespace

void RegisterCwiseGradKernels(KernelRegistry* registry) {
  using namespace functor;  // NOLINT: the functor names are the op names
  RegisterGrad<ReluGrad>(registry, "ReluGrad");
  RegisterGrad<Relu6Grad>(registry, "Relu6Grad");
  RegisterGrad<EluGrad>(registry, "EluGrad");
  RegisterGrad<SeluGrad>(registry, "SeluGrad");
  RegisterGrad<SoftplusGrad>(registry, "SoftplusGrad");
  RegisterGrad<SoftsignGrad>(registry, "SoftsignGrad");
  RegisterGrad<SigmoidGrad>(registry, "SigmoidGrad");
  RegisterGrad<TanhGrad>(registry, "TanhGrad");
  RegisterGrad<RsqrtGrad>(registry, "RsqrtGrad");
  RegisterGrad<SqrtGrad>(registry, "SqrtGrad");
  RegisterGrad<ReciprocalGrad>(registry, "ReciprocalGrad");
}

}  // namespace weir
