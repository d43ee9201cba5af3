// The templates every elementwise kernel is made of: BinaryOp (NumPy
// broadcasting, or inputs of one shape), UnaryOp, and the loops that
// register them for a list of types. The functor decides the output type
// (bool for comparisons).
//
// Expressions are evaluated on Eigen::DefaultDevice over ranges of the
// output: inline for small tensors, sharded on the device's intra-op pool
// for large ones (ShardOrInline). One instantiation per expression serves
// both, and a small op skips the thread-pool device's dispatch.
// Include only from kernel .cc files: this pulls in Eigen's Tensor module.
#pragma once

#include <algorithm>
#include <initializer_list>
#include <type_traits>

#include "weir/base/denormal.h"
#include "weir/framework/eigen_tensor.h"
#include "weir/framework/kernel_registry.h"
#include "weir/framework/op_def.h"
#include "weir/kernels/broadcast.h"
#include "weir/kernels/type_list.h"

namespace weir {

// Cycles per output element in the units of Eigen's cost model: the
// functor's cost (per packet when it vectorizes) plus loads and stores.
template <typename F, typename Out, typename... In>
constexpr double ElementCycles() {
  using Traits = Eigen::internal::functor_traits<F>;
  using First = std::tuple_element_t<0, std::tuple<In...>>;
  constexpr int packet = Traits::PacketAccess ? Eigen::internal::packet_traits<First>::size : 1;
  constexpr double bytes = static_cast<double>(sizeof(Out) + (sizeof(In) + ...));
  return static_cast<double>(Traits::Cost) / packet + bytes * 11.0 / 64;
}

// The output tensor: an input's buffer reused in place when the executor
// holds the only reference and it has the output's dtype and shape, else a
// new one. Sets `*forwarded` to the reused input, or -1; null if the
// allocation failed (the context has the error). Elementwise ops may run
// in place because output i reads only element i of a full-shape input.
inline Tensor* ForwardOrAllocate(OpKernelContext* context, std::initializer_list<int> candidates,
                                 const TensorShape& shape, int* forwarded) {
  *forwarded = -1;
  for (int input : candidates) {
    if (context->input(input).shape() != shape ||
        context->input(input).dtype() != context->expected_output_dtype(0)) {
      continue;
    }
    if (Tensor* out = context->forward_input_to_output(input, 0, shape)) {
      *forwarded = input;
      return out;
    }
  }
  Tensor* out = nullptr;
  if (!context->allocate_output(0, shape, &out).ok()) return nullptr;
  return out;
}

// Flushes denormals for float kernels only.
template <typename T>
struct FlushDenormalsFor {};
template <typename T>
  requires std::is_floating_point_v<T>
struct FlushDenormalsFor<T> : ScopedFlushDenormals {};

// Whether BinaryOp broadcasts its inputs or requires one shape (the
// gradient kernels of activations).
enum class Broadcasting { kNumPy, kSameShape };

// z = Functor<T>()(x, y), of type Functor<T>::result_type.
template <typename T, template <typename> class Functor,
          Broadcasting kBroadcasting = Broadcasting::kNumPy>
class BinaryOp : public OpKernel {
 public:
  using F = Functor<T>;
  using Out = typename F::result_type;

  explicit BinaryOp(OpKernelConstruction* context) : OpKernel(context) {
    if (context->op_def().FindAttr("incompatible_shape_error") != nullptr) {
      context->SetStatus(context->GetAttr("incompatible_shape_error", &incompatible_shape_error_));
    }
    if constexpr (std::is_same_v<Out, bool>) {
      scalar_false_ = Tensor::Scalar<bool>(false);
      scalar_true_ = Tensor::Scalar<bool>(true);
    }
  }

  void Compute(OpKernelContext* context) override {
    [[maybe_unused]] FlushDenormalsFor<T> flush_denormals;
    if (context->input(0).dims() == 0 && context->input(1).dims() == 0) {
      ComputeScalars(context);
      return;
    }
    // Copies: forwarding may move an input into the output.
    const TensorShape x_shape = context->input(0).shape();
    const TensorShape y_shape = context->input(1).shape();
    StatusOr<BroadcastPlan> plan = PlanFor(x_shape, y_shape);
    if (!plan.ok()) {
      if constexpr (requires { F::kWhenShapesDiffer; }) {
        // Equal and NotEqual with incompatible_shape_error=false.
        if (!incompatible_shape_error_) {
          Tensor* out = nullptr;
          OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape(), &out));
          out->scalar<bool>() = F::kWhenShapesDiffer;
          return;
        }
      }
      OP_REQUIRES_OK(context, errors::InvalidArgument(type_string(), ": ", plan.status().message(),
                                                      " (dtype ", kDTypeOf<T>, ")"));
    }
    const int64_t n = plan->output_shape.num_elements();
    if constexpr (requires { F::ValidY(T()); }) {
      const T* y = context->input(1).template data<T>();
      const int64_t y_count = n == 0 ? 0 : y_shape.num_elements();
      OP_REQUIRES(context, std::all_of(y, y + y_count, [](T v) { return F::ValidY(v); }),
                  errors::InvalidArgument(type_string(), ": ", F::kInvalidY, " (x ", x_shape,
                                          ", y ", y_shape, ", dtype ", kDTypeOf<T>, ")"));
    }
    int forwarded;
    Tensor* out = ForwardOrAllocate(context, {0, 1}, plan->output_shape, &forwarded);
    if (out == nullptr || n == 0) return;
    // A forwarded input now lives in the output.
    const T* x = (forwarded == 0 ? *out : context->input(0)).template data<T>();
    const T* y = (forwarded == 1 ? *out : context->input(1)).template data<T>();
    Out* z = out->template data<Out>();
    ThreadPool* pool = context->device()->intra_op_pool();
    constexpr double kCycles = ElementCycles<F, Out, T, T>();
    using InMap = ConstEigenTensorMap<T, 1>;
    using OutMap = EigenTensorMap<Out, 1>;
    switch (plan->kind) {
      case BroadcastPlan::Kind::kSameShape:
        ShardOrInline(pool, n, kCycles, [&](int64_t begin, int64_t end) {
          OutMap(z + begin, end - begin) =
              InMap(x + begin, end - begin).binaryExpr(InMap(y + begin, end - begin), F());
        });
        return;
      case BroadcastPlan::Kind::kScalarX:
        if constexpr (kBroadcasting == Broadcasting::kNumPy) {
          ShardOrInline(pool, n, kCycles, [&, x0 = x[0]](int64_t begin, int64_t end) {
            OutMap(z + begin, end - begin) =
                InMap(y + begin, end - begin).unaryExpr(Eigen::internal::bind1st_op<F>(x0));
          });
        }
        return;
      case BroadcastPlan::Kind::kScalarY:
        if constexpr (kBroadcasting == Broadcasting::kNumPy) {
          ShardOrInline(pool, n, kCycles, [&, y0 = y[0]](int64_t begin, int64_t end) {
            OutMap(z + begin, end - begin) =
                InMap(x + begin, end - begin).unaryExpr(Eigen::internal::bind2nd_op<F>(y0));
          });
        }
        return;
      case BroadcastPlan::Kind::kGeneral:
        // Rows with a contiguous inner loop: for the [N,C] (+) [C] bias case
        // ~2x faster than Eigen's rank-2 broadcast evaluator on the same
        // pool, and one instantiation serves every rank (each Eigen rank
        // cost ~12 s of compile time).
        if constexpr (kBroadcasting == Broadcasting::kNumPy) {
          BroadcastByRows(pool, *plan, x, y, z, F(), kCycles);
        }
        return;
    }
  }

 private:
  // Two scalars (a loop's counter and its bound): what the kSameShape path
  // computes, without the plan, the shape copies and the Eigen expression,
  // which cost more than the element does.
  void ComputeScalars(OpKernelContext* context) {
    const T x = context->input(0).template scalar<T>();
    const T y = context->input(1).template scalar<T>();
    if constexpr (requires { F::ValidY(T()); }) {
      OP_REQUIRES(context, F::ValidY(y),
                  errors::InvalidArgument(type_string(), ": ", F::kInvalidY, " (x ", TensorShape(),
                                          ", y ", TensorShape(), ", dtype ", kDTypeOf<T>, ")"));
    }
    if constexpr (std::is_same_v<Out, bool>) {
      // A comparison of scalars (a loop's condition) has two possible
      // results: hand on a reference to one made once instead of allocating
      // and freeing a buffer per call. The kernel's own reference keeps any
      // consumer from reusing the buffer in place.
      context->set_output(0, F()(x, y) ? scalar_true_ : scalar_false_);
      return;
    }
    int forwarded;
    Tensor* out = ForwardOrAllocate(context, {0, 1}, TensorShape(), &forwarded);
    if (out == nullptr) return;
    out->template scalar<Out>() = F()(x, y);
  }

  StatusOr<BroadcastPlan> PlanFor(const TensorShape& x, const TensorShape& y) const {
    if constexpr (kBroadcasting == Broadcasting::kNumPy) {
      return MakeBroadcastPlan(x, y);
    } else {
      if (x != y) {
        return errors::InvalidArgument("inputs must have the same shape, not ", x, " and ", y);
      }
      BroadcastPlan plan;
      plan.output_shape = x;
      return plan;
    }
  }

  bool incompatible_shape_error_ = true;
  // Comparisons (bool output): the two scalar results, read-only.
  Tensor scalar_false_;
  Tensor scalar_true_;
};

// y = Functor<T>()(x), of the type the functor returns.
template <typename T, template <typename> class Functor>
class UnaryOp : public OpKernel {
 public:
  using F = Functor<T>;
  using Out = std::decay_t<std::invoke_result_t<F, const T&>>;
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    [[maybe_unused]] FlushDenormalsFor<T> flush_denormals;
    const TensorShape shape = context->input(0).shape();
    int forwarded;
    Tensor* out = ForwardOrAllocate(context, {0}, shape, &forwarded);
    const int64_t n = shape.num_elements();
    if (out == nullptr || n == 0) return;
    const T* x = (forwarded == 0 ? *out : context->input(0)).template data<T>();
    Out* y = out->template data<Out>();
    ShardOrInline(context->device()->intra_op_pool(), n, ElementCycles<F, Out, T>(),
                  [&](int64_t begin, int64_t end) {
                    EigenTensorMap<Out, 1>(y + begin, end - begin) =
                        ConstEigenTensorMap<T, 1>(x + begin, end - begin).unaryExpr(F());
                  });
  }
};

template <template <typename> class Functor, typename... Types>
void RegisterBinary(KernelRegistry* registry, const char* op) {
  ForEachType<Types...>([&]<typename T>() {
    registry->Register(KernelBuilder(op).TypeConstraint<T>("T"), MakeKernel<BinaryOp<T, Functor>>);
  });
}

template <template <typename> class Functor, typename... Types>
void RegisterUnary(KernelRegistry* registry, const char* op) {
  ForEachType<Types...>([&]<typename T>() {
    registry->Register(KernelBuilder(op).TypeConstraint<T>("T"), MakeKernel<UnaryOp<T, Functor>>);
  });
}

}  // namespace weir
