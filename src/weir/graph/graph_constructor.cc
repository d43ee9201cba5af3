#include "weir/graph/graph_constructor.h"

#include <new>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include "weir/framework/shape_inference.h"
#include "weir/graph/algorithm.h"
#include "weir/graph/function_inline.h"
#include "weir/graph/function_library.h"
#include "weir/graph/ref_variables.h"

namespace weir {
namespace {

// TensorFlow's rule: [A-Za-z0-9.][A-Za-z0-9_./>-]*, with a leading '_'
// only for the runtime's own nodes.
bool IsValidNodeName(std::string_view name, bool allow_internal) {
  if (name.empty()) return false;
  auto ok_first = [&](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || (allow_internal && c == '_');
  };
  auto ok_rest = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ||
           c == '/' || c == '>';
  };
  if (!ok_first(name[0])) return false;
  for (char c : name) {
    if (!ok_rest(c)) return false;
  }
  return true;
}

// An input "node", "node:port" or "^node" as views into the NodeDef.
struct InputRef {
  std::string_view node;
  int port = 0;  // -1 for control inputs
  std::string storage;  // backs `node` when it had to be copied
};

// The common spellings of an input, without allocating: "^name", "name",
// "name:digits". False for anything else, which ParseTensorName then
// accepts or explains.
bool ParseInput(std::string_view text, InputRef* out) {
  if (text.empty()) return false;
  if (text[0] == '^') {
    std::string_view name = text.substr(1);
    if (name.empty() || name.find(':') != std::string_view::npos) return false;
    out->node = name;
    out->port = -1;
    return true;
  }
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    out->node = text;
    out->port = 0;
    return true;
  }
  std::string_view digits = text.substr(colon + 1);
  if (colon == 0 || digits.empty() || digits.size() > 9) return false;
  int port = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    port = port * 10 + (c - '0');
  }
  out->node = text.substr(0, colon);
  out->port = port;
  return true;
}

// The producer's OpDefs by name, built on first use.
class ProducerOps {
 public:
  explicit ProducerOps(const std::vector<OpDef>* list) : list_(list) {}
  bool available() const { return list_ != nullptr; }
  const OpDef* Find(const std::string& op) {
    if (by_name_.empty()) {
      for (const OpDef& def : *list_) by_name_.emplace(def.name, &def);
    }
    auto it = by_name_.find(op);
    return it == by_name_.end() ? nullptr : it->second;
  }

 private:
  const std::vector<OpDef>* list_;
  std::unordered_map<std::string_view, const OpDef*> by_name_;
};

// TensorFlow's forward-compatibility rule: removes from `attrs` each attr
// (not internal, '_') that `nd`'s op in Weir does not declare but whose
// value is the default of the producer's OpDef; any other undeclared attr
// is an error here, saying why it could not be dropped. An unknown op is
// left to AddNode, which says so.
Status DropNewDefaultAttrs(const NodeDef& nd, ProducerOps* producer, AttrMap* attrs) {
  const OpDef* op = OpRegistry::Global()->Find(nd.op);
  if (op == nullptr) return Status::OK();
  for (auto it = attrs->begin(); it != attrs->end();) {
    const std::string& name = it->first;
    if ((!name.empty() && name[0] == '_') || op->FindAttr(name) != nullptr) {
      ++it;
      continue;
    }
    auto fail = [&](auto&&... why) {
      return errors::InvalidArgument(
          "node ", nd.Describe(), " has attr '", name, "' (", it->second.DebugString(),
          "), which Weir's op ", nd.op, " does not declare; the graph may come from a newer "
          "producer, and the attr could not be dropped: ", why...);
    };
    if (!producer->available()) {
      return fail("no producer op list was given (TensorFlow drops such an attr only when "
                  "the producer's OpDef gives its value as the default)");
    }
    const OpDef* producer_op = producer->Find(nd.op);
    if (producer_op == nullptr) return fail("the producer's op list has no op ", nd.op);
    const AttrDef* producer_attr = producer_op->FindAttr(name);
    if (producer_attr == nullptr) {
      return fail("the producer's OpDef of ", nd.op, " does not declare it either");
    }
    if (!producer_attr->has_default) {
      return fail("the producer's OpDef of ", nd.op, " gives it no default");
    }
    if (!(producer_attr->default_value == it->second)) {
      return fail("its value differs from the producer's default ",
                  producer_attr->default_value.DebugString());
    }
    it = attrs->erase(it);
  }
  return Status::OK();
}

// The same rule in function bodies, as TensorFlow applies it to a library.
// A body node whose attr can't be dropped is left as it is: functions no
// step calls (savers, gradients) may carry anything, and instantiating the
// function reports it.
void DropNewDefaultAttrsInBodies(ProducerOps* producer, FunctionDefLibrary* library) {
  for (FunctionDef& function : library->functions) {
    for (NodeDef& node : function.node_def) {
      AttrMap attrs = node.attrs;
      if (DropNewDefaultAttrs(node, producer, &attrs).ok()) node.attrs = std::move(attrs);
    }
  }
}

}  // namespace

Status RemoveNewDefaultAttrs(const std::vector<OpDef>& producer_op_list, GraphDef* def) {
  ProducerOps producer(&producer_op_list);
  for (NodeDef& node : def->nodes) {
    WEIR_RETURN_IF_ERROR(DropNewDefaultAttrs(node, &producer, &node.attrs));
  }
  DropNewDefaultAttrsInBodies(&producer, &def->library);
  return Status::OK();
}

namespace {

// The node being imported, for errors raised where no node is at hand.
struct Progress {
  const NodeDef* node = nullptr;
  const char* phase = "reading the GraphDef";
};

// Does the import into `graph`; on error the caller rolls `graph` back.
Status Import(const GraphDef& def, const ImportGraphDefOptions& options, Graph* graph,
              Progress* progress) {
  WEIR_RETURN_IF_ERROR(CheckGraphDefVersions(def));
  ProducerOps producer(options.producer_op_list);
  // The functions first: nodes may call them.
  progress->phase = "adding the function library";
  if (!def.library.empty() && options.producer_op_list != nullptr) {
    FunctionDefLibrary library = def.library;
    DropNewDefaultAttrsInBodies(&producer, &library);
    WEIR_RETURN_IF_ERROR(graph->mutable_function_library()->AddLibrary(library));
  } else if (!def.library.empty()) {
    WEIR_RETURN_IF_ERROR(graph->mutable_function_library()->AddLibrary(def.library));
  }
  progress->phase = "adding nodes";
  std::vector<Node*> added;
  added.reserve(def.nodes.size());
  for (const NodeDef& nd : def.nodes) {
    progress->node = &nd;
    if (!IsValidNodeName(nd.name, options.allow_internal_ops)) {
      if (!nd.name.empty() && nd.name[0] == '_') {
        return errors::InvalidArgument("node name '", nd.name, "' (op ", nd.op,
                                       ") starts with '_', which is reserved for Weir's own "
                                       "nodes");
      }
      return errors::InvalidArgument("node name '", nd.name, "' (op ", nd.op,
                                     ") is not valid: use letters, digits and . _ - / >, "
                                     "starting with a letter, digit or '.'");
    }
    if (!options.allow_internal_ops && !nd.op.empty() && nd.op[0] == '_') {
      return errors::InvalidArgument("node ", nd.Describe(), " uses op ", nd.op,
                                     ", which is internal to Weir's runtime: ops whose names "
                                     "start with '_' may not appear in a user's graph");
    }
    // Without the inputs: they become edges, and a wide node's list of
    // names need not be copied.
    NodeDef copy;
    copy.name = nd.name;
    copy.op = nd.op;
    copy.device = nd.device;
    copy.attrs = nd.attrs;
    copy.source_location = nd.source_location;
    WEIR_RETURN_IF_ERROR(DropNewDefaultAttrs(nd, &producer, &copy.attrs));
    StatusOr<Node*> node = graph->AddNode(std::move(copy));
    if (!node.ok()) {
      if (errors::IsNotFound(node.status())) {
        return errors::NotFound("node ", nd.Describe(), ": ", node.status().message());
      }
      return node.status();
    }
    added.push_back(*node);
  }
  progress->phase = "connecting inputs";
  for (size_t k = 0; k < added.size(); ++k) {
    const NodeDef& nd = def.nodes[k];
    progress->node = &nd;
    Node* node = added[k];
    int data_inputs = 0;
    bool seen_control = false;
    for (const std::string& input : nd.inputs) {
      InputRef id;
      if (!ParseInput(input, &id)) {
        StatusOr<TensorId> parsed = ParseTensorName(input);
        if (!parsed.ok()) return parsed.status().WithContext("node " + nd.Describe());
        id.storage = std::move(parsed->node);
        id.node = id.storage;
        id.port = parsed->port;
      }
      Node* src = graph->FindNode(id.node);
      if (src == nullptr) {
        return errors::InvalidArgument("node ", nd.Describe(), " has input '", input,
                                       "' but no node named '", id.node, "' exists");
      }
      if (id.port < 0) {
        seen_control = true;
        graph->AddControlEdge(src, node);
        continue;
      }
      if (seen_control) {
        return errors::InvalidArgument("node ", nd.Describe(), " has data input '", input,
                                       "' after a control input");
      }
      if (id.port >= src->num_outputs()) {
        return errors::InvalidArgument("node ", nd.Describe(), " has input '", input, "' but ",
                                       src->Describe(), " has only ", src->num_outputs(),
                                       " outputs");
      }
      int slot = data_inputs++;
      if (slot >= node->num_inputs()) continue;  // counted and reported below
      DType got = src->output_type(id.port);
      DType want = node->input_type(slot);
      if (got != want) {
        return errors::InvalidArgument("input ", slot, " of node ", nd.Describe(),
                                       " was passed ", got, " from '", input, "' but expects ",
                                       want);
      }
      graph->AddEdge(src, id.port, node, slot);
    }
    if (data_inputs != node->num_inputs()) {
      return errors::InvalidArgument("node ", nd.Describe(), " has ", data_inputs,
                                     " data inputs but op ", nd.op, " expects ",
                                     node->num_inputs());
    }
  }
  progress->phase = "ordering nodes";
  progress->node = nullptr;
  WEIR_ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(*graph));
  progress->phase = "inferring shapes";
  const bool has_functions = graph->function_library().num_functions() > 0;
  // One budget and memo of call-shape instantiations for the whole import.
  FunctionShapeScope function_shapes;
  // Nodes added by this import have ids from the first one up.
  int first_new = added.empty() ? graph->num_node_ids() : added.front()->id();
  for (Node* node : order) {
    if (node->id() < first_new) continue;
    progress->node = &def.nodes[node->id() - first_new];
    WEIR_RETURN_IF_ERROR(InferShapes(node));
    // A call's shapes come from its function's body, which the op's shape
    // function cannot see.
    if (has_functions && IsFunctionCall(*graph, *node)) InferFunctionCallShapes(*graph, node);
  }
  if (def.producer != 0) graph->set_producer(def.producer);
  return Status::OK();
}

}  // namespace

Status CheckGraphDefVersions(const GraphDef& def) {
  if (def.producer < kGraphDefMinProducer) {
    return errors::InvalidArgument("GraphDef producer version ", def.producer,
                                   " below min producer ", kGraphDefMinProducer,
                                   " supported by Weir. Please regenerate your graph.");
  }
  if (def.min_consumer > kGraphDefVersion) {
    return errors::InvalidArgument("GraphDef min consumer version ", def.min_consumer,
                                   " above current version ", kGraphDefVersion,
                                   " for Weir. Please upgrade Weir.");
  }
  for (int bad : def.bad_consumers) {
    if (bad == kGraphDefVersion) {
      return errors::InvalidArgument("GraphDef disallows consumer version ", bad,
                                     ". Please upgrade Weir: this version is likely buggy.");
    }
  }
  return Status::OK();
}

Status ImportGraphDef(const GraphDef& def, Graph* graph, const ImportGraphDefOptions& options) {
  const Graph::Mark mark = graph->GetMark();
  // Entries are shared, so the copy is cheap; it restores the library when
  // the import fails after adding functions.
  std::optional<FunctionLibrary> library;
  if (!def.library.empty()) library = graph->function_library();
  Progress progress;
  Status status;
  // The core throws nothing, but the standard containers can: a hostile
  // graph must not end the process by exhausting memory.
  // Outlives the try: `progress` may point into it.
  std::optional<GraphDef> rewritten;
  try {
    if (HasRefVariableOps(def)) {
      // TensorFlow 1 reference variables run as resource variables.
      progress.phase = "rewriting reference variables";
      rewritten = def;
      status = RewriteRefVariables(&*rewritten, graph);
      if (status.ok()) status = Import(*rewritten, options, graph, &progress);
    } else {
      status = Import(def, options, graph, &progress);
    }
  } catch (const std::bad_alloc&) {
    status = errors::ResourceExhausted("out of memory importing the GraphDef (", def.nodes.size(),
                                       " nodes) while ", progress.phase,
                                       progress.node ? " at node " + progress.node->Describe() : "");
  } catch (const std::length_error&) {
    status = errors::ResourceExhausted("a container grew past its maximum size importing the "
                                       "GraphDef while ", progress.phase,
                                       progress.node ? " at node " + progress.node->Describe() : "");
  }
  if (!status.ok()) {
    graph->RollBackTo(mark);
    if (library) *graph->mutable_function_library() = std::move(*library);
  }
  return status;
}

Status InferShapes(Node* node) {
  std::vector<PartialShape> input_shapes(node->num_inputs());
  std::vector<const Tensor*> input_tensors(node->num_inputs(), nullptr);
  std::vector<HandleData> input_handle_data;
  for (const Edge* e : node->in_edges()) {
    if (e->IsControlEdge()) continue;
    input_shapes[e->dst_input()] = e->src()->output_shape(e->src_output());
    const HandleData& handle = e->src()->output_handle_data(e->src_output());
    if (!handle.empty()) {
      input_handle_data.resize(node->num_inputs());
      input_handle_data[e->dst_input()] = handle;
    }
    if (e->src()->type_string() == "Const") {
      auto it = e->src()->def().attrs.find("value");
      if (it != e->src()->def().attrs.end() && it->second.is_tensor()) {
        input_tensors[e->dst_input()] = &it->second.tensor();
      }
    }
  }
  std::vector<PartialShape> outputs(node->num_outputs());
  std::vector<HandleData> output_handle_data;
  const ShapeFn& fn = node->op_def().shape_fn;
  if (fn) {
    InferenceContext context(&node->def(), input_shapes, input_tensors, node->num_outputs(),
                             std::move(input_handle_data));
    Status status = fn(&context);
    if (!status.ok()) {
      return errors::InvalidArgument("shape inference failed for node ", node->Describe(),
                                     " with input shapes ", context.InputShapesString(), ": ",
                                     status.message());
    }
    outputs = context.TakeOutputs();
    output_handle_data = context.TakeOutputHandleData();
  }
  node->set_output_shapes(std::move(outputs));
  node->set_output_handle_data(std::move(output_handle_data));
  return Status::OK();
}

}  // namespace weir
