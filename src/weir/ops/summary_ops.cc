// Op declarations of the summary family (being written).
#include "weir/framework/op_def.h"
#include "weir/ops/all_ops.h"

namespace weir {

void RegisterSummaryOps(OpRegistry* registry) { (void)registry; }

}  // namespace weir
