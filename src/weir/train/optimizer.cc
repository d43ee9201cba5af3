#include "weir/train/optimizer.h"

#include "weir/ops/standard_ops.h"
#include "weir/train/gradients.h"

namespace weir {
namespace {

Tensor ScalarOf(double value, DType dtype) {
  StatusOr<Tensor> t = Input(value).TensorAs(dtype);
  CHECK(t.ok()) << t.status();  // callers pass numeric dtypes (ApplyGradients checks)
  return std::move(t).value();
}

// A tensor of `var`'s shape filled with `value`: a constant where the shape
// is known, else shaped like the initial value at run time.
Output Filled(const Scope& scope, const Variable& var, double value) {
  Output dims;
  if (var.shape.IsFullyDefined()) {
    const std::vector<int64_t>& sizes = var.shape.dim_sizes();
    dims =
        ops::Const(scope, Tensor::FromVector<int64_t>(sizes, {static_cast<int64_t>(sizes.size())}));
  } else {
    dims = ops::Shape(scope, var.initial_value, {{"out_type", DT_INT64}});
  }
  return ops::Fill(scope, dims, ops::Const(scope, ScalarOf(value, var.dtype)));
}

Status CheckGradient(const Gradient& gradient, const Variable& var) {
  if (!var.handle.valid()) return errors::InvalidArgument("ApplyGradients: invalid variable");
  if (!gradient.valid()) {
    return errors::InvalidArgument("ApplyGradients: no gradient for variable '", var.name, "'");
  }
  if (var.dtype != DT_FLOAT && var.dtype != DT_DOUBLE) {
    return errors::InvalidArgument("ApplyGradients: variable '", var.name, "' is ", var.dtype,
                                   "; optimizers update float and double variables");
  }
  const Output& values = gradient.is_sparse ? gradient.sparse.values : gradient.dense;
  if (values.dtype() != var.dtype) {
    return errors::InvalidArgument("ApplyGradients: gradient of ", values.dtype(),
                                   " for variable '", var.name, "' of ", var.dtype);
  }
  if (!gradient.is_sparse && values.shape().known_rank() && var.shape.known_rank() &&
      !values.shape().Merge(var.shape).ok()) {
    return errors::InvalidArgument("ApplyGradients: gradient of shape ", values.shape(),
                                   " for variable '", var.name, "' of shape ", var.shape);
  }
  return Status::OK();
}

}  // namespace

IndexedSlices SumRepeatedIndices(const Scope& scope, const IndexedSlices& slices) {
  Scope s = scope.NewSubScope("SumRepeatedIndices");
  const DType index_type = slices.indices.dtype();
  Operation unique = AddOp(s, "Unique", {slices.indices}, {{"out_idx", index_type}});
  if (!unique.valid()) return slices;
  Output rows = ops::Shape(s, unique.output(0), {{"out_type", index_type}});
  // The dims of a row: values' shape after the first.
  auto vector_of = [&](double v) {
    return ops::Reshape(s, ops::Const(s, ScalarOf(v, index_type)), {1});
  };
  Output row_shape = ops::Slice(s, ops::Shape(s, slices.values, {{"out_type", index_type}}),
                                vector_of(1), vector_of(-1));
  Output shape = ops::ConcatV2(s, InputList{rows, row_shape}, 0);
  Output summed = ops::ScatterNd(s, ops::ExpandDims(s, unique.output(1), -1), slices.values, shape);
  return IndexedSlices{summed, unique.output(0), slices.dense_shape};
}

StatusOr<Operation> Optimizer::ApplyGradients(const Scope& scope,
                                              const std::vector<GradAndVar>& grads_and_vars,
                                              const Variable* global_step) {
  WEIR_RETURN_IF_ERROR(scope.status());
  if (grads_and_vars.empty()) return errors::InvalidArgument("ApplyGradients: no variables");
  for (const GradAndVar& gv : grads_and_vars) {
    WEIR_RETURN_IF_ERROR(CheckGradient(gv.gradient, gv.variable));
  }
  if (global_step != nullptr && global_step->dtype != DT_INT64 && global_step->dtype != DT_INT32) {
    return errors::InvalidArgument("ApplyGradients: the global step '", global_step->name,
                                   "' must be an int64 or int32 variable, is ", global_step->dtype);
  }
  Scope s = scope.NewSubScope(name_);
  WEIR_RETURN_IF_ERROR(Prepare(s, grads_and_vars.front().variable.dtype));
  std::vector<Operation> updates;
  for (const GradAndVar& gv : grads_and_vars) {
    // Slots are named after their variable, outside the update's scope.
    WEIR_ASSIGN_OR_RETURN(std::vector<Variable> slots, Slots(scope, gv.variable));
    Scope update = s.NewSubScope(StrCat("update_", gv.variable.name))
                       .ColocateWith(Operation(gv.variable.handle));
    WEIR_ASSIGN_OR_RETURN(Operation op, ApplyOne(update, gv.gradient, gv.variable));
    updates.push_back(op);
  }
  WEIR_ASSIGN_OR_RETURN(Operation finished, Finish(s, updates));
  std::vector<Operation> done = {finished};
  if (global_step != nullptr) {
    done = {ops::AssignAddVariableOp(
        s.WithOpName("increment_global_step").WithControlDependencies({finished}),
        global_step->handle, ops::Const(s, ScalarOf(1, global_step->dtype)))};
  }
  Operation apply = ops::NoOp(s.WithOpName("apply").WithControlDependencies(done));
  WEIR_RETURN_IF_ERROR(scope.status());
  return apply;
}

StatusOr<Operation> Optimizer::Minimize(const Scope& scope, const Output& loss,
                                        const std::vector<Variable>& vars,
                                        const Variable* global_step) {
  std::vector<Output> values;
  for (const Variable& var : vars) values.push_back(var.value);
  std::vector<Output> grads;
  WEIR_RETURN_IF_ERROR(AddSymbolicGradients(scope, {loss}, values, &grads));
  std::vector<GradAndVar> grads_and_vars;
  for (size_t i = 0; i < vars.size(); ++i) {
    grads_and_vars.push_back({Gradient::Dense(grads[i]), vars[i]});
  }
  return ApplyGradients(scope, grads_and_vars, global_step);
}

std::vector<Variable> Optimizer::slots(const Variable& var) const {
  auto it = slots_.find(var.name);
  return it == slots_.end() ? std::vector<Variable>{} : it->second;
}

StatusOr<Operation> Optimizer::Finish(const Scope& scope, const std::vector<Operation>& updates) {
  return ops::NoOp(scope.WithOpName("updates").WithControlDependencies(updates));
}

StatusOr<Variable> Optimizer::CreateNonSlot(const Scope& scope, std::string_view name,
                                            const Output& initial_value) {
  WEIR_ASSIGN_OR_RETURN(Variable var, Variable::Create(scope, name, initial_value));
  variables_.push_back(var);
  return var;
}

Output Optimizer::Hyper(const Scope& scope, const Input& value, DType dtype) {
  if (value.is_output()) {
    return value.output().dtype() == dtype ? value.output()
                                           : ops::Cast(scope, value.output(), dtype);
  }
  StatusOr<Tensor> t = value.TensorAs(dtype);
  if (!t.ok()) {
    scope.UpdateStatus(t.status());
    return Output();
  }
  return ops::Const(scope, *t);
}

AttrMap Optimizer::FusedAttrs(AttrMap more) const {
  more["use_locking"] = AttrValue(options_.use_locking);
  return more;
}

StatusOr<std::vector<Variable>> Optimizer::Slots(const Scope& scope, const Variable& var) {
  std::vector<Variable>& slots = slots_[var.name];
  // Named "<var>/<Name>", then "_1", "_2"...: the graph makes names unique.
  Scope s = scope.ColocateWith(Operation(var.handle));
  while (static_cast<int>(slots.size()) < num_slots()) {
    WEIR_ASSIGN_OR_RETURN(Variable slot, Variable::Create(s, StrCat(var.name, "/", name_),
                                                          Filled(s, var, slot_initial_value())));
    slots.push_back(slot);
    variables_.push_back(slot);
  }
  return slots;
}

StatusOr<Operation> Optimizer::ApplyOne(const Scope& scope, const Gradient& gradient,
                                        const Variable& var) {
  const std::vector<Variable>& slots = slots_[var.name];
  Gradient g = gradient;
  if (g.is_sparse) g.sparse = SumRepeatedIndices(scope, g.sparse);
  if (options_.use_fused_kernels) {
    WEIR_ASSIGN_OR_RETURN(Operation fused, g.is_sparse ? FusedSparse(scope, g.sparse, var, slots)
                                                       : FusedDense(scope, g.dense, var, slots));
    WEIR_RETURN_IF_ERROR(scope.status());
    if (fused.valid()) return fused;
  }
  return ApplyComposed(scope, g, var, slots);
}

// Dense: read the slots, assign their new values, subtract delta from the
// variable. Sparse: the same on the gradient's rows, by gather and scatter.
StatusOr<Operation> Optimizer::ApplyComposed(const Scope& scope, const Gradient& gradient,
                                             const Variable& var,
                                             const std::vector<Variable>& slots) {
  const bool sparse = gradient.is_sparse;
  const Output& grad = sparse ? gradient.sparse.values : gradient.dense;
  const Output& indices = gradient.sparse.indices;
  std::vector<Output> values;
  for (const Variable& slot : slots) {
    values.push_back(sparse ? ops::ResourceGather(scope, slot.handle, indices, slot.dtype)
                            : ops::ReadVariableOp(scope, slot.handle, slot.dtype));
  }
  WEIR_ASSIGN_OR_RETURN(Step step, ComposedStep(scope, grad, values, var.dtype));
  WEIR_RETURN_IF_ERROR(scope.status());
  if (step.slots.size() != slots.size()) {
    return errors::Internal(name_, ": ComposedStep returned ", step.slots.size(),
                            " slot values for ", slots.size(), " slots");
  }
  std::vector<Operation> assigns;
  for (size_t i = 0; i < slots.size(); ++i) {
    assigns.push_back(
        sparse ? ops::ResourceScatterUpdate(scope, slots[i].handle, indices, step.slots[i])
               : ops::AssignVariableOp(scope, slots[i].handle, step.slots[i]));
  }
  assigns.push_back(sparse ? ops::ResourceScatterSub(scope, var.handle, indices, step.delta)
                           : ops::AssignSubVariableOp(scope, var.handle, step.delta));
  Operation group = ops::NoOp(scope.WithControlDependencies(assigns));
  WEIR_RETURN_IF_ERROR(scope.status());
  return group;
}

}  // namespace weir
