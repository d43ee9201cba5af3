// Matrix products through oneDNN's matmul primitive: bfloat16 operands
// with float accumulation and one rounding of each result to bfloat16, or
// float throughout (MatMul uses it for float products with a transposed
// second operand, where it beats sgemm: see matmul_op.cc).
// Kernels own one DnnlMatMul each; it caches the primitives it creates by
// problem, since creating one costs far more than running a small one.
// Thread-safe: blocks of one product, and concurrent steps, may run at once.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <mutex>

#include "weir/base/status.h"
#include "weir/framework/types.h"

namespace weir {

// C[m,n] = op(A)[m,k] * op(B)[k,n] on row-major storage with leading
// dimensions; op transposes where asked.
struct GemmShape {
  bool transpose_a = false, transpose_b = false;
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;
  bool is_float = false;  // float operands, else bfloat16 (Run sets it)
};

class DnnlMatMul {
 public:
  DnnlMatMul();
  ~DnnlMatMul();
  DnnlMatMul(const DnnlMatMul&) = delete;
  DnnlMatMul& operator=(const DnnlMatMul&) = delete;

  // Overwrites the m x n block at `c` on the calling thread (OpenMP is kept
  // to one thread; callers split large products). REQUIRES: m, n, k > 0.
  Status Run(const GemmShape& shape, const Eigen::bfloat16* a, const Eigen::bfloat16* b,
             Eigen::bfloat16* c);
  Status Run(const GemmShape& shape, const float* a, const float* b, float* c);

 private:
  struct Plan;
  using Key = std::array<int64_t, 9>;

  StatusOr<std::shared_ptr<const Plan>> GetPlan(const GemmShape& shape);
  // REQUIRES: shape.is_float says which type a, b and c point to.
  Status Execute(const GemmShape& shape, const void* a, const void* b, void* c);

  std::mutex mu_;
  std::map<Key, std::shared_ptr<const Plan>> plans_;  // guarded by mu_
};

}  // namespace weir
