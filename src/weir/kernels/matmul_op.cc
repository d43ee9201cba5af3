// MatMul and BatchMatMulV2: float through oneDNN's sgemm (a transposed b
// alone through its matmul primitive), bfloat16 through oneDNN's matmul
// primitive (matmul_dnnl.h), double through Eigen.
//
// Threading. The oneDNN build Weir uses runs on the OpenMP runtime (ldd shows
// libgomp), so a plain dnnl_sgemm call starts an OpenMP team of one thread
// per core next to the device's own intra-op pool: two pools on the same
// cores, with OpenMP's workers spinning after each call while Eigen's work,
// which oversubscribes small machines badly. OpenMP's thread count is also
// a per-thread setting, so setting it once at startup would not reach the
// executor threads that run kernels. Instead every thread that calls sgemm
// sets its own OpenMP count to 1 for the call (openmp_threads.h), and this kernel splits
// large products into row or column blocks over the device's intra-op pool,
// one sgemm or matmul primitive per block. No OpenMP worker thread is ever started, and the
// intra-op thread count is the one knob for all CPU kernels.
#include <algorithm>
#include <mutex>
#include <vector>
#include <oneapi/dnnl/dnnl.h>

#include "weir/base/denormal.h"
#include "weir/base/threadpool.h"
#include "weir/framework/eigen_tensor.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/math_kernels.h"
#include "weir/kernels/matmul_dnnl.h"
#include "weir/kernels/openmp_threads.h"
#include "weir/kernels/shape_util.h"
#include "weir/kernels/type_list.h"

namespace weir {
namespace {

// Below this many flops per block (~80 us on one core), splitting costs
// more than it saves. A helper still spinning from the previous call joins
// in ~1 us, but most splits have to wake one, which takes tens of
// microseconds before it starts and then spins and sleeps again, and the
// executor's other thread often holds the second core meanwhile: at
// 2^18 flops (~2.5 us) the 2-thread LSTM split every ~15 MFLOP product and
// paid ~25% more CPU per step for no gain in examples/s
// (docs/performance.md, LSTM at two threads).
constexpr double kMinFlopsPerBlock = 1 << 23;

// C[m,n] = op(A)[m,k] * op(B)[k,n], all row-major with leading dims, for
// T float or bfloat16.
template <typename T>
struct Gemm {
  bool transpose_a, transpose_b;
  int64_t m, n, k;
  const T* a;
  int64_t lda;
  const T* b;
  int64_t ldb;
  T* c;
  int64_t ldc;
  DnnlMatMul* matmul;  // bfloat16's primitives, and float's with transpose_b alone

  // Rows [begin, end) of C.
  Gemm Rows(int64_t begin, int64_t end) const {
    Gemm g = *this;
    g.m = end - begin;
    g.a = a + begin * (transpose_a ? 1 : lda);
    g.c = c + begin * ldc;
    return g;
  }
  // Columns [begin, end) of C.
  Gemm Columns(int64_t begin, int64_t end) const {
    Gemm g = *this;
    g.n = end - begin;
    g.b = b + begin * (transpose_b ? ldb : 1);
    g.c = c + begin;
    return g;
  }

  Status Run() const {
    if constexpr (std::is_same_v<T, float>) {
      // A transposed b alone (dy * w^T, a dense layer's input gradient) runs
      // 10-45% faster on oneDNN's matmul primitive (brgemm) than on sgemm:
      // one thread, [100, 512] x [512, 128]^T 124 us against 141,
      // [100, 1024] x [1024, 3136]^T 6.8 ms against 8.1; the other forms
      // are as fast or faster on sgemm (docs/performance.md, LSTM).
      if (transpose_b && !transpose_a) {
        return matmul->Run({transpose_a, transpose_b, m, n, k, lda, ldb, ldc}, a, b, c);
      }
      const ScopedOpenMpSingleThread single_thread;
      dnnl_status_t status = dnnl_sgemm(transpose_a ? 'T' : 'N', transpose_b ? 'T' : 'N', m, n,
                                        k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
      if (status != dnnl_success) {
        return errors::Internal("MatMul: dnnl_sgemm failed with status ", status, " for [", m,
                                ",", k, "] x [", k, ",", n, "]");
      }
      return Status::OK();
    } else {
      return matmul->Run({transpose_a, transpose_b, m, n, k, lda, ldb, ldc}, a, b, c);
    }
  }
};

template <typename T>
Status RunSharded(ThreadPool* pool, const Gemm<T>& gemm) {
  const double flops = 2.0 * gemm.m * gemm.n * gemm.k;
  const int64_t blocks = std::min<int64_t>(pool->NumThreads(), flops / kMinFlopsPerBlock);
  const bool by_rows = gemm.m >= gemm.n;
  const int64_t extent = by_rows ? gemm.m : gemm.n;
  // Column blocks of whole SIMD widths, so no block starts mid-vector; row
  // blocks of whole micro-kernel tiles.
  const int64_t granule = by_rows ? 8 : 16;
  const int64_t block =
      (extent + std::max<int64_t>(blocks, 1) - 1) / std::max<int64_t>(blocks, 1);
  const int64_t step = (block + granule - 1) / granule * granule;
  if (blocks <= 1 || step >= extent) return gemm.Run();
  const int64_t count = (extent + step - 1) / step;
  std::mutex mu;
  Status status;
  // A cost far above Eigen's task size makes every block its own task.
  pool->ParallelFor(count, int64_t{1} << 40, [&](int64_t first, int64_t last) {
    for (int64_t i = first; i < last; ++i) {
      const int64_t begin = i * step, end = std::min(extent, begin + step);
      Status s = by_rows ? gemm.Rows(begin, end).Run() : gemm.Columns(begin, end).Run();
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        status.Update(s);
      }
    }
  });
  return status;
}

template <typename T>
class MatMulOp : public OpKernel {
 public:
  explicit MatMulOp(OpKernelConstruction* context) : OpKernel(context) {
    Status status = context->GetAttr("transpose_a", &transpose_a_);
    status.Update(context->GetAttr("transpose_b", &transpose_b_));
    context->SetStatus(status);
  }

  // A GEMM is worth a thread hop: independent MatMuls overlap on the
  // inter-op pool.
  bool IsExpensive() const override { return true; }

  void Compute(OpKernelContext* context) override {
    ScopedFlushDenormals flush_denormals;
    const Tensor& a = context->input(0);
    const Tensor& b = context->input(1);
    OP_REQUIRES(context, a.dims() == 2 && b.dims() == 2,
                errors::InvalidArgument("MatMul: both inputs must be matrices but a has shape ",
                                        a.shape(), " and b has shape ", b.shape()));
    const int64_t m = a.dim_size(transpose_a_ ? 1 : 0);
    const int64_t k = a.dim_size(transpose_a_ ? 0 : 1);
    const int64_t k_b = b.dim_size(transpose_b_ ? 1 : 0);
    const int64_t n = b.dim_size(transpose_b_ ? 0 : 1);
    OP_REQUIRES(context, k == k_b,
                errors::InvalidArgument("MatMul: Matrix size-incompatible: a ", a.shape(),
                                        " (transpose_a=", transpose_a_ ? "true" : "false",
                                        ") and b ", b.shape(),
                                        " (transpose_b=", transpose_b_ ? "true" : "false",
                                        ") have inner dimensions ", k, " and ", k_b));
    int64_t out_elements;
    OP_REQUIRES(context, !__builtin_mul_overflow(m, n, &out_elements),
                errors::InvalidArgument("MatMul: the output of a ", a.shape(), " and b ",
                                        b.shape(), " would have ", m, " * ", n,
                                        " elements, more than 2^63 - 1"));
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape({m, n}), &out));
    if (m == 0 || n == 0) return;
    if (k == 0) {
      std::fill_n(out->data<T>(), m * n, T(0));
      return;
    }
    if constexpr (!std::is_same_v<T, double>) {
      const Gemm<T> gemm{transpose_a_, transpose_b_, m, n, k, a.data<T>(), a.dim_size(1),
                         b.data<T>(), b.dim_size(1), out->data<T>(), n, &matmul_};
      OP_REQUIRES_OK(context, RunSharded(context->device()->intra_op_pool(), gemm));
    } else {
      const Eigen::array<Eigen::IndexPair<Eigen::Index>, 1> contracted = {
          Eigen::IndexPair<Eigen::Index>(transpose_a_ ? 0 : 1, transpose_b_ ? 1 : 0)};
      TensorMapOf<T, 2>(*out).device(context->eigen_cpu_device()) =
          TensorMapOf<T, 2>(a).contract(TensorMapOf<T, 2>(b), contracted);
    }
  }

 private:
  bool transpose_a_ = false;
  bool transpose_b_ = false;
  DnnlMatMul matmul_;  // bfloat16, and float with transpose_b alone
};

// Where each output matrix of a batched product reads its operands: for
// output batch b, matrix x_index[b] of x and y_index[b] of y (the batch
// dims broadcast NumPy-style).
struct BatchPlan {
  TensorShape batch;  // the output's batch dims
  std::vector<int64_t> x_index, y_index;
};

// The batch dims of x and y are all but their last two. The index lists
// have one entry per output matrix: plan them only once the output is
// allocated and not empty (empty operands may have huge batch dims).
StatusOr<TensorShape> BroadcastBatchShape(const char* op, const TensorShape& x,
                                          const TensorShape& y) {
  const int rank = std::max(x.rank(), y.rank()) - 2;
  std::vector<int64_t> dims(rank);
  for (int i = rank - 1; i >= 0; --i) {
    const int ix = i - (rank - (x.rank() - 2));
    const int iy = i - (rank - (y.rank() - 2));
    const int64_t dx = ix >= 0 ? x.dim_size(ix) : 1;
    const int64_t dy = iy >= 0 ? y.dim_size(iy) : 1;
    if (dx != dy && dx != 1 && dy != 1) {
      return errors::InvalidArgument(op, ": the batch dims of x ", x, " and y ", y,
                                     " do not broadcast: ", dx, " vs. ", dy, " at batch dim ",
                                     i);
    }
    dims[i] = dx == 1 ? dy : dx;
  }
  return CheckedShape(dims, op);
}

// REQUIRES: BroadcastBatchShape accepted x and y; the output is not empty.
BatchPlan PlanBatches(const char* op, const TensorShape& x, const TensorShape& y) {
  const int rank = std::max(x.rank(), y.rank()) - 2;
  std::vector<int64_t> dims(rank), x_stride(rank), y_stride(rank);
  int64_t x_size = 1, y_size = 1;
  for (int i = rank - 1; i >= 0; --i) {
    // Dims align from the right; a missing leading dim acts as 1.
    const int ix = i - (rank - (x.rank() - 2));
    const int iy = i - (rank - (y.rank() - 2));
    const int64_t dx = ix >= 0 ? x.dim_size(ix) : 1;
    const int64_t dy = iy >= 0 ? y.dim_size(iy) : 1;
    CHECK(dx == dy || dx == 1 || dy == 1) << op << ": unchecked batch dims";
    dims[i] = dx == 1 ? dy : dx;
    // A dim of 1 broadcasts: stepping along it stays on the same matrix.
    x_stride[i] = dx == 1 ? 0 : x_size;
    y_stride[i] = dy == 1 ? 0 : y_size;
    x_size *= dx;
    y_size *= dy;
  }
  BatchPlan plan;
  plan.batch = TensorShape(dims);
  const int64_t count = plan.batch.num_elements();
  plan.x_index.resize(count);
  plan.y_index.resize(count);
  std::vector<int64_t> position(rank, 0);
  int64_t xi = 0, yi = 0;
  for (int64_t b = 0; b < count; ++b) {
    plan.x_index[b] = xi;
    plan.y_index[b] = yi;
    // Advance the batch position like an odometer.
    for (int i = rank - 1; i >= 0; --i) {
      xi += x_stride[i];
      yi += y_stride[i];
      if (++position[i] < dims[i]) break;
      xi -= x_stride[i] * dims[i];
      yi -= y_stride[i] * dims[i];
      position[i] = 0;
    }
  }
  return plan;
}

// x [..., m, k] times y [..., k, n], with adj_x / adj_y transposing an
// operand's last two dims (the adjoint, for the real types it runs on).
// Many or small products run one per task; a few large ones run one after
// another, each split over the pool like MatMul.
template <typename T>
class BatchMatMulOp : public OpKernel {
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

 public:
  explicit BatchMatMulOp(OpKernelConstruction* context) : OpKernel(context) {
    Status status = context->GetAttr("adj_x", &adj_x_);
    status.Update(context->GetAttr("adj_y", &adj_y_));
    context->SetStatus(status);
  }

  bool IsExpensive() const override { return true; }

  void Compute(OpKernelContext* context) override {
    ScopedFlushDenormals flush_denormals;
    const Tensor& x = context->input(0);
    const Tensor& y = context->input(1);
    const char* op = type_string().c_str();
    OP_REQUIRES(context, x.dims() >= 2 && y.dims() >= 2,
                errors::InvalidArgument(op, ": x and y must have rank at least 2 but x has "
                                        "shape ", x.shape(), " and y has shape ", y.shape()));
    const int rx = x.dims(), ry = y.dims();
    const int64_t m = x.dim_size(adj_x_ ? rx - 1 : rx - 2);
    const int64_t k = x.dim_size(adj_x_ ? rx - 2 : rx - 1);
    const int64_t k_y = y.dim_size(adj_y_ ? ry - 1 : ry - 2);
    const int64_t n = y.dim_size(adj_y_ ? ry - 2 : ry - 1);
    OP_REQUIRES(context, k == k_y,
                errors::InvalidArgument(op, ": Matrix size-incompatible: x ", x.shape(),
                                        " (adj_x=", adj_x_ ? "true" : "false", ") and y ",
                                        y.shape(), " (adj_y=", adj_y_ ? "true" : "false",
                                        ") have inner dimensions ", k, " and ", k_y));
    StatusOr<TensorShape> batch_shape = BroadcastBatchShape(op, x.shape(), y.shape());
    OP_REQUIRES_OK(context, batch_shape.status());
    std::vector<int64_t> out_dims(batch_shape->dim_sizes().begin(),
                                  batch_shape->dim_sizes().end());
    out_dims.insert(out_dims.end(), {m, n});
    StatusOr<TensorShape> out_shape = CheckedShape(out_dims, op);
    OP_REQUIRES_OK(context, out_shape.status());
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, *out_shape, &out));
    if (out->NumElements() == 0) return;
    if (k == 0) {
      std::fill_n(out->data<T>(), out->NumElements(), T(0));
      return;
    }
    const BatchPlan plan = PlanBatches(op, x.shape(), y.shape());

    ThreadPool* pool = context->device()->intra_op_pool();
    const int64_t batches = plan.batch.num_elements();
    const T* xs = x.data<T>();
    const T* ys = y.data<T>();
    T* outs = out->data<T>();
    // The product of output matrix b; `split` lets it use the whole pool.
    auto product = [&](int64_t b, bool split) -> Status {
      const T* a = xs + plan.x_index[b] * m * k;
      const T* c = ys + plan.y_index[b] * k * n;
      T* dst = outs + b * m * n;
      if constexpr (!std::is_same_v<T, double>) {
        const Gemm<T> gemm{adj_x_, adj_y_, m, n, k, a, adj_x_ ? m : k, c, adj_y_ ? k : n,
                           dst, n, &matmul_};
        return split ? RunSharded(pool, gemm) : gemm.Run();
      } else {
        Eigen::Map<const Matrix> a_map(a, adj_x_ ? k : m, adj_x_ ? m : k);
        Eigen::Map<const Matrix> b_map(c, adj_y_ ? n : k, adj_y_ ? k : n);
        Eigen::Map<Matrix> c_map(dst, m, n);
        if (split) {
          const Eigen::array<Eigen::IndexPair<Eigen::Index>, 1> contracted = {
              Eigen::IndexPair<Eigen::Index>(adj_x_ ? 0 : 1, adj_y_ ? 1 : 0)};
          EigenTensorMap<T, 2>(dst, m, n).device(context->eigen_cpu_device()) =
              ConstEigenTensorMap<T, 2>(a, a_map.rows(), a_map.cols())
                  .contract(ConstEigenTensorMap<T, 2>(c, b_map.rows(), b_map.cols()),
                            contracted);
        } else if (adj_x_ && adj_y_) {
          c_map.noalias() = a_map.transpose() * b_map.transpose();
        } else if (adj_x_) {
          c_map.noalias() = a_map.transpose() * b_map;
        } else if (adj_y_) {
          c_map.noalias() = a_map * b_map.transpose();
        } else {
          c_map.noalias() = a_map * b_map;
        }
        return Status::OK();
      }
    };

    const double flops = 2.0 * m * n * k;
    if (batches < pool->NumThreads() && flops >= 2 * kMinFlopsPerBlock) {
      for (int64_t b = 0; b < batches; ++b) OP_REQUIRES_OK(context, product(b, true));
      return;
    }
    std::mutex mu;
    Status status;
    pool->ParallelFor(batches, static_cast<int64_t>(flops), [&](int64_t first, int64_t last) {
      for (int64_t b = first; b < last; ++b) {
        Status s = product(b, false);
        if (!s.ok()) {
          std::lock_guard<std::mutex> lock(mu);
          status.Update(s);
        }
      }
    });
    OP_REQUIRES_OK(context, status);
  }

 private:
  bool adj_x_ = false;
  bool adj_y_ = false;
  DnnlMatMul matmul_;  // bfloat16, and float with transpose_b alone
};

}  // namespace

void RegisterMatMulKernels(KernelRegistry* registry) {
  ForEachType<float, double, Eigen::bfloat16>([&]<typename T>() {
    registry->Register(KernelBuilder("MatMul").TypeConstraint<T>("T"), MakeKernel<MatMulOp<T>>);
    registry->Register(KernelBuilder("BatchMatMulV2").TypeConstraint<T>("T"),
                       MakeKernel<BatchMatMulOp<T>>);
  });
}

}  // namespace weir
