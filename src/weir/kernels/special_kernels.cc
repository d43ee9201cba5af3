// Special functions (ops/special_ops.cc): Xlogy, Xlog1py, Xdivy (real and
// complex), Igamma, Igammac, IgammaGradA, Zeta, NextAfter (binary, NumPy
// broadcasting), BesselI0e, BesselI1e, Erfinv, Ndtri (unary), and Betainc
// (ternary: inputs of one shape, or scalars). Eigen's implementations, the
// ones TensorFlow's kernels use; half and bfloat16 compute in float.
#include <cmath>
#include <complex>
#include <limits>

#include "weir/kernels/compute_in_float.h"
#include "weir/kernels/cwise_functors.h"
#include "weir/kernels/cwise_ops.h"

namespace weir {
namespace functor {
namespace {

namespace ei = Eigen::internal;

template <typename T>
constexpr bool kIsComplex = false;
template <typename T>
constexpr bool kIsComplex<std::complex<T>> = true;

// x * log(y), 0 where x is 0 (even for y = 0 or NaN).
template <typename T>
struct Xlogy : BinaryBase<T> {
  T operator()(const T& x, const T& y) const { return x == T(0) ? T(0) : x * std::log(y); }
};

// x * log1p(y), 0 where x is 0.
template <typename T>
struct Xlog1py : BinaryBase<T> {
  T operator()(const T& x, const T& y) const {
    if (x == T(0)) return T(0);
    if constexpr (kIsComplex<T>) {
      return x * std::log(T(1) + y);
    } else {
      return x * std::log1p(y);
    }
  }
};

// x / y, 0 where x is 0 (even for y = 0).
template <typename T>
struct Xdivy : BinaryBase<T> {
  T operator()(const T& x, const T& y) const { return x == T(0) ? T(0) : x / y; }
};

template <typename T>
struct Igamma : BinaryBase<T> {
  T operator()(const T& a, const T& x) const { return Eigen::numext::igamma(a, x); }
};
template <typename T>
struct Igammac : BinaryBase<T> {
  T operator()(const T& a, const T& x) const { return Eigen::numext::igammac(a, x); }
};
template <typename T>
struct IgammaGradA : BinaryBase<T> {
  T operator()(const T& a, const T& x) const { return Eigen::numext::igamma_der_a(a, x); }
};
template <typename T>
struct Zeta : BinaryBase<T> {
  T operator()(const T& x, const T& q) const { return Eigen::numext::zeta(x, q); }
};
template <typename T>
struct NextAfter : BinaryBase<T> {
  T operator()(const T& from, const T& to) const { return std::nextafter(from, to); }
};

template <typename T>
using BesselI0e = ei::scalar_bessel_i0e_op<T>;
template <typename T>
using BesselI1e = ei::scalar_bessel_i1e_op<T>;
template <typename T>
using Ndtri = ei::scalar_ndtri_op<T>;

// erfinv(x) = ndtri((x + 1) / 2) / sqrt(2): +-inf at +-1, NaN outside.
template <typename T>
struct Erfinv {
  T operator()(const T& x) const {
    if (!(std::abs(x) <= T(1))) return std::numeric_limits<T>::quiet_NaN();
    return Eigen::numext::ndtri((x + T(1)) * T(0.5)) * T(0.70710678118654752440);
  }
};

}  // namespace
}  // namespace functor

namespace {

// betainc(a, b, x): each input has the output's shape or is a scalar.
template <typename T>
class BetaincOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor* in[3] = {&context->input(0), &context->input(1), &context->input(2)};
    TensorShape shape;
    for (const Tensor* t : in) {
      if (t->dims() > 0) shape = t->shape();
    }
    for (const Tensor* t : in) {
      OP_REQUIRES(context, t->dims() == 0 || t->shape() == shape,
                  errors::InvalidArgument(type_string(), " (node ", name(),
                                          "): a, b and x must have one shape or be scalars, not ",
                                          in[0]->shape(), ", ", in[1]->shape(), " and ",
                                          in[2]->shape(), " (dtype ", kDTypeOf<T>, ")"));
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(context, context->allocate_output(0, shape, &out));
    const int64_t n = shape.num_elements();
    const T* a = in[0]->data<T>();
    const T* b = in[1]->data<T>();
    const T* x = in[2]->data<T>();
    const int64_t sa = in[0]->dims() > 0, sb = in[1]->dims() > 0, sx = in[2]->dims() > 0;
    T* z = out->data<T>();
    context->device()->intra_op_pool()->ParallelFor(n, 500, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        z[i] = Eigen::numext::betainc(a[i * sa], b[i * sb], x[i * sx]);
      }
    });
  }
};

}  // namespace

void RegisterSpecialKernels(KernelRegistry* registry) {
  using namespace functor;  // NOLINT: the functor names are the op names
  RegisterBinary<Xlogy, float, double, complex64, complex128>(registry, "Xlogy");
  RegisterBinary<Xlog1py, float, double, complex64, complex128>(registry, "Xlog1py");
  RegisterBinary<Xdivy, float, double, complex64, complex128>(registry, "Xdivy");
  RegisterBinary<Igamma, float, double>(registry, "Igamma");
  RegisterBinary<Igammac, float, double>(registry, "Igammac");
  RegisterBinary<IgammaGradA, float, double>(registry, "IgammaGradA");
  RegisterBinary<Zeta, float, double>(registry, "Zeta");
  RegisterBinary<NextAfter, float, double>(registry, "NextAfter");
  RegisterUnary<BesselI0e, float, double>(registry, "BesselI0e");
  RegisterUnary<BesselI1e, float, double>(registry, "BesselI1e");
  RegisterUnary<Erfinv, float, double>(registry, "Erfinv");
  RegisterUnary<Ndtri, float, double>(registry, "Ndtri");
  ForEachType<float, double>([&]<typename T>() {
    registry->Register(KernelBuilder("Betainc").TypeConstraint<T>("T"), MakeKernel<BetaincOp<T>>);
  });
  for (DType dtype : {DT_HALF, DT_BFLOAT16}) {
    for (const char* op : {"Xlogy", "Xlog1py", "Xdivy", "Igamma", "Igammac", "BesselI0e",
                           "BesselI1e", "Erfinv", "Ndtri"}) {
      RegisterComputeInFloat(registry, op, dtype, FloatCompute::kElementwise);
    }
  }
}

}  // namespace weir
