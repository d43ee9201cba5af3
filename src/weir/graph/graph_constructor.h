// Building a Graph from a GraphDef, with full validation: this is where a
// malformed, hand-edited or hostile graph is caught, with an error naming
// the node.
#pragma once

#include <vector>

#include "weir/framework/node_def.h"
#include "weir/framework/op_def.h"
#include "weir/graph/graph.h"

namespace weir {

// GraphDef versions (VersionDef), as TensorFlow's TF_GRAPH_DEF_VERSION*.
// Weir consumes graphs as the TensorFlow 2.x runtime of this GraphDef
// version does; TensorFlow writes min_consumer 0 (12 in old graphs), so its
// graphs import.
inline constexpr int kGraphDefVersion = 2000;
inline constexpr int kGraphDefMinProducer = 0;

// Checks `def`'s versions as TensorFlow does: producer not below
// kGraphDefMinProducer, min_consumer not above kGraphDefVersion, and
// kGraphDefVersion not in bad_consumers. InvalidArgument otherwise.
Status CheckGraphDefVersions(const GraphDef& def);

struct ImportGraphDefOptions {
  // Accept nodes of internal ops (names starting with '_': _Arg, _Retval,
  // _Send, _Recv, fused kernels) and node names starting with '_'. Only the
  // runtime's own rewrites (session feeds and fetches, partitions) set it;
  // in a user's graph such a node could write another fetch's result.
  bool allow_internal_ops = false;
  // The producer's op list (a MetaGraphDef's stripped_op_list, or
  // import_graph_def's producer_op_list; ParseOpList reads one). With it,
  // TensorFlow's forward-compatibility rule applies: an attr that Weir's op
  // does not declare is dropped if its value equals the default in the
  // producer's OpDef of the op (a newer producer added the attr with a
  // default). Any other undeclared attr is an InvalidArgument naming the
  // node, op and attr. Borrowed; may be null.
  const std::vector<OpDef>* producer_op_list = nullptr;
};

// Adds the nodes of `def` to `graph` (which may already hold nodes: that is
// Session::Extend). TensorFlow 1 reference variables (VariableV2, Assign,
// ApplyAdam, RefEnter...) are first rewritten to resource variables
// (ref_variables.h). Checks, each an InvalidArgument (NotFound for an
// unregistered op) naming the node: versions (CheckGraphDefVersions), empty
// or duplicate names, internal ops or names unless allowed, unknown ops,
// undeclared attrs (but see producer_op_list), missing, ill-typed or
// disallowed attrs, malformed "name:port" inputs,
// inputs naming missing nodes or ports, control inputs before data inputs,
// the wrong number of inputs, input dtype mismatches, cycles not through
// NextIteration, and shape-function errors. Running out of memory is
// ResourceExhausted naming the node; nothing is thrown. Linear in nodes +
// edges. On error `graph` is unchanged.
Status ImportGraphDef(const GraphDef& def, Graph* graph,
                      const ImportGraphDefOptions& options = {});

// TensorFlow's forward-compatibility rule (see producer_op_list) applied to
// `def` ahead of an import that takes no options (a SavedModel's graph on
// its way to Session::Create): drops each undeclared attr that has the
// producer's default value; any other undeclared attr is the error
// ImportGraphDef would give.
Status RemoveNewDefaultAttrs(const std::vector<OpDef>& producer_op_list, GraphDef* def);

// Runs the shape function of `node` from its inputs' inferred shapes (and
// constant input values) and stores the result on the node.
Status InferShapes(Node* node);

}  // namespace weir
