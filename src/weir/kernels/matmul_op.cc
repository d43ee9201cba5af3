// MatMul: float through oneDNN's sgemm, double through Eigen's contraction.
//
// Threading. The Debian oneDNN is built on the OpenMP runtime (ldd shows
// libgomp), so a plain dnnl_sgemm call starts an OpenMP team of one thread
// per core next to the device's own intra-op pool: two pools on the same
// cores, with OpenMP's workers spinning after each call while Eigen's work,
// which oversubscribes small machines badly. OpenMP's thread count is also
// a per-thread setting, so setting it once at startup would not reach the
// executor threads that run kernels. Instead every thread that calls sgemm
// sets its own OpenMP count to 1 (once per thread), and this kernel splits
// large products into row or column blocks over the device's intra-op pool,
// one sgemm per block. No OpenMP worker thread is ever started, and the
// intra-op thread count is the one knob for all CPU kernels.
#include <omp.h>

#include <algorithm>
#include <mutex>
#include <oneapi/dnnl/dnnl.h>

#include "weir/base/denormal.h"
#include "weir/base/threadpool.h"
#include "weir/framework/eigen_tensor.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/math_kernels.h"

namespace weir {
namespace {

// Below this many flops per block, splitting costs more than it saves.
constexpr double kMinFlopsPerBlock = 1 << 20;

void KeepOpenMpSingleThreaded() {
  thread_local const bool done = [] {
    omp_set_num_threads(1);
    return true;
  }();
  (void)done;
}

// C[m,n] = op(A)[m,k] * op(B)[k,n], all row-major with leading dims.
struct Gemm {
  bool transpose_a, transpose_b;
  int64_t m, n, k;
  const float* a;
  int64_t lda;
  const float* b;
  int64_t ldb;
  float* c;
  int64_t ldc;

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
    KeepOpenMpSingleThreaded();
    dnnl_status_t status = dnnl_sgemm(transpose_a ? 'T' : 'N', transpose_b ? 'T' : 'N', m, n,
                                      k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
    if (status != dnnl_success) {
      return errors::Internal("MatMul: dnnl_sgemm failed with status ", status, " for [", m,
                              ",", k, "] x [", k, ",", n, "]");
    }
    return Status::OK();
  }
};

Status RunSharded(ThreadPool* pool, const Gemm& gemm) {
  const double flops = 2.0 * gemm.m * gemm.n * gemm.k;
  const int64_t blocks = std::min<int64_t>(pool->NumThreads(), flops / kMinFlopsPerBlock);
  const bool by_rows = gemm.m >= gemm.n;
  const int64_t extent = by_rows ? gemm.m : gemm.n;
  // Blocks of whole SIMD widths, so no block starts mid-vector.
  const int64_t granule = 16;
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
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape({m, n}), &out));
    if (m == 0 || n == 0) return;
    if (k == 0) {
      std::fill_n(out->data<T>(), m * n, T(0));
      return;
    }
    if constexpr (std::is_same_v<T, float>) {
      Gemm gemm{transpose_a_, transpose_b_, m, n, k,
                a.data<float>(), a.dim_size(1), b.data<float>(), b.dim_size(1),
                out->data<float>(), n};
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
};

}  // namespace

void RegisterMatMulKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("MatMul").TypeConstraint<float>("T"),
                     MakeKernel<MatMulOp<float>>);
  registry->Register(KernelBuilder("MatMul").TypeConstraint<double>("T"),
                     MakeKernel<MatMulOp<double>>);
}

}  // namespace weir
