// Segment reductions: UnsortedSegmentSum/Prod/Max/Min and SegmentSum. One
// kernel template with a reducer parameter: the output starts at the
// reducer's identity (what an empty segment is) and each row of `data`
// combines into the row its segment id names. Every id is checked before
// any element moves. Work is split over the columns of a row (each thread
// owns a band of columns for all rows), so no two threads touch one output
// element and the order of combination is the rows' order.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "weir/base/checked_math.h"
#include "weir/base/threadpool.h"
#include "weir/framework/int_tensor_values.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/math_kernels.h"
#include "weir/kernels/shape_util.h"
#include "weir/kernels/type_list.h"

namespace weir {
namespace {

// Integer sums and products wrap, computed unsigned (at least 32 bits, so
// that no promotion to int can overflow).
template <typename T>
struct Wrapping {
  using type = T;
};
template <typename T>
  requires std::is_integral_v<T>
struct Wrapping<T> {
  using type = std::conditional_t<sizeof(T) <= 4, uint32_t, uint64_t>;
};

template <typename T>
struct SumReducer {
  static constexpr const char* kName = "Sum";
  static T Identity() { return T(0); }
  static T Combine(T a, T b) {
    using W = typename Wrapping<T>::type;
    return static_cast<T>(static_cast<W>(a) + static_cast<W>(b));
  }
};

template <typename T>
struct ProdReducer {
  static constexpr const char* kName = "Prod";
  static T Identity() { return T(1); }
  static T Combine(T a, T b) {
    using W = typename Wrapping<T>::type;
    return static_cast<T>(static_cast<W>(a) * static_cast<W>(b));
  }
};

template <typename T>
bool IsNan(T v) {
  if constexpr (std::is_integral_v<T>) {
    return false;
  } else {
    return Eigen::numext::isnan(v);
  }
}

// Max and Min: a NaN in a segment is its result.
template <typename T>
struct MaxReducer {
  static constexpr const char* kName = "Max";
  static T Identity() { return Eigen::NumTraits<T>::lowest(); }
  static T Combine(T a, T b) { return (b > a || IsNan(b)) && !IsNan(a) ? b : a; }
};

template <typename T>
struct MinReducer {
  static constexpr const char* kName = "Min";
  static T Identity() { return Eigen::NumTraits<T>::highest(); }
  static T Combine(T a, T b) { return (b < a || IsNan(b)) && !IsNan(a) ? b : a; }
};

// The ids of an int16, int32 or int64 tensor, as int64.
std::vector<int64_t> SegmentIds(const Tensor& t) {
  std::vector<int64_t> ids(t.NumElements());
  auto copy = [&]<typename I>() { std::copy(t.data<I>(), t.data<I>() + ids.size(), ids.begin()); };
  switch (t.dtype()) {
    case DT_INT16: copy.template operator()<int16_t>(); break;
    case DT_INT32: copy.template operator()<int32_t>(); break;
    case DT_INT64: copy.template operator()<int64_t>(); break;
    default: LOG(Fatal) << "segment id dtype " << t.dtype();
  }
  return ids;
}

// out[ids[r], :] = Combine(out[ids[r], :], data[r, :]) for rows r with a
// non-negative id, out first filled with the identity. REQUIRES: every id
// is < segments.
template <typename T, typename Reducer>
void ReduceSegments(OpKernelContext* context, const T* data, const std::vector<int64_t>& ids,
                    int64_t segments, int64_t inner, T* out) {
  std::fill_n(out, segments * inner, Reducer::Identity());
  const int64_t rows = static_cast<int64_t>(ids.size());
  if (rows == 0 || inner == 0) return;
  context->device()->intra_op_pool()->ParallelFor(inner, rows, [&](int64_t first, int64_t last) {
    for (int64_t r = 0; r < rows; ++r) {
      if (ids[r] < 0) continue;
      const T* src = data + r * inner;
      T* dst = out + ids[r] * inner;
      for (int64_t j = first; j < last; ++j) dst[j] = Reducer::Combine(dst[j], src[j]);
    }
  });
}

template <typename T, template <typename> class Reducer>
class UnsortedSegmentOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const std::string op = StrCat("UnsortedSegment", Reducer<T>::kName);
    const Tensor& data = context->input(0);
    const Tensor& segment_ids = context->input(1);
    const Tensor& num_segments = context->input(2);
    OP_REQUIRES(context, num_segments.dims() == 0,
                errors::InvalidArgument(op, ": num_segments must be a scalar but has shape ",
                                        num_segments.shape()));
    StatusOr<std::vector<int64_t>> num = IntTensorValues(num_segments, op + ": num_segments");
    OP_REQUIRES_OK(context, num.status());
    const int64_t segments = num->front();
    OP_REQUIRES(
        context, segments >= 0,
        errors::InvalidArgument(op, ": num_segments = ", segments, " must not be negative"));
    bool prefix = segment_ids.dims() <= data.dims();
    for (int i = 0; prefix && i < segment_ids.dims(); ++i) {
      prefix = segment_ids.dim_size(i) == data.dim_size(i);
    }
    OP_REQUIRES(context, prefix,
                errors::InvalidArgument(op, ": data shape ", data.shape(),
                                        " does not start with segment_ids shape ",
                                        segment_ids.shape(), " (", data.dtype(), ")"));
    std::vector<int64_t> dims = {segments};
    for (int i = segment_ids.dims(); i < data.dims(); ++i) dims.push_back(data.dim_size(i));
    StatusOr<TensorShape> shape = CheckedShape(dims, op);
    OP_REQUIRES_OK(context, shape.status());
    const std::vector<int64_t> ids = SegmentIds(segment_ids);
    for (int64_t r = 0; r < static_cast<int64_t>(ids.size()); ++r) {
      OP_REQUIRES(
          context, ids[r] < segments,
          errors::InvalidArgument(op, ": segment_ids[", r, "] = ", ids[r], " is out of range [0, ",
                                  segments, ") (segment_ids shape ", segment_ids.shape(), ")"));
    }
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, *shape, &out));
    const int64_t inner = DimProduct(data.shape(), segment_ids.dims(), data.dims());
    ReduceSegments<T, Reducer<T>>(context, data.data<T>(), ids, segments, inner, out->data<T>());
  }
};

template <typename T>
class SegmentSumOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& data = context->input(0);
    const Tensor& segment_ids = context->input(1);
    OP_REQUIRES(context, segment_ids.dims() == 1,
                errors::InvalidArgument("SegmentSum: segment_ids must be a vector but has shape ",
                                        segment_ids.shape()));
    OP_REQUIRES(context, data.dims() >= 1 && data.dim_size(0) == segment_ids.dim_size(0),
                errors::InvalidArgument("SegmentSum: segment_ids shape ", segment_ids.shape(),
                                        " must have one id per row of data shape ", data.shape(),
                                        " (", data.dtype(), ")"));
    const std::vector<int64_t> ids = SegmentIds(segment_ids);
    for (size_t r = 0; r < ids.size(); ++r) {
      OP_REQUIRES(
          context, ids[r] >= 0,
          errors::InvalidArgument("SegmentSum: segment_ids[", r, "] = ", ids[r], " is negative"));
      OP_REQUIRES(context, r == 0 || ids[r] >= ids[r - 1],
                  errors::InvalidArgument("SegmentSum: segment_ids are not sorted: segment_ids[", r,
                                          "] = ", ids[r], " follows ", ids[r - 1]));
    }
    std::vector<int64_t> dims(data.shape().dim_sizes().begin(), data.shape().dim_sizes().end());
    dims[0] = 0;
    if (!ids.empty()) {
      OP_REQUIRES_OK(context, CheckedAdd(ids.back(), 1, &dims[0], "SegmentSum segment count"));
    }
    StatusOr<TensorShape> shape = CheckedShape(dims, "SegmentSum");
    OP_REQUIRES_OK(context, shape.status());
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, *shape, &out));
    const int64_t inner = DimProduct(data.shape(), 1, data.dims());
    ReduceSegments<T, SumReducer<T>>(context, data.data<T>(), ids, dims[0], inner, out->data<T>());
  }
};

template <template <typename> class Reducer, typename... Types>
void RegisterUnsorted(KernelRegistry* registry, const char* name) {
  ForEachType<Types...>([&]<typename T>() {
    registry->Register(KernelBuilder(name).TypeConstraint<T>("T"),
                       MakeKernel<UnsortedSegmentOp<T, Reducer>>);
  });
}

}  // namespace

void RegisterSegmentKernels(KernelRegistry* registry) {
  // The ids are read as int64 whatever their type, so one kernel serves
  // every Tindices and Tnumsegments.
  RegisterUnsorted<SumReducer, float, double, Eigen::half, Eigen::bfloat16, int32_t, int64_t,
                   int8_t, int16_t, uint8_t, uint16_t, uint32_t, uint64_t, complex64, complex128>(
      registry, "UnsortedSegmentSum");
  RegisterUnsorted<ProdReducer, float, double, Eigen::half, Eigen::bfloat16, int32_t, int64_t,
                   int8_t, int16_t, uint8_t, uint16_t, uint32_t, uint64_t, complex64, complex128>(
      registry, "UnsortedSegmentProd");
  RegisterUnsorted<MaxReducer, float, double, Eigen::half, Eigen::bfloat16, int32_t, int64_t,
                   int8_t, int16_t, uint8_t, uint16_t, uint32_t, uint64_t>(registry,
                                                                           "UnsortedSegmentMax");
  RegisterUnsorted<MinReducer, float, double, Eigen::half, Eigen::bfloat16, int32_t, int64_t,
                   int8_t, int16_t, uint8_t, uint16_t, uint32_t, uint64_t>(registry,
                                                                           "UnsortedSegmentMin");
  ForEachType<float, double, Eigen::half, Eigen::bfloat16, int32_t, int64_t, int8_t, int16_t,
              uint8_t, uint16_t, uint32_t, uint64_t, complex64, complex128>([&]<typename T>() {
    registry->Register(KernelBuilder("SegmentSum").TypeConstraint<T>("T"),
                       MakeKernel<SegmentSumOp<T>>);
  });
}

}  // namespace weir
