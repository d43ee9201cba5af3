// Expansion of one function call or functional control-flow node in place,
// for passes that must see inside a single node (the gradients driver)
// without expanding the rest of the graph.
#pragma once

#include "weir/base/status.h"
#include "weir/graph/graph.h"

namespace weir {

// True for the nodes ExpandFunctions expands: calls (IsFunctionCall),
// If/Case/While and their stateless forms, SymbolicGradient.
bool NeedsFunctionExpansion(const Graph& graph, const Node& node);

// Replaces `node` by what ExpandFunctions makes of it, with every call and
// functional control-flow node inside it expanded too (recursively; a
// recursive function is an error). A node of `node`'s name keeps its
// outputs ("node:i" feeds and fetches still resolve) and the consumers of
// `node` are reconnected as ExpandFunctions reconnects them. `node` is
// deleted; on error the graph is unchanged. New nodes are named
// "<node's name>/..." and never clash with existing nodes.
// REQUIRES: NeedsFunctionExpansion(*graph, *node).
Status ExpandFunctionalNode(Graph* graph, Node* node);

}  // namespace weir
