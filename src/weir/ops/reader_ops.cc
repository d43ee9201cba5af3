// Op declarations of the reader family (being written).
#include "weir/framework/op_def.h"
#include "weir/ops/all_ops.h"

namespace weir {

void RegisterReaderOps(OpRegistry* registry) { (void)registry; }

}  // namespace weir
