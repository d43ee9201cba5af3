// Building a Graph from a GraphDef, with full validation: this is where a
// malformed or hand-edited graph is caught, with an error naming the node.
#pragma once

#include "weir/framework/node_def.h"
#include "weir/graph/graph.h"

namespace weir {

// Adds the nodes of `def` to `graph` (which may already hold nodes: that is
// Session::Extend). Checks, each an InvalidArgument (NotFound for an
// unregistered op) naming the node: empty or duplicate names, unknown ops,
// missing, ill-typed or disallowed attrs, malformed "name:port" inputs,
// inputs naming missing nodes or ports, control inputs before data inputs,
// the wrong number of inputs, input dtype mismatches, cycles not through
// NextIteration, and shape-function errors. On error `graph` is unchanged.
Status ImportGraphDef(const GraphDef& def, Graph* graph);

// Runs the shape function of `node` from its inputs' inferred shapes (and
// constant input values) and stores the result on the node.
Status InferShapes(Node* node);

}  // namespace weir
