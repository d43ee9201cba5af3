// What the compiler's passes need to know about an op beyond its OpDef,
// by op name, in one place: which ops are loop and branch structure, the
// runtime's own plumbing, feed points, or random.
#pragma once

#include <string_view>

namespace weir {

// Switch, Merge, Enter, Exit, NextIteration, LoopCond (and Ref variants,
// _SwitchN): their nodes can be dead or live in a loop frame.
bool IsControlFlowOp(std::string_view op);
// _Arg, _Retval and the transfers (_Send, _Recv, _HostSend, _HostRecv).
bool IsRuntimeOp(std::string_view op);
bool IsPlaceholderOp(std::string_view op);
// Random ops are declared stateful; this also catches a declaration that
// forgot, so that no pass merges or folds two draws into one.
bool IsRandomOp(std::string_view op);

}  // namespace weir
