#include "weir/graph/subgraph.h"

#include <map>

#include "weir/base/str_util.h"
#include "weir/graph/algorithm.h"

namespace weir {
namespace {

// "x" and "x:0" are the same tensor.
StatusOr<TensorId> ParseTensorRef(const std::string& name, const char* what) {
  StatusOr<TensorId> id = ParseTensorName(name);
  if (!id.ok() || id->port < 0) {
    return errors::InvalidArgument(what, " '", name,
                                   "' is not a tensor name ('node' or 'node:port')");
  }
  return id;
}

StatusOr<Node*> FindOutput(Graph* graph, const std::string& name, const TensorId& id,
                           const char* what) {
  Node* node = graph->FindNode(id.node);
  if (node == nullptr) {
    return errors::NotFound(what, " '", name, "' names no node in the graph");
  }
  if (id.port >= node->num_outputs()) {
    return errors::InvalidArgument(what, " '", name, "': node ", node->Describe(), " has ",
                                   node->num_outputs(), " outputs");
  }
  return node;
}

// Whether `op` writes the resource variable its input 0 names.
bool IsVariableUpdate(const std::string& op) {
  return op == "AssignVariableOp" || op == "AssignAddVariableOp" || op == "AssignSubVariableOp" ||
         op == "ResourceCountUpTo" || op == "ResourceStridedSliceAssign" ||
         op.starts_with("ResourceApply") || op.starts_with("ResourceSparseApply") ||
         op.starts_with("ResourceScatter");
}

// kFetchAtStepEndAttr: `retval` fetches a new read of `read`'s variable
// after the step's updates of it. Runs after pruning, so only updates the
// step runs count; the new read feeds only `retval`, so no cycle can form.
Status ReadFetchedVariableAtStepEnd(Graph* graph, Node* read, Node* retval, RewrittenStep* step) {
  const Edge* handle_edge = read->input_edge(0);
  if (handle_edge == nullptr) return Status::OK();
  Node* handle = handle_edge->src();
  std::vector<Node*> updates;
  for (const Edge* e : handle->out_edges()) {
    if (!e->IsControlEdge() && e->src_output() == handle_edge->src_output() &&
        e->dst_input() == 0 && IsVariableUpdate(e->dst()->type_string())) {
      updates.push_back(e->dst());
    }
  }
  if (updates.empty()) return Status::OK();
  NodeDef def;
  def.name = graph->NewName(StrCat(read->name(), "/_at_step_end"));
  def.op = "ReadVariableOp";
  def.device = read->requested_device();
  def.source_location = read->def().source_location;
  def.attrs["dtype"] = read->output_type(0);
  if (auto groups = read->def().attrs.find("_class"); groups != read->def().attrs.end()) {
    def.attrs["_class"] = groups->second;
  }
  WEIR_ASSIGN_OR_RETURN(Node * at_end, graph->AddNode(std::move(def)));
  at_end->set_output_shapes({read->output_shape(0)});
  graph->AddEdge(handle, handle_edge->src_output(), at_end, 0);
  for (Node* update : updates) graph->AddControlEdge(update, at_end);
  graph->RemoveEdge(retval->input_edge(0));
  graph->AddEdge(at_end, 0, retval, 0);
  step->protected_nodes.insert(at_end->name());
  return Status::OK();
}

}  // namespace

StatusOr<RewrittenStep> RewriteForStep(Graph* graph, const StepSignature& signature) {
  RewrittenStep step;
  // Feeds become _Arg nodes; consumers of a fed tensor read the _Arg.
  std::map<std::pair<std::string, int>, Node*> fed;
  // Per fed node, its fed ports' _Arg nodes (port -> _Arg), so that each
  // node's out-edges are walked once however many of its outputs are fed.
  std::map<int, std::map<int, Node*>> fed_ports;  // by node id, for a fixed order
  for (size_t i = 0; i < signature.feeds.size(); ++i) {
    const std::string& name = signature.feeds[i];
    WEIR_ASSIGN_OR_RETURN(TensorId id, ParseTensorRef(name, "feed"));
    WEIR_ASSIGN_OR_RETURN(Node * node, FindOutput(graph, name, id, "feed"));
    if (fed.count({id.node, id.port})) {
      return errors::InvalidArgument("tensor '", name, "' is fed twice");
    }
    NodeDef arg;
    arg.name = graph->NewName(StrCat("_arg/", id.node, "_", id.port));
    arg.op = "_Arg";
    arg.device = node->requested_device();
    arg.attrs["T"] = node->output_type(id.port);
    arg.attrs["index"] = static_cast<int64_t>(i);
    WEIR_ASSIGN_OR_RETURN(Node * arg_node, graph->AddNode(std::move(arg)));
    arg_node->set_output_shapes({node->output_shape(id.port)});
    fed[{id.node, id.port}] = arg_node;
    fed_ports[node->id()][id.port] = arg_node;
    step.feeds.push_back({name, node->output_type(id.port), node->output_shape(id.port)});
    step.protected_nodes.insert(arg_node->name());
  }
  for (const auto& [node_id, args] : fed_ports) {
    const Node* node = graph->FindNodeId(node_id);
    // A fed Placeholder must not run (it would fail for want of a value):
    // its control out-edges move to the _Arg of its output, as TF does. Other
    // fed nodes keep theirs, so their effects still happen when needed.
    const bool placeholder =
        node->type_string() == "Placeholder" || node->type_string() == "PlaceholderV2";
    std::vector<const Edge*> redirect;
    for (const Edge* e : node->out_edges()) {
      if (e->IsControlEdge() ? placeholder && args.count(0) : args.count(e->src_output()) > 0) {
        redirect.push_back(e);
      }
    }
    for (const Edge* e : redirect) {
      Node* dst = e->dst();
      if (e->IsControlEdge()) {
        Node* arg_node = args.at(0);
        graph->RemoveEdge(e);
        graph->AddControlEdge(arg_node, dst);
        continue;
      }
      Node* arg_node = args.at(e->src_output());
      int slot = e->dst_input();
      graph->RemoveEdge(e);
      graph->AddEdge(arg_node, 0, dst, slot);
    }
  }
  std::vector<Node*> roots;
  for (size_t i = 0; i < signature.fetches.size(); ++i) {
    const std::string& name = signature.fetches[i];
    WEIR_ASSIGN_OR_RETURN(TensorId id, ParseTensorRef(name, "fetch"));
    WEIR_ASSIGN_OR_RETURN(Node * src, FindOutput(graph, name, id, "fetch"));
    int port = id.port;
    auto fed_it = fed.find({id.node, id.port});
    if (fed_it != fed.end()) {
      src = fed_it->second;
      port = 0;
    }
    NodeDef retval;
    retval.name = graph->NewName(StrCat("_retval/", id.node, "_", id.port));
    retval.op = "_Retval";
    retval.device = src->requested_device();
    retval.attrs["T"] = src->output_type(port);
    retval.attrs["index"] = static_cast<int64_t>(i);
    WEIR_ASSIGN_OR_RETURN(Node * retval_node, graph->AddNode(std::move(retval)));
    graph->AddEdge(src, port, retval_node, 0);
    roots.push_back(retval_node);
    step.protected_nodes.insert(src->name());
    step.protected_nodes.insert(retval_node->name());
  }
  for (const std::string& target : signature.targets) {
    Node* node = graph->FindNode(target);
    if (node == nullptr) {
      StatusOr<TensorId> id = ParseTensorName(target);
      if (id.ok() && id->port == 0) node = graph->FindNode(id->node);
    }
    if (node == nullptr) {
      return errors::NotFound("target '", target, "' names no node in the graph");
    }
    roots.push_back(node);
    step.protected_nodes.insert(node->name());
  }
  if (roots.empty()) {
    return errors::InvalidArgument("Run needs at least one fetch or target");
  }
  step.pruned = PruneToRoots(graph, roots);
  for (Node* retval : roots) {
    if (retval->type_string() != "_Retval") continue;
    Node* read = retval->input_edge(0)->src();
    auto at_end = read->def().attrs.find(kFetchAtStepEndAttr);
    if (read->type_string() == "ReadVariableOp" && at_end != read->def().attrs.end() &&
        at_end->second.is_b() && at_end->second.b()) {
      WEIR_RETURN_IF_ERROR(ReadFetchedVariableAtStepEnd(graph, read, retval, &step));
    }
  }
  return step;
}

}  // namespace weir
