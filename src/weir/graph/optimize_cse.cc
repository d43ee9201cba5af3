#include "weir/graph/optimize_cse.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string_view>
#include <unordered_map>

#include "weir/base/str_util.h"
#include "weir/framework/attr_value.h"
#include "weir/graph/algorithm.h"
#include "weir/graph/op_kinds.h"

namespace weir {
namespace {

constexpr size_t kMaxChangeLines = 50;

// Ops whose identity matters beyond their value: feed points, loop and
// branch structure, grouping nodes, and the runtime's own plumbing.
bool IsNeverMerged(std::string_view op) {
  return IsControlFlowOp(op) || IsRuntimeOp(op) || IsPlaceholderOp(op) || op == "NoOp";
}

uint64_t Mix(uint64_t h, uint64_t v) {
  // splitmix64's finalizer over the running hash and the new word.
  uint64_t x = h ^ (v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2));
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  return x;
}

uint64_t HashString(std::string_view s) { return std::hash<std::string_view>()(s); }

uint64_t HashShape(const PartialShape& shape) {
  uint64_t h = Mix(0, shape.known_rank());
  if (!shape.known_rank()) return h;
  for (int64_t d : shape.dim_sizes()) h = Mix(h, static_cast<uint64_t>(d));
  return h;
}

// dtype, dims and a bounded sample of the contents (the first and last 256
// bytes): equal tensors hash equal, a large constant costs 512 bytes of
// reads, and the rare constants alike at both ends are told apart by the
// full comparison.
uint64_t HashTensor(const Tensor& t) {
  uint64_t h = Mix(static_cast<uint64_t>(t.dtype()), t.IsInitialized());
  for (int64_t d : t.shape().dim_sizes()) h = Mix(h, static_cast<uint64_t>(d));
  if (!t.IsInitialized() || t.NumElements() == 0) return h;
  if (t.dtype() == DT_STRING) {
    const std::string* s = t.data<std::string>();
    const int64_t n = std::min<int64_t>(t.NumElements(), 16);
    for (int64_t i = 0; i < n; ++i) h = Mix(h, HashString(s[i]));
    return h;
  }
  if (t.dtype() == DT_RESOURCE || t.dtype() == DT_VARIANT) return h;
  constexpr size_t kSample = 256;
  const char* bytes = static_cast<const char*>(t.raw_data());
  const size_t size = t.TotalBytes();
  if (size <= 2 * kSample) return Mix(h, HashString({bytes, size}));
  h = Mix(h, HashString({bytes, kSample}));
  return Mix(h, HashString({bytes + size - kSample, kSample}));
}

uint64_t HashAttr(const AttrValue& v) {
  if (v.is_s()) return Mix(1, HashString(v.s()));
  if (v.is_i()) return Mix(2, static_cast<uint64_t>(v.i()));
  if (v.is_f()) return Mix(3, std::bit_cast<uint32_t>(v.f()));
  if (v.is_b()) return Mix(4, v.b());
  if (v.is_type()) return Mix(5, static_cast<uint64_t>(v.type()));
  if (v.is_shape()) return Mix(6, HashShape(v.shape()));
  if (v.is_tensor()) return Mix(7, HashTensor(v.tensor()));
  if (!v.is_list()) return 0;
  const AttrValue::List& l = v.list();
  uint64_t h = 8;
  for (const std::string& s : l.s) h = Mix(h, HashString(s));
  h = Mix(h, l.i.size());
  for (int64_t i : l.i) h = Mix(h, static_cast<uint64_t>(i));
  h = Mix(h, l.f.size());
  for (float f : l.f) h = Mix(h, std::bit_cast<uint32_t>(f));
  h = Mix(h, l.b.size());
  for (bool b : l.b) h = Mix(h, b);
  for (DType t : l.type) h = Mix(h, static_cast<uint64_t>(t));
  for (const PartialShape& s : l.shape) h = Mix(h, HashShape(s));
  for (const Tensor& t : l.tensor) h = Mix(h, HashTensor(t));
  return h;
}

bool SameFloatBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

// AttrValue equality, with floats compared bit for bit (0.0 and -0.0 are
// different attrs).
bool SameAttr(const AttrValue& a, const AttrValue& b) {
  if (!(a == b)) return false;
  if (a.is_f()) return std::bit_cast<uint32_t>(a.f()) == std::bit_cast<uint32_t>(b.f());
  if (a.is_list()) return SameFloatBits(a.list().f, b.list().f);
  return true;
}

bool SameAttrs(const AttrMap& a, const AttrMap& b) {
  if (a.size() != b.size()) return false;
  for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j) {
    if (i->first != j->first || !SameAttr(i->second, j->second)) return false;
  }
  return true;
}

// A node's inputs as value numbers: (value of the source, port) per data
// slot, and the sorted set of its control sources' values.
struct InputValues {
  std::vector<std::pair<int, int>> data;
  std::vector<int> control;
  bool operator==(const InputValues& o) const { return data == o.data && control == o.control; }
};

// False when an input's value is not numbered yet: it comes through a loop
// back edge, later in topological order.
bool InputValuesOf(const Node& node, const std::vector<int>& value, InputValues* inputs) {
  inputs->data.assign(node.num_inputs(), {-1, -1});
  inputs->control.clear();
  for (const Edge* e : node.in_edges()) {
    const int source = value[e->src()->id()];
    if (source < 0) return false;
    if (e->IsControlEdge()) {
      inputs->control.push_back(source);
    } else {
      inputs->data[e->dst_input()] = {source, e->src_output()};
    }
  }
  std::sort(inputs->control.begin(), inputs->control.end());
  inputs->control.erase(std::unique(inputs->control.begin(), inputs->control.end()),
                        inputs->control.end());
  return true;
}

uint64_t HashNode(const Node& node, const InputValues& inputs) {
  uint64_t h = Mix(HashString(node.type_string()), HashString(node.requested_device()));
  h = Mix(h, HashString(node.assigned_device()));
  for (const auto& [name, attr] : node.def().attrs)
    h = Mix(Mix(h, HashString(name)), HashAttr(attr));
  for (const auto& [source, port] : inputs.data) h = Mix(Mix(h, source), port);
  h = Mix(h, inputs.control.size());
  for (int source : inputs.control) h = Mix(h, source);
  return h;
}

bool SameNode(const Node& a, const InputValues& a_inputs, const Node& b,
              const InputValues& b_inputs) {
  return a.type_string() == b.type_string() && a.requested_device() == b.requested_device() &&
         a.assigned_device() == b.assigned_device() && a_inputs == b_inputs &&
         SameAttrs(a.def().attrs, b.def().attrs);
}

// Moves every out-edge of `from` to the same port of `to`, then removes
// `from`.
void ReplaceNode(Graph* graph, Node* from, Node* to) {
  const std::vector<Edge*> out = from->out_edges();
  for (const Edge* e : out) {
    Node* dst = e->dst();
    const int port = e->src_output();
    const int slot = e->dst_input();
    const bool control = e->IsControlEdge();
    graph->RemoveEdge(e);
    if (control) {
      graph->AddControlEdge(to, dst);
    } else {
      graph->AddEdge(to, port, dst, slot);
    }
  }
  graph->RemoveNode(from);
}

}  // namespace

bool IsCseCandidate(const Node& node) {
  const std::string& op = node.type_string();
  if (node.is_stateful() || node.num_outputs() == 0 || IsNeverMerged(op) || IsRandomOp(op)) {
    return false;
  }
  for (DType t : node.input_types()) {
    if (t == DT_RESOURCE) return false;
  }
  for (DType t : node.output_types()) {
    if (t == DT_RESOURCE) return false;
  }
  return true;
}

StatusOr<int> EliminateCommonSubexpressions(Graph* graph, const CseOptions& options,
                                            std::vector<std::string>* changes) {
  WEIR_ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(*graph));
  // value[id]: the id of the first node (in topological order) that
  // computes the same value. Stable once set, so signatures built from it
  // never go stale.
  std::vector<int> value(graph->num_node_ids(), -1);
  std::unordered_multimap<uint64_t, Node*> first_by_hash;
  first_by_hash.reserve(order.size());
  std::vector<Node*> duplicates;
  InputValues inputs, other_inputs;
  for (Node* node : order) {
    value[node->id()] = node->id();
    if (!IsCseCandidate(*node)) continue;
    if (options.protected_nodes != nullptr && options.protected_nodes->count(node->name())) {
      continue;
    }
    if (!InputValuesOf(*node, value, &inputs)) continue;
    const uint64_t hash = HashNode(*node, inputs);
    Node* same = nullptr;
    for (auto [it, end] = first_by_hash.equal_range(hash); it != end; ++it) {
      InputValuesOf(*it->second, value, &other_inputs);
      if (SameNode(*node, inputs, *it->second, other_inputs)) {
        same = it->second;
        break;
      }
    }
    if (same == nullptr) {
      first_by_hash.emplace(hash, node);
    } else {
      value[node->id()] = same->id();
      duplicates.push_back(node);
    }
  }
  if (duplicates.empty()) return 0;

  // The survivor of each value is its lowest-id node.
  std::vector<int> survivor(graph->num_node_ids(), -1);
  for (const Node* node : duplicates) {
    int& best = survivor[value[node->id()]];
    if (best < 0) best = value[node->id()];
    best = std::min(best, node->id());
  }
  // Everything but the survivors: the duplicates, and the first node of a
  // value when a duplicate has a lower id.
  std::vector<Node*> removed;
  std::vector<bool> first_removed(graph->num_node_ids(), false);
  for (Node* node : duplicates) {
    const int v = value[node->id()];
    if (survivor[v] != node->id()) removed.push_back(node);
    if (survivor[v] != v && !first_removed[v]) {
      first_removed[v] = true;
      removed.push_back(graph->FindNodeId(v));
    }
  }
  size_t lines = 0;
  for (Node* node : removed) {
    Node* to = graph->FindNodeId(survivor[value[node->id()]]);
    if (changes != nullptr && lines++ < kMaxChangeLines) {
      changes->push_back(StrCat("merged ", node->Describe(), " into '", to->name(), "'"));
    }
    ReplaceNode(graph, node, to);
  }
  if (changes != nullptr && lines > kMaxChangeLines) {
    changes->push_back(StrCat("... and ", lines - kMaxChangeLines, " more merges"));
  }
  return static_cast<int>(removed.size());
}

}  // namespace weir
