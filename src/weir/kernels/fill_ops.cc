// Fill, ZerosLike, OnesLike, Range and BroadcastArgs: ops that make new
// values rather than move existing ones.
#include <Eigen/Core>

#include "weir/base/threadpool.h"
#include "weir/framework/array_shape_rules.h"
#include "weir/framework/broadcast_shape.h"
#include "weir/framework/int_tensor_values.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/array_copy.h"
#include "weir/kernels/array_kernels.h"
#include "weir/kernels/shape_util.h"
#include "weir/kernels/tensor_list.h"
#include "weir/kernels/type_list.h"

namespace weir {
namespace {

// Sets every element of `out` to the scalar `value` (of out's dtype).
void FillWith(ThreadPool* pool, const Tensor& value, Tensor* out) {
  DispatchByElementSize(out->dtype(), [&]<typename T>() {
    const T v = *ElementsAs<T>(value);
    T* dst = ElementsAs<T>(*out);
    pool->ParallelFor(out->NumElements(), sizeof(T), [&](int64_t first, int64_t last) {
      std::fill(dst + first, dst + last, v);
    });
  });
}

class FillOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& dims = context->input(0);
    const Tensor& value = context->input(1);
    OP_REQUIRES(context, dims.dims() == 1 && value.dims() == 0,
                errors::InvalidArgument("Fill: dims must be a vector and value a scalar, but "
                                        "they have shapes ", dims.shape(), " and ",
                                        value.shape()));
    StatusOr<std::vector<int64_t>> values = IntTensorValues(dims, "Fill: dims");
    OP_REQUIRES_OK(context, values.status());
    StatusOr<TensorShape> shape = CheckedShape(*values, "Fill");
    OP_REQUIRES_OK(context, shape.status());
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, *shape, &out));
    FillWith(context->device()->intra_op_pool(), value, out);
  }
};

// The scalar 0 or 1 of `dtype`.
StatusOr<Tensor> ScalarOfDType(DType dtype, int value) {
  Tensor t(dtype, TensorShape());
  auto set = [&]<typename T>() { t.data<T>()[0] = static_cast<T>(value); };
  if (dtype == DT_STRING && value == 0) return t;  // the empty string
  if (DispatchNumericDType(dtype, set)) return t;
  if (dtype == DT_HALF) {
    set.template operator()<Eigen::half>();
  } else if (dtype == DT_BFLOAT16) {
    set.template operator()<Eigen::bfloat16>();
  } else {
    return errors::InvalidArgument("no ", value, " of dtype ", dtype);
  }
  return t;
}

// ZerosLike and OnesLike: the scalar is made once per kernel.
class ConstantLikeOp : public OpKernel {
 public:
  explicit ConstantLikeOp(OpKernelConstruction* context) : OpKernel(context) {
    // ZerosLike of a variant (a TensorList's gradient) is the value's own
    // zeros, computed per value.
    if (input_type(0) == DT_VARIANT && type_string() == "ZerosLike") return;
    StatusOr<Tensor> value = ScalarOfDType(input_type(0), type_string() == "OnesLike" ? 1 : 0);
    if (value.ok()) {
      value_ = *value;
    } else {
      context->SetStatus(value.status().WithContext(type_string()));
    }
  }

  void Compute(OpKernelContext* context) override {
    if (input_type(0) == DT_VARIANT) {
      StatusOr<Tensor> zeros = ZerosLikeTensor(context->input(0));
      OP_REQUIRES_OK(context, zeros.status().WithContext(StrCat("ZerosLike '", name(), "'")));
      context->set_output(0, *std::move(zeros));
      return;
    }
    const TensorShape& shape = context->input(0).shape();
    Tensor* out = context->forward_input_to_output(0, 0, shape);
    if (out == nullptr) OP_REQUIRES_OK(context, context->allocate_output(0, shape, &out));
    FillWith(context->device()->intra_op_pool(), value_, out);
  }

 private:
  Tensor value_;
};

template <typename T>
class RangeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& start = context->input(0);
    const Tensor& limit = context->input(1);
    const Tensor& delta = context->input(2);
    OP_REQUIRES(context, start.dims() == 0 && limit.dims() == 0 && delta.dims() == 0,
                errors::InvalidArgument("Range: start, limit and delta must be scalars but "
                                        "have shapes ", start.shape(), ", ", limit.shape(),
                                        " and ", delta.shape()));
    // Sizes and values are computed in int64 or double, so that the shape
    // function (which sees the same values) agrees and float ranges do not
    // drift with the element count.
    using Wide = std::conditional_t<std::is_integral_v<T>, int64_t, double>;
    const Wide first = start.scalar<T>(), step = delta.scalar<T>();
    StatusOr<int64_t> size = RangeSize(first, Wide(limit.scalar<T>()), step);
    OP_REQUIRES_OK(context, size.status().WithContext(StrCat("Range of ", start.dtype())));
    // A count that does not fit int64 must not reach the shape as a
    // negative (wrapped) dim.
    OP_REQUIRES(context, *size >= 0,
                errors::InvalidArgument("Range of ", start.dtype(), ": start ", start.scalar<T>(),
                                        ", limit ", limit.scalar<T>(), " and delta ",
                                        delta.scalar<T>(), " give more than 2^63 - 1 elements"));
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape({*size}), &out));
    T* values = out->data<T>();
    if constexpr (std::is_integral_v<T>) {
      // first + i * step is in [start, limit), but i * step alone may not
      // fit int64 (a range wider than 2^63): the sum is computed modulo
      // 2^64, where it is exact.
      const uint64_t base = static_cast<uint64_t>(first), ustep = static_cast<uint64_t>(step);
      for (int64_t i = 0; i < *size; ++i) {
        values[i] = static_cast<T>(static_cast<int64_t>(base + static_cast<uint64_t>(i) * ustep));
      }
    } else {
      for (int64_t i = 0; i < *size; ++i) values[i] = static_cast<T>(first + Wide(i) * step);
    }
  }
};

template <typename T>
class BroadcastArgsOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& s0 = context->input(0);
    const Tensor& s1 = context->input(1);
    OP_REQUIRES(context, s0.dims() == 1 && s1.dims() == 1,
                errors::InvalidArgument("BroadcastArgs: s0 and s1 must be vectors but have "
                                        "shapes ", s0.shape(), " and ", s1.shape()));
    StatusOr<std::vector<int64_t>> v0 = IntTensorValues(s0, "BroadcastArgs: s0");
    OP_REQUIRES_OK(context, v0.status());
    StatusOr<std::vector<int64_t>> v1 = IntTensorValues(s1, "BroadcastArgs: s1");
    OP_REQUIRES_OK(context, v1.status());
    StatusOr<TensorShape> a = TensorShape::FromDims(*v0);
    OP_REQUIRES_OK(context, a.status().WithContext("BroadcastArgs: s0"));
    StatusOr<TensorShape> b = TensorShape::FromDims(*v1);
    OP_REQUIRES_OK(context, b.status().WithContext("BroadcastArgs: s1"));
    StatusOr<PartialShape> out_shape = BroadcastShapes(*a, *b);
    OP_REQUIRES_OK(context, out_shape.status().WithContext("BroadcastArgs"));
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape({out_shape->rank()}), &out));
    for (int i = 0; i < out_shape->rank(); ++i) {
      out->data<T>()[i] = static_cast<T>(out_shape->dim(i));
    }
  }
};

// num values from start to stop: start + i * (stop - start) / (num - 1), the
// last exactly stop, computed in double.
template <typename T>
class LinSpaceOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& start = context->input(0);
    const Tensor& stop = context->input(1);
    const Tensor& num_tensor = context->input(2);
    OP_REQUIRES(
        context, start.dims() == 0 && stop.dims() == 0 && num_tensor.dims() == 0,
        errors::InvalidArgument("LinSpace: start, stop and num must be scalars but have "
                                "shapes ",
                                start.shape(), ", ", stop.shape(), " and ", num_tensor.shape()));
    StatusOr<std::vector<int64_t>> num = IntTensorValues(num_tensor, "LinSpace: num");
    OP_REQUIRES_OK(context, num.status());
    const int64_t n = (*num)[0];
    OP_REQUIRES(context, n > 0, errors::InvalidArgument("LinSpace: num ", n, " must be positive"));
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape({n}), &out));
    const double first = start.scalar<T>(), last = stop.scalar<T>();
    T* values = out->data<T>();
    values[0] = static_cast<T>(first);
    if (n > 1) {
      const double step = (last - first) / static_cast<double>(n - 1);
      for (int64_t i = 1; i < n - 1; ++i) values[i] = static_cast<T>(first + i * step);
      values[n - 1] = static_cast<T>(last);
    }
  }
};

// `input` passed through when its shape is compatible with `shape`.
class EnsureShapeOp : public OpKernel {
 public:
  explicit EnsureShapeOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("shape", &shape_));
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    OP_REQUIRES(context, shape_.IsCompatibleWith(input.shape()),
                errors::InvalidArgument("EnsureShape: shape of tensor ", input.shape(),
                                        " is not compatible with expected shape ", shape_));
    context->set_output(0, input);
  }

 private:
  PartialShape shape_;
};

}  // namespace

void RegisterFillKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("Fill"), MakeKernel<FillOp>);
  registry->Register(KernelBuilder("EnsureShape"), MakeKernel<EnsureShapeOp>);
  ForEachType<float, double>([&]<typename T>() {
    registry->Register(KernelBuilder("LinSpace").TypeConstraint<T>("T"), MakeKernel<LinSpaceOp<T>>);
  });
  registry->Register(KernelBuilder("ZerosLike"), MakeKernel<ConstantLikeOp>);
  registry->Register(KernelBuilder("OnesLike"), MakeKernel<ConstantLikeOp>);
  ForEachType<float, double, int32_t, int64_t>([&]<typename T>() {
    registry->Register(KernelBuilder("Range").TypeConstraint<T>("Tidx"), MakeKernel<RangeOp<T>>);
  });
  ForEachType<int32_t, int64_t>([&]<typename T>() {
    registry->Register(KernelBuilder("BroadcastArgs").TypeConstraint<T>("T"),
                       MakeKernel<BroadcastArgsOp<T>>);
  });
}

}  // namespace weir
