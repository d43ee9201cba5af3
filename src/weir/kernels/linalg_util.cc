#include "weir/kernels/linalg_util.h"

#include <algorithm>
#include <mutex>

#include "weir/base/threadpool.h"
#include "weir/framework/device.h"

namespace weir {
namespace linalg {

// `t`'s dims as a batch shape (all but the last `drop`) plus those dims.
TensorShape BatchShape(const Tensor& t, int drop, std::initializer_list<int64_t> tail) {
  TensorShape shape;
  for (int i = 0; i + drop < t.dims(); ++i) shape.AddDim(t.dim_size(i));
  for (int64_t d : tail) shape.AddDim(d);
  return shape;
}

// Checks that `t` is a batch of matrices (square when `square`).
Status CheckMatrices(const Tensor& t, bool square, std::string_view op, std::string_view what) {
  if (t.dims() < 2) {
    return errors::InvalidArgument(op, ": ", what, " must have rank >= 2 but has shape ", t.shape(),
                                   " (dtype ", t.dtype(), ")");
  }
  if (square && t.dim_size(t.dims() - 1) != t.dim_size(t.dims() - 2)) {
    return errors::InvalidArgument(op, ": ", what, " must be square matrices but has shape ",
                                   t.shape(), " (dtype ", t.dtype(), ")");
  }
  return Status::OK();
}

// Runs fn(b) for b in [0, count) on the intra-op pool; the failure of the
// lowest b is the result.
Status ForEachMatrix(OpKernelContext* context, int64_t count, int64_t cost,
                     const std::function<Status(int64_t)>& fn) {
  std::mutex mu;
  int64_t failed_at = count;
  Status failure;
  context->device()->intra_op_pool()->ParallelFor(count, std::max<int64_t>(cost, 1),
                                                  [&](int64_t first, int64_t last) {
                                                    for (int64_t b = first; b < last; ++b) {
                                                      Status s = fn(b);
                                                      if (!s.ok()) {
                                                        std::lock_guard<std::mutex> lock(mu);
                                                        if (b < failed_at) {
                                                          failed_at = b;
                                                          failure = s;
                                                        }
                                                        return;
                                                      }
                                                    }
                                                  });
  return failure;
}

int64_t CubeCost(int64_t n) {
  const int64_t c = std::min<int64_t>(n, 1 << 20);
  return std::min<int64_t>(c * c * std::min<int64_t>(c, 1 << 10), int64_t{1} << 40) + 1;
}

}  // namespace linalg
}  // namespace weir
