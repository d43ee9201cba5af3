// The special and angular functions: Lgamma, Digamma (unary), Polygamma
// (a, x) and Atan2 (y, x) (binary, NumPy broadcasting), with Eigen's
// implementations (the ones TensorFlow's kernels use): float and double, and
// for all but Polygamma (which TensorFlow declares for those two only) half
// and bfloat16, computed in float.
#include <cmath>

#include "weir/kernels/cwise_functors.h"
#include "weir/kernels/cwise_ops.h"
#include "weir/kernels/math_kernels.h"

namespace weir {
namespace functor {
namespace {

namespace ei = Eigen::internal;

// log |Gamma(x)|; +inf at the poles (0, -1, -2, ...).
template <typename T>
using Lgamma = ei::scalar_lgamma_op<T>;
// psi(x) = Gamma'(x) / Gamma(x); NaN at the poles.
template <typename T>
using Digamma = ei::scalar_digamma_op<T>;

// The a-th derivative of psi at x; NaN unless a is a whole number >= 0.
// Eigen's zeta converts the order to long for its pole test, undefined
// behaviour for an order past long's range (infinity included), where the
// factorial it multiplies by is already infinite: such orders give NaN.
template <typename T>
struct Polygamma : BinaryBase<T> {
  T operator()(const T& a, const T& x) const {
    if (!(std::abs(a) < T(1e18))) return std::numeric_limits<T>::quiet_NaN();
    return Eigen::numext::polygamma(a, x);
  }
};

// The angle of the point (x, y), in [-pi, pi], with std::atan2's signed
// zeros and infinities.
template <typename T>
struct Atan2 : BinaryBase<T> {
  T operator()(const T& y, const T& x) const {
    if constexpr (std::is_floating_point_v<T>) {
      return std::atan2(y, x);
    } else {
      return T(std::atan2(static_cast<float>(y), static_cast<float>(x)));
    }
  }
};

}  // namespace
}  // namespace functor
}  // namespace weir

namespace Eigen::internal {

template <typename T>
struct functor_traits<weir::functor::Polygamma<T>> {
  enum { Cost = functor_traits<scalar_polygamma_op<T>>::Cost, PacketAccess = false };
};
template <typename T>
struct functor_traits<weir::functor::Atan2<T>> {
  enum { Cost = 20 * NumTraits<T>::MulCost, PacketAccess = false };
};

}  // namespace Eigen::internal

namespace weir {

void RegisterCwiseSpecialKernels(KernelRegistry* registry) {
  using namespace functor;  // NOLINT: the functor names are the op names
  RegisterUnary<Lgamma, float, double, Eigen::half, Eigen::bfloat16>(registry, "Lgamma");
  RegisterUnary<Digamma, float, double, Eigen::half, Eigen::bfloat16>(registry, "Digamma");
  RegisterBinary<Polygamma, float, double>(registry, "Polygamma");
  RegisterBinary<Atan2, float, double, Eigen::half, Eigen::bfloat16>(registry, "Atan2");
}

}  // namespace weir
