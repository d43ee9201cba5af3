// Op declarations of the parsing family (being written).
#include "weir/framework/op_def.h"
#include "weir/ops/all_ops.h"

namespace weir {

void RegisterParsingOps(OpRegistry* registry) { (void)registry; }

}  // namespace weir
