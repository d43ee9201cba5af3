#include "weir/ops/all_ops.h"

#include <mutex>

#include "weir/framework/op_def.h"
#include "weir/ops/string_ops.h"

namespace weir {

// Declared here rather than in the header, so that adding the family does not
// rebuild every file of the layer (the lead may move it to the header).
void RegisterAccumulatorOps(OpRegistry* registry);  // accumulator_ops.cc
void RegisterLookupOps(OpRegistry* registry);       // lookup_ops.cc
void RegisterStringConvertOps(OpRegistry* registry);  // string_convert_ops.cc
void RegisterImageCodecOps(OpRegistry* registry);   // image_codec_ops.cc
void RegisterVisionOps(OpRegistry* registry);       // vision_ops.cc
void RegisterSparseOps(OpRegistry* registry);       // sparse_ops.cc
void RegisterLinalgOps(OpRegistry* registry);       // linalg_ops.cc
void RegisterSpecialOps(OpRegistry* registry);      // special_ops.cc
void RegisterComplexOps(OpRegistry* registry);      // complex_ops.cc
void RegisterArrayExtraOps(OpRegistry* registry);   // array_extra_ops.cc
void RegisterSignalOps(OpRegistry* registry);       // signal_ops.cc
void RegisterStatelessRandomOps(OpRegistry* registry);  // stateless_random_ops.cc
void RegisterRandomSamplingOps(OpRegistry* registry);   // random_sampling_ops.cc

void RegisterAllOps() {
  static std::once_flag once;
  std::call_once(once, [] {
    OpRegistry* registry = OpRegistry::Global();
    RegisterArrayOps(registry);
    RegisterMathOps(registry);
    RegisterLinalgOps(registry);
    RegisterReductionOps(registry);
    RegisterSegmentOps(registry);
    RegisterSparseOps(registry);
    RegisterRandomOps(registry);
    RegisterNnOps(registry);
    RegisterImageOps(registry);
    RegisterImageCodecOps(registry);
    RegisterVisionOps(registry);
    RegisterRnnOps(registry);
    RegisterControlFlowOps(registry);
    RegisterDataFlowOps(registry);
    RegisterListOps(registry);
    RegisterOptionalOps(registry);
    RegisterFunctionOps(registry);
    RegisterFunctionalOps(registry);
    RegisterSendRecvOps(registry);
    RegisterStateOps(registry);
    RegisterTrainingOps(registry);
    RegisterGradientSupportOps(registry);
    RegisterIoOps(registry);
    RegisterQueueOps(registry);
    RegisterAccumulatorOps(registry);
    RegisterLookupOps(registry);
    RegisterStringConvertOps(registry);
    RegisterReaderOps(registry);
    RegisterParsingOps(registry);
    RegisterStringOps(registry);
    RegisterSummaryOps(registry);
    RegisterLoggingOps(registry);
    RegisterSpecialOps(registry);
    RegisterComplexOps(registry);
    RegisterArrayExtraOps(registry);
    RegisterSignalOps(registry);
    RegisterStatelessRandomOps(registry);
    RegisterRandomSamplingOps(registry);
  });
}

}  // namespace weir
