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

class GradientRegistry {
 public:
  static GradientRegistry* Global();

  // CHECK-fails if `op` already has an entry.
  void Register(const std::string& op, GradientFunction fn);
  // `op` is not differentiable (comparisons, shapes, StopGradient): no
  // gradient flows through it, and that is not an error.
  void RegisterNoGradient(const std::string& op);

  // The function for `op`; null for a registered no-gradient op. NotFound
  // when the op has no entry at all.
  StatusOr<const GradientFunction*> Lookup(const std::string& op) const;
  bool HasEntry(const std::string& op) const;

 private:
  mutable std::shared_mutex mu_;
  std::map<std::string, GradientFunction> functions_;  // empty function: no gradient
};

// Registers every family's gradient functions; idempotent.
void RegisterAllGradients();
void RegisterMathGradients(GradientRegistry* registry);
void RegisterUnaryGradients(GradientRegistry* registry);
void RegisterArrayGradients(GradientRegistry* registry);
void RegisterReductionGradients(GradientRegistry* registry);
void RegisterNnGradients(GradientRegistry* registry);
void RegisterStatefulGradients(GradientRegistry* registry);

}  // namespace weir
