// The families whose ops have no gradient by nature: state updates,
// random sampling, I/O, communication and control. Listed explicitly, so
// that a new op must be placed here or given a gradient (the registry test
// checks every op has an entry).
#include "weir/ops/gradients/gradient_registry.h"

namespace weir {

void RegisterStatefulGradients(GradientRegistry* registry) {
  for (const char* op : {"AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp",
                         "DestroyResourceOp", "ResourceScatterAdd", "ResourceScatterSub",
                         "ResourceScatterUpdate", "ResourceGather", "RandomUniform", "RandomStandardNormal",
                         "TruncatedNormal", "RandomUniformInt", "RandomShuffle", "Multinomial",
                         "SaveV2", "RestoreV2", "NoOp", "_Send", "_Recv", "_Retval"}) {
    registry->RegisterNoGradient(op);
  }
}

}  // namespace weir
