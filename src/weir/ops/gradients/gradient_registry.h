// Gradient functions: for each differentiable op, the graph code that turns
// the gradients of its outputs into the gradients of its inputs. Written with
// the same builder users use; registered by explicit functions per family
// (RegisterAllGradients), beside the ops they differentiate.
#pragma once

#include <functional>
#include <map>
#include <shared_mutex>
#include <string>
#include <vector>

#include "weir/graph/scope.h"

namespace weir {

// `grad_outputs[i]` is the gradient flowing into output i, or an invalid
// Output when none does (treat as zeros). Sets one entry of `grad_inputs`
// per input; an invalid entry means no gradient flows to that input.
using GradientFunction =
    std::function<Status(const Scope& scope, const Operation& op,
                         const std::vector<Output>& grad_outputs, std::vector<Output>* grad_inputs)>;

// A gradient that touches only some rows of a tensor, as the gradient of a
// gather produces it: row `indices[i]` of a tensor shaped `dense_shape` gets
// `values[i]` (repeated indices add). Optimizers apply it with sparse
// (scatter) updates, so an embedding's gradient is never densified unless a
// consumer needs the dense tensor. (Declared here, below train/, because
// the gradient functions of gathers produce it.)
struct IndexedSlices {
  Output values;       // [n, rest of dense_shape...]
  Output indices;      // [n], int32 or int64
  Output dense_shape;  // int32 or int64 vector; the shape of the dense gradient
};

// For the few ops whose input gradient is naturally sparse (gathers):
// sets one entry of `grad_inputs` per input (invalid `values`: no gradient
// to that input), or leaves it empty when this op's configuration has no
// sparse form (a gather on another axis), and the dense function applies.
using SparseGradientFunction =
    std::function<Status(const Scope& scope, const Operation& op,
                         const std::vector<Output>& grad_outputs,
                         std::vector<IndexedSlices>* grad_inputs)>;

class GradientRegistry {
 public:
  static GradientRegistry* Global();

  // CHECK-fails if `op` already has an entry.
  void Register(const std::string& op, GradientFunction fn);
  // `op` is not differentiable (comparisons, shapes, StopGradient): no
  // gradient flows through it, and that is not an error.
  void RegisterNoGradient(const std::string& op);

  // A sparse form of `op`'s gradient, tried before its dense function.
  // CHECK-fails if `op` already has one.
  void RegisterSparse(const std::string& op, SparseGradientFunction fn);

  // The function for `op`; null for a registered no-gradient op. NotFound
  // when the op has no entry at all.
  StatusOr<const GradientFunction*> Lookup(const std::string& op) const;
  bool HasEntry(const std::string& op) const;
  // The sparse function for `op`, or null when it has none.
  const SparseGradientFunction* LookupSparse(const std::string& op) const;

 private:
  mutable std::shared_mutex mu_;
  std::map<std::string, GradientFunction> functions_;  // empty function: no gradient
  std::map<std::string, SparseGradientFunction> sparse_functions_;
};

// Registers every family's gradient functions; idempotent.
void RegisterAllGradients();
void RegisterMathGradients(GradientRegistry* registry);
void RegisterEinsumGradient(GradientRegistry* registry);  // einsum_grad.cc
void RegisterSegmentGradients(GradientRegistry* registry);  // segment_grad.cc
void RegisterUnaryGradients(GradientRegistry* registry);
void RegisterArrayGradients(GradientRegistry* registry);
void RegisterReductionGradients(GradientRegistry* registry);
void RegisterNnGradients(GradientRegistry* registry);
void RegisterImageGradients(GradientRegistry* registry);  // image_grad.cc
void RegisterRnnGradients(GradientRegistry* registry);
void RegisterStatefulGradients(GradientRegistry* registry);
void RegisterDataFlowGradients(GradientRegistry* registry);
void RegisterListGradients(GradientRegistry* registry);  // list_grad.cc: TensorList, Optional
void RegisterControlFlowGradients(GradientRegistry* registry);

}  // namespace weir
