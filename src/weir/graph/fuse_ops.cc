#include "weir/graph/fuse_ops.h"

#include <string>
#include <utility>
#include <vector>

#include "weir/framework/attr_value.h"
#include "weir/framework/device_name.h"
#include "weir/framework/kernel_registry.h"

namespace weir {
namespace {

// Whether `node`'s only consumer is input `input` of `next` (no other data
// or control edge leaves it).
bool OnlyFeeds(const Node* node, const Node* next, int input = 0) {
  const std::vector<Edge*>& out = node->out_edges();
  return out.size() == 1 && !out[0]->IsControlEdge() && out[0]->dst() == next &&
         out[0]->dst_input() == input && out[0]->src_output() == 0;
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

// The source of data input `i` of `node`, if connected.
bool InputOf(const Node* node, int i, SavedEdge* source) {
  const Edge* e = node->input_edge(i);
  if (e == nullptr) return false;
  *source = {e->src(), e->src_output()};
  return true;
}

// Whether every node of `chain` is on one device with one output dtype,
// and that device has a kernel for `def`.
bool Fusable(const std::vector<Node*>& chain, const NodeDef& def) {
  const std::string& device = chain[0]->assigned_device();
  for (const Node* node : chain) {
    if (node->assigned_device() != device || node->output_type(0) != chain[0]->output_type(0)) {
      return false;
    }
  }
  StatusOr<DeviceName> parsed = DeviceName::Parse(device);
  return parsed.ok() && parsed->has_type && KernelRegistry::Global()->HasKernel(parsed->type, def);
}

// Replaces `chain` (each node feeding only the next) by one node for
// `def`, named after the chain's last node, reading `inputs`; it takes over
// the chain's control inputs and whatever read the last node.
Status ReplaceChain(Graph* graph, const std::vector<Node*>& chain, NodeDef def,
                    const std::vector<SavedEdge>& inputs) {
  const Node* last = chain.back();
  def.name = last->name();
  def.device = chain[0]->requested_device();
  const std::string device = chain[0]->assigned_device();  // outlives the chain
  const std::vector<PartialShape> shapes = {last->output_shape(0)};
  std::vector<Node*> control_inputs;
  for (const Node* node : chain) {
    for (const Edge* e : node->in_edges()) {
      if (e->IsControlEdge()) control_inputs.push_back(e->src());
    }
  }
  std::vector<SavedEdge> consumers;  // (dst, dst_input); kControlSlot for control
  for (const Edge* e : last->out_edges()) {
    consumers.push_back({e->dst(), e->IsControlEdge() ? Edge::kControlSlot : e->dst_input()});
  }

  for (Node* node : chain) graph->RemoveNode(node);
  WEIR_ASSIGN_OR_RETURN(Node * fused, graph->AddNode(std::move(def)));
  fused->set_assigned_device(device);
  fused->set_output_shapes(shapes);
  for (int i = 0; i < static_cast<int>(inputs.size()); ++i) {
    graph->AddEdge(inputs[i].node, inputs[i].slot, fused, i);
  }
  for (Node* src : control_inputs) graph->AddControlEdge(src, fused);
  for (const SavedEdge& c : consumers) {
    if (c.slot == Edge::kControlSlot) {
      graph->AddControlEdge(fused, c.node);
    } else {
      graph->AddEdge(fused, 0, c.node, c.slot);
    }
  }
  return Status::OK();
}

// Whether `bias` has the shape [out_channels] of the NHWC Conv2D `conv`
// (as inferred at import), so that adding it to the convolution (Add,
// AddV2) broadcasts exactly as BiasAdd does.
bool AddsBias(const Node* conv, const SavedEdge& bias) {
  const PartialShape& image = conv->output_shape(0);
  const PartialShape& addend = bias.node->output_shape(bias.slot);
  return image.rank() == 4 && image.dim(3) != PartialShape::kUnknown && addend.rank() == 1 &&
         addend.dim(0) == image.dim(3);
}

// Conv2D -> BiasAdd [-> Relu] from the BiasAdd `bias_add`, or Conv2D ->
// Add/AddV2 of a bias [-> Relu] from the addition; false if it doesn't
// match.
StatusOr<bool> FuseConvAt(Graph* graph, Node* bias_add) {
  SavedEdge conv_out, bias;
  if (!InputOf(bias_add, 0, &conv_out) || !InputOf(bias_add, 1, &bias)) return false;
  int conv_input = 0;
  if (bias_add->type_string() != "BiasAdd" && conv_out.node->type_string() != "Conv2D") {
    std::swap(conv_out, bias);  // bias + conv
    conv_input = 1;
  }
  Node* conv = conv_out.node;
  if (conv->type_string() != "Conv2D" || !OnlyFeeds(conv, bias_add, conv_input)) return false;
  if (!IsNhwc(conv)) return false;
  if (bias_add->type_string() == "BiasAdd" ? !IsNhwc(bias_add) : !AddsBias(conv, bias)) {
    return false;
  }
  SavedEdge image, filter;
  if (!InputOf(conv, 0, &image) || !InputOf(conv, 1, &filter)) return false;
  Node* relu = OnlyRelu(bias_add);
  std::vector<Node*> chain = {conv, bias_add};
  if (relu != nullptr) chain.push_back(relu);

  NodeDef def;
  def.op = "_FusedConv2D";
  def.attrs = conv->def().attrs;
  def.attrs["num_args"] = int64_t{1};
  def.attrs["fused_ops"] = relu != nullptr ? std::vector<std::string>{"BiasAdd", "Relu"}
                                           : std::vector<std::string>{"BiasAdd"};
  if (!Fusable(chain, def)) return false;
  WEIR_RETURN_IF_ERROR(ReplaceChain(graph, chain, std::move(def), {image, filter, bias}));
  return true;
}

// MaxPoolGrad -> ReluGrad from the ReluGrad `relu_grad`, when the Relu's
// output (ReluGrad's features) is the pool's own input.
StatusOr<bool> FuseMaxPoolGradAt(Graph* graph, Node* relu_grad) {
  SavedEdge pool_grad_out, features;
  if (!InputOf(relu_grad, 0, &pool_grad_out) || !InputOf(relu_grad, 1, &features)) return false;
  Node* pool_grad = pool_grad_out.node;
  if (pool_grad->type_string() != "MaxPoolGrad" || !OnlyFeeds(pool_grad, relu_grad)) return false;
  if (!IsNhwc(pool_grad)) return false;
  SavedEdge orig_input, orig_output, grad;
  if (!InputOf(pool_grad, 0, &orig_input) || !InputOf(pool_grad, 1, &orig_output) ||
      !InputOf(pool_grad, 2, &grad)) {
    return false;
  }
  if (orig_input.node != features.node || orig_input.slot != features.slot) return false;

  NodeDef def;
  def.op = "_FusedMaxPoolGrad";
  def.attrs = pool_grad->def().attrs;
  def.attrs["fused_ops"] = std::vector<std::string>{"ReluGrad"};
  const std::vector<Node*> chain = {pool_grad, relu_grad};
  if (!Fusable(chain, def)) return false;
  WEIR_RETURN_IF_ERROR(ReplaceChain(graph, chain, std::move(def), {orig_input, orig_output, grad}));
  return true;
}

// The constant scalar int behind `value` (a Const, or a Const entered into
// a loop frame); false when it is not one.
bool ConstantInt(SavedEdge value, int64_t* out) {
  while (value.node->type_string() == "Enter" && InputOf(value.node, 0, &value)) {
  }
  if (value.node->type_string() != "Const") return false;
  auto it = value.node->def().attrs.find("value");
  if (it == value.node->def().attrs.end() || !it->second.is_tensor()) return false;
  const Tensor& t = it->second.tensor();
  if (t.NumElements() != 1) return false;
  if (t.dtype() == DT_INT32) {
    *out = t.data<int32_t>()[0];
  } else if (t.dtype() == DT_INT64) {
    *out = t.data<int64_t>()[0];
  } else {
    return false;
  }
  return true;
}

// AddV2(acc, MatMul(x, dy, transpose_a)) from the AddV2 `add`, where x may
// be a ConcatV2 along axis 1 that only the product reads (then its inputs
// become the fused op's pieces of x). The fused kernel broadcasts acc as
// AddV2 does, so shapes need not be known here.
StatusOr<bool> FuseMatMulAccumulateAt(Graph* graph, Node* add) {
  SavedEdge acc, product_out;
  if (!InputOf(add, 0, &acc) || !InputOf(add, 1, &product_out)) return false;
  int product_input = 1;
  if (product_out.node->type_string() != "MatMul") {
    std::swap(acc, product_out);  // product + acc
    product_input = 0;
  }
  Node* product = product_out.node;
  if (product->type_string() != "MatMul" || !OnlyFeeds(product, add, product_input)) return false;
  if (product->output_type(0) != DT_FLOAT) return false;
  bool transpose_a = false, transpose_b = true;
  if (!GetAttr(product->def().attrs, "transpose_a", &transpose_a).ok() || !transpose_a ||
      !GetAttr(product->def().attrs, "transpose_b", &transpose_b).ok() || transpose_b) {
    return false;
  }
  if (acc.node->output_type(acc.slot) != DT_FLOAT) return false;
  SavedEdge x, dy;
  if (!InputOf(product, 0, &x) || !InputOf(product, 1, &dy)) return false;
  std::vector<Node*> chain = {product, add};
  std::vector<SavedEdge> inputs = {acc, x, dy};
  Node* concat = x.node;
  int64_t axis = 0;
  SavedEdge axis_in;
  if (concat->type_string() == "ConcatV2" && x.slot == 0 && OnlyFeeds(concat, product) &&
      concat->num_inputs() >= 2 && InputOf(concat, concat->num_inputs() - 1, &axis_in) &&
      ConstantInt(axis_in, &axis) && (axis == 1 || axis == -1)) {
    inputs = {acc};
    bool connected = true;
    for (int i = 0; i + 1 < concat->num_inputs(); ++i) {
      SavedEdge piece;
      connected = connected && InputOf(concat, i, &piece);
      inputs.push_back(piece);
    }
    inputs.push_back(dy);
    if (!connected) return false;
    chain.insert(chain.begin(), concat);
  }

  NodeDef def;
  def.op = "_MatMulAccumulate";
  def.attrs["T"] = DT_FLOAT;
  def.attrs["N"] = static_cast<int64_t>(inputs.size() - 2);
  if (!Fusable(chain, def)) return false;
  WEIR_RETURN_IF_ERROR(ReplaceChain(graph, chain, std::move(def), inputs));
  return true;
}

// Calls fuse(graph, node) on every live node of type `op`; returns the
// number of fusions.
template <typename Fuse>
StatusOr<int> FuseEach(Graph* graph, const std::string& op, const Fuse& fuse) {
  int fused = 0;
  // By id, as fusing removes nodes; fused nodes get new ids at the end.
  for (int id = 0; id < graph->num_node_ids(); ++id) {
    Node* node = graph->FindNodeId(id);
    if (node == nullptr || node->type_string() != op) continue;
    WEIR_ASSIGN_OR_RETURN(bool done, fuse(graph, node));
    fused += done;
  }
  return fused;
}

}  // namespace

StatusOr<int> FuseConvBiasRelu(Graph* graph) {
  int fused = 0;
  for (const char* op : {"BiasAdd", "AddV2", "Add"}) {
    WEIR_ASSIGN_OR_RETURN(int n, FuseEach(graph, op, FuseConvAt));
    fused += n;
  }
  return fused;
}

StatusOr<int> FuseMaxPoolGradReluGrad(Graph* graph) {
  return FuseEach(graph, "ReluGrad", FuseMaxPoolGradAt);
}

StatusOr<int> FuseMatMulAccumulate(Graph* graph) {
  return FuseEach(graph, "AddV2", FuseMatMulAccumulateAt);
}

StatusOr<int> FuseKernels(Graph* graph) {
  WEIR_ASSIGN_OR_RETURN(int convs, FuseConvBiasRelu(graph));
  WEIR_ASSIGN_OR_RETURN(int pools, FuseMaxPoolGradReluGrad(graph));
  WEIR_ASSIGN_OR_RETURN(int products, FuseMatMulAccumulate(graph));
  return convs + pools + products;
}

}  // namespace weir
