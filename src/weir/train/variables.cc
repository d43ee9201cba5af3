#include "weir/train/variables.h"

#include "weir/ops/standard_ops.h"

namespace weir {

StatusOr<Variable> Variable::Create(const Scope& scope, std::string_view name,
                                    const Output& initial_value) {
  WEIR_RETURN_IF_ERROR(scope.status());
  if (!initial_value.valid()) {
    Status error = errors::InvalidArgument("variable '", name, "': the initial value is invalid");
    scope.UpdateStatus(error);
    return error;
  }
  Variable var;
  var.dtype = initial_value.dtype();
  var.shape = initial_value.shape();
  var.initial_value = initial_value;
  var.handle = ops::VarHandleOp(scope.WithOpName(name), var.dtype, var.shape);
  WEIR_RETURN_IF_ERROR(scope.status());
  var.name = var.handle.node()->name();
  // The read and the initializer are named after the handle's unique name
  // ("w_1/read" when "w" was taken), which is `name` or `name_<k>` after
  // the scope's prefix.
  const std::string unique(std::string_view(var.name).substr(var.name.rfind(name)));
  var.value = ops::ReadVariableOp(scope.WithOpName(StrCat(unique, "/read")), var.handle, var.dtype);
  var.initializer =
      ops::AssignVariableOp(scope.WithOpName(StrCat(unique, "/Assign")), var.handle, initial_value);
  WEIR_RETURN_IF_ERROR(scope.status());
  return var;
}

Operation GroupInitializers(const Scope& scope, const std::vector<Variable>& variables,
                            std::string_view name) {
  std::vector<Operation> initializers;
  for (const Variable& var : variables) initializers.push_back(var.initializer);
  return ops::NoOp(scope.WithOpName(name).WithControlDependencies(initializers));
}

}  // namespace weir
