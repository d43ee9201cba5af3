// Optimizer: turns gradients into variable updates, as graph code.
//
//   AdamOptimizer adam(0.001f);
//   StatusOr<Operation> train = adam.Minimize(root, loss, {w, b}, &global_step);
//   Operation init = GroupInitializers(root, Concat({w, b, global_step}, adam.variables()));
//   // run `init` once, then `train` every step.
//
// Each optimizer keeps per-variable state in slot variables — ordinary
// resource variables named "<var>/<Name>", "<var>/<Name>_1", ... (as
// TensorFlow names them), zero-filled unless the optimizer says otherwise
// — created on first use and listed by variables(), whose initializers the
// user runs. The loss given to Minimize must be computed from each
// variable's `value` (its ReadVariableOp).
//
// Every update has two implementations: the fused ResourceApply* kernel
// (the default) and the same formula as ordinary ops (ComposedStep), chosen
// by OptimizerOptions::use_fused_kernels. A sparse gradient (IndexedSlices)
// has its repeated indices summed, then updates only its rows (sparse
// kernels, or gathers and scatters); it is never densified.
//
// An Optimizer is not thread-safe: build graphs with it from one thread.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "weir/graph/scope.h"
#include "weir/train/indexed_slices.h"
#include "weir/train/variables.h"

namespace weir {

struct GradAndVar {
  Gradient gradient;
  Variable variable;
};

struct OptimizerOptions {
  bool use_fused_kernels = true;
  // Passed to the fused kernels (which lock their variables either way; see
  // kernels/training_kernels.cc).
  bool use_locking = false;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;

  // Adds the update of every variable by its gradient; the returned op runs
  // them all, then adds 1 to `global_step` when given. Errors (no gradient,
  // a dtype or shape that does not match the variable) name the variable.
  StatusOr<Operation> ApplyGradients(const Scope& scope,
                                     const std::vector<GradAndVar>& grads_and_vars,
                                     const Variable* global_step = nullptr);

  // The gradients of `loss` with respect to each variable's value
  // (AddSymbolicGradients), then ApplyGradients.
  StatusOr<Operation> Minimize(const Scope& scope, const Output& loss,
                               const std::vector<Variable>& vars,
                               const Variable* global_step = nullptr);

  // Every variable this optimizer created (slots, and state such as Adam's
  // beta powers), in creation order, for the user's initializer op.
  const std::vector<Variable>& variables() const { return variables_; }
  // The slots of `var` (empty before its first update).
  std::vector<Variable> slots(const Variable& var) const;
  const std::string& name() const { return name_; }
  const OptimizerOptions& options() const { return options_; }

 protected:
  Optimizer(std::string name, OptimizerOptions options)
      : name_(std::move(name)), options_(options) {}

  // The update as ordinary ops: from the gradient and the values of the
  // variable's slots (all of them, or the gradient's rows), the new slot
  // values and the amount to subtract from the variable (or those rows).
  struct Step {
    std::vector<Output> slots;
    Output delta;
  };
  virtual StatusOr<Step> ComposedStep(const Scope& scope, const Output& grad,
                                      const std::vector<Output>& slots, DType dtype) = 0;

  // How many slots each variable has, and their initial value.
  virtual int num_slots() const { return 0; }
  virtual double slot_initial_value() const { return 0.0; }

  // Once per ApplyGradients, before the updates: create or read
  // optimizer-wide state (Adam's beta powers).
  virtual Status Prepare(const Scope& scope, DType dtype) { return Status::OK(); }
  // After every update: advance that state. Returns an op that runs after
  // `updates` (the default groups them).
  virtual StatusOr<Operation> Finish(const Scope& scope, const std::vector<Operation>& updates);

  // The fused kernels, where the optimizer has them. An invalid Operation
  // (the default) means none: the composed path is used.
  virtual StatusOr<Operation> FusedDense(const Scope& scope, const Output& grad,
                                         const Variable& var, const std::vector<Variable>& slots) {
    return Operation();
  }
  virtual StatusOr<Operation> FusedSparse(const Scope& scope, const IndexedSlices& grad,
                                          const Variable& var, const std::vector<Variable>& slots) {
    return Operation();
  }

  // A variable of the optimizer's own (not per variable), created once.
  StatusOr<Variable> CreateNonSlot(const Scope& scope, std::string_view name,
                                   const Output& initial_value);
  // `value` (a number or a scalar Output such as a schedule) as a scalar of
  // `dtype`, cast if need be.
  static Output Hyper(const Scope& scope, const Input& value, DType dtype);
  // An attr map with use_locking set, for the fused ops.
  AttrMap FusedAttrs(AttrMap more = {}) const;

 private:
  StatusOr<std::vector<Variable>> Slots(const Scope& scope, const Variable& var);
  StatusOr<Operation> ApplyOne(const Scope& scope, const Gradient& gradient, const Variable& var);
  StatusOr<Operation> ApplyComposed(const Scope& scope, const Gradient& gradient,
                                    const Variable& var, const std::vector<Variable>& slots);

  std::string name_;
  OptimizerOptions options_;
  std::vector<Variable> variables_;
  std::map<std::string, std::vector<Variable>> slots_;  // by variable name
};

// Repeated indices of `slices` summed into one row each (Unique, then
// ScatterNd), so an update applies each row once.
IndexedSlices SumRepeatedIndices(const Scope& scope, const IndexedSlices& slices);

}  // namespace weir
