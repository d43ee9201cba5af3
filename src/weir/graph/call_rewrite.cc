#include "weir/graph/call_rewrite.h"

#include "weir/graph/graph_constructor.h"

namespace weir {

bool BodyNamesAreFree(const Graph& graph, const std::string& prefix, const FunctionDef& def,
                      std::string_view extra) {
  if (!extra.empty() && graph.FindNode(StrCat(prefix, "/", extra)) != nullptr) return false;
  for (const NodeDef& nd : def.node_def) {
    if (graph.FindNode(StrCat(prefix, "/", nd.name)) != nullptr) return false;
  }
  return true;
}

std::vector<Node*> PlaceBodyAndFindSideEffects(Graph* graph, const Graph::Mark& mark,
                                               const std::string& device, bool stateful) {
  bool has_frames = false;
  std::vector<Node*> side_effects;
  for (int id = mark.node_ids; id < graph->num_node_ids(); ++id) {
    Node* node = graph->FindNodeId(id);
    if (node == nullptr) continue;
    if (node->requested_device().empty() && !device.empty()) node->set_requested_device(device);
    if (node->type_string() == "Enter") has_frames = true;
    if (stateful && node->is_stateful()) side_effects.push_back(node);
  }
  if (has_frames) side_effects.clear();
  return side_effects;
}

ReplacedNode::ReplacedNode(const Node& node)
    : name(node.name()),
      device(node.requested_device()),
      source_location(node.def().source_location),
      output_types(node.output_types()) {
  for (const Edge* e : node.out_edges())
    out_edges.push_back({e->dst(), e->src_output(), e->dst_input()});
}

StatusOr<Node*> AddReplacement(Graph* graph, const ReplacedNode& replaced,
                               const std::vector<std::pair<Node*, int>>& outputs,
                               const std::vector<Node*>& controls) {
  if (outputs.size() != replaced.output_types.size()) {
    return errors::InvalidArgument("node '", replaced.name, "' has ", replaced.output_types.size(),
                                   " outputs but its replacement is given ", outputs.size());
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    const DType got = outputs[k].first->output_type(outputs[k].second);
    if (got != replaced.output_types[k]) {
      return errors::InvalidArgument("output ", k, " of node '", replaced.name, "' is ",
                                     replaced.output_types[k], " but its replacement gets ", got,
                                     " from '", outputs[k].first->name(), "'");
    }
  }
  NodeDef def;
  def.name = replaced.name;
  def.device = replaced.device;
  def.source_location = replaced.source_location;
  if (outputs.empty()) {
    def.op = "NoOp";
  } else {
    def.op = "IdentityN";
    def.attrs["T"] = replaced.output_types;
  }
  WEIR_ASSIGN_OR_RETURN(Node * replacement, graph->AddNode(std::move(def)));
  for (size_t k = 0; k < outputs.size(); ++k) {
    graph->AddEdge(outputs[k].first, outputs[k].second, replacement, static_cast<int>(k));
  }
  for (Node* control : controls) graph->AddControlEdge(control, replacement);
  WEIR_RETURN_IF_ERROR(InferShapes(replacement));
  return replacement;
}

void MoveConsumers(Graph* graph, const ReplacedNode& replaced, Node* replacement,
                   const std::vector<std::pair<Node*, int>>* direct) {
  for (const ReplacedNode::OutEdge& e : replaced.out_edges) {
    if (e.src_output == Edge::kControlSlot) {
      graph->AddControlEdge(replacement, e.dst);
    } else if (direct != nullptr) {
      const auto& [src, port] = (*direct)[e.src_output];
      graph->AddEdge(src, port, e.dst, e.dst_input);
    } else {
      graph->AddEdge(replacement, e.src_output, e.dst, e.dst_input);
    }
  }
}

}  // namespace weir
