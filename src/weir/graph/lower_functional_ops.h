// Lowering of TensorFlow's functional control flow (If, StatelessIf, Case,
// StatelessCase, While, StatelessWhile) to the dataflow primitives of
// control flow v1 (Switch, Merge, Enter, Exit, NextIteration, LoopCond),
// with the branch and body functions inlined, as TensorFlow's lowering pass
// does. The step compiler runs it (through ExpandFunctions) so the result is
// placed, partitioned and run like any other graph.
#pragma once

#include <string_view>

#include "weir/base/status.h"
#include "weir/graph/graph.h"

namespace weir {

// True for If, StatelessIf, Case, StatelessCase, While, StatelessWhile.
bool IsFunctionalControlFlow(const Node& node);
bool IsFunctionalControlFlowOp(std::string_view op);

// Replaces `node` by its Switch/Merge (or loop) structure, its branches/body
// inlined with InlineFunctionBody. Errors name the node and function.
// A node of the same name (an IdentityN) keeps the node's outputs, so feeds,
// fetches and consumers of "node:i" are unchanged; nodes that waited for
// `node` wait for it. REQUIRES: IsFunctionalControlFlow(*node).
Status LowerFunctionalControlFlow(Graph* graph, Node* node);

}  // namespace weir
