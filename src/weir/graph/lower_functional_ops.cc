#include "weir/graph/lower_functional_ops.h"

#include <string_view>

namespace weir {

bool IsFunctionalControlFlow(const Node& node) {
  std::string_view op = node.type_string();
  return op == "If" || op == "StatelessIf" || op == "Case" || op == "StatelessCase" ||
         op == "While" || op == "StatelessWhile";
}

Status LowerFunctionalControlFlow(Graph* graph, Node* node) {
  (void)graph;
  return errors::Unimplemented("lowering of " + node->Describe() + " is not implemented yet");
}

}  // namespace weir
