// _MatMulAccumulate: sum = acc + concat(a, axis 1)^T * b, float, acc
// broadcasting as in AddV2 (the op it replaces: graph/fuse_ops.h).
//
// A while loop's gradient sums the per-iteration gradient of a weight it
// captured: for x * w that is x^T * dy, one [k, m]^T * [k, n] product and
// one AddV2 of [m, n] per iteration. Here the product runs as a oneDNN
// sgemm with beta = 1 straight into the accumulator, which the kernel takes
// over when nothing else holds it (the loop's running sum never is): no
// product tensor, no second pass over [m, n]. The pieces of a are row
// blocks of the result (an LSTM's [x, h_prev]^T without concatenating x
// and h_prev). Blocks of rows or columns go to the intra-op pool as
// MatMul's do, each block its own sgemm calls.
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <array>
#include <mutex>
#include <vector>

#include "weir/base/denormal.h"
#include "weir/base/str_util.h"
#include "weir/base/threadpool.h"
#include "weir/framework/broadcast_shape.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/math_kernels.h"
#include "weir/kernels/openmp_threads.h"

namespace weir {
namespace {

// A block smaller than this many flops costs more to hand out than it
// saves (MatMul's threshold).
constexpr double kMinFlopsPerBlock = 1 << 23;

class MatMulAccumulateOp : public OpKernel {
 public:
  explicit MatMulAccumulateOp(OpKernelConstruction* context) : OpKernel(context) {}

  bool IsExpensive() const override { return true; }

  void Compute(OpKernelContext* context) override {
    ScopedFlushDenormals flush_denormals;
    const int pieces = context->num_inputs() - 2;
    const Tensor& acc = context->input(0);
    const Tensor& b = context->input(pieces + 1);
    auto shapes = [&] {
      std::string s = StrCat("acc ", acc.shape());
      for (int i = 1; i <= pieces; ++i) s += StrCat(", a[", i - 1, "] ", context->input(i).shape());
      return StrCat(s, ", b ", b.shape());
    };
    bool ok = b.dims() == 2;
    // offsets[i]: the first row of the product that piece i gives.
    std::vector<int64_t> offsets(pieces + 1, 0);
    for (int i = 1; ok && i <= pieces; ++i) {
      const Tensor& a = context->input(i);
      ok = a.dims() == 2 && a.dim_size(0) == b.dim_size(0) &&
           !__builtin_add_overflow(offsets[i - 1], a.dim_size(1), &offsets[i]);
    }
    OP_REQUIRES(context, ok,
                errors::InvalidArgument("_MatMulAccumulate: expected a[i] [k, m_i] and b [k, n]; ",
                                        "got ", shapes()));
    const int64_t m = offsets[pieces], n = b.dim_size(1), k = b.dim_size(0);
    const std::array<int64_t, 2> product_dims = {m, n};
    StatusOr<TensorShape> product_shape = TensorShape::FromDims(product_dims);
    OP_REQUIRES(context, product_shape.ok(),
                errors::InvalidArgument("_MatMulAccumulate: the product of ", shapes(),
                                        " is too large: ", product_shape.status().message()));
    if (acc.shape() == *product_shape) {
      // The loop's running sum: the product goes straight into it.
      Tensor* out = context->forward_input_to_output(0, 0, acc.shape());
      if (out == nullptr) {
        OP_REQUIRES_OK(context, context->allocate_output(0, acc.shape(), &out));
        std::copy_n(context->input(0).data<float>(), acc.NumElements(), out->data<float>());
      }
      OP_REQUIRES_OK(context, Accumulate(context, offsets, out->data<float>()));
      return;
    }
    // acc broadcasts (AddV2's semantics): the product, then the sum.
    StatusOr<PartialShape> sum_shape = BroadcastShapes(acc.shape(), *product_shape);
    OP_REQUIRES(context, sum_shape.ok(),
                errors::InvalidArgument("_MatMulAccumulate: acc does not broadcast with the ",
                                        "product ", *product_shape, ": ",
                                        sum_shape.status().message(), "; got ", shapes()));
    Tensor product;
    OP_REQUIRES_OK(context, context->allocate_temp(DT_FLOAT, *product_shape, &product));
    std::fill_n(product.data<float>(), product.NumElements(), 0.0f);
    OP_REQUIRES_OK(context, Accumulate(context, offsets, product.data<float>()));
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, sum_shape->ToTensorShape(), &out));
    BroadcastAdd(acc, product, out);
  }

 private:
  // sum[m, n] += concat(a, axis 1)^T * b, in blocks over the intra-op pool
  // when the product is big enough.
  static Status Accumulate(OpKernelContext* context, const std::vector<int64_t>& offsets,
                           float* sum) {
    const int pieces = static_cast<int>(offsets.size()) - 1;
    const Tensor& b = context->input(pieces + 1);
    const int64_t m = offsets[pieces], n = b.dim_size(1), k = b.dim_size(0);
    if (m == 0 || n == 0 || k == 0) return Status::OK();
    const float* b_data = b.data<float>();
    // Rows [begin, end) and columns [col, col_end) of the product: each
    // piece's share of them.
    auto block = [&](int64_t begin, int64_t end, int64_t col, int64_t col_end) -> Status {
      const ScopedOpenMpSingleThread single_thread;
      for (int i = 0; i < pieces; ++i) {
        const int64_t first = std::max(begin, offsets[i]), last = std::min(end, offsets[i + 1]);
        if (first >= last) continue;
        const int64_t width = offsets[i + 1] - offsets[i];
        const float* a = context->input(i + 1).data<float>() + (first - offsets[i]);
        const dnnl_status_t status =
            dnnl_sgemm('T', 'N', last - first, col_end - col, k, 1.0f, a, width, b_data + col, n,
                       1.0f, sum + first * n + col, n);
        if (status != dnnl_success) {
          return errors::Internal("_MatMulAccumulate: dnnl_sgemm failed with status ", status,
                                  " for a[", i, "] ", context->input(i + 1).shape(), " and b ",
                                  b.shape());
        }
      }
      return Status::OK();
    };
    // As MatMul splits: the longer side, in whole micro-kernel tiles.
    ThreadPool* pool = context->device()->intra_op_pool();
    const double flops = 2.0 * m * n * k;
    const int64_t blocks =
        std::clamp<int64_t>(static_cast<int64_t>(flops / kMinFlopsPerBlock), 1, pool->NumThreads());
    const bool by_rows = m >= n;
    const int64_t extent = by_rows ? m : n;
    const int64_t granule = by_rows ? 8 : 16;
    const int64_t step = ((extent + blocks - 1) / blocks + granule - 1) / granule * granule;
    if (blocks <= 1 || step >= extent) return block(0, m, 0, n);
    std::mutex mu;
    Status status;
    pool->ParallelFor((extent + step - 1) / step, int64_t{1} << 40,
                      [&](int64_t first, int64_t last) {
                        for (int64_t i = first; i < last; ++i) {
                          const int64_t begin = i * step, end = std::min(extent, begin + step);
                          Status s = by_rows ? block(begin, end, 0, n) : block(0, m, begin, end);
                          if (!s.ok()) {
                            std::lock_guard<std::mutex> lock(mu);
                            status.Update(s);
                          }
                        }
                      });
    return status;
  }

  // out = x + y, NumPy broadcasting to out's shape (which BroadcastShapes
  // gave); a rare path: only a graph whose addition broadcasts takes it.
  static void BroadcastAdd(const Tensor& x, const Tensor& y, Tensor* out) {
    const int rank = out->dims();
    // Each operand's stride per output dim, 0 where it is broadcast.
    auto strides = [&](const Tensor& t) {
      std::vector<int64_t> result(rank, 0);
      int64_t stride = 1;
      for (int d = t.dims() - 1, o = rank - 1; d >= 0; --d, --o) {
        if (t.dim_size(d) != 1) result[o] = stride;
        stride *= t.dim_size(d);
      }
      return result;
    };
    const std::vector<int64_t> x_strides = strides(x), y_strides = strides(y);
    std::vector<int64_t> index(rank, 0);
    const float* xs = x.data<float>();
    const float* ys = y.data<float>();
    float* sum = out->data<float>();
    int64_t xi = 0, yi = 0;
    for (int64_t j = 0; j < out->NumElements(); ++j) {
      sum[j] = xs[xi] + ys[yi];
      for (int d = rank - 1; d >= 0; --d) {
        xi += x_strides[d];
        yi += y_strides[d];
        if (++index[d] < out->dim_size(d)) break;
        xi -= x_strides[d] * index[d];
        yi -= y_strides[d] * index[d];
        index[d] = 0;
      }
    }
  }
};

}  // namespace

void RegisterMatMulAccumulateKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("_MatMulAccumulate").TypeConstraint<float>("T"),
                     MakeKernel<MatMulAccumulateOp>);
}

}  // namespace weir
