// One node expanded as ExpandFunctions would, without touching the rest of
// the graph: the node is copied into a scratch graph with stand-ins for its
// inputs, control inputs and consumers, ExpandFunctions runs there (so
// nesting, recursion checks and the lowering are exactly the compiler's),
// and the result is spliced back in place of the node.
#include "weir/graph/expand_node.h"

#include <unordered_map>
#include <utility>

#include "weir/graph/function_inline.h"
#include "weir/graph/function_library.h"
#include "weir/graph/lower_functional_ops.h"

namespace weir {
namespace {

using Tensor2 = std::pair<Node*, int>;

std::vector<PartialShape> OutputShapes(const Node& node) {
  std::vector<PartialShape> shapes;
  for (int i = 0; i < node.num_outputs(); ++i) shapes.push_back(node.output_shape(i));
  return shapes;
}

NodeDef Detached(const Node& node) {
  NodeDef def = node.def();
  def.inputs.clear();
  return def;
}

}  // namespace

bool NeedsFunctionExpansion(const Graph& graph, const Node& node) {
  return IsFunctionCall(graph, node) || IsFunctionalControlFlow(node) ||
         node.type_string() == "SymbolicGradient";
}

Status ExpandFunctionalNode(Graph* graph, Node* node, const ExpandFunctionsOptions& options) {
  const std::string name = node->name();
  const std::string described = node->Describe();
  const std::string location = node->def().source_location;
  Graph scratch;
  *scratch.mutable_function_library() = graph->function_library();
  // Stand-in names cannot start with the node's name, so they never clash
  // with what the expansion adds ("<name>/...", "<name>_inlined_k/...").
  const std::string tag = std::string(name[0] == 'z' ? "y" : "z") + "__expand_";
  auto add = [&](NodeDef def) -> StatusOr<Node*> {
    StatusOr<Node*> added = scratch.AddNode(std::move(def));
    if (!added.ok()) return added.status().WithContext("expanding node " + described);
    return added;
  };
  // Names the graph already uses under the node's name are taken in the
  // scratch graph too, so the expansion picks free ones.
  std::unordered_map<int, int> reserved;  // scratch id -> 1
  for (Node* n : graph->nodes()) {
    if (n == node || !n->name().starts_with(name)) continue;
    NodeDef noop;
    noop.name = n->name();
    noop.op = "NoOp";
    WEIR_ASSIGN_OR_RETURN(Node * r, add(std::move(noop)));
    reserved[r->id()] = 1;
  }
  // Inputs: a Placeholder of the same dtype and shape per data input.
  std::vector<Tensor2> inputs(node->num_inputs());
  std::unordered_map<int, int> arg_of;  // scratch id -> input index
  WEIR_ASSIGN_OR_RETURN(Node * copy, add(Detached(*node)));
  copy->set_output_shapes(OutputShapes(*node));
  for (int i = 0; i < node->num_inputs(); ++i) {
    const Edge* e = node->input_edge(i);
    if (e == nullptr) {
      return errors::InvalidArgument("node ", described, ": input ", i, " is not connected");
    }
    inputs[i] = {e->src(), e->src_output()};
    NodeDef arg;
    arg.name = StrCat(tag, "arg_", i);
    arg.op = "Placeholder";
    arg.attrs["dtype"] = node->input_type(i);
    WEIR_ASSIGN_OR_RETURN(Node * a, add(std::move(arg)));
    a->set_output_shapes({e->src()->output_shape(e->src_output())});
    scratch.AddEdge(a, 0, copy, i);
    arg_of[a->id()] = i;
  }
  std::vector<Node*> control_sources;
  for (const Edge* e : node->control_inputs()) control_sources.push_back(e->src());
  Node* control_in = nullptr;
  if (!control_sources.empty()) {
    NodeDef noop;
    noop.name = tag + "control";
    noop.op = "NoOp";
    WEIR_ASSIGN_OR_RETURN(control_in, add(std::move(noop)));
    scratch.AddControlEdge(control_in, copy);
  }
  // Consumers: data consumers read the node of `node`'s name (below); a
  // NoOp stands in for the control consumers.
  struct OutEdge {
    Node* dst;
    int src_output;
    int dst_input;
  };
  std::vector<OutEdge> out_edges;
  Node* control_sink = nullptr;
  for (const Edge* e : node->out_edges()) {
    out_edges.push_back({e->dst(), e->src_output(), e->dst_input()});
    if (e->IsControlEdge() && control_sink == nullptr) {
      NodeDef sink;
      sink.name = tag + "control_sink";
      sink.op = "NoOp";
      WEIR_ASSIGN_OR_RETURN(control_sink, add(std::move(sink)));
      scratch.AddControlEdge(copy, control_sink);
    }
  }
  const int first_new = scratch.num_node_ids();
  WEIR_RETURN_IF_ERROR(ExpandFunctions(&scratch, options));

  // Every node the expansion added must be free in the graph (the node's
  // own name is, once it is removed).
  for (int id = first_new; id < scratch.num_node_ids(); ++id) {
    const Node* n = scratch.FindNodeId(id);
    if (n != nullptr && n->name() != name && graph->FindNode(n->name()) != nullptr) {
      return errors::Internal("expanding node ", described, " made node '", n->name(),
                              "', which the graph has already");
    }
  }
  graph->RemoveNode(node);
  node = nullptr;
  std::unordered_map<int, Node*> copies;  // scratch id -> graph node
  std::unordered_map<int, Node*> arg_identities;  // input -> its Identity
  for (int id = first_new; id < scratch.num_node_ids(); ++id) {
    const Node* n = scratch.FindNodeId(id);
    if (n == nullptr) continue;
    NodeDef def = Detached(*n);
    // Errors in the body point at the call in the user's code.
    if (def.source_location.empty()) def.source_location = location;
    WEIR_ASSIGN_OR_RETURN(Node * added, graph->AddNode(std::move(def)));
    added->set_output_shapes(OutputShapes(*n));
    copies[id] = added;
  }
  // Where a scratch tensor lives in the graph; a control edge from the
  // control stand-in stands for one from each of the node's control inputs.
  auto sources = [&](const Edge* e, std::vector<Tensor2>* out) -> Status {
    const int id = e->src()->id();
    if (auto c = copies.find(id); c != copies.end()) {
      out->push_back({c->second, e->src_output()});
    } else if (auto a = arg_of.find(id); a != arg_of.end()) {
      const Tensor2& input = inputs[a->second];
      if (!e->IsControlEdge()) {
        out->push_back(input);
      } else {
        // What waits for an argument waits for an Identity of it, not for
        // the node that makes it: feeding that tensor then leaves the node
        // unneeded (a fed Placeholder must not run), and a Switch, which
        // runs on the untaken side too, gates only through its live output.
        Node*& identity = arg_identities[a->second];
        if (identity == nullptr) {
          NodeDef def;
          def.name = graph->NewName(StrCat(name, "/input_", a->second));
          def.op = "Identity";
          def.device = input.first->requested_device();
          def.attrs["T"] = input.first->output_type(input.second);
          WEIR_ASSIGN_OR_RETURN(identity, graph->AddNode(std::move(def)));
          graph->AddEdge(input.first, input.second, identity, 0);
          identity->set_output_shapes({input.first->output_shape(input.second)});
        }
        out->push_back({identity, Edge::kControlSlot});
      }
    } else if (control_in != nullptr && id == control_in->id() && e->IsControlEdge()) {
      for (Node* src : control_sources) out->push_back({src, Edge::kControlSlot});
    } else {
      return errors::Internal("expanding node ", described, ": node '", e->dst()->name(),
                              "' reads '", e->src()->name(), "', which is not part of it");
    }
    return Status::OK();
  };
  auto connect = [&](const Tensor2& src, bool control, Node* dst, int dst_input) {
    if (control || src.second == Edge::kControlSlot) {
      graph->AddControlEdge(src.first, dst);
    } else {
      graph->AddEdge(src.first, src.second, dst, dst_input);
    }
  };
  for (const auto& [id, added] : copies) {
    for (const Edge* e : scratch.FindNodeId(id)->in_edges()) {
      std::vector<Tensor2> srcs;
      WEIR_RETURN_IF_ERROR(sources(e, &srcs));
      for (const Tensor2& src : srcs) connect(src, e->IsControlEdge(), added, e->dst_input());
    }
  }
  // Data consumers read the node that now has `node`'s name (its IdentityN),
  // as they read `node` before: a feed of "node:i" still reaches them, and
  // the gradients of "node:i" are those of its consumers. (The step
  // compiler's own expansion, after feeds are in place, lets a pure call's
  // consumers read the body directly.)
  Node* named = graph->FindNode(name);
  for (const OutEdge& out : out_edges) {
    if (out.src_output != Edge::kControlSlot) {
      if (named == nullptr || out.src_output >= named->num_outputs()) {
        return errors::Internal("expanding node ", described, ": no output ", out.src_output,
                                " of '", name, "' after the expansion");
      }
      graph->AddEdge(named, out.src_output, out.dst, out.dst_input);
      continue;
    }
    for (const Edge* e : control_sink->in_edges()) {
      std::vector<Tensor2> srcs;
      WEIR_RETURN_IF_ERROR(sources(e, &srcs));
      for (const Tensor2& src : srcs) connect(src, true, out.dst, out.dst_input);
    }
  }
  return Status::OK();
}

}  // namespace weir
