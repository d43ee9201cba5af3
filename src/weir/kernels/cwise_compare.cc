// Comparisons and logic, with bool outputs: Less, LessEqual, Greater,
// GreaterEqual, Equal, NotEqual (NumPy broadcasting; float, double, int32,
// int64, and bool and string for Equal/NotEqual), LogicalAnd, LogicalOr,
// LogicalNot.
// Comparisons with NaN are false, except NotEqual.
#include <string>

#include "weir/kernels/cwise_functors.h"
#include "weir/kernels/cwise_ops.h"
#include "weir/kernels/math_kernels.h"

namespace weir {
namespace functor {
namespace {

template <typename T>
using CompareBase = BinaryBase<T, bool>;

template <typename T>
struct Less : CompareBase<T> {
  bool operator()(const T& a, const T& b) const { return a < b; }
};
template <typename T>
struct LessEqual : CompareBase<T> {
  bool operator()(const T& a, const T& b) const { return a <= b; }
};
template <typename T>
struct Greater : CompareBase<T> {
  bool operator()(const T& a, const T& b) const { return a > b; }
};
template <typename T>
struct GreaterEqual : CompareBase<T> {
  bool operator()(const T& a, const T& b) const { return a >= b; }
};
// With incompatible_shape_error=false, shapes that do not broadcast give
// the scalar kWhenShapesDiffer instead of an error.
template <typename T>
struct Equal : CompareBase<T> {
  static constexpr bool kWhenShapesDiffer = false;
  bool operator()(const T& a, const T& b) const { return a == b; }
};
template <typename T>
struct NotEqual : CompareBase<T> {
  static constexpr bool kWhenShapesDiffer = true;
  bool operator()(const T& a, const T& b) const { return a != b; }
};

template <typename T>
struct LogicalAnd : CompareBase<T> {
  bool operator()(const bool& a, const bool& b) const { return a && b; }
};
template <typename T>
struct LogicalOr : CompareBase<T> {
  bool operator()(const bool& a, const bool& b) const { return a || b; }
};
template <typename T>
struct LogicalNot {
  bool operator()(const bool& a) const { return !a; }
};

}  // namespace
}  // namespace functor
}  // namespace weir

namespace Eigen::internal {

// Scalar loops: Eigen has no packets of bool results. The compiler
// vectorizes the plain loops of the general broadcast path.
template <typename T>
struct CompareTraits {
  enum { Cost = NumTraits<T>::AddCost, PacketAccess = false };
};
template <typename T>
struct functor_traits<weir::functor::Less<T>> : CompareTraits<T> {};
template <typename T>
struct functor_traits<weir::functor::LessEqual<T>> : CompareTraits<T> {};
template <typename T>
struct functor_traits<weir::functor::Greater<T>> : CompareTraits<T> {};
template <typename T>
struct functor_traits<weir::functor::GreaterEqual<T>> : CompareTraits<T> {};
template <typename T>
struct functor_traits<weir::functor::Equal<T>> : CompareTraits<T> {};
template <typename T>
struct functor_traits<weir::functor::NotEqual<T>> : CompareTraits<T> {};
template <typename T>
struct functor_traits<weir::functor::LogicalAnd<T>> : CompareTraits<T> {};
template <typename T>
struct functor_traits<weir::functor::LogicalOr<T>> : CompareTraits<T> {};
template <typename T>
struct functor_traits<weir::functor::LogicalNot<T>> : CompareTraits<T> {};

}  // namespace Eigen::internal

namespace weir {

void RegisterCwiseCompareKernels(KernelRegistry* registry) {
  using namespace functor;  // NOLINT: the functor names are the op names
  RegisterBinary<Less, float, double, int32_t, int64_t>(registry, "Less");
  RegisterBinary<LessEqual, float, double, int32_t, int64_t>(registry, "LessEqual");
  RegisterBinary<Greater, float, double, int32_t, int64_t>(registry, "Greater");
  RegisterBinary<GreaterEqual, float, double, int32_t, int64_t>(registry, "GreaterEqual");
  RegisterBinary<Equal, float, double, int32_t, int64_t, bool, std::string>(registry, "Equal");
  RegisterBinary<NotEqual, float, double, int32_t, int64_t, bool, std::string>(registry,
                                                                               "NotEqual");
  // The logical ops have no type attr.
  registry->Register(KernelBuilder("LogicalAnd"), MakeKernel<BinaryOp<bool, LogicalAnd>>);
  registry->Register(KernelBuilder("LogicalOr"), MakeKernel<BinaryOp<bool, LogicalOr>>);
  registry->Register(KernelBuilder("LogicalNot"), MakeKernel<UnaryOp<bool, LogicalNot>>);
}

}  // namespace weir
