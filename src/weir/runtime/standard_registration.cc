#include "weir/runtime/standard_registration.h"

#include "weir/kernels/all_kernels.h"
#include "weir/ops/all_ops.h"

namespace weir {

// Both are once-only themselves; kernels need no op declared to register
// (a kernel is matched against its OpDef only when it is created).
void RegisterStandardOpsAndKernels() {
  RegisterAllOps();
  RegisterAllKernels();
}

}  // namespace weir
