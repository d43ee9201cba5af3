#include "weir/graph/fuse_ops.h"

#include <string>
#include <vector>

#include "weir/framework/attr_value.h"
#include "weir/framework/device_name.h"
#include "weir/framework/kernel_registry.h"

namespace weir {
namespace {

// Whether `node`'s only consumer is input 0 of `next` (no other data or
// control edge leaves it).
bool OnlyFeeds(const Node* node, const Node* next) {
  const std::vector<Edge*>& out = node->out_edges();
  return out.size() == 1 && !out[0]->IsControlEdge() && out[0]->dst() == next &&
         out[0]->dst_input() == 0 && out[0]->src_output() == 0;
}

bool IsNhwc(const Node* node) {
  std::string format = "NHWC";
  Status status = GetAttr(node->def().attrs, "data_format", &format);
  return status.ok() && format == "NHWC";
}

// The consumer of `node`'s output 0 when it is a Relu and the only one.
Node* OnlyRelu(const Node* node) {
  const std::vector<Edge*>& out = node->out_edges();
  if (out.size() != 1) return nullptr;
  Node* next = out[0]->dst();
  return next->type_string() == "Relu" && OnlyFeeds(node, next) ? next : nullptr;
}

struct SavedEdge {
  Node* node;
  int slot;
};

}  // namespace

StatusOr<int> FuseConvBiasRelu(Graph* graph) {
  int fused = 0;
  // By id, as fusing removes nodes; fused nodes get new ids at the end.
  for (int id = 0; id < graph->num_node_ids(); ++id) {
    Node* bias_add = graph->FindNodeId(id);
    if (bias_add == nullptr || bias_add->type_string() != "BiasAdd") continue;
    const Edge* conv_edge = bias_add->input_edge(0);
    if (conv_edge == nullptr) continue;
    Node* conv = conv_edge->src();
    if (conv->type_string() != "Conv2D" || !OnlyFeeds(conv, bias_add)) continue;
    if (!IsNhwc(conv) || !IsNhwc(bias_add)) continue;
    Node* relu = OnlyRelu(bias_add);
    Node* last = relu != nullptr ? relu : bias_add;
    const std::string device = conv->assigned_device();  // outlives `conv`
    if (bias_add->assigned_device() != device || last->assigned_device() != device) continue;
    if (bias_add->output_type(0) != conv->output_type(0) ||
        last->output_type(0) != conv->output_type(0)) {
      continue;
    }
    StatusOr<DeviceName> parsed = DeviceName::Parse(device);
    if (!parsed.ok() || !parsed->has_type) continue;

    NodeDef def;
    def.name = last->name();
    def.op = "_FusedConv2D";
    def.device = conv->requested_device();
    def.attrs = conv->def().attrs;
    def.attrs["num_args"] = int64_t{1};
    def.attrs["fused_ops"] = relu != nullptr ? std::vector<std::string>{"BiasAdd", "Relu"}
                                             : std::vector<std::string>{"BiasAdd"};
    if (!KernelRegistry::Global()->HasKernel(parsed->type, def)) continue;

    // Inputs: the convolution's image and filter, the bias; control inputs
    // of every node of the chain. Outputs: whatever read the last node.
    const Edge* bias_edge = bias_add->input_edge(1);
    if (bias_edge == nullptr) continue;
    std::vector<SavedEdge> inputs;
    for (int i = 0; i < 2; ++i) {
      const Edge* e = conv->input_edge(i);
      if (e == nullptr) break;
      inputs.push_back({e->src(), e->src_output()});
    }
    if (inputs.size() != 2) continue;
    inputs.push_back({bias_edge->src(), bias_edge->src_output()});
    std::vector<Node*> control_inputs;
    for (Node* node : {conv, bias_add, relu}) {
      if (node == nullptr) continue;
      for (const Edge* e : node->in_edges()) {
        if (e->IsControlEdge()) control_inputs.push_back(e->src());
      }
    }
    std::vector<SavedEdge> consumers;  // (dst, dst_input); kControlSlot for control
    for (const Edge* e : last->out_edges()) {
      consumers.push_back({e->dst(), e->IsControlEdge() ? Edge::kControlSlot : e->dst_input()});
    }
    const std::vector<PartialShape> shapes = {last->output_shape(0)};

    graph->RemoveNode(conv);
    graph->RemoveNode(bias_add);
    if (relu != nullptr) graph->RemoveNode(relu);
    WEIR_ASSIGN_OR_RETURN(Node * node, graph->AddNode(std::move(def)));
    node->set_assigned_device(device);
    node->set_output_shapes(shapes);
    for (int i = 0; i < static_cast<int>(inputs.size()); ++i) {
      graph->AddEdge(inputs[i].node, inputs[i].slot, node, i);
    }
    for (Node* src : control_inputs) graph->AddControlEdge(src, node);
    for (const SavedEdge& c : consumers) {
      if (c.slot == Edge::kControlSlot) {
        graph->AddControlEdge(node, c.node);
      } else {
        graph->AddEdge(node, 0, c.node, c.slot);
      }
    }
    ++fused;
  }
  return fused;
}

}  // namespace weir
