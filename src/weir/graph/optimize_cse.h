// Common subexpression elimination: nodes that must compute the same values
// merge into one, and whatever read the others reads it.
//
// Two nodes merge when they have the same op, attrs (Const values compared
// bit for bit), requested device and assigned device, the same source node
// and port on every data input, and the same set of control inputs. Never
// merged: stateful ops, random ops (declared stateful; the names Random*,
// TruncatedNormal*, Multinomial* are refused even if a declaration forgot),
// ops with DT_RESOURCE inputs or outputs, placeholders, control-flow ops,
// NoOp, the runtime's _Arg/_Retval/_Send/_Recv, anything read through a loop
// back edge, and the caller's protected nodes. Commutative ops are not
// special: Add(x, y) and Add(y, x) stay apart.
//
// One pass in topological order numbers each node's value by (op, attrs,
// devices, input values), so equal chains merge all the way down at once.
// The survivor of each set of equal nodes is the one of lowest id; the others
// are removed. Expected linear time in nodes + edges (hash based).
#pragma once

#include <string>
#include <unordered_set>
#include <vector>

#include "weir/base/status.h"
#include "weir/graph/graph.h"

namespace weir {

struct CseOptions {
  // Nodes that are neither merged away nor kept in place of others, by name
  // (fed, fetched and target nodes). Null: none.
  const std::unordered_set<std::string>* protected_nodes = nullptr;
};

// Merges equal nodes of `graph` and returns how many were removed. Appends
// one line per merge to `changes` when it is not null (the first 50, then a
// count). InvalidArgument if the graph has a cycle.
StatusOr<int> EliminateCommonSubexpressions(Graph* graph, const CseOptions& options = {},
                                            std::vector<std::string>* changes = nullptr);

// Whether CSE may merge `node` at all (ignoring the protected set).
bool IsCseCandidate(const Node& node);

}  // namespace weir
