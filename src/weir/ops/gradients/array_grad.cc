// Gradients of the array family.
#include "weir/ops/gradients/gradient_registry.h"
#include "weir/ops/standard_ops.h"

namespace weir {
namespace {

Status IdentityGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                    std::vector<Output>* grads) {
  *grads = {g[0]};
  return Status::OK();
}

Status ReshapeGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                   std::vector<Output>* grads) {
  const Edge* x = op.node()->data_inputs()[0];
  *grads = {ops::Reshape(scope, g[0], ops::Shape(scope, Output(x->src(), x->src_output()))),
            Output()};
  return scope.status();
}

}  // namespace

void RegisterArrayGradients(GradientRegistry* registry) {
  registry->Register("Identity", IdentityGrad);
  registry->Register("Reshape", ReshapeGrad);
  for (const char* op : {"Const", "Placeholder", "Shape", "_Arg", "VarHandleOp", "ReadVariableOp",
                         "VarIsInitializedOp"}) {
    registry->RegisterNoGradient(op);
  }
}

}  // namespace weir
