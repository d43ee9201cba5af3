// Control flow ops. NoOp today; Switch/Merge/Enter/Exit/NextIteration join
// this family with the control-flow issue.
#include "weir/framework/op_def.h"
#include "weir/ops/all_ops.h"

namespace weir {

void RegisterControlFlowOps(OpRegistry* registry) {
  registry->Register(OpDefBuilder("NoOp").Doc(
      "Does nothing. Groups control dependencies: run it as a target to run its inputs."));
}

}  // namespace weir
