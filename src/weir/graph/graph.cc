#include "weir/graph/graph.h"

#include <algorithm>

#include "weir/base/logging.h"
#include "weir/framework/node_def_util.h"
#include "weir/graph/function_library.h"

namespace weir {

namespace {

// Past this many in-edges a node keeps a hash set of its control sources,
// so that AddControlEdge's duplicate check stays O(1).
constexpr size_t kControlScanLimit = 16;

bool ById(const Edge* a, const Edge* b) { return a->id() < b->id(); }

// Every func attr (the f of a call, the branches of If, the body of While)
// must name a function of the graph's library (or a registered op, which
// TensorFlow also accepts there).
Status CheckFunctionAttrs(const FunctionLibrary& library, const NodeDef& def) {
  auto check = [&](const std::string& attr, const NameAttrList& func) -> Status {
    if (library.Find(func.name) != nullptr || OpRegistry::Global()->Find(func.name) != nullptr) {
      return Status::OK();
    }
    return errors::InvalidArgument("node ", def.Describe(), ": attr '", attr,
                                   "' names function '", func.name,
                                   "', which is not in the graph's function library");
  };
  return ForEachFunctionAttr(def.attrs, check);
}

// Makes room for one more element with geometric growth, so that the
// push_back that follows cannot throw: a failed allocation then leaves the
// graph as it was.
template <typename T>
void ReserveOneMore(std::vector<T>* list) {
  if (list->size() == list->capacity()) list->reserve(std::max<size_t>(8, 2 * list->size()));
}

}  // namespace

const HandleData& Node::output_handle_data(int i) const {
  static const HandleData* const kNone = new HandleData();
  return i < static_cast<int>(output_handle_data_.size()) ? output_handle_data_[i] : *kNone;
}

const Edge* Node::input_edge(int index) const {
  if (index < 0 || index >= static_cast<int>(data_in_.size())) return nullptr;
  return data_in_[index];
}

std::vector<const Edge*> Node::data_inputs() const {
  return std::vector<const Edge*>(data_in_.begin(), data_in_.end());
}

std::vector<const Edge*> Node::control_inputs() const {
  std::vector<const Edge*> out;
  for (const Edge* e : in_edges_) {
    if (e->IsControlEdge()) out.push_back(e);
  }
  // Ids grow with insertion; removals may have reordered in_edges_.
  if (!std::is_sorted(out.begin(), out.end(), ById)) std::sort(out.begin(), out.end(), ById);
  return out;
}

StatusOr<Node*> Graph::AddNode(NodeDef def) {
  if (def.name.empty()) return errors::InvalidArgument("a node of op ", def.op, " has no name");
  // One hash lookup claims the name; a failure below releases it.
  auto [slot, inserted] = by_name_.try_emplace(def.name, nullptr);
  if (!inserted) return errors::InvalidArgument("duplicate node name '", def.name, "'");
  struct Release {
    std::unordered_map<std::string, Node*, NameHash, std::equal_to<>>* names;
    decltype(slot) entry;
    bool keep = false;
    ~Release() {
      if (!keep) names->erase(entry);
    }
  } release{&by_name_, slot};
  // A registered op, or a call of one of the graph's functions.
  WEIR_ASSIGN_OR_RETURN(const OpDef* op, function_library_->LookUpOp(def.op));
  AddDefaultAttrs(*op, &def);
  WEIR_RETURN_IF_ERROR(ValidateNodeAttrs(*op, def));
  WEIR_RETURN_IF_ERROR(CheckFunctionAttrs(*function_library_, def));
  auto node = std::make_unique<Node>();
  WEIR_RETURN_IF_ERROR(InOutTypesForNode(*op, def, &node->input_types_, &node->output_types_));
  def.inputs.clear();
  node->id_ = static_cast<int>(nodes_.size());
  node->def_ = std::make_shared<NodeDef>(std::move(def));
  node->op_def_ = op;
  node->output_shapes_.resize(node->output_types_.size());
  node->data_in_.assign(node->input_types_.size(), nullptr);
  Node* raw = node.get();
  ReserveOneMore(&nodes_);
  slot->second = raw;
  release.keep = true;
  nodes_.push_back(std::move(node));
  ++num_nodes_;
  return raw;
}

const Edge* Graph::AddEdge(Node* src, int src_output, Node* dst, int dst_input) {
  CHECK(src != nullptr && dst != nullptr);
  CHECK((src_output == Edge::kControlSlot) == (dst_input == Edge::kControlSlot));
  if (dst_input != Edge::kControlSlot) {
    CHECK(dst_input >= 0 && dst_input < dst->num_inputs())
        << "input " << dst_input << " of " << dst->Describe() << " out of range";
    CHECK(dst->data_in_[dst_input] == nullptr)
        << "input " << dst_input << " of " << dst->Describe() << " connected twice";
  }
  auto edge = std::make_unique<Edge>();
  edge->src_ = src;
  edge->dst_ = dst;
  edge->src_output_ = src_output;
  edge->dst_input_ = dst_input;
  edge->id_ = static_cast<int>(edges_.size());
  edge->out_pos_ = static_cast<int>(src->out_edges_.size());
  edge->in_pos_ = static_cast<int>(dst->in_edges_.size());
  Edge* raw = edge.get();
  // Everything that can throw comes before the first change.
  ReserveOneMore(&src->out_edges_);
  ReserveOneMore(&dst->in_edges_);
  ReserveOneMore(&edges_);
  if (dst_input != Edge::kControlSlot) {
    dst->data_in_[dst_input] = raw;
  } else if (dst->control_srcs_) {
    dst->control_srcs_->emplace(src->id(), raw);  // keeps an older duplicate
  }
  src->out_edges_.push_back(raw);
  dst->in_edges_.push_back(raw);
  edges_.push_back(std::move(edge));
  ++num_edges_;
  return raw;
}

const Edge* Graph::AddControlEdge(Node* src, Node* dst) {
  if (!dst->control_srcs_ && dst->in_edges_.size() <= kControlScanLimit) {
    for (const Edge* e : dst->in_edges_) {
      if (e->IsControlEdge() && e->src() == src) return e;
    }
    return AddEdge(src, Edge::kControlSlot, dst, Edge::kControlSlot);
  }
  if (!dst->control_srcs_) {
    auto sources = std::make_unique<std::unordered_map<int, Edge*>>();
    for (Edge* e : dst->in_edges_) {
      if (e->IsControlEdge()) sources->emplace(e->src()->id(), e);
    }
    dst->control_srcs_ = std::move(sources);
  }
  auto it = dst->control_srcs_->find(src->id());
  if (it != dst->control_srcs_->end()) return it->second;
  return AddEdge(src, Edge::kControlSlot, dst, Edge::kControlSlot);
}

void Graph::RemoveEdge(const Edge* edge) {
  Node* src = edge->src();
  Node* dst = edge->dst();
  // Swap-remove from both lists, fixing the moved edge's position.
  Edge* moved = src->out_edges_.back();
  src->out_edges_[edge->out_pos_] = moved;
  moved->out_pos_ = edge->out_pos_;
  src->out_edges_.pop_back();
  moved = dst->in_edges_.back();
  dst->in_edges_[edge->in_pos_] = moved;
  moved->in_pos_ = edge->in_pos_;
  dst->in_edges_.pop_back();
  if (!edge->IsControlEdge()) {
    dst->data_in_[edge->dst_input()] = nullptr;
  } else if (dst->control_srcs_) {
    auto it = dst->control_srcs_->find(src->id());
    if (it != dst->control_srcs_->end() && it->second == edge) dst->control_srcs_->erase(it);
  }
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

void Graph::RollBackTo(Mark mark) {
  // Newest first: each edge is then the last of both its lists, so the
  // older edges keep their positions.
  while (static_cast<int>(edges_.size()) > mark.edge_ids) {
    if (edges_.back()) RemoveEdge(edges_.back().get());
    edges_.pop_back();
  }
  while (num_node_ids() > mark.node_ids) {
    if (Node* node = nodes_.back().get()) {
      CHECK(node->in_edges_.empty() && node->out_edges_.empty());
      by_name_.erase(node->name());
      --num_nodes_;
    }
    nodes_.pop_back();
  }
}

Node* Graph::FindNode(std::string_view name) const {
  auto it = by_name_.find(name);
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

GraphDef Graph::ToGraphDef(int start_id) const {
  GraphDef def;
  def.producer = producer_;
  def.library = function_library_->ToLibrary();
  for (size_t id = std::max(start_id, 0); id < nodes_.size(); ++id) {
    const auto& node = nodes_[id];
    if (!node) continue;
    NodeDef nd = *node->def_;
    nd.inputs.clear();
    for (const Edge* e : node->data_inputs()) {
      if (e == nullptr) continue;  // unconnected slot; import reports it
      nd.inputs.push_back(TensorId{e->src()->name(), e->src_output()}.ToString());
    }
    for (const Edge* e : node->control_inputs()) nd.inputs.push_back("^" + e->src()->name());
    def.nodes.push_back(std::move(nd));
  }
  return def;
}

Graph::Graph() : function_library_(std::make_unique<FunctionLibrary>()) {}
Graph::~Graph() = default;

void Graph::CopyFrom(const Graph& other) {
  *function_library_ = *other.function_library_;
  nodes_.clear();
  edges_.clear();
  by_name_.clear();
  name_counters_ = other.name_counters_;
  num_nodes_ = num_edges_ = 0;
  producer_ = other.producer_;
  std::vector<Node*> map(other.num_node_ids(), nullptr);
  nodes_.reserve(other.num_nodes());
  by_name_.reserve(other.num_nodes());
  edges_.reserve(other.num_edges());
  for (const Node* src : other.nodes()) {
    auto node = std::make_unique<Node>();
    node->def_ = src->def_;
    node->op_def_ = src->op_def_;
    node->input_types_ = src->input_types_;
    node->output_types_ = src->output_types_;
    node->output_shapes_ = src->output_shapes_;
    node->output_handle_data_ = src->output_handle_data_;
    node->assigned_device_ = src->assigned_device_;
    node->data_in_.assign(src->data_in_.size(), nullptr);
    node->in_edges_.reserve(src->in_edges_.size());
    node->out_edges_.reserve(src->out_edges_.size());
    node->id_ = static_cast<int>(nodes_.size());
    map[src->id()] = node.get();
    by_name_[node->name()] = node.get();
    nodes_.push_back(std::move(node));
    ++num_nodes_;
  }
  for (const auto& edge : other.edges_) {
    if (!edge) continue;
    AddEdge(map[edge->src()->id()], edge->src_output(), map[edge->dst()->id()], edge->dst_input());
  }
}

}  // namespace weir
