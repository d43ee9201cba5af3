// Select and SelectV2: output = condition ? t : e, elementwise.
//
// Select keeps TensorFlow's v1 rules: t and e have one shape, and the
// condition is a scalar (it picks a whole input), that shape, or a vector
// over the first dim (it picks rows). SelectV2 broadcasts all three
// together as NumPy does.
//
// Selecting only moves bytes, so one kernel per element size serves every
// numeric dtype of that size; strings (a save graph picks its temporary
// path's suffix with a Select) have a kernel of their own.
#include <algorithm>
#include <string>
#include <type_traits>

#include "weir/framework/broadcast_shape.h"
#include "weir/kernels/cwise_ops.h"
#include "weir/kernels/math_kernels.h"
#include "weir/kernels/shape_util.h"

namespace weir {
namespace {

template <size_t kSize>
struct UnsignedOfSizeImpl;
template <>
struct UnsignedOfSizeImpl<1> { using type = uint8_t; };
template <>
struct UnsignedOfSizeImpl<2> { using type = uint16_t; };
template <>
struct UnsignedOfSizeImpl<4> { using type = uint32_t; };
template <>
struct UnsignedOfSizeImpl<8> { using type = uint64_t; };
template <typename T>
using UnsignedOfSize = typename UnsignedOfSizeImpl<sizeof(T)>::type;

template <typename U>
constexpr double kSelectCycles = 1 + (1 + 3 * sizeof(U)) * 11.0 / 64;
// A string copy: an allocation for all but short strings.
template <>
constexpr double kSelectCycles<std::string> = 60;

// The elements of `t`, of the dtype's size (or strings).
template <typename U>
U* Elements(Tensor& t) {
  if constexpr (std::is_same_v<U, std::string>) {
    return t.data<std::string>();
  } else {
    return RawElements<U>(t);
  }
}
template <typename U>
const U* Elements(const Tensor& t) {
  if constexpr (std::is_same_v<U, std::string>) {
    return t.data<std::string>();
  } else {
    return RawElements<U>(t);
  }
}

// z[i] = c[i] ? t[i] : e[i] for i in [0, n), where an input marked as
// repeated contributes its element 0 throughout. Fixed at compile time so
// each combination is a loop the compiler vectorizes.
template <bool kRepeatC, bool kRepeatT, bool kRepeatE, typename U>
void SelectLoop(const bool* c, const U* t, const U* e, U* z, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    z[i] = c[kRepeatC ? 0 : i] ? t[kRepeatT ? 0 : i] : e[kRepeatE ? 0 : i];
  }
}

template <typename U>
void SelectRange(bool repeat_c, bool repeat_t, bool repeat_e, const bool* c, const U* t,
                 const U* e, U* z, int64_t n) {
  switch ((repeat_c ? 4 : 0) | (repeat_t ? 2 : 0) | (repeat_e ? 1 : 0)) {
    case 0: return SelectLoop<false, false, false>(c, t, e, z, n);
    case 1: return SelectLoop<false, false, true>(c, t, e, z, n);
    case 2: return SelectLoop<false, true, false>(c, t, e, z, n);
    case 3: return SelectLoop<false, true, true>(c, t, e, z, n);
    case 4: return SelectLoop<true, false, false>(c, t, e, z, n);
    case 5: return SelectLoop<true, false, true>(c, t, e, z, n);
    case 6: return SelectLoop<true, true, false>(c, t, e, z, n);
    default: return SelectLoop<true, true, true>(c, t, e, z, n);
  }
}

// U: the unsigned type of the dtype's element size, or std::string.
template <typename U>
class SelectOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& condition = context->input(0);
    const TensorShape shape = context->input(1).shape();
    const TensorShape& e_shape = context->input(2).shape();
    OP_REQUIRES(context, shape == e_shape,
                errors::InvalidArgument("Select: t and e must have the same shape, not ", shape,
                                        " and ", e_shape, " (dtype ", input_type(1), ")"));
    if (condition.dims() == 0) {
      context->set_output(0, context->input(condition.scalar<bool>() ? 1 : 2));
      return;
    }
    const bool by_rows = condition.dims() == 1 && shape.rank() > 1;
    if (by_rows) {
      OP_REQUIRES(context, condition.dim_size(0) == shape.dim_size(0),
                  errors::InvalidArgument("Select: condition ", condition.shape(),
                                          " must have one element per row of t and e ", shape,
                                          " (dtype ", input_type(1), ")"));
    } else {
      OP_REQUIRES(context, condition.shape() == shape,
                  errors::InvalidArgument("Select: condition ", condition.shape(),
                                          " must be a scalar, a vector over the first dim of t "
                                          "and e, or their shape ",
                                          shape, " (dtype ", input_type(1), ")"));
    }
    int forwarded;
    Tensor* out = ForwardOrAllocate(context, {1, 2}, shape, &forwarded);
    if (out == nullptr || shape.num_elements() == 0) return;
    const bool* c = condition.data<bool>();
    const U* t = Elements<U>(forwarded == 1 ? *out : context->input(1));
    const U* e = Elements<U>(forwarded == 2 ? *out : context->input(2));
    U* z = Elements<U>(*out);
    ThreadPool* pool = context->device()->intra_op_pool();
    if (by_rows) {
      const int64_t row = shape.num_elements() / shape.dim_size(0);
      ShardOrInline(pool, shape.dim_size(0), row * kSelectCycles<U>,
                    [&](int64_t begin, int64_t end) {
                      for (int64_t r = begin; r < end; ++r) {
                        const U* from = (c[r] ? t : e) + r * row;
                        if (from != z + r * row) std::copy_n(from, row, z + r * row);
                      }
                    });
    } else {
      ShardOrInline(pool, shape.num_elements(), kSelectCycles<U>,
                    [&](int64_t begin, int64_t end) {
                      SelectLoop<false, false, false>(c + begin, t + begin, e + begin, z + begin,
                                                      end - begin);
                    });
    }
  }
};

template <typename U>
class SelectV2Op : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const TensorShape c_shape = context->input(0).shape();
    const TensorShape t_shape = context->input(1).shape();
    const TensorShape e_shape = context->input(2).shape();
    StatusOr<PartialShape> broadcast = BroadcastShapes(t_shape, e_shape);
    if (broadcast.ok()) broadcast = BroadcastShapes(c_shape, *broadcast);
    OP_REQUIRES(context, broadcast.ok(),
                errors::InvalidArgument("SelectV2: condition ", c_shape, ", t ", t_shape,
                                        " and e ", e_shape, " do not broadcast together (dtype ",
                                        input_type(1), ")"));
    StatusOr<TensorShape> checked_shape = CheckedShape(*broadcast, "SelectV2");
    OP_REQUIRES_OK(context, checked_shape.status());
    const TensorShape& shape = *checked_shape;
    const int64_t n = shape.num_elements();
    const bool* c = context->input(0).data<bool>();
    if (c_shape.num_elements() == 1 && n > 0 && t_shape == shape && e_shape == shape) {
      context->set_output(0, context->input(c[0] ? 1 : 2));
      return;
    }
    int forwarded;
    Tensor* out = ForwardOrAllocate(context, {1, 2}, shape, &forwarded);
    if (out == nullptr || n == 0) return;
    const U* t = Elements<U>(forwarded == 1 ? *out : context->input(1));
    const U* e = Elements<U>(forwarded == 2 ? *out : context->input(2));
    U* z = Elements<U>(*out);
    ThreadPool* pool = context->device()->intra_op_pool();
    auto full_or_one = [n](const TensorShape& s) {
      return s.num_elements() == n || s.num_elements() == 1;
    };
    if (full_or_one(c_shape) && full_or_one(t_shape) && full_or_one(e_shape)) {
      // Each input is the whole output or one repeated element.
      const bool rc = c_shape.num_elements() != n;
      const bool rt = t_shape.num_elements() != n;
      const bool re = e_shape.num_elements() != n;
      ShardOrInline(pool, n, kSelectCycles<U>, [&](int64_t begin, int64_t end) {
        SelectRange(rc, rt, re, rc ? c : c + begin, rt ? t : t + begin, re ? e : e + begin,
                    z + begin, end - begin);
      });
      return;
    }
    const CollapsedBroadcast dims = CollapseBroadcast(shape, {&c_shape, &t_shape, &e_shape});
    const int64_t inner = dims.out_dims.back();
    const bool rc = dims.in_dims[0].back() == 1;
    const bool rt = dims.in_dims[1].back() == 1;
    const bool re = dims.in_dims[2].back() == 1;
    const std::array<const std::vector<int64_t>*, 3> in_dims = {
        &dims.in_dims[0], &dims.in_dims[1], &dims.in_dims[2]};
    ForEachBroadcastRow<3>(
        pool, dims.out_dims, in_dims, kSelectCycles<U>,
        [&](int64_t row, const std::array<int64_t, 3>& offsets) {
          SelectRange(rc, rt, re, c + offsets[0], t + offsets[1], e + offsets[2],
                      z + row * inner, inner);
        });
  }
};

}  // namespace

void RegisterSelectKernels(KernelRegistry* registry) {
  ForEachType<float, double, int32_t, int64_t, bool, int8_t, uint8_t, int16_t, uint16_t,
              uint32_t, uint64_t, Eigen::half, Eigen::bfloat16, complex64>([&]<typename T>() {
    registry->Register(KernelBuilder("Select").TypeConstraint<T>("T"),
                       MakeKernel<SelectOp<UnsignedOfSize<T>>>);
    registry->Register(KernelBuilder("SelectV2").TypeConstraint<T>("T"),
                       MakeKernel<SelectV2Op<UnsignedOfSize<T>>>);
  });
  registry->Register(KernelBuilder("Select").TypeConstraint<std::string>("T"),
                     MakeKernel<SelectOp<std::string>>);
  registry->Register(KernelBuilder("SelectV2").TypeConstraint<std::string>("T"),
                     MakeKernel<SelectV2Op<std::string>>);
}

}  // namespace weir
