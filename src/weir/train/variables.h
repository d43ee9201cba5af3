// Variable: a resource variable built into a graph, with the nodes a model
// uses — its handle, a read of its value, and its initializer.
//
//   Scope root = Scope::NewRootScope();
//   StatusOr<Variable> w = Variable::Create(root, "w", ops::Const(root, {{1.f, 2.f}}));
//   Output y = ops::MatMul(root, x, w->value);
//   ... session->Run({}, {}, {GroupInitializers(root, {*w}).name()}, &out);
//
// There is no hidden collection of variables: whoever creates them keeps
// the list (optimizers expose the slot variables they create) and groups
// the initializers it wants into one op.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "weir/graph/scope.h"

namespace weir {

struct Variable {
  Output handle;          // VarHandleOp "<name>", dtype and shape attrs set
  Output value;           // ReadVariableOp "<name>/read": the value in a step
  Operation initializer;  // AssignVariableOp "<name>/Assign" of initial_value
  Output initial_value;
  std::string name;  // the handle's node name (scope prefix included)
  DType dtype = DT_INVALID;
  PartialShape shape;

  // A variable of initial_value's dtype and (inferred) shape. The name is
  // made unique within the graph like any op name. Errors (an invalid
  // initial value, a failed build) are returned and kept in the scope.
  static StatusOr<Variable> Create(const Scope& scope, std::string_view name,
                                   const Output& initial_value);
};

// One NoOp, "<name>", that runs after every variable's initializer.
Operation GroupInitializers(const Scope& scope, const std::vector<Variable>& variables,
                            std::string_view name = "init");

}  // namespace weir
