#include "weir/graph/op_kinds.h"

#include <algorithm>
#include <array>

namespace weir {
namespace {

template <size_t N>
bool OneOf(std::string_view op, const std::array<std::string_view, N>& names) {
  return std::find(names.begin(), names.end(), op) != names.end();
}

}  // namespace

bool IsControlFlowOp(std::string_view op) {
  static constexpr std::array<std::string_view, 13> kOps = {
      "Switch",        "RefSwitch", "_SwitchN", "Merge",         "RefMerge",         "Enter",
      "RefEnter",      "Exit",      "RefExit",  "NextIteration", "RefNextIteration", "LoopCond",
      "ControlTrigger"};
  return OneOf(op, kOps);
}

bool IsRuntimeOp(std::string_view op) {
  static constexpr std::array<std::string_view, 6> kOps = {"_Arg",  "_Retval",   "_Send",
                                                           "_Recv", "_HostSend", "_HostRecv"};
  return OneOf(op, kOps);
}

bool IsPlaceholderOp(std::string_view op) {
  return op == "Placeholder" || op == "PlaceholderV2" || op == "PlaceholderWithDefault";
}

bool IsRandomOp(std::string_view op) {
  return op.starts_with("Random") || op.starts_with("TruncatedNormal") ||
         op.starts_with("Multinomial") || op.starts_with("ParameterizedTruncatedNormal") ||
         op.starts_with("StatelessRandom");
}

}  // namespace weir
