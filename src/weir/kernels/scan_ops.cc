// Cumsum and Cumprod: one O(n) scan template with a combine parameter. The
// input is viewed as [outer, length, inner] around the scan axis; each
// task scans a band of inner columns of one outer slice row by row, so the
// inner loop runs over contiguous memory and bands run in parallel; a scan
// along the last dim (inner of 1) runs each row with its sum in a register.
// Half and bfloat16 accumulate in float (one rounding per output);
// integers wrap (computed unsigned).
#include <Eigen/Core>
#include <algorithm>
#include <type_traits>

#include "weir/base/threadpool.h"
#include "weir/framework/int_tensor_values.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/math_kernels.h"
#include "weir/kernels/shape_util.h"
#include "weir/kernels/type_list.h"

namespace weir {
namespace {

// The type a scan of T accumulates in.
template <typename T>
struct ScanAccumulator {
  using type = T;
};
template <typename T>
  requires std::is_integral_v<T>
struct ScanAccumulator<T> {
  using type = std::conditional_t<sizeof(T) <= 4, uint32_t, uint64_t>;
};
template <>
struct ScanAccumulator<Eigen::half> {
  using type = float;
};
template <>
struct ScanAccumulator<Eigen::bfloat16> {
  using type = float;
};

struct SumScan {
  static constexpr const char* kName = "Cumsum";
  template <typename A>
  static A Identity() {
    return A(0);
  }
  template <typename A>
  static A Combine(A a, A b) {
    return a + b;
  }
};

struct ProdScan {
  static constexpr const char* kName = "Cumprod";
  template <typename A>
  static A Identity() {
    return A(1);
  }
  template <typename A>
  static A Combine(A a, A b) {
    return a * b;
  }
};

// Columns per task: enough contiguous work to be worth a thread.
constexpr int64_t kBand = 1024;

template <typename T, typename Scan>
class ScanOp : public OpKernel {
 public:
  explicit ScanOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("exclusive", &exclusive_));
    context->SetStatus(context->GetAttr("reverse", &reverse_));
  }

  void Compute(OpKernelContext* context) override {
    using A = typename ScanAccumulator<T>::type;
    const char* op = Scan::kName;
    const Tensor& x = context->input(0);
    const Tensor& axis_tensor = context->input(1);
    OP_REQUIRES(
        context, axis_tensor.dims() == 0,
        errors::InvalidArgument(op, ": axis must be a scalar but has shape ", axis_tensor.shape()));
    StatusOr<std::vector<int64_t>> axis_values = IntTensorValues(axis_tensor, StrCat(op, ": axis"));
    OP_REQUIRES_OK(context, axis_values.status());
    const int64_t rank = x.dims();
    int64_t axis = axis_values->front();
    OP_REQUIRES(context, axis >= -rank && axis < rank,
                errors::InvalidArgument(op, ": axis ", axis, " is not in [", -rank, ", ", rank,
                                        ") for x of shape ", x.shape(), " (", x.dtype(), ")"));
    if (axis < 0) axis += rank;
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, x.shape(), &out));
    if (x.NumElements() == 0) return;
    const int a = static_cast<int>(axis);
    const int64_t outer = DimProduct(x.shape(), 0, a);
    const int64_t length = x.dim_size(a);
    const int64_t inner = DimProduct(x.shape(), a + 1, x.dims());
    const int64_t bands = (inner + kBand - 1) / kBand;
    const T* src = x.data<T>();
    T* dst = out->data<T>();
    const bool exclusive = exclusive_, reverse = reverse_;
    if (inner == 1) {
      // Scans along the last dim: one contiguous row per outer index, its
      // running value kept in a register.
      context->device()->intra_op_pool()->ParallelFor(
          outer, length, [&](int64_t first, int64_t last) {
            for (int64_t o = first; o < last; ++o) {
              const T* in = src + o * length;
              T* row = dst + o * length;
              const int64_t start = reverse ? length - 1 : 0;
              const int64_t step = reverse ? -1 : 1;
              A running = Scan::template Identity<A>();
              for (int64_t n = 0, i = start; n < length; ++n, i += step) {
                const A value = static_cast<A>(in[i]);
                if (exclusive) row[i] = static_cast<T>(running);
                running = Scan::Combine(running, value);
                if (!exclusive) row[i] = static_cast<T>(running);
              }
            }
          });
      return;
    }
    context->device()->intra_op_pool()->ParallelFor(
        outer * bands, length * std::min(inner, kBand), [&](int64_t first, int64_t last) {
          std::vector<A> running(std::min(inner, kBand));
          for (int64_t task = first; task < last; ++task) {
            const int64_t o = task / bands;
            const int64_t begin = (task % bands) * kBand;
            const int64_t width = std::min(kBand, inner - begin);
            std::fill_n(running.begin(), width, Scan::template Identity<A>());
            for (int64_t step = 0; step < length; ++step) {
              const int64_t i = reverse ? length - 1 - step : step;
              const int64_t offset = (o * length + i) * inner + begin;
              const T* in = src + offset;
              T* row = dst + offset;
              for (int64_t j = 0; j < width; ++j) {
                const A value = static_cast<A>(in[j]);
                if (exclusive) {
                  row[j] = static_cast<T>(running[j]);
                  running[j] = Scan::Combine(running[j], value);
                } else {
                  running[j] = Scan::Combine(running[j], value);
                  row[j] = static_cast<T>(running[j]);
                }
              }
            }
          }
        });
  }

 private:
  bool exclusive_ = false;
  bool reverse_ = false;
};

}  // namespace

void RegisterScanKernels(KernelRegistry* registry) {
  ForEachType<float, double, Eigen::half, Eigen::bfloat16, int32_t, int64_t, int8_t, int16_t,
              uint8_t, uint16_t, uint32_t, uint64_t, complex64, complex128>([&]<typename T>() {
    registry->Register(KernelBuilder("Cumsum").TypeConstraint<T>("T"),
                       MakeKernel<ScanOp<T, SumScan>>);
    registry->Register(KernelBuilder("Cumprod").TypeConstraint<T>("T"),
                       MakeKernel<ScanOp<T, ProdScan>>);
  });
}

}  // namespace weir
