// LSTMBlockCell and LSTMBlockCellGrad (TensorFlow's fused LSTM cell), float.
//
// The cell's one matrix product, [x, h_prev] * w + b, runs as two oneDNN
// sgemm calls accumulating into the bias rows (x's rows of w, then h_prev's:
// no concatenated copy), and the gates follow on the same rows while they
// are still in cache. The batch is split into row blocks over the intra-op
// pool, each block doing its product and its gates; OpenMP is kept to one
// thread per call (see matmul_op.cc for why). Gates are Eigen array
// expressions over one row of `cell` values (vectorized exp and tanh).
// The gradient kernel is elementwise; the products that take dicfo back to
// x, h_prev, w and b are graph code (ops/gradients/rnn_grad.cc).
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <functional>
#include <mutex>

#include "weir/base/denormal.h"
#include "weir/base/str_util.h"
#include "weir/base/threadpool.h"
#include "weir/framework/eigen_tensor.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/all_kernels.h"
#include "weir/kernels/channel_sums.h"
#include "weir/kernels/openmp_threads.h"

namespace weir {
namespace {

using ArrayMap = Eigen::Map<Eigen::ArrayXf>;
using ConstArrayMap = Eigen::Map<const Eigen::ArrayXf>;

// Row blocks smaller than this many flops (~80 us on one core) cost more
// to hand out than they save (the threshold MatMul uses; see there).
constexpr double kMinFlopsPerBlock = 1 << 23;

struct CellDims {
  int64_t batch = 0, input = 0, cell = 0;
};

// Checks x [batch, input], cs_prev and h_prev [batch, cell], w [input +
// cell, 4 * cell], b [4 * cell] and, with use_peephole, wci, wcf and wco
// [cell]: inputs 0-7 of both kernels.
Status CheckCellInputs(OpKernelContext* context, bool use_peephole, CellDims* dims) {
  const std::string& op = context->op_kernel().type_string();
  auto shapes = [&] {
    std::string s;
    const char* names[] = {"x", "cs_prev", "h_prev", "w", "wci", "wcf", "wco", "b"};
    for (int i = 0; i < 8; ++i)
      s += StrCat(i ? ", " : "", names[i], " ", context->input(i).shape());
    return s;
  };
  const Tensor& x = context->input(0);
  const Tensor& cs_prev = context->input(1);
  if (x.dims() != 2 || cs_prev.dims() != 2) {
    return errors::InvalidArgument(op, ": x and cs_prev must be matrices; got ", shapes());
  }
  dims->batch = x.dim_size(0);
  dims->input = x.dim_size(1);
  dims->cell = cs_prev.dim_size(1);
  const TensorShape state({dims->batch, dims->cell});
  int64_t rows, gates;
  if (__builtin_add_overflow(dims->input, dims->cell, &rows) ||
      __builtin_mul_overflow(dims->cell, 4, &gates)) {
    return errors::InvalidArgument(op, ": sizes overflow; got ", shapes());
  }
  bool ok = cs_prev.shape() == state && context->input(2).shape() == state &&
            context->input(3).shape() == TensorShape({rows, gates}) &&
            context->input(7).shape() == TensorShape({gates});
  for (int i = 4; i <= 6 && use_peephole; ++i) {
    ok = ok && context->input(i).shape() == TensorShape({dims->cell});
  }
  if (!ok) {
    return errors::InvalidArgument(
        op, ": expected x [batch, input], cs_prev and h_prev [batch, cell], w [input + cell, 4 * ",
        "cell], b [4 * cell]", use_peephole ? ", wci, wcf and wco [cell]" : "", " (batch ",
        dims->batch, ", input ", dims->input, ", cell ", dims->cell, "); got ", shapes());
  }
  return Status::OK();
}

// c[m, n] += a[m, k] * b[k, n], row-major with leading dims, on this thread.
Status SgemmAccumulate(const std::string& op, int64_t m, int64_t n, int64_t k, const float* a,
                       int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc) {
  if (m == 0 || n == 0 || k == 0) return Status::OK();
  const ScopedOpenMpSingleThread single_thread;
  const dnnl_status_t status = dnnl_sgemm('N', 'N', m, n, k, 1.0f, a, lda, b, ldb, 1.0f, c, ldc);
  if (status != dnnl_success) {
    return errors::Internal(op, ": dnnl_sgemm failed with status ", status, " for [", m, ",", k,
                            "] x [", k, ",", n, "]");
  }
  return Status::OK();
}

// Runs fn(begin, end) over row blocks of [0, rows) on the intra-op pool,
// with as many blocks as `flops_per_row` makes worth it (whole multiples of
// 8 rows, the GEMM micro-kernel's height). Returns the first error.
Status ForRowBlocks(ThreadPool* pool, int64_t rows, double flops_per_row,
                    const std::function<Status(int64_t, int64_t)>& fn) {
  const int64_t blocks = std::clamp<int64_t>(
      static_cast<int64_t>(rows * flops_per_row / kMinFlopsPerBlock), 1, pool->NumThreads());
  const int64_t step = ((rows + blocks - 1) / blocks + 7) / 8 * 8;
  if (blocks <= 1 || step >= rows) return fn(0, rows);
  const int64_t count = (rows + step - 1) / step;
  std::mutex mu;
  Status status;
  pool->ParallelFor(count, int64_t{1} << 40, [&](int64_t first, int64_t last) {
    for (int64_t i = first; i < last; ++i) {
      Status s = fn(i * step, std::min(rows, (i + 1) * step));
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        status.Update(s);
      }
    }
  });
  return status;
}

// out = 1 / (1 + exp(-x)): 0 and 1 in the limits, never NaN for finite x.
template <typename Expr>
void Sigmoid(const Expr& x, ArrayMap&& out) {
  out = (1.0f + (-x).exp()).inverse();
}

class LSTMBlockCellOp : public OpKernel {
 public:
  explicit LSTMBlockCellOp(OpKernelConstruction* context) : OpKernel(context) {
    Status status = context->GetAttr("forget_bias", &forget_bias_);
    status.Update(context->GetAttr("cell_clip", &cell_clip_));
    status.Update(context->GetAttr("use_peephole", &use_peephole_));
    context->SetStatus(status);
  }

  bool IsExpensive() const override { return true; }

  void Compute(OpKernelContext* context) override {
    ScopedFlushDenormals flush_denormals;
    CellDims d;
    OP_REQUIRES_OK(context, CheckCellInputs(context, use_peephole_, &d));
    const TensorShape state({d.batch, d.cell});
    float* out[7];  // i, cs, f, o, ci, co, h
    for (int k = 0; k < 7; ++k) {
      Tensor* t;
      OP_REQUIRES_OK(context, context->allocate_output(k, state, &t));
      out[k] = t->data<float>();
    }
    if (d.batch == 0 || d.cell == 0) return;
    const int64_t gates = 4 * d.cell;
    Tensor icfo;
    OP_REQUIRES_OK(context, context->allocate_temp(DT_FLOAT, TensorShape({d.batch, gates}), &icfo));
    const float* x = context->input(0).data<float>();
    const float* cs_prev = context->input(1).data<float>();
    const float* h_prev = context->input(2).data<float>();
    const float* w = context->input(3).data<float>();
    const float* b = context->input(7).data<float>();
    const ConstArrayMap wci(context->input(4).data<float>(), use_peephole_ ? d.cell : 0);
    const ConstArrayMap wcf(context->input(5).data<float>(), use_peephole_ ? d.cell : 0);
    const ConstArrayMap wco(context->input(6).data<float>(), use_peephole_ ? d.cell : 0);
    float* pre = icfo.data<float>();
    const std::string& op = type_string();
    const int64_t cell = d.cell;
    auto rows = [&](int64_t begin, int64_t end) -> Status {
      for (int64_t r = begin; r < end; ++r) std::copy_n(b, gates, pre + r * gates);
      WEIR_RETURN_IF_ERROR(SgemmAccumulate(op, end - begin, gates, d.input, x + begin * d.input,
                                           d.input, w, gates, pre + begin * gates, gates));
      WEIR_RETURN_IF_ERROR(SgemmAccumulate(op, end - begin, gates, cell, h_prev + begin * cell,
                                           cell, w + d.input * gates, gates, pre + begin * gates,
                                           gates));
      for (int64_t r = begin; r < end; ++r) {
        const float* g = pre + r * gates;
        const ConstArrayMap gi(g, cell), gc(g + cell, cell), gf(g + 2 * cell, cell),
            go(g + 3 * cell, cell), c_prev(cs_prev + r * cell, cell);
        auto row = [&](int k) { return ArrayMap(out[k] + r * cell, cell); };
        ArrayMap i = row(0), cs = row(1), f = row(2), ci = row(4), co = row(5);
        if (use_peephole_) {
          Sigmoid(gi + c_prev * wci, row(0));
          Sigmoid(gf + forget_bias_ + c_prev * wcf, row(2));
        } else {
          Sigmoid(gi, row(0));
          Sigmoid(gf + forget_bias_, row(2));
        }
        ci = gc.tanh();
        cs = ci * i + c_prev * f;
        if (cell_clip_ > 0) cs = cs.max(-cell_clip_).min(cell_clip_);
        co = cs.tanh();
        if (use_peephole_) {
          Sigmoid(go + cs * wco, row(3));
        } else {
          Sigmoid(go, row(3));
        }
        row(6) = co * row(3);
      }
      return Status::OK();
    };
    const double flops_per_row = 2.0 * gates * (d.input + cell) + 40.0 * cell;
    OP_REQUIRES_OK(context,
                   ForRowBlocks(context->device()->intra_op_pool(), d.batch, flops_per_row, rows));
  }

 private:
  float forget_bias_ = 1;
  float cell_clip_ = 3;
  bool use_peephole_ = false;
};

// One row of LSTMBlockCellGrad's inputs and outputs ([cell] each; dicfo
// [4 * cell], the gates i, ci, f, o in turn) and the peephole weights.
struct CellGradRow {
  const float *cs_prev, *i, *f, *o, *ci, *co, *cs_grad, *h_grad;
  float *dicfo, *cs_prev_grad;
  const float *wci, *wcf, *wco;
};

// The gradient of one row in one pass: each input element read once, each
// output written once, in registers between (Eigen expressions, one pass
// per output, read o, co, h_grad and dcs again): 10-11 us of CPU at 100
// rows against 13-14 before, 6.5-6.8 at 50 against 7.9 (kernels_bench
// BM_LSTMBlockCellRows/grad, one core).
template <bool kPeephole>
void CellGradOneRow(const CellGradRow& row, int64_t cell) {
  const float* __restrict cs_prev = row.cs_prev;
  const float* __restrict i = row.i;
  const float* __restrict f = row.f;
  const float* __restrict o = row.o;
  const float* __restrict ci = row.ci;
  const float* __restrict co = row.co;
  const float* __restrict cs_grad = row.cs_grad;
  const float* __restrict h_grad = row.h_grad;
  const float* __restrict wci = row.wci;
  const float* __restrict wcf = row.wcf;
  const float* __restrict wco = row.wco;
  float* __restrict di = row.dicfo;
  float* __restrict dci = row.dicfo + cell;
  float* __restrict df = row.dicfo + 2 * cell;
  float* __restrict d_o = row.dicfo + 3 * cell;
  float* __restrict dcs_prev = row.cs_prev_grad;
  // The rows are distinct tensors (outputs never alias inputs here).
#pragma GCC ivdep
  for (int64_t c = 0; c < cell; ++c) {
    const float o_c = o[c], co_c = co[c], h_c = h_grad[c], i_c = i[c], f_c = f[c], ci_c = ci[c];
    const float d_o_c = o_c * (1.0f - o_c) * h_c * co_c;
    // dcs is the gradient of cs; cs_prev's is built over it below.
    float dcs = (1.0f - co_c * co_c) * h_c * o_c + cs_grad[c];
    if constexpr (kPeephole) dcs += d_o_c * wco[c];
    const float di_c = i_c * (1.0f - i_c) * dcs * ci_c;
    const float df_c = f_c * (1.0f - f_c) * dcs * cs_prev[c];
    dci[c] = (1.0f - ci_c * ci_c) * dcs * i_c;
    di[c] = di_c;
    df[c] = df_c;
    d_o[c] = d_o_c;
    float prev = dcs * f_c;
    if constexpr (kPeephole) prev += di_c * wci[c] + df_c * wcf[c];
    dcs_prev[c] = prev;
  }
}

class LSTMBlockCellGradOp : public OpKernel {
 public:
  explicit LSTMBlockCellGradOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("use_peephole", &use_peephole_));
  }

  bool IsExpensive() const override { return true; }

  void Compute(OpKernelContext* context) override {
    ScopedFlushDenormals flush_denormals;
    CellDims d;
    OP_REQUIRES_OK(context, CheckCellInputs(context, use_peephole_, &d));
    const TensorShape state({d.batch, d.cell});
    const char* names[] = {"i", "cs", "f", "o", "ci", "co", "cs_grad", "h_grad"};
    for (int k = 8; k < 16; ++k) {
      OP_REQUIRES(context, context->input(k).shape() == state,
                  errors::InvalidArgument("LSTMBlockCellGrad: ", names[k - 8], " is ",
                                          context->input(k).shape(), " but must be [batch, cell] ",
                                          state, " like cs_prev"));
    }
    const int64_t cell = d.cell, gates = 4 * cell;
    Tensor *cs_prev_grad_t, *dicfo_t;
    OP_REQUIRES_OK(context, context->allocate_output(0, state, &cs_prev_grad_t));
    OP_REQUIRES_OK(context, context->allocate_output(1, TensorShape({d.batch, gates}), &dicfo_t));
    float* peephole_grads[3];  // wci, wcf, wco
    for (int k = 0; k < 3; ++k) {
      Tensor* t;
      OP_REQUIRES_OK(context, context->allocate_output(2 + k, TensorShape({cell}), &t));
      peephole_grads[k] = t->data<float>();
      std::fill_n(peephole_grads[k], cell, 0.0f);
    }
    if (d.batch == 0 || cell == 0) return;
    auto in = [&](int k) { return context->input(k).data<float>(); };
    float* cs_prev_grad = cs_prev_grad_t->data<float>();
    float* dicfo = dicfo_t->data<float>();
    auto rows = [&](int64_t begin, int64_t end) -> Status {
      for (int64_t r = begin; r < end; ++r) {
        auto row = [&](int k) { return in(k) + r * cell; };
        // (Input 9, cs, is not needed: co = tanh(cs) is input 13.)
        const CellGradRow args = {
            row(1),  row(8),  row(10), row(11),           row(12),
            row(13), row(14), row(15), dicfo + r * gates, cs_prev_grad + r * cell,
            in(4),   in(5),   in(6)};
        if (use_peephole_) {
          CellGradOneRow<true>(args, cell);
        } else {
          CellGradOneRow<false>(args, cell);
        }
      }
      return Status::OK();
    };
    ThreadPool* pool = context->device()->intra_op_pool();
    OP_REQUIRES_OK(context, ForRowBlocks(pool, d.batch, 30.0 * cell, rows));
    if (!use_peephole_) return;
    // Sums over the batch in fixed blocks: the same bits for any thread count.
    std::vector<double> sums(3 * cell);
    SumRowBlocks<double>(
        pool, d.batch, cell, 3,
        [&](int64_t begin, int64_t end, double* acc) {
          for (int64_t r = begin; r < end; ++r) {
            const float* g = dicfo + r * gates;
            const float* cs_prev = in(1) + r * cell;
            const float* cs = in(9) + r * cell;
            for (int64_t c = 0; c < cell; ++c) {
              acc[c] += double{g[c]} * cs_prev[c];
              acc[cell + c] += double{g[2 * cell + c]} * cs_prev[c];
              acc[2 * cell + c] += double{g[3 * cell + c]} * cs[c];
            }
          }
        },
        sums.data());
    for (int k = 0; k < 3; ++k) {
      std::copy_n(sums.begin() + k * cell, cell, peephole_grads[k]);
    }
  }

 private:
  bool use_peephole_ = false;
};

}  // namespace

void RegisterRnnKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("LSTMBlockCell").TypeConstraint<float>("T"),
                     MakeKernel<LSTMBlockCellOp>);
  registry->Register(KernelBuilder("LSTMBlockCellGrad").TypeConstraint<float>("T"),
                     MakeKernel<LSTMBlockCellGradOp>);
}

}  // namespace weir
