// Complex numbers (ops/complex_ops.cc): Complex from real and imaginary
// parts (NumPy broadcasting), Real, Imag, Angle, ComplexAbs and Conj, for
// complex64 (float parts) and complex128 (double parts).
#include <cmath>
#include <complex>

#include "weir/kernels/cwise_functors.h"
#include "weir/kernels/cwise_ops.h"

namespace weir {
namespace functor {
namespace {

template <typename T>
struct MakeComplex : BinaryBase<T, std::complex<T>> {
  std::complex<T> operator()(const T& re, const T& im) const { return std::complex<T>(re, im); }
};

template <typename C>
struct Real {
  typename C::value_type operator()(const C& z) const { return z.real(); }
};
template <typename C>
struct Imag {
  typename C::value_type operator()(const C& z) const { return z.imag(); }
};
template <typename C>
struct Angle {
  typename C::value_type operator()(const C& z) const { return std::arg(z); }
};
// std::abs is hypot: no overflow for parts near the largest float.
template <typename C>
struct ComplexAbs {
  typename C::value_type operator()(const C& z) const { return std::abs(z); }
};
template <typename C>
struct Conj {
  C operator()(const C& z) const { return std::conj(z); }
};

// Complex arithmetic for the common elementwise ops, scalar std::complex
// (Eigen's complex packets give nothing measurable on these sizes).
template <typename C>
struct ComplexAdd : BinaryBase<C> {
  C operator()(const C& a, const C& b) const { return a + b; }
};
template <typename C>
struct ComplexSub : BinaryBase<C> {
  C operator()(const C& a, const C& b) const { return a - b; }
};
template <typename C>
struct ComplexMul : BinaryBase<C> {
  C operator()(const C& a, const C& b) const { return a * b; }
};
template <typename C>
struct ComplexDiv : BinaryBase<C> {
  C operator()(const C& a, const C& b) const { return a / b; }
};
template <typename C>
struct ComplexDivNoNan : BinaryBase<C> {
  C operator()(const C& a, const C& b) const { return b == C(0) ? C(0) : a / b; }
};
template <typename C>
struct ComplexNeg {
  C operator()(const C& z) const { return -z; }
};
template <typename C>
struct ComplexSquare {
  C operator()(const C& z) const { return z * z; }
};
template <typename C>
struct ComplexReciprocal {
  C operator()(const C& z) const { return C(1) / z; }
};
template <typename C>
struct ComplexExp {
  C operator()(const C& z) const { return std::exp(z); }
};
template <typename C>
struct ComplexLog {
  C operator()(const C& z) const { return std::log(z); }
};
template <typename C>
struct ComplexSqrt {
  C operator()(const C& z) const { return std::sqrt(z); }
};

}  // namespace
}  // namespace functor

void RegisterComplexKernels(KernelRegistry* registry) {
  using namespace functor;  // NOLINT: the functor names are the op names
  ForEachType<float, double>([&]<typename T>() {
    using C = std::complex<T>;
    registry->Register(KernelBuilder("Complex")
                           .TypeConstraint("T", kDTypeOf<T>)
                           .TypeConstraint("Tout", kDTypeOf<C>),
                       MakeKernel<BinaryOp<T, MakeComplex>>);
    registry->Register(
        KernelBuilder("Real").TypeConstraint("T", kDTypeOf<C>).TypeConstraint("Tout", kDTypeOf<T>),
        MakeKernel<UnaryOp<C, Real>>);
    registry->Register(
        KernelBuilder("Imag").TypeConstraint("T", kDTypeOf<C>).TypeConstraint("Tout", kDTypeOf<T>),
        MakeKernel<UnaryOp<C, Imag>>);
    registry->Register(
        KernelBuilder("Angle").TypeConstraint("T", kDTypeOf<C>).TypeConstraint("Tout", kDTypeOf<T>),
        MakeKernel<UnaryOp<C, Angle>>);
    registry->Register(KernelBuilder("ComplexAbs")
                           .TypeConstraint("T", kDTypeOf<C>)
                           .TypeConstraint("Tout", kDTypeOf<T>),
                       MakeKernel<UnaryOp<C, ComplexAbs>>);
    registry->Register(KernelBuilder("Conj").TypeConstraint<C>("T"), MakeKernel<UnaryOp<C, Conj>>);
  });
  RegisterBinary<ComplexAdd, complex64, complex128>(registry, "Add");
  RegisterBinary<ComplexAdd, complex64, complex128>(registry, "AddV2");
  RegisterBinary<ComplexSub, complex64, complex128>(registry, "Sub");
  RegisterBinary<ComplexMul, complex64, complex128>(registry, "Mul");
  RegisterBinary<ComplexDiv, complex64, complex128>(registry, "RealDiv");
  RegisterBinary<ComplexDiv, complex64, complex128>(registry, "Div");
  RegisterBinary<ComplexDivNoNan, complex64, complex128>(registry, "DivNoNan");
  RegisterUnary<ComplexNeg, complex64, complex128>(registry, "Neg");
  RegisterUnary<ComplexSquare, complex64, complex128>(registry, "Square");
  RegisterUnary<ComplexReciprocal, complex64, complex128>(registry, "Reciprocal");
  RegisterUnary<ComplexExp, complex64, complex128>(registry, "Exp");
  RegisterUnary<ComplexLog, complex64, complex128>(registry, "Log");
  RegisterUnary<ComplexSqrt, complex64, complex128>(registry, "Sqrt");
}

}  // namespace weir
