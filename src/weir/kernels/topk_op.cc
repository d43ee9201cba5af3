// TopKV2: the k largest entries of each row (the last dim) and their
// indices. Rows run in parallel; each selects with a partial sort of the
// indices (O(n log k)), or one pass when k is 1. Order: larger first, NaN
// larger than any number, equal values by lower index first (as
// TensorFlow), so the result is deterministic and always sorted.
#include <Eigen/Core>
#include <algorithm>
#include <numeric>
#include <type_traits>

#include "weir/base/threadpool.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/nn_kernels.h"
#include "weir/kernels/shape_util.h"
#include "weir/kernels/type_list.h"

namespace weir {
namespace {

template <typename T>
bool IsNan(T v) {
  if constexpr (std::is_integral_v<T>) {
    return false;
  } else {
    return Eigen::numext::isnan(v);
  }
}

// Whether row[a] comes before row[b] in the output.
template <typename T>
bool Before(const T* row, int64_t a, int64_t b) {
  const T va = row[a], vb = row[b];
  const bool na = IsNan(va), nb = IsNan(vb);
  if (na || nb) return na && (!nb || a < b);
  return va > vb || (va == vb && a < b);
}

// The value of a scalar int16/int32/int64 tensor.
int64_t ScalarInt(const Tensor& t) {
  switch (t.dtype()) {
    case DT_INT16: return t.scalar<int16_t>();
    case DT_INT32: return t.scalar<int32_t>();
    case DT_INT64: return t.scalar<int64_t>();
    default: LOG(Fatal) << "k dtype " << t.dtype();
  }
  return 0;
}

template <typename T>
class TopKOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    const Tensor& k_tensor = context->input(1);
    OP_REQUIRES(
        context, k_tensor.dims() == 0,
        errors::InvalidArgument("TopKV2: k must be a scalar but has shape ", k_tensor.shape()));
    const int64_t k = ScalarInt(k_tensor);
    OP_REQUIRES(context, k >= 0,
                errors::InvalidArgument("TopKV2: k = ", k, " must not be negative"));
    OP_REQUIRES(context, input.dims() >= 1,
                errors::InvalidArgument("TopKV2: input must have rank >= 1 but has shape ",
                                        input.shape(), " (", input.dtype(), ")"));
    const int64_t n = input.dim_size(input.dims() - 1);
    OP_REQUIRES(
        context, n >= k,
        errors::InvalidArgument("TopKV2: input of shape ", input.shape(), " (", input.dtype(),
                                ") has ", n, " entries per row, fewer than k = ", k));
    const DType index_type = output_type(1);
    if (index_type == DT_INT16) {
      OP_REQUIRES(
          context, n <= std::numeric_limits<int16_t>::max() + int64_t{1},
          errors::InvalidArgument("TopKV2: rows of ", n, " entries do not fit index_type int16"));
    }
    std::vector<int64_t> dims(input.shape().dim_sizes().begin(), input.shape().dim_sizes().end());
    dims.back() = k;
    StatusOr<TensorShape> shape = CheckedShape(dims, "TopKV2");
    OP_REQUIRES_OK(context, shape.status());
    Tensor *values, *indices;
    OP_REQUIRES_OK(context, context->allocate_output(0, *shape, &values));
    OP_REQUIRES_OK(context, context->allocate_output(1, *shape, &indices));
    if (values->NumElements() == 0) return;
    const int64_t rows = DimProduct(input.shape(), 0, input.dims() - 1);
    const T* src = input.data<T>();
    T* out = values->data<T>();
    auto write_index = [&](int64_t position, int64_t index) {
      switch (index_type) {
        case DT_INT16: indices->data<int16_t>()[position] = static_cast<int16_t>(index); break;
        case DT_INT32: indices->data<int32_t>()[position] = static_cast<int32_t>(index); break;
        default: indices->data<int64_t>()[position] = index; break;
      }
    };
    int64_t log_k = 1;
    while ((int64_t{1} << log_k) < k) ++log_k;
    context->device()->intra_op_pool()->ParallelFor(
        rows, n * log_k, [&](int64_t first, int64_t last) {
          std::vector<int64_t> order;
          for (int64_t r = first; r < last; ++r) {
            const T* row = src + r * n;
            if (k == 1) {
              int64_t best = 0;
              for (int64_t i = 1; i < n; ++i) {
                if (Before(row, i, best)) best = i;
              }
              out[r] = row[best];
              write_index(r, best);
              continue;
            }
            order.resize(n);
            std::iota(order.begin(), order.end(), int64_t{0});
            auto before = [row](int64_t a, int64_t b) { return Before(row, a, b); };
            if (k < n) {
              std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
            } else {
              std::sort(order.begin(), order.end(), before);
            }
            for (int64_t j = 0; j < k; ++j) {
              out[r * k + j] = row[order[j]];
              write_index(r * k + j, order[j]);
            }
          }
        });
  }
};

}  // namespace

void RegisterTopKKernels(KernelRegistry* registry) {
  ForEachType<float, double, Eigen::half, Eigen::bfloat16, int32_t, int64_t, int8_t, int16_t,
              uint8_t, uint16_t, uint32_t, uint64_t>([&]<typename T>() {
    registry->Register(KernelBuilder("TopKV2").TypeConstraint<T>("T"), MakeKernel<TopKOp<T>>);
  });
}

}  // namespace weir
