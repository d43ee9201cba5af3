// Kernels of ops/gradient_support_ops.cc.
#include <vector>

#include "weir/base/checked_math.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/all_kernels.h"
#include "weir/kernels/type_list.h"

namespace weir {
namespace {

template <typename T>
class BroadcastGradientArgsOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    const Tensor& s0 = context->input(0);
    const Tensor& s1 = context->input(1);
    OP_REQUIRES(context, s0.dims() == 1 && s1.dims() == 1,
                errors::InvalidArgument("BroadcastGradientArgs: shapes must be vectors, got ",
                                        s0.shape(), " and ", s1.shape()));
    const int64_t n0 = s0.NumElements(), n1 = s1.NumElements();
    const int64_t rank = std::max(n0, n1);
    std::vector<T> r0, r1;
    for (int64_t i = 0; i < rank; ++i) {
      // Dims aligned from the right; missing leading dims are 1.
      T d0 = i < rank - n0 ? 1 : s0.data<T>()[i - (rank - n0)];
      T d1 = i < rank - n1 ? 1 : s1.data<T>()[i - (rank - n1)];
      OP_REQUIRES(context, d0 == d1 || d0 == 1 || d1 == 1,
                  errors::InvalidArgument("BroadcastGradientArgs: incompatible shapes [",
                                          StrJoin(s0.flat<T>(), ","), "] vs. [",
                                          StrJoin(s1.flat<T>(), ","), "]"));
      T out = std::max(d0, d1);
      if (i < rank - n0 || (d0 == 1 && out != 1)) r0.push_back(static_cast<T>(i));
      if (i < rank - n1 || (d1 == 1 && out != 1)) r1.push_back(static_cast<T>(i));
    }
    for (int k = 0; k < 2; ++k) {
      const std::vector<T>& axes = k == 0 ? r0 : r1;
      Tensor* out;
      OP_REQUIRES_OK(context, context->allocate_output(k, TensorShape({static_cast<int64_t>(axes.size())}), &out));
      std::copy(axes.begin(), axes.end(), out->data<T>());
    }
  }
};

template <typename T>
class InvertPermutationOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    const Tensor& x = context->input(0);
    OP_REQUIRES(
        context, x.dims() == 1,
        errors::InvalidArgument("InvertPermutation: x must be a vector but has shape ", x.shape()));
    const int64_t n = x.NumElements();
    Tensor* y;
    OP_REQUIRES_OK(context, context->allocate_output(0, x.shape(), &y));
    const T* in = x.data<T>();
    T* out = y->data<T>();
    std::vector<bool> seen(n, false);
    for (int64_t i = 0; i < n; ++i) {
      const T v = in[i];
      OP_REQUIRES(context, v >= 0 && v < n,
                  errors::InvalidArgument("InvertPermutation: x[", i, "] = ", v, " is not in [0, ",
                                          n, "), so x is not a permutation"));
      OP_REQUIRES(context, !seen[v],
                  errors::InvalidArgument("InvertPermutation: x[", i, "] = ", v,
                                          " appears twice, so x is not a permutation"));
      seen[v] = true;
      out[v] = static_cast<T>(i);
    }
  }
};

// offset[i] is 0 except along concat_dim, where it is the sum of the
// extents of shapes 0..i-1 there.
template <typename T>
class ConcatOffsetOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    const Tensor& concat_dim = context->input(0);
    OP_REQUIRES(context, concat_dim.dims() == 0,
                errors::InvalidArgument("ConcatOffset: concat_dim must be a scalar but has shape ",
                                        concat_dim.shape()));
    const int n = context->num_inputs() - 1;
    const Tensor& first = context->input(1);
    OP_REQUIRES(context, first.dims() == 1,
                errors::InvalidArgument("ConcatOffset: shape 0 must be a vector but has shape ",
                                        first.shape()));
    const int64_t rank = first.NumElements();
    int64_t axis = concat_dim.scalar<int32_t>();
    OP_REQUIRES(context, axis >= -rank && axis < rank,
                errors::InvalidArgument("ConcatOffset: concat_dim ", axis, " is not in [", -rank,
                                        ", ", rank, ") for shapes of rank ", rank));
    if (axis < 0) axis += rank;
    const T* base = first.data<T>();
    T offset = 0;
    for (int i = 0; i < n; ++i) {
      const Tensor& shape = context->input(i + 1);
      OP_REQUIRES(context, shape.dims() == 1 && shape.NumElements() == rank,
                  errors::InvalidArgument("ConcatOffset: shape ", i, " has shape ", shape.shape(),
                                          " but shape 0 is [", StrJoin(first.flat<T>(), ","),
                                          "], a vector of ", rank, " elements"));
      const T* dims = shape.data<T>();
      for (int64_t d = 0; d < rank; ++d) {
        OP_REQUIRES(context, d == axis || dims[d] == base[d],
                    errors::InvalidArgument(
                        "ConcatOffset: all dims except ", axis, " must match, but shape ", i, " [",
                        StrJoin(shape.flat<T>(), ","), "] differs from shape 0 [",
                        StrJoin(first.flat<T>(), ","), "] in dim ", d));
      }
      Tensor* out;
      OP_REQUIRES_OK(context, context->allocate_output(i, TensorShape({rank}), &out));
      std::fill_n(out->data<T>(), rank, T{0});
      out->data<T>()[axis] = offset;
      if (i + 1 == n) break;
      int64_t next;
      OP_REQUIRES_OK(context, CheckedAdd(offset, dims[axis], &next, "ConcatOffset offset"));
      offset = static_cast<T>(next);
      OP_REQUIRES(
          context, static_cast<int64_t>(offset) == next,
          errors::InvalidArgument("ConcatOffset: offset ", next, " overflows ", shape.dtype()));
    }
  }
};

}  // namespace

void RegisterGradientSupportKernels(KernelRegistry* registry) {
  ForEachType<int32_t, int64_t>([&]<typename T>() {
    registry->Register(KernelBuilder("BroadcastGradientArgs").TypeConstraint<T>("T"),
                       MakeKernel<BroadcastGradientArgsOp<T>>);
    registry->Register(KernelBuilder("InvertPermutation").TypeConstraint<T>("T"),
                       MakeKernel<InvertPermutationOp<T>>);
    registry->Register(KernelBuilder("ConcatOffset").TypeConstraint<T>("shape_type"),
                       MakeKernel<ConcatOffsetOp<T>>);
  });
}

}  // namespace weir
