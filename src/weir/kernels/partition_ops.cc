// DynamicPartition, DynamicStitch, Unique and Where: ops whose output size
// depends on the values of an input. Partition and stitch values are
// checked before any slice moves.
#include <algorithm>
#include <unordered_map>

#include <Eigen/Core>

#include "weir/base/threadpool.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/array_copy.h"
#include "weir/kernels/array_kernels.h"
#include "weir/kernels/shape_util.h"
#include "weir/kernels/type_list.h"

namespace weir {
namespace {

// "[1,2]": the position of flat element `flat` of a tensor of `shape`.
std::string Position(int64_t flat, const TensorShape& shape) {
  std::vector<int64_t> index(shape.rank());
  for (int k = shape.rank() - 1; k >= 0; --k) {
    index[k] = shape.dim_size(k) == 0 ? 0 : flat % shape.dim_size(k);
    flat = shape.dim_size(k) == 0 ? 0 : flat / shape.dim_size(k);
  }
  return StrCat("[", StrJoin(index, ","), "]");
}

// True if `shape` starts with the dims of `prefix`.
bool StartsWith(const TensorShape& shape, const TensorShape& prefix) {
  if (prefix.rank() > shape.rank()) return false;
  for (int i = 0; i < prefix.rank(); ++i) {
    if (shape.dim_size(i) != prefix.dim_size(i)) return false;
  }
  return true;
}

// shape[from:], with `first` in front; an error when that many slices of
// an empty tensor's dims multiply past int64.
StatusOr<TensorShape> WithFirstDim(int64_t first, const TensorShape& shape, int from,
                                   std::string_view op) {
  std::vector<int64_t> dims = {first};
  dims.insert(dims.end(), shape.dim_sizes().begin() + from, shape.dim_sizes().end());
  return CheckedShape(dims, op);
}

class DynamicPartitionOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& data = context->input(0);
    const Tensor& partitions = context->input(1);
    const int num = context->num_outputs();
    OP_REQUIRES(context, StartsWith(data.shape(), partitions.shape()),
                errors::InvalidArgument("DynamicPartition: the partitions' shape ",
                                        partitions.shape(), " must be a prefix of the data's "
                                        "shape ", data.shape()));
    const int64_t n = partitions.NumElements();
    // Elements per partition index (data is partitions' shape followed by
    // the slice's); the slice's own dims may overflow when data is empty.
    const int64_t slice = n == 0 ? 0 : data.NumElements() / n;
    const int32_t* part = partitions.data<int32_t>();
    std::vector<int64_t> counts(num, 0);
    for (int64_t i = 0; i < n; ++i) {
      OP_REQUIRES(context, part[i] >= 0 && part[i] < num,
                  errors::InvalidArgument("DynamicPartition: partitions",
                                          Position(i, partitions.shape()), " = ", part[i],
                                          " is not in [0, ", num, ") (data shape ", data.shape(),
                                          ")"));
      ++counts[part[i]];
    }
    std::vector<Tensor*> outputs(num);
    for (int p = 0; p < num; ++p) {
      StatusOr<TensorShape> shape =
          WithFirstDim(counts[p], data.shape(), partitions.dims(), "DynamicPartition");
      OP_REQUIRES_OK(context, shape.status());
      OP_REQUIRES_OK(context, context->allocate_output(p, *shape, &outputs[p]));
    }
    if (slice == 0) return;
    DispatchByElementSize(data.dtype(), [&]<typename T>() {
      const T* src = ElementsAs<T>(data);
      std::vector<T*> dst(num);
      for (int p = 0; p < num; ++p) dst[p] = ElementsAs<T>(*outputs[p]);
      for (int64_t i = 0; i < n; ++i) {
        CopyElements(src + i * slice, slice, dst[part[i]]);
        dst[part[i]] += slice;
      }
    });
  }
};

class DynamicStitchOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const int n = context->num_inputs() / 2;
    const Tensor& data0 = context->input(n);
    const Tensor& indices0 = context->input(0);
    OP_REQUIRES(context, StartsWith(data0.shape(), indices0.shape()),
                errors::InvalidArgument("DynamicStitch: data[0] has shape ", data0.shape(),
                                        " which does not start with the shape of indices[0] ",
                                        indices0.shape()));
    // Every data[m] is indices[m]'s shape followed by these slice dims.
    const std::span<const int64_t> slice_dims =
        data0.shape().dim_sizes().subspan(indices0.dims());
    // (Saturated only when every data[m] is empty: then nothing is copied.)
    const int64_t slice = DimProduct(data0.shape(), indices0.dims(), data0.dims());
    int64_t max_index = -1;
    for (int m = 0; m < n; ++m) {
      const Tensor& indices = context->input(m);
      const Tensor& data = context->input(n + m);
      const bool matches = StartsWith(data.shape(), indices.shape()) &&
                           std::ranges::equal(data.shape().dim_sizes().subspan(indices.dims()),
                                              slice_dims);
      OP_REQUIRES(context, matches,
                  errors::InvalidArgument("DynamicStitch: data[", m, "] has shape ",
                                          data.shape(), " but must be the shape of indices[",
                                          m, "] ", indices.shape(), " followed by [",
                                          StrJoin(slice_dims, ","), "] (from indices[0] ",
                                          indices0.shape(), " and data[0] ", data0.shape(),
                                          ")"));
      const int32_t* index = indices.data<int32_t>();
      for (int64_t i = 0; i < indices.NumElements(); ++i) {
        OP_REQUIRES(context, index[i] >= 0,
                    errors::InvalidArgument("DynamicStitch: indices[", m, "]",
                                            Position(i, indices.shape()), " = ", index[i],
                                            " is negative"));
        max_index = std::max<int64_t>(max_index, index[i]);
      }
    }
    StatusOr<TensorShape> out_shape =
        WithFirstDim(max_index + 1, data0.shape(), indices0.dims(), "DynamicStitch");
    OP_REQUIRES_OK(context, out_shape.status());
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, *out_shape, &out));
    DispatchByElementSize(data0.dtype(), [&]<typename T>() {
      T* dst = ElementsAs<T>(*out);
      std::fill_n(dst, out->NumElements(), T{});
      if (slice == 0) return;
      for (int m = 0; m < n; ++m) {
        const int32_t* index = context->input(m).data<int32_t>();
        const T* src = ElementsAs<T>(context->input(n + m));
        for (int64_t i = 0; i < context->input(m).NumElements(); ++i) {
          CopyElements(src + i * slice, slice, dst + index[i] * slice);
        }
      }
    });
  }
};

// Unique hashes values: keys are the values themselves (floats compare as
// numbers: 0 and -0 are one value, every NaN its own).
template <typename T>
struct UniqueKey {
  using type = T;
};
template <>
struct UniqueKey<Eigen::half> {
  using type = float;
};
template <>
struct UniqueKey<Eigen::bfloat16> {
  using type = float;
};

template <typename T>
class UniqueOp : public OpKernel {
  using Key = typename UniqueKey<T>::type;

 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& x = context->input(0);
    OP_REQUIRES(context, x.dims() == 1,
                errors::InvalidArgument(type_string(), " (node ", name(),
                                        "): x must be a vector but has shape ", x.shape()));
    const int64_t n = x.NumElements();
    const T* values = x.data<T>();
    std::unordered_map<Key, int64_t> position;
    position.reserve(n);
    std::vector<int64_t> idx(n);
    std::vector<int64_t> firsts;  // element of x where each unique value first appears
    for (int64_t i = 0; i < n; ++i) {
      auto [it, inserted] = position.try_emplace(static_cast<Key>(values[i]),
                                                 static_cast<int64_t>(firsts.size()));
      if (inserted) firsts.push_back(i);
      idx[i] = it->second;
    }
    Tensor *y, *idx_out;
    OP_REQUIRES_OK(context, context->allocate_output(
                                0, TensorShape({static_cast<int64_t>(firsts.size())}), &y));
    OP_REQUIRES_OK(context, context->allocate_output(1, x.shape(), &idx_out));
    for (size_t k = 0; k < firsts.size(); ++k) y->data<T>()[k] = values[firsts[k]];
    if (idx_out->dtype() == DT_INT32) {
      std::copy(idx.begin(), idx.end(), idx_out->data<int32_t>());
    } else {
      std::copy(idx.begin(), idx.end(), idx_out->data<int64_t>());
    }
    if (context->num_outputs() < 3) return;
    // UniqueWithCounts: how often each distinct value occurs.
    std::vector<int64_t> counts(firsts.size(), 0);
    for (int64_t k : idx) ++counts[k];
    Tensor* count_out;
    OP_REQUIRES_OK(context, context->allocate_output(2, y->shape(), &count_out));
    if (count_out->dtype() == DT_INT32) {
      std::copy(counts.begin(), counts.end(), count_out->data<int32_t>());
    } else {
      std::copy(counts.begin(), counts.end(), count_out->data<int64_t>());
    }
  }
};

// Where tests elements against zero as V: integers and bools by their bits
// (one unsigned type per size), floating and complex types as numbers so
// that -0 is zero.
template <typename V>
class WhereOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    const V* values = ElementsAs<V>(input);
    const int64_t n = input.NumElements();
    const int rank = input.dims();
    // Fixed blocks so that counting and writing agree on the split.
    constexpr int64_t kBlock = 1 << 16;
    const int64_t blocks = (n + kBlock - 1) / kBlock;
    std::vector<int64_t> counts(blocks + 1, 0);
    ThreadPool* pool = context->device()->intra_op_pool();
    pool->ParallelFor(blocks, kBlock, [&](int64_t first, int64_t last) {
      for (int64_t b = first; b < last; ++b) {
        int64_t count = 0;
        for (int64_t i = b * kBlock; i < std::min(n, (b + 1) * kBlock); ++i) {
          count += values[i] != V(0);
        }
        counts[b + 1] = count;
      }
    });
    for (int64_t b = 0; b < blocks; ++b) counts[b + 1] += counts[b];
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape({counts[blocks], rank}), &out));
    int64_t* coords = out->data<int64_t>();
    pool->ParallelFor(blocks, 2 * kBlock, [&](int64_t first, int64_t last) {
      for (int64_t b = first; b < last; ++b) {
        int64_t* row = coords + counts[b] * rank;
        // The coordinates of element b * kBlock, advanced with each element.
        std::vector<int64_t> index(rank);
        int64_t rest = b * kBlock;
        for (int k = rank - 1; k >= 0; --k) {
          index[k] = rest % input.dim_size(k);
          rest /= input.dim_size(k);
        }
        for (int64_t i = b * kBlock; i < std::min(n, (b + 1) * kBlock); ++i) {
          if (values[i] != V(0)) {
            std::copy(index.begin(), index.end(), row);
            row += rank;
          }
          for (int k = rank - 1; k >= 0 && ++index[k] == input.dim_size(k); --k) index[k] = 0;
        }
      }
    });
  }
};

}  // namespace

void RegisterPartitionKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("DynamicPartition"), MakeKernel<DynamicPartitionOp>);
  registry->Register(KernelBuilder("DynamicStitch"), MakeKernel<DynamicStitchOp>);
  ForEachType<float, double, Eigen::half, Eigen::bfloat16, int32_t, int64_t, uint8_t, int8_t,
              int16_t, uint16_t, uint32_t, uint64_t, bool, std::string>([&]<typename T>() {
    registry->Register(KernelBuilder("Unique").TypeConstraint<T>("T"), MakeKernel<UniqueOp<T>>);
    registry->Register(KernelBuilder("UniqueWithCounts").TypeConstraint<T>("T"),
                       MakeKernel<UniqueOp<T>>);
  });
  ForEachType<float, double, Eigen::half, Eigen::bfloat16, complex64, complex128>(
      [&]<typename T>() {
        registry->Register(KernelBuilder("Where").TypeConstraint<T>("T"), MakeKernel<WhereOp<T>>);
      });
  registry->Register(KernelBuilder("Where").TypeConstraint<bool>("T").TypeConstraint<int8_t>("T")
                         .TypeConstraint<uint8_t>("T"),
                     MakeKernel<WhereOp<uint8_t>>);
  registry->Register(KernelBuilder("Where").TypeConstraint<int16_t>("T")
                         .TypeConstraint<uint16_t>("T"),
                     MakeKernel<WhereOp<uint16_t>>);
  registry->Register(KernelBuilder("Where").TypeConstraint<int32_t>("T")
                         .TypeConstraint<uint32_t>("T"),
                     MakeKernel<WhereOp<uint32_t>>);
  registry->Register(KernelBuilder("Where").TypeConstraint<int64_t>("T")
                         .TypeConstraint<uint64_t>("T"),
                     MakeKernel<WhereOp<uint64_t>>);
}

}  // namespace weir
