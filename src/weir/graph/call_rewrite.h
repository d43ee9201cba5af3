// The steps that replacing a node by an inlined function body shares,
// whether the node is a call (function_inline.cc) or functional control
// flow (lower_functional_ops.cc): finding a free name prefix for the body,
// placing the body and collecting its side effects, and the node of the
// same name that takes over the replaced node's consumers. Internal to
// this folder's passes.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "weir/base/status.h"
#include "weir/graph/graph.h"

namespace weir {

// True when no body node of `def` under `prefix` ("prefix/name"), nor
// "prefix/extra" when `extra` is not empty, names a node of `graph`.
bool BodyNamesAreFree(const Graph& graph, const std::string& prefix, const FunctionDef& def,
                      std::string_view extra = {});

// Gives the nodes added since `mark` the device `device` where they ask for
// none, and returns the stateful ones when `stateful` (a stateful node's
// side effects are part of what it does: its replacement waits for them),
// unless the body holds v1 loop frames, whose nodes cannot feed a node
// outside them (TensorFlow 2's bodies have none and list their side
// effects as control outputs anyway).
std::vector<Node*> PlaceBodyAndFindSideEffects(Graph* graph, const Graph::Mark& mark,
                                               const std::string& device, bool stateful);

// What a node being replaced had, saved before it is removed.
struct ReplacedNode {
  struct OutEdge {
    Node* dst;
    int src_output;  // Edge::kControlSlot for a control edge
    int dst_input;
  };
  std::string name;
  std::string device;
  std::string source_location;
  std::vector<DType> output_types;
  std::vector<OutEdge> out_edges;

  explicit ReplacedNode(const Node& node);
};

// Adds the node that keeps `replaced`'s name (so feeds, fetches and
// targets of "name" and "name:i" still resolve): an IdentityN of `outputs`
// (a NoOp when the node had no outputs), waiting for `controls`, with its
// shapes inferred. InvalidArgument when `outputs` do not match the node's
// output types.
StatusOr<Node*> AddReplacement(Graph* graph, const ReplacedNode& replaced,
                               const std::vector<std::pair<Node*, int>>& outputs,
                               const std::vector<Node*>& controls);

// Moves `replaced`'s consumers to `replacement`; when `direct` is given,
// data consumers read direct[output] instead (a pure call's body output),
// so a step that needs one output runs only its part of the body.
void MoveConsumers(Graph* graph, const ReplacedNode& replaced, Node* replacement,
                   const std::vector<std::pair<Node*, int>>* direct = nullptr);

}  // namespace weir
