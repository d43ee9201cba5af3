// Op declarations of the queue family (being written).
#include "weir/framework/op_def.h"
#include "weir/ops/all_ops.h"

namespace weir {

void RegisterQueueOps(OpRegistry* registry) { (void)registry; }

}  // namespace weir
