#include "weir/graph/graph_constructor.h"

#include <unordered_set>

#include "weir/framework/shape_inference.h"
#include "weir/graph/algorithm.h"

namespace weir {
namespace {

bool IsValidNodeName(std::string_view name) {
  if (name.empty()) return false;
  auto ok_first = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_'; };
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

// Does the import into `graph`; on error the caller restores the old graph.
Status Import(const GraphDef& def, Graph* graph) {
  std::vector<Node*> added;
  std::unordered_set<std::string> seen;
  for (const NodeDef& nd : def.nodes) {
    if (!IsValidNodeName(nd.name)) {
      return errors::InvalidArgument("node name '", nd.name, "' (op ", nd.op,
                                     ") is not valid: use letters, digits and . _ - /");
    }
    if (!seen.insert(nd.name).second || graph->FindNode(nd.name) != nullptr) {
      return errors::InvalidArgument("duplicate node name '", nd.name, "'");
    }
    StatusOr<Node*> node = graph->AddNode(nd);
    if (!node.ok()) {
      if (errors::IsNotFound(node.status())) {
        return errors::NotFound("node ", nd.Describe(), ": ", node.status().message());
      }
      return node.status();
    }
    added.push_back(*node);
  }
  for (size_t k = 0; k < added.size(); ++k) {
    const NodeDef& nd = def.nodes[k];
    Node* node = added[k];
    int data_inputs = 0;
    bool seen_control = false;
    for (const std::string& input : nd.inputs) {
      StatusOr<TensorId> id = ParseTensorName(input);
      if (!id.ok()) return id.status().WithContext("node " + nd.Describe());
      Node* src = graph->FindNode(id->node);
      if (src == nullptr) {
        return errors::InvalidArgument("node ", nd.Describe(), " has input '", input,
                                       "' but no node named '", id->node, "' exists");
      }
      if (id->port < 0) {
        seen_control = true;
        graph->AddControlEdge(src, node);
        continue;
      }
      if (seen_control) {
        return errors::InvalidArgument("node ", nd.Describe(), " has data input '", input,
                                       "' after a control input");
      }
      if (id->port >= src->num_outputs()) {
        return errors::InvalidArgument("node ", nd.Describe(), " has input '", input, "' but ",
                                       src->Describe(), " has only ", src->num_outputs(),
                                       " outputs");
      }
      int slot = data_inputs++;
      if (slot >= node->num_inputs()) continue;  // counted and reported below
      DType got = src->output_type(id->port);
      DType want = node->input_type(slot);
      if (got != want) {
        return errors::InvalidArgument("input ", slot, " of node ", nd.Describe(),
                                       " was passed ", got, " from '", input, "' but expects ",
                                       want);
      }
      graph->AddEdge(src, id->port, node, slot);
    }
    if (data_inputs != node->num_inputs()) {
      return errors::InvalidArgument("node ", nd.Describe(), " has ", data_inputs,
                                     " data inputs but op ", nd.op, " expects ",
                                     node->num_inputs());
    }
  }
  WEIR_ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(*graph));
  std::unordered_set<Node*> is_new(added.begin(), added.end());
  for (Node* node : order) {
    if (is_new.count(node)) WEIR_RETURN_IF_ERROR(InferShapes(node));
  }
  if (def.producer != 0) graph->set_producer(def.producer);
  return Status::OK();
}

}  // namespace

Status ImportGraphDef(const GraphDef& def, Graph* graph) {
  Graph backup;
  backup.CopyFrom(*graph);
  Status status = Import(def, graph);
  if (!status.ok()) graph->CopyFrom(backup);
  return status;
}

Status InferShapes(Node* node) {
  std::vector<PartialShape> input_shapes(node->num_inputs());
  std::vector<const Tensor*> input_tensors(node->num_inputs(), nullptr);
  for (const Edge* e : node->in_edges()) {
    if (e->IsControlEdge()) continue;
    input_shapes[e->dst_input()] = e->src()->output_shape(e->src_output());
    if (e->src()->type_string() == "Const") {
      auto it = e->src()->def().attrs.find("value");
      if (it != e->src()->def().attrs.end() && it->second.is_tensor()) {
        input_tensors[e->dst_input()] = &it->second.tensor();
      }
    }
  }
  std::vector<PartialShape> outputs(node->num_outputs());
  const ShapeFn& fn = node->op_def().shape_fn;
  if (fn) {
    InferenceContext context(&node->def(), input_shapes, input_tensors, node->num_outputs());
    Status status = fn(&context);
    if (!status.ok()) {
      return errors::InvalidArgument("shape inference failed for node ", node->Describe(),
                                     " with input shapes ", context.InputShapesString(), ": ",
                                     status.message());
    }
    outputs = context.TakeOutputs();
  }
  node->set_output_shapes(std::move(outputs));
  return Status::OK();
}

}  // namespace weir
