#include "weir/ops/const_op.h"

#include "weir/ops/all_ops.h"

namespace weir {
namespace ops {

Output Const(const Scope& scope, const Input& value, std::source_location location) {
  if (value.is_output()) {
    scope.UpdateStatus(errors::InvalidArgument("ops::Const needs a literal or a Tensor, not a graph output"));
    return Output();
  }
  RegisterAllOps();
  const Tensor& tensor = value.tensor();
  return AddOp(scope, "Const", {}, {{"value", tensor}, {"dtype", tensor.dtype()}}, location)
      .output(0);
}

}  // namespace ops
}  // namespace weir
