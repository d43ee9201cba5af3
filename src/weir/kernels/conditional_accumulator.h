// ConditionalAccumulator: the resource behind the accumulator ops
// (ops/accumulator_ops.cc), the aggregation point of synchronous
// replication. It holds the sum of the gradients applied for its current
// step and a count of them. A gradient whose local_step is older than the
// step is stale and dropped (a backup replica's late work); a take waits
// until at least num_required gradients are in, then gives their mean (or
// sum), empties the sum and advances the step by one, so the gradients
// still in flight for the step just taken are dropped when they arrive.
//
// Takes wait in FIFO order without holding a thread, each registered with
// its step's CancellationManager (cancelling the step, a timeout or a
// session close ends it with Cancelled naming the accumulator). The
// kernels hold the accumulator in their callbacks, so a reset container
// cannot free it under a waiting take; one destroyed with waiters fails them.
//
// A sparse accumulator (SparseConditionalAccumulator) takes IndexedSlices
// (indices, values whose dim 0 is one row per index, optional dense shape):
// rows of one index are summed and counted; a take gives the indices in
// increasing order, and per row the sum divided by that row's count (MEAN,
// TensorFlow's rule) or the sum. Rows are summed in double and rounded to
// the dtype at the take. Indices must lie in [0, dim 0) (dim 0 unknown:
// only >= 0).
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "weir/base/cancellation.h"
#include "weir/framework/node_def.h"
#include "weir/framework/resource_mgr.h"
#include "weir/framework/tensor.h"
#include "weir/framework/tensor_shape.h"

namespace weir {

class OpKernelContext;

// The type name an accumulator's resource handle carries.
inline constexpr char kAccumulatorTypeName[] = "ConditionalAccumulator";

class ConditionalAccumulator : public ResourceBase,
                               public std::enable_shared_from_this<ConditionalAccumulator> {
 public:
  enum class Reduction { kMean, kSum };
  // Called with the take's outputs (dense: the mean/sum; sparse: indices,
  // values, shape), or with an error (also set on the context).
  using TakeCallback = std::function<void(StatusOr<std::vector<Tensor>>)>;

  // Reads dtype, shape and reduction_type of a creation node (sparse when
  // its op is SparseConditionalAccumulator). Unimplemented for a dtype the
  // kernels do not sum (float and double do).
  static StatusOr<std::shared_ptr<ConditionalAccumulator>> Create(const NodeDef& node_def,
                                                                  std::string name);
  ~ConditionalAccumulator() override;

  DType dtype() const { return dtype_; }
  bool sparse() const { return sparse_; }
  const PartialShape& shape() const { return shape_; }

  // OK if a node that shares this accumulator asks for its dtype, shape
  // and reduction.
  Status MatchesNodeDef(const NodeDef& node_def) const;

  // Adds `gradient` for `local_step`, or drops it when local_step is older
  // than the current step (not an error). InvalidArgument when its dtype or
  // shape differs from the accumulator's or from the gradients already in.
  // REQUIRES: !sparse().
  Status ApplyGradient(int64_t local_step, const Tensor& gradient);
  // Adds an IndexedSlices gradient (`dense_shape` null when not given), or
  // drops it when stale. InvalidArgument naming the shapes when indices is
  // not a vector, values' dim 0 differs from its length, values' other dims
  // differ from the accumulator's (or this step's rows), or an index is out
  // of range. REQUIRES: sparse().
  Status ApplySparseGradient(int64_t local_step, const Tensor& indices, const Tensor& values,
                             const Tensor* dense_shape);

  // Calls `done` with the mean/sum once num_required gradients are in (at
  // once if they are). REQUIRES: num_required >= 1 (the kernel checks).
  void TryTakeGradient(int32_t num_required, OpKernelContext* context, TakeCallback done);

  // Saturates at the int32 maximum (the op's output type).
  int32_t num_accumulated() const;
  int64_t global_step() const;
  // Sets the step; a smaller one than the current is allowed (as
  // TensorFlow) and logged.
  void SetGlobalStep(int64_t step);

  // "ConditionalAccumulator 'name'".
  std::string DebugString() const override { return name_; }

 private:
  struct Take {
    int32_t num_required = 0;
    OpKernelContext* context = nullptr;
    CancellationManager* cancellation = nullptr;
    CancellationToken token = 0;
    bool registered = false;
    Status failure;
    std::vector<Tensor> result;
    TakeCallback done;
  };
  using TakeList = std::list<Take>;

  ConditionalAccumulator(std::string name, bool sparse, DType dtype, PartialShape shape,
                         Reduction reduction, std::string reduction_name);

  // The take's outputs from what is accumulated; then empties it.
  // REQUIRES: mu_ held.
  StatusOr<std::vector<Tensor>> TakeDenseLocked();
  StatusOr<std::vector<Tensor>> TakeSparseLocked();

  // Completes the front takes that have enough gradients; moves them to
  // `finished`. REQUIRES: mu_ held.
  void FlushLocked(TakeList* finished);
  // Deregisters and calls back each finished take. REQUIRES: mu_ not held.
  static void RunFinished(TakeList* finished);
  void Cancel(CancellationManager* cancellation, CancellationToken token);

  const std::string name_;
  const bool sparse_;
  const DType dtype_;
  const PartialShape shape_;
  const Reduction reduction_;
  const std::string reduction_name_;

  mutable std::mutex mu_;
  int64_t global_step_ = 0;
  int64_t counter_ = 0;
  Tensor sum_;  // dense: the sum of the counted gradients; empty when counter_ == 0
  // Sparse: index -> slot; slot s's row sum is row_sums_[s * row elements ...]
  // and row_counts_[s] gradients touched it. row_shape_ (values' dims after
  // the first) is fixed by the step's first gradient with rows.
  std::map<int64_t, int64_t> rows_;
  std::vector<double> row_sums_;
  std::vector<int64_t> row_counts_;
  std::vector<int64_t> row_shape_;
  bool has_row_shape_ = false;
  TakeList takes_;
};

}  // namespace weir
