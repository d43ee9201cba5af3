// Graph algorithms: topological order and pruning.
#pragma once

#include <vector>

#include "weir/graph/graph.h"

namespace weir {

// True for edges that close a loop (out of NextIteration); they are ignored
// when ordering nodes, so a well-formed loop is not a cycle.
bool IsBackEdge(const Edge* edge);

// Nodes such that every node comes after its inputs (back edges ignored).
// InvalidArgument naming some nodes on the cycle if there is one.
StatusOr<std::vector<Node*>> TopologicalOrder(const Graph& graph);

// Removes every node from which no node in `roots` is reachable (following
// data and control edges backwards). Returns the number of nodes removed.
int PruneToRoots(Graph* graph, const std::vector<Node*>& roots);

}  // namespace weir
