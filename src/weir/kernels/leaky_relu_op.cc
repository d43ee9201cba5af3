// LeakyRelu (features where > 0, else alpha * features) and its gradient
// op LeakyReluGrad (gradients where features > 0, else alpha * gradients),
// float and double, and half and bfloat16 (element by element, alpha
// rounded to the type, as TensorFlow does). The elementwise templates of cwise_ops.h build their
// functors without arguments, so these two carry alpha in kernels of their
// own, sharded the same way.
#include "weir/kernels/cwise_functors.h"
#include "weir/kernels/cwise_ops.h"
#include "weir/kernels/math_kernels.h"

namespace weir {
namespace {

namespace ei = Eigen::internal;

template <typename T>
struct LeakyReluFunctor {
  T alpha;
  T operator()(const T& f) const { return f > T(0) ? f : f * alpha; }
  template <typename Packet>
  Packet packetOp(const Packet& f) const {
    return ei::pselect(ei::pcmp_lt(ei::pzero(f), f), f, ei::pmul(f, ei::pset1<Packet>(alpha)));
  }
};

template <typename T>
struct LeakyReluGradFunctor : functor::BinaryBase<T> {
  T alpha;
  explicit LeakyReluGradFunctor(T a) : alpha(a) {}
  T operator()(const T& g, const T& f) const { return f > T(0) ? g : g * alpha; }
  template <typename Packet>
  Packet packetOp(const Packet& g, const Packet& f) const {
    return ei::pselect(ei::pcmp_lt(ei::pzero(f), f), g, ei::pmul(g, ei::pset1<Packet>(alpha)));
  }
};

}  // namespace
}  // namespace weir

namespace Eigen::internal {

template <typename T>
struct functor_traits<weir::LeakyReluFunctor<T>> {
  enum {
    Cost = 3,
    PacketAccess = std::is_floating_point_v<T> && kHasPackets<T> && packet_traits<T>::HasCmp
  };
};
template <typename T>
struct functor_traits<weir::LeakyReluGradFunctor<T>> {
  enum {
    Cost = 3,
    PacketAccess = std::is_floating_point_v<T> && kHasPackets<T> && packet_traits<T>::HasCmp
  };
};

}  // namespace Eigen::internal

namespace weir {
namespace {

template <typename T>
class LeakyReluOp : public OpKernel {
 public:
  explicit LeakyReluOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("alpha", &alpha_));
  }

  void Compute(OpKernelContext* context) override {
    [[maybe_unused]] FlushDenormalsFor<T> flush_denormals;
    const TensorShape shape = context->input(0).shape();
    int forwarded;
    Tensor* out = ForwardOrAllocate(context, {0}, shape, &forwarded);
    const int64_t n = shape.num_elements();
    if (out == nullptr || n == 0) return;
    const T* x = (forwarded == 0 ? *out : context->input(0)).template data<T>();
    T* y = out->template data<T>();
    const LeakyReluFunctor<T> f{static_cast<T>(alpha_)};
    ShardOrInline(context->device()->intra_op_pool(), n, ElementCycles<LeakyReluFunctor<T>, T, T>(),
                  [&](int64_t begin, int64_t end) {
                    EigenTensorMap<T, 1>(y + begin, end - begin) =
                        ConstEigenTensorMap<T, 1>(x + begin, end - begin).unaryExpr(f);
                  });
  }

 private:
  float alpha_ = 0.2f;
};

template <typename T>
class LeakyReluGradOp : public OpKernel {
 public:
  explicit LeakyReluGradOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("alpha", &alpha_));
  }

  void Compute(OpKernelContext* context) override {
    [[maybe_unused]] FlushDenormalsFor<T> flush_denormals;
    const TensorShape shape = context->input(0).shape();
    OP_REQUIRES(context, context->input(1).shape() == shape,
                errors::InvalidArgument(type_string(), ": gradients ", shape, " and features ",
                                        context->input(1).shape(),
                                        " must have the same shape (dtype ", kDTypeOf<T>, ")"));
    int forwarded;
    Tensor* out = ForwardOrAllocate(context, {0, 1}, shape, &forwarded);
    const int64_t n = shape.num_elements();
    if (out == nullptr || n == 0) return;
    const T* g = (forwarded == 0 ? *out : context->input(0)).template data<T>();
    const T* f = (forwarded == 1 ? *out : context->input(1)).template data<T>();
    T* z = out->template data<T>();
    const LeakyReluGradFunctor<T> functor(static_cast<T>(alpha_));
    ShardOrInline(context->device()->intra_op_pool(), n,
                  ElementCycles<LeakyReluGradFunctor<T>, T, T, T>(), [&](int64_t begin, int64_t end) {
                    EigenTensorMap<T, 1>(z + begin, end - begin) =
                        ConstEigenTensorMap<T, 1>(g + begin, end - begin)
                            .binaryExpr(ConstEigenTensorMap<T, 1>(f + begin, end - begin), functor);
                  });
  }

 private:
  float alpha_ = 0.2f;
};

}  // namespace

void RegisterLeakyReluKernels(KernelRegistry* registry) {
  ForEachType<float, double, Eigen::half, Eigen::bfloat16>([&]<typename T>() {
    registry->Register(KernelBuilder("LeakyRelu").TypeConstraint<T>("T"), MakeKernel<LeakyReluOp<T>>);
    registry->Register(KernelBuilder("LeakyReluGrad").TypeConstraint<T>("T"),
                       MakeKernel<LeakyReluGradOp<T>>);
  });
}

}  // namespace weir
