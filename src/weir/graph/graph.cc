#include "weir/graph/graph.h"

#include <algorithm>

#include "weir/base/logging.h"
#include "weir/framework/node_def_util.h"

namespace weir {

const Edge* Node::input_edge(int index) const {
  for (const Edge* e : in_edges_) {
    if (e->dst_input() == index) return e;
  }
  return nullptr;
}

std::vector<const Edge*> Node::data_inputs() const {
  std::vector<const Edge*> inputs(num_inputs(), nullptr);
  for (const Edge* e : in_edges_) {
    if (!e->IsControlEdge()) inputs[e->dst_input()] = e;
  }
  return inputs;
}

StatusOr<Node*> Graph::AddNode(NodeDef def) {
  if (def.name.empty()) return errors::InvalidArgument("a node of op ", def.op, " has no name");
  if (by_name_.count(def.name)) {
    return errors::InvalidArgument("duplicate node name '", def.name, "'");
  }
  WEIR_ASSIGN_OR_RETURN(const OpDef* op, OpRegistry::Global()->LookUp(def.op));
  AddDefaultAttrs(*op, &def);
  WEIR_RETURN_IF_ERROR(ValidateNodeAttrs(*op, def));
  auto node = std::make_unique<Node>();
  WEIR_RETURN_IF_ERROR(InOutTypesForNode(*op, def, &node->input_types_, &node->output_types_));
  def.inputs.clear();
  node->id_ = static_cast<int>(nodes_.size());
  node->def_ = std::move(def);
  node->op_def_ = op;
  node->output_shapes_.resize(node->output_types_.size());
  Node* raw = node.get();
  by_name_[raw->name()] = raw;
  nodes_.push_back(std::move(node));
  ++num_nodes_;
  return raw;
}

const Edge* Graph::AddEdge(Node* src, int src_output, Node* dst, int dst_input) {
  CHECK(src != nullptr && dst != nullptr);
  CHECK((src_output == Edge::kControlSlot) == (dst_input == Edge::kControlSlot));
  auto edge = std::make_unique<Edge>();
  edge->src_ = src;
  edge->dst_ = dst;
  edge->src_output_ = src_output;
  edge->dst_input_ = dst_input;
  edge->id_ = static_cast<int>(edges_.size());
  Edge* raw = edge.get();
  src->out_edges_.push_back(raw);
  dst->in_edges_.push_back(raw);
  edges_.push_back(std::move(edge));
  ++num_edges_;
  return raw;
}

const Edge* Graph::AddControlEdge(Node* src, Node* dst) {
  for (const Edge* e : dst->in_edges_) {
    if (e->IsControlEdge() && e->src() == src) return e;
  }
  return AddEdge(src, Edge::kControlSlot, dst, Edge::kControlSlot);
}

void Graph::RemoveEdge(const Edge* edge) {
  auto erase = [edge](std::vector<Edge*>& list) {
    list.erase(std::find(list.begin(), list.end(), edge));
  };
  erase(edge->src()->out_edges_);
  erase(edge->dst()->in_edges_);
  edges_[edge->id()].reset();
  --num_edges_;
}

void Graph::RemoveNode(Node* node) {
  while (!node->in_edges_.empty()) RemoveEdge(node->in_edges_.back());
  while (!node->out_edges_.empty()) RemoveEdge(node->out_edges_.back());
  by_name_.erase(node->name());
  nodes_[node->id()].reset();
  --num_nodes_;
}

Node* Graph::FindNode(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? nullptr : it->second;
}

std::vector<Node*> Graph::nodes() const {
  std::vector<Node*> out;
  out.reserve(num_nodes_);
  for (const auto& node : nodes_) {
    if (node) out.push_back(node.get());
  }
  return out;
}

std::string Graph::NewName(std::string_view prefix) {
  std::string base(prefix);
  if (!by_name_.count(base) && !name_counters_.count(base)) {
    name_counters_[base] = 0;
    return base;
  }
  int& counter = name_counters_[base];
  std::string name;
  do {
    name = StrCat(base, "_", ++counter);
  } while (by_name_.count(name));
  return name;
}

GraphDef Graph::ToGraphDef() const {
  GraphDef def;
  def.producer = producer_;
  for (const auto& node : nodes_) {
    if (!node) continue;
    NodeDef nd = node->def_;
    nd.inputs.clear();
    for (const Edge* e : node->data_inputs()) {
      if (e == nullptr) continue;  // unconnected slot; import reports it
      nd.inputs.push_back(TensorId{e->src()->name(), e->src_output()}.ToString());
    }
    for (const Edge* e : node->in_edges_) {
      if (e->IsControlEdge()) nd.inputs.push_back("^" + e->src()->name());
    }
    def.nodes.push_back(std::move(nd));
  }
  return def;
}

void Graph::CopyFrom(const Graph& other) {
  nodes_.clear();
  edges_.clear();
  by_name_.clear();
  name_counters_ = other.name_counters_;
  num_nodes_ = num_edges_ = 0;
  producer_ = other.producer_;
  std::vector<Node*> map(other.num_node_ids(), nullptr);
  for (const Node* src : other.nodes()) {
    auto node = std::make_unique<Node>(*src);
    node->in_edges_.clear();
    node->out_edges_.clear();
    node->id_ = static_cast<int>(nodes_.size());
    map[src->id()] = node.get();
    by_name_[node->name()] = node.get();
    nodes_.push_back(std::move(node));
    ++num_nodes_;
  }
  for (const auto& edge : other.edges_) {
    if (!edge) continue;
    AddEdge(map[edge->src()->id()], edge->src_output(), map[edge->dst()->id()],
            edge->dst_input());
  }
}

}  // namespace weir
