// Expansion of one function call or functional control-flow node in place,
// for passes that must see inside a single node (the gradients driver)
// without expanding the rest of the graph.
#pragma once

#include "weir/base/status.h"
#include "weir/graph/function_inline.h"
#include "weir/graph/graph.h"

namespace weir {

// True for the nodes ExpandFunctions expands: calls (IsFunctionCall),
// If/Case/While and their stateless forms, SymbolicGradient.
bool NeedsFunctionExpansion(const Graph& graph, const Node& node);

// Replaces `node` by what ExpandFunctions makes of it, with every call and
// functional control-flow node inside it expanded too (recursively; a
// recursive function is an error). A node of `node`'s name (an IdentityN of
// its outputs, a NoOp when it has none) keeps its outputs, and `node`'s
// consumers read it, so "node:i" feeds, fetches and consumers are
// unchanged; what waited for `node`'s control edge waits for the expansion
// as ExpandFunctions makes it wait. The body waits for an Identity of each
// argument, not the argument's node, so feeding an input still works.
// `node` is deleted; on an error in the expansion (a bad body, recursion)
// the graph is unchanged. New nodes are named
// "<node's name>/..." and never clash with existing nodes. `options` are
// those of the ExpandFunctions run inside it.
// REQUIRES: NeedsFunctionExpansion(*graph, *node).
Status ExpandFunctionalNode(Graph* graph, Node* node, const ExpandFunctionsOptions& options = {});

}  // namespace weir
