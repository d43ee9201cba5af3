// The one list of op families. RegisterAllOps() fills OpRegistry::Global();
// it is idempotent and thread-safe, and sessions call it before use.
#pragma once

namespace weir {

class OpRegistry;

void RegisterAllOps();

// One function per family, each in <family>_ops.cc.
void RegisterArrayOps(OpRegistry* registry);
void RegisterMathOps(OpRegistry* registry);
void RegisterReductionOps(OpRegistry* registry);
void RegisterSegmentOps(OpRegistry* registry);  // segment reductions and scans
void RegisterRandomOps(OpRegistry* registry);
void RegisterNnOps(OpRegistry* registry);
void RegisterImageOps(OpRegistry* registry);  // image_ops.cc: resizing
void RegisterRnnOps(OpRegistry* registry);
void RegisterControlFlowOps(OpRegistry* registry);
void RegisterDataFlowOps(OpRegistry* registry);
void RegisterListOps(OpRegistry* registry);      // list_ops.cc: TensorList variants
void RegisterOptionalOps(OpRegistry* registry);  // list_ops.cc: Optional variants
void RegisterFunctionOps(OpRegistry* registry);
void RegisterFunctionalOps(OpRegistry* registry);  // If, Case, While, ToBool
void RegisterSendRecvOps(OpRegistry* registry);
void RegisterStateOps(OpRegistry* registry);
void RegisterTrainingOps(OpRegistry* registry);
void RegisterGradientSupportOps(OpRegistry* registry);
void RegisterIoOps(OpRegistry* registry);
void RegisterQueueOps(OpRegistry* registry);    // data flow: queues
void RegisterReaderOps(OpRegistry* registry);   // io: readers and files
void RegisterParsingOps(OpRegistry* registry);
void RegisterSummaryOps(OpRegistry* registry);
void RegisterLoggingOps(OpRegistry* registry);

}  // namespace weir
