#include "weir/graph/placer.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <numeric>
#include <unordered_map>

#include "weir/framework/device_name.h"
#include "weir/framework/node_def_util.h"
#include "weir/framework/ref_inputs.h"
#include "weir/graph/algorithm.h"

namespace weir {
namespace {

// Union-find over node ids for colocation groups.
class UnionFind {
 public:
  explicit UnionFind(int n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  int Find(int x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void Union(int a, int b) { parent_[Find(a)] = Find(b); }

 private:
  std::vector<int> parent_;
};

std::vector<std::string> ColocationTargets(const Node* node) {
  static const std::string* kClass = new std::string("_class");
  std::vector<std::string> out;
  auto it = node->def().attrs.find(*kClass);
  if (it == node->def().attrs.end() || !it->second.is_list()) return out;
  for (const std::string& s : it->second.list().s) {
    if (StartsWith(s, "loc:@")) out.push_back(s.substr(5));
  }
  return out;
}

bool IsResourceEdge(const Edge* e) {
  return !e->IsControlEdge() && e->src()->output_type(e->src_output()) == DT_RESOURCE;
}

// The input arg of `node` that data input `index` belongs to, or -1.
int InputArgOf(const Node* node, int index) {
  const OpDef& op = node->op_def();
  int64_t start = 0;
  for (size_t a = 0; a < op.inputs.size(); ++a) {
    StatusOr<int64_t> count = ArgCount(op.inputs[a], node->def().attrs);
    if (!count.ok()) return -1;  // import validated the attrs; nothing to colocate by
    if (index < start + *count) return static_cast<int>(a);
    start += *count;
  }
  return -1;
}

// An edge into an input TensorFlow declares Ref(T) (framework/ref_inputs.h):
// an accumulator's string handle, which names state on its producer's device.
// `dst_has_refs`: HasRefInputs of the consumer's op, when the caller knows it.
bool IsRefEdge(const Edge* e, int dst_has_refs = -1) {
  if (e->IsControlEdge()) return false;
  if (dst_has_refs < 0) dst_has_refs = HasRefInputs(e->dst()->op_def());
  return dst_has_refs && IsRefInputArg(e->dst()->op_def(), InputArgOf(e->dst(), e->dst_input()));
}

std::string FormatMicros(double micros) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.1f us", micros);
  return buffer;
}

// "CPU:1" for a full name, for explanations.
std::string ShortDeviceName(const std::string& full) {
  StatusOr<DeviceName> parsed = DeviceName::Parse(full);
  if (!parsed.ok() || !parsed->has_type || !parsed->has_id) return full;
  return StrCat(parsed->type, ":", parsed->id);
}

// "T=int8" for each type attr of the node, for "no kernel" messages.
std::string TypeAttrs(const Node* node) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : node->def().attrs) {
    if (value.is_type()) parts.push_back(StrCat(name, "=", DTypeName(value.type())));
    if (value.is_list() && !value.list().type.empty())
      parts.push_back(StrCat(name, "=", value.DebugString()));
  }
  return parts.empty() ? "its attrs" : StrJoin(parts, ", ");
}

// Which devices each node may use, and the colocation groups. Groups are
// numbered densely; members are listed in node-id order.
class Feasibility {
 public:
  Feasibility(const Graph& graph, const std::vector<DeviceInfo>& devices,
              const std::vector<DeviceName>& parsed, const PlacementOptions& options)
      : graph_(graph),
        devices_(devices),
        parsed_(parsed),
        options_(options),
        num_devices_(static_cast<int>(devices.size())) {}

  Status Build() {
    const int n = graph_.num_node_ids();
    // Device types, each checked once per node.
    std::vector<std::string> types;
    device_type_.resize(num_devices_);
    for (int d = 0; d < num_devices_; ++d) {
      auto it = std::find(types.begin(), types.end(), devices_[d].type);
      device_type_[d] = static_cast<int>(it - types.begin());
      if (it == types.end()) types.push_back(devices_[d].type);
    }
    num_types_ = static_cast<int>(types.size());
    types_ = types;
    kernel_ok_.assign(static_cast<size_t>(n) * num_types_, 0);
    request_index_.assign(n, -1);
    uses_handle_.assign(n, 0);
    yielded_.assign(n, 0);
    std::unordered_map<std::string, int> request_cache;
    // Kernel matches depend only on the op and its type attrs: looked up
    // once per distinct (op, dtypes) rather than once per node.
    std::unordered_map<std::string, size_t> kernel_cache;
    std::unordered_map<const OpDef*, bool> ref_cache;  // HasRefInputs, once per op
    std::string key;
    UnionFind uf(n);
    const std::vector<Node*> nodes = graph_.nodes();
    for (Node* node : nodes) {
      const int id = node->id();
      KernelKey(node, &key);
      auto [cached, fresh] = kernel_cache.try_emplace(key, static_cast<size_t>(id) * num_types_);
      for (int t = 0; t < num_types_; ++t) {
        kernel_ok_[static_cast<size_t>(id) * num_types_ + t] =
            fresh ? options_.kernels->HasKernel(types_[t], node->def())
                  : kernel_ok_[cached->second + t];
      }
      auto [it, inserted] = request_cache.try_emplace(node->requested_device(), 0);
      if (inserted) {
        StatusOr<DeviceName> request = DeviceName::Parse(node->requested_device());
        if (!request.ok()) return request.status().WithContext("node " + node->Describe());
        std::vector<char> mask(num_devices_);
        for (int d = 0; d < num_devices_; ++d) mask[d] = request->Matches(parsed_[d]);
        it->second = static_cast<int>(request_masks_.size());
        request_masks_.push_back(std::move(mask));
      }
      request_index_[id] = it->second;
      for (const std::string& target : ColocationTargets(node)) {
        Node* other = graph_.FindNode(target);
        if (other != nullptr) {
          uf.Union(id, other->id());
        } else if (!options_.ignore_missing_colocation_targets) {
          return errors::InvalidArgument("node ", node->Describe(), " is colocated with '", target,
                                         "' (_class loc:@", target,
                                         "), but the graph has no node named '", target, "'");
        }
      }
      // A resource (variable, queue, accumulator) is used where it lives,
      // through its DT_RESOURCE handle or a string handle TensorFlow passes
      // by reference.
      auto [refs, new_op] = ref_cache.try_emplace(&node->op_def(), false);
      if (new_op) refs->second = HasRefInputs(node->op_def());
      for (const Edge* e : node->in_edges()) {
        if (IsResourceEdge(e) || (refs->second && IsRefEdge(e, 1))) {
          uf.Union(id, e->src()->id());
          uses_handle_[id] = 1;
        }
      }
    }
    // Dense group numbers, members by counting sort.
    group_.assign(n, -1);
    std::vector<int> root_group(n, -1);
    for (Node* node : nodes) {
      int root = uf.Find(node->id());
      if (root_group[root] < 0) root_group[root] = num_groups_++;
      group_[node->id()] = root_group[root];
    }
    member_start_.assign(num_groups_ + 1, 0);
    for (Node* node : nodes) ++member_start_[group_[node->id()] + 1];
    for (int g = 0; g < num_groups_; ++g) member_start_[g + 1] += member_start_[g];
    members_.resize(graph_.num_nodes());
    std::vector<int> fill(member_start_.begin(), member_start_.end() - 1);
    for (Node* node : nodes) members_[fill[group_[node->id()]]++] = node;

    // Every member's kernels, and the requests of all but the handle users.
    mask_.assign(static_cast<size_t>(num_groups_) * num_devices_, 1);
    for (Node* node : nodes) {
      char* mask = &mask_[static_cast<size_t>(group_[node->id()]) * num_devices_];
      for (int d = 0; d < num_devices_; ++d) {
        mask[d] &= KernelOk(node, d) && (uses_handle_[node->id()] || Requested(node, d));
      }
    }
    for (int g = 0; g < num_groups_; ++g) {
      if (CountAllowed(g) == 0) return Unsatisfiable(g);
    }
    // A handle user's own request narrows its group where it can; where it
    // cannot, it yields to the resource's device, as TensorFlow's placer
    // lets a resource's or ref's device win over its consumer's request (a
    // read of a /job:ps variable built under a /job:worker scope runs on the
    // ps task). Requests apply in node-id order.
    for (Node* node : nodes) {
      if (!uses_handle_[node->id()]) continue;
      char* mask = &mask_[static_cast<size_t>(group_[node->id()]) * num_devices_];
      bool any = false;
      for (int d = 0; d < num_devices_ && !any; ++d) any = mask[d] && Requested(node, d);
      if (!any) {
        yielded_[node->id()] = 1;
        continue;
      }
      for (int d = 0; d < num_devices_; ++d) mask[d] &= Requested(node, d);
    }
    mask_count_.assign(num_groups_, 0);
    for (int g = 0; g < num_groups_; ++g) mask_count_[g] = CountAllowed(g);
    return Status::OK();
  }

  // Whether `node`'s request was dropped because its resource lives on a
  // device the request does not match.
  bool yielded(const Node* node) const { return yielded_[node->id()]; }
  // For an explanation: what a yielded request was.
  std::string YieldNote(const Node* node) const {
    if (!yielded(node)) return "";
    return StrCat("; its request '", node->requested_device(),
                  "' yields to the device of the resource it uses");
  }

  int num_groups() const { return num_groups_; }
  int group(const Node* node) const { return group_[node->id()]; }
  bool Allowed(int group, int device) const {
    return mask_[static_cast<size_t>(group) * num_devices_ + device];
  }
  int count(int group) const { return mask_count_[group]; }
  int FirstAllowed(int group) const {
    for (int d = 0; d < num_devices_; ++d)
      if (Allowed(group, d)) return d;
    return -1;
  }
  std::vector<int> AllowedDevices(int group) const {
    std::vector<int> out;
    for (int d = 0; d < num_devices_; ++d)
      if (Allowed(group, d)) out.push_back(d);
    return out;
  }
  int group_size(int group) const { return member_start_[group + 1] - member_start_[group]; }
  const Node* member(int group, int i) const { return members_[member_start_[group] + i]; }

  // Why a group with one feasible device has it: the node's own request,
  // a colocated member's request, or the kernels.
  std::string ForcedReason(const Node* node) const {
    if (num_devices_ == 1) return "the only device";
    const int g = group(node);
    auto count_of = [&](const std::vector<char>& m) { return std::count(m.begin(), m.end(), 1); };
    if (!yielded(node) && count_of(request_masks_[request_index_[node->id()]]) == 1) {
      return StrCat("requested ", node->requested_device());
    }
    for (int i = 0; i < group_size(g); ++i) {
      const Node* m = member(g, i);
      if (m != node && !yielded(m) && count_of(request_masks_[request_index_[m->id()]]) == 1) {
        return StrCat("colocated with '", m->name(), "', which requests ", m->requested_device());
      }
    }
    int kernel_devices = 0;
    for (int d = 0; d < num_devices_; ++d) kernel_devices += KernelOk(node, d);
    if (kernel_devices == 1) return "only device with a kernel for it";
    return "only feasible device (requests and kernels of its colocation group)";
  }

 private:
  // The op's address and the node's dtype attrs, as bytes.
  static void KernelKey(const Node* node, std::string* key) {
    key->clear();
    const OpDef* op = &node->op_def();
    key->append(reinterpret_cast<const char*>(&op), sizeof(op));
    for (const auto& [name, value] : node->def().attrs) {
      if (value.is_type()) {
        key->push_back(static_cast<char>(value.type()));
      } else if (value.is_list() && !value.list().type.empty()) {
        key->push_back('[');
        for (DType t : value.list().type) key->push_back(static_cast<char>(t));
        key->push_back(']');
      }
    }
  }

  bool KernelOk(const Node* node, int d) const {
    return kernel_ok_[static_cast<size_t>(node->id()) * num_types_ + device_type_[d]];
  }
  bool Requested(const Node* node, int d) const {
    return request_masks_[request_index_[node->id()]][d];
  }
  int CountAllowed(int g) const {
    const char* mask = &mask_[static_cast<size_t>(g) * num_devices_];
    return static_cast<int>(std::count(mask, mask + num_devices_, 1));
  }

  // Every member with its constraints, the constrained ones first.
  Status Unsatisfiable(int g) const {
    std::vector<std::string> constrained;
    std::vector<std::string> free;
    for (int i = 0; i < group_size(g); ++i) {
      const Node* node = member(g, i);
      std::vector<std::string> parts;
      if (!node->requested_device().empty()) {
        const std::vector<char>& mask = request_masks_[request_index_[node->id()]];
        bool any = std::find(mask.begin(), mask.end(), 1) != mask.end();
        parts.push_back(StrCat("requests '", node->requested_device(), "'",
                               uses_handle_[node->id()] ? " (yields to its resource's device)"
                               : any                    ? ""
                                                        : " (matches no device)"));
      }
      for (int t = 0; t < num_types_; ++t) {
        if (!kernel_ok_[static_cast<size_t>(node->id()) * num_types_ + t]) {
          std::vector<std::string> known = options_.kernels->DescribeKernels(node->type_string());
          parts.push_back(
              StrCat("has no kernel for ", TypeAttrs(node), " on device type ", types_[t],
                     " (kernels: ", known.empty() ? "none" : StrJoin(known, ", "), ")"));
        }
      }
      const bool has_constraint = !parts.empty();
      for (const std::string& target : ColocationTargets(node)) {
        parts.push_back(StrCat("is colocated with '", target, "'"));
      }
      for (const Edge* e : node->in_edges()) {
        if (IsResourceEdge(e)) {
          parts.push_back(StrCat("uses the resource of '", e->src()->name(), "'"));
        } else if (IsRefEdge(e)) {
          parts.push_back(StrCat("takes input ", e->dst_input(), " by reference from '",
                                 e->src()->name(), "' (a TensorFlow Ref input)"));
        }
      }
      std::string line =
          StrCat(node->Describe(), " ",
                 parts.empty() ? "has no constraint of its own" : StrJoin(parts, ", "));
      (has_constraint ? constrained : free).push_back(std::move(line));
    }
    constexpr size_t kMaxUnconstrained = 20;
    size_t more = free.size() > kMaxUnconstrained ? free.size() - kMaxUnconstrained : 0;
    free.resize(std::min(free.size(), kMaxUnconstrained));
    std::vector<std::string> lines = constrained;
    lines.insert(lines.end(), free.begin(), free.end());
    if (more > 0) lines.push_back(StrCat("... and ", more, " more without constraints"));
    std::vector<std::string> names;
    for (const DeviceInfo& d : devices_) names.push_back(StrCat(d.name, " (", d.type, ")"));
    return errors::InvalidArgument(
        "cannot place ", member(g, 0)->Describe(),
        group_size(g) > 1 ? StrCat(" and the ", group_size(g) - 1, " nodes colocated with it") : "",
        ": no device satisfies all of: ", StrJoin(lines, "; "),
        ". Available devices: ", StrJoin(names, ", "));
  }

  const Graph& graph_;
  const std::vector<DeviceInfo>& devices_;
  const std::vector<DeviceName>& parsed_;
  const PlacementOptions& options_;
  const int num_devices_;
  int num_types_ = 0;
  std::vector<std::string> types_;
  std::vector<int> device_type_;
  std::vector<char> kernel_ok_;       // node id * types + type
  std::vector<int> request_index_;    // node id -> request_masks_
  std::vector<char> uses_handle_;     // node id -> takes a resource or ref handle
  std::vector<char> yielded_;         // node id -> its request gave way to its resource's
  std::vector<std::vector<char>> request_masks_;
  int num_groups_ = 0;
  std::vector<int> group_;            // node id -> group
  std::vector<int> member_start_;     // group -> first index in members_
  std::vector<Node*> members_;
  std::vector<char> mask_;            // group * devices + device
  std::vector<int> mask_count_;
};

// The simulated clock: per-device busy-until times and their latest idle
// gaps, per-node devices and finish times, and the cost of running and
// moving things. A node may fill an idle gap that an earlier-placed node
// left while it waited for its inputs (bounded: the last kMaxGaps gaps).
class Simulator {
 public:
  Simulator(const Graph& graph, const std::vector<DeviceInfo>& devices, const CostModel& cost)
      : devices_(devices),
        cost_(cost),
        num_devices_(static_cast<int>(devices.size())),
        available_(devices.size(), 0.0),
        gaps_(devices.size()),
        device_(graph.num_node_ids(), -1),
        finish_(graph.num_node_ids(), 0.0),
        op_cost_(graph.num_node_ids()),
        has_op_cost_(graph.num_node_ids(), 0) {
    for (const DeviceInfo& d : devices) models_.push_back(cost.ModelFor(d));
    links_.resize(devices.size() * devices.size());
    for (int a = 0; a < num_devices_; ++a) {
      for (int b = 0; b < num_devices_; ++b)
        links_[a * num_devices_ + b] = cost.Link(devices[a].name, devices[b].name);
    }
  }

  int device(const Node* node) const { return device_[node->id()]; }
  double finish(const Node* node) const { return finish_[node->id()]; }
  double available(int d) const { return available_[d]; }
  double step_micros() const { return *std::max_element(available_.begin(), available_.end()); }

  // The earliest time >= `ready` at which `d` is idle for `duration`.
  double EarliestStart(int d, double ready, double duration) const {
    for (const Gap& gap : gaps_[d]) {
      double start = std::max(gap.begin, ready);
      if (start + duration <= gap.end) return start;
    }
    return std::max(available_[d], ready);
  }

  // Marks [start, start + duration) busy on `d`; `start` came from
  // EarliestStart.
  void Occupy(int d, double start, double duration) {
    const double end = start + duration;
    std::vector<Gap>& gaps = gaps_[d];
    for (size_t i = 0; i < gaps.size(); ++i) {
      if (start < gaps[i].begin || end > gaps[i].end) continue;
      Gap after{end, gaps[i].end};
      gaps[i].end = start;
      if (after.end > after.begin) gaps.insert(gaps.begin() + i + 1, after);
      if (gaps[i].end <= gaps[i].begin) gaps.erase(gaps.begin() + i);
      return;
    }
    if (start > available_[d]) gaps.push_back({available_[d], start});
    if (gaps.size() > kMaxGaps) gaps.erase(gaps.begin());
    available_[d] = end;
  }

  double Compute(const Node* node, int d) {
    if (cost_.has_measurements()) {
      double measured = cost_.MeasuredMicros(node->name(), devices_[d]);
      if (measured >= 0) return measured;
    }
    if (!has_op_cost_[node->id()]) {
      op_cost_[node->id()] = CostModel::EstimateOp(*node);
      has_op_cost_[node->id()] = 1;
    }
    return CostModel::ComputeMicros(op_cost_[node->id()], models_[d]);
  }

  // What moving the tensor of `e` from device `from` to `to` costs.
  double Transfer(const Edge* e, int from, int to) const {
    if (from == to) return 0;
    const LinkModel& link = links_[from * num_devices_ + to];
    if (e->IsControlEdge()) return link.latency_micros;
    return CostModel::TransferMicros(link, EdgeBytes(e));
  }

  double EdgeBytes(const Edge* e) const {
    if (static_cast<size_t>(e->id()) >= edge_bytes_.size()) edge_bytes_.resize(e->id() + 1024, -1);
    double& bytes = edge_bytes_[e->id()];
    if (bytes < 0) bytes = CostModel::OutputBytes(*e->src(), e->src_output());
    return bytes;
  }

  // Runs `node` on `d` after its placed inputs arrive.
  void Run(const Node* node, int d) {
    double ready = 0;
    for (const Edge* e : node->in_edges()) {
      if (IsBackEdge(e) || device_[e->src()->id()] < 0) continue;
      ready = std::max(ready, finish_[e->src()->id()] + Transfer(e, device_[e->src()->id()], d));
    }
    const double duration = Compute(node, d);
    const double start = EarliestStart(d, ready, duration);
    Occupy(d, start, duration);
    device_[node->id()] = d;
    finish_[node->id()] = start + duration;
  }

 private:
  static constexpr size_t kMaxGaps = 8;
  struct Gap {
    double begin, end;
  };

  const std::vector<DeviceInfo>& devices_;
  const CostModel& cost_;
  const int num_devices_;
  std::vector<DeviceModel> models_;
  std::vector<LinkModel> links_;  // from * devices + to
  std::vector<double> available_;
  std::vector<std::vector<Gap>> gaps_;  // per device, oldest first
  std::vector<int> device_;       // node id -> device, -1 until placed
  std::vector<double> finish_;
  std::vector<OpCost> op_cost_;
  std::vector<char> has_op_cost_;
  mutable std::vector<double> edge_bytes_;  // by edge id, -1 until computed
};

bool IsSource(const Node* node) {
  for (const Edge* e : node->in_edges()) {
    if (!IsBackEdge(e)) return false;
  }
  return true;
}

// The greedy placement over a simulated clock.
class GreedyPlacer {
 public:
  GreedyPlacer(const Graph& graph, const std::vector<DeviceInfo>& devices,
               const Feasibility& feasibility, const CostModel& cost,
               PlacementExplanation* explanation)
      : devices_(devices),
        feasibility_(feasibility),
        sim_(graph, devices, cost),
        explanation_(explanation),
        num_devices_(static_cast<int>(devices.size())),
        group_device_(feasibility.num_groups(), -1),
        group_decider_(feasibility.num_groups(), nullptr),
        deferred_(feasibility.num_groups()),
        mark_(graph.num_node_ids(), 0) {}

  // Visits nodes in a topological order (TopologicalOrder's, which follows
  // one chain as far as it goes before the next: chains stay together).
  Status Place(const std::vector<Node*>& order) {
    std::vector<Node*> sources;  // deferred, in the order reached
    for (Node* node : order) {
      const int g = feasibility_.group(node);
      if (group_device_[g] < 0 && IsSource(node) && feasibility_.count(g) > 1) {
        deferred_[g].push_back(node);  // decided with its first consumer
        sources.push_back(node);
        continue;
      }
      PlaceReached(node);
    }
    // Sources nothing consumed: by their own earliest finish.
    for (Node* node : sources) {
      if (sim_.device(node) < 0) PlaceReached(node);
    }
    if (explanation_ != nullptr) explanation_->simulated_step_micros = sim_.step_micros();
    return Status::OK();
  }

  int device(const Node* node) const { return sim_.device(node); }

 private:
  struct Candidate {
    int device = -1;
    double finish = 0;
    double transfers = 0;
    double score = 0;  // finish, plus the rest of the group's compute there
  };

  // `node` is reached and not deferred: decide its group if needed, place
  // its deferred inputs, run it.
  void PlaceReached(Node* node) {
    const int g = feasibility_.group(node);
    std::string reason;
    std::vector<Candidate>& candidates = candidates_;
    candidates.clear();
    if (explanation_ != nullptr || (group_device_[g] < 0 && feasibility_.count(g) > 1)) {
      for (int d = 0; d < num_devices_; ++d) {
        if (feasibility_.Allowed(g, d)) candidates.push_back(Evaluate(node, d));
      }
    }
    int d = group_device_[g];
    if (feasibility_.count(g) == 1) {
      d = feasibility_.FirstAllowed(g);
      if (explanation_ != nullptr) reason = feasibility_.ForcedReason(node);
    } else if (d >= 0) {
      if (explanation_ != nullptr)
        reason = StrCat("colocated with '", group_decider_[g]->name(), "'");
    } else {
      const bool group = feasibility_.group_size(g) > 1;
      if (group) {
        for (Candidate& c : candidates) c.score = c.finish + GroupRestCompute(node, c.device);
      }
      size_t best = 0;
      for (size_t i = 1; i < candidates.size(); ++i) {
        if (candidates[i].score < candidates[best].score) best = i;
      }
      d = candidates[best].device;
      if (explanation_ != nullptr) reason = CostReason(candidates, best, group);
    }
    Decide(g, d, node);
    PlaceDeferredInputs(node, d);
    sim_.Run(node, d);
    Explain(node, candidates, d, std::move(reason));
  }

  // Simulates `node` on `d` without committing: placed inputs arrive after
  // their transfer; unplaced (deferred) sources run first on `d` when they
  // may, else arrive from where they would be ready soonest.
  Candidate Evaluate(const Node* node, int d) {
    ++stamp_;
    Candidate c;
    c.device = d;
    double sources = 0;  // compute of the deferred sources that would run here first
    double ready = 0;
    for (const Edge* e : node->in_edges()) {
      if (IsBackEdge(e)) continue;
      const Node* src = e->src();
      const int src_device = sim_.device(src);
      double arrival;
      if (src_device >= 0) {
        double t = sim_.Transfer(e, src_device, d);
        c.transfers += t;
        arrival = sim_.finish(src) + t;
      } else if (feasibility_.Allowed(feasibility_.group(src), d)) {
        if (mark_[src->id()] != stamp_) {
          mark_[src->id()] = stamp_;
          sources += sim_.Compute(src, d);
        }
        continue;
      } else {
        auto [from, at] = BestRemote(src, e, d);
        c.transfers += sim_.Transfer(e, from, d);
        arrival = at;
      }
      ready = std::max(ready, arrival);
    }
    if (sources > 0) ready = std::max(ready, sim_.EarliestStart(d, 0, sources) + sources);
    const double duration = sim_.Compute(node, d);
    c.finish = sim_.EarliestStart(d, ready, duration) + duration;
    c.score = c.finish;
    return c;
  }

  // For a deferred source that may not run on `to`: the device where it
  // would reach `to` soonest, and when.
  std::pair<int, double> BestRemote(const Node* src, const Edge* e, int to) {
    const int g = feasibility_.group(src);
    int best = -1;
    double best_at = 0;
    for (int d = 0; d < num_devices_; ++d) {
      if (!feasibility_.Allowed(g, d)) continue;
      const double duration = sim_.Compute(src, d);
      double at = sim_.EarliestStart(d, 0, duration) + duration + sim_.Transfer(e, d, to);
      if (best < 0 || at < best_at) {
        best = d;
        best_at = at;
      }
    }
    return {best, best_at};
  }

  // The compute of the other members of `node`'s group on `d`.
  double GroupRestCompute(const Node* node, int d) {
    const int g = feasibility_.group(node);
    double total = 0;
    for (int i = 0; i < feasibility_.group_size(g); ++i) {
      const Node* m = feasibility_.member(g, i);
      if (m != node) total += sim_.Compute(m, d);
    }
    return total;
  }

  // Fixes group `g` on `d`; its deferred sources run there now.
  void Decide(int g, int d, const Node* decider) {
    if (group_device_[g] >= 0) return;
    group_device_[g] = d;
    group_decider_[g] = decider;
    for (Node* source : deferred_[g]) {
      if (sim_.device(source) >= 0 || source == decider) continue;
      sim_.Run(source, d);
      if (explanation_ != nullptr) {
        Explain(source, {}, d, StrCat("colocated with '", decider->name(), "'"));
      }
    }
    deferred_[g].clear();
  }

  void PlaceDeferredInputs(const Node* node, int d) {
    for (const Edge* e : node->in_edges()) {
      Node* src = e->src();
      if (IsBackEdge(e) || sim_.device(src) >= 0) continue;
      const int g = feasibility_.group(src);
      const bool with_consumer = feasibility_.Allowed(g, d);
      const int where = with_consumer ? d : BestRemote(src, e, d).first;
      Decide(g, where, src);
      sim_.Run(src, where);
      if (explanation_ == nullptr) continue;
      Explain(src, {}, where,
              with_consumer ? StrCat("placed with its consumer '", node->name(),
                                     "' (a source: elsewhere it would cost a transfer)")
                            : StrCat("earliest arrival at its consumer '", node->name(), "' on ",
                                     ShortDeviceName(devices_[d].name)));
    }
  }

  std::string CostReason(const std::vector<Candidate>& candidates, size_t best, bool group) const {
    size_t second = best == 0 ? 1 : 0;
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (i != best && candidates[i].score < candidates[second].score) second = i;
    }
    const Candidate& b = candidates[best];
    const Candidate& s = candidates[second];
    std::string what = group ? "earliest finish with its colocation group" : "earliest finish";
    if (b.score == s.score) {
      return StrCat("tie on ", what, " (", FormatMicros(b.score), " on ",
                    ShortDeviceName(devices_[b.device].name), " and ",
                    ShortDeviceName(devices_[s.device].name), "): lowest device index");
    }
    return StrCat(what, " (", FormatMicros(b.score), " on ",
                  ShortDeviceName(devices_[b.device].name), " vs ", FormatMicros(s.score), " on ",
                  ShortDeviceName(devices_[s.device].name), ")");
  }

  void Explain(const Node* node, const std::vector<Candidate>& candidates, int d,
               std::string reason) {
    if (explanation_ == nullptr) return;
    NodePlacement entry;
    entry.node = node->name();
    entry.op = node->type_string();
    entry.feasible = feasibility_.AllowedDevices(feasibility_.group(node));
    for (const Candidate& c : candidates) {
      entry.finish_micros.push_back(c.finish);
      entry.transfer_micros.push_back(c.transfers);
    }
    entry.finish = sim_.finish(node);
    entry.chosen = d;
    entry.reason = std::move(reason) + feasibility_.YieldNote(node);
    explanation_->nodes.push_back(std::move(entry));
  }

  const std::vector<DeviceInfo>& devices_;
  const Feasibility& feasibility_;
  Simulator sim_;
  PlacementExplanation* explanation_;
  const int num_devices_;
  std::vector<int> group_device_;
  std::vector<const Node*> group_decider_;  // the member whose placement decided
  std::vector<std::vector<Node*>> deferred_;  // per group: sources waiting
  std::vector<int> mark_;  // node id -> stamp_ when counted in Evaluate
  std::vector<Candidate> candidates_;  // reused by PlaceReached
  int stamp_ = 0;
};

const CostModel& DefaultCostModel() {
  static const CostModel* model = new CostModel();
  return *model;
}

}  // namespace

Status PlaceGraph(Graph* graph, const std::vector<DeviceInfo>& devices,
                  const PlacementOptions& options, PlacementExplanation* explanation) {
  CHECK(!devices.empty());
  CHECK(options.kernels != nullptr);
  CHECK(options.default_device >= 0 && options.default_device < static_cast<int>(devices.size()));
  std::vector<DeviceName> parsed;
  for (const DeviceInfo& d : devices) {
    WEIR_ASSIGN_OR_RETURN(DeviceName name, DeviceName::Parse(d.name));
    parsed.push_back(name);
  }
  Feasibility feasibility(*graph, devices, parsed, options);
  WEIR_RETURN_IF_ERROR(feasibility.Build());
  if (explanation != nullptr) {
    explanation->devices.clear();
    for (const DeviceInfo& d : devices) explanation->devices.push_back(d.name);
    explanation->nodes.clear();
    explanation->simulated_step_micros = 0;
  }

  if (devices.size() == 1 || !options.simulate) {
    for (Node* node : graph->nodes()) {
      const int g = feasibility.group(node);
      int chosen = feasibility.Allowed(g, options.default_device) ? options.default_device
                                                                  : feasibility.FirstAllowed(g);
      node->set_assigned_device(devices[chosen].name);
      if (explanation == nullptr) continue;
      NodePlacement entry;
      entry.node = node->name();
      entry.op = node->type_string();
      entry.feasible = feasibility.AllowedDevices(g);
      entry.chosen = chosen;
      if (feasibility.count(g) == 1) entry.reason = feasibility.ForcedReason(node);
      else if (chosen == options.default_device) entry.reason = "default device (simulation off)";
      else entry.reason = "first feasible device (simulation off)";
      entry.reason += feasibility.YieldNote(node);
      explanation->nodes.push_back(std::move(entry));
    }
    return Status::OK();
  }

  WEIR_ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(*graph));
  const CostModel& cost = options.cost_model != nullptr ? *options.cost_model : DefaultCostModel();
  GreedyPlacer placer(*graph, devices, feasibility, cost, explanation);
  WEIR_RETURN_IF_ERROR(placer.Place(order));
  for (Node* node : order) node->set_assigned_device(devices[placer.device(node)].name);
  return Status::OK();
}

Status CheckColocationTargets(const Graph& graph) {
  for (const Node* node : graph.nodes()) {
    for (const std::string& target : ColocationTargets(node)) {
      if (graph.FindNode(target) == nullptr) {
        return errors::InvalidArgument("node ", node->Describe(), " is colocated with '", target,
                                       "' (_class loc:@", target,
                                       "), but the graph has no node named '", target, "'");
      }
    }
  }
  return Status::OK();
}

StatusOr<double> SimulatePlacedStep(const Graph& graph, const std::vector<DeviceInfo>& devices,
                                    const CostModel& cost_model) {
  std::unordered_map<std::string, int> index;
  for (size_t d = 0; d < devices.size(); ++d) index[devices[d].name] = static_cast<int>(d);
  WEIR_ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(graph));
  Simulator sim(graph, devices, cost_model);
  for (const Node* node : order) {
    auto it = index.find(node->assigned_device());
    if (it == index.end()) {
      return errors::InvalidArgument("node ", node->Describe(), " is assigned to '",
                                     node->assigned_device(), "', which is not among the devices");
    }
    sim.Run(node, it->second);
  }
  return sim.step_micros();
}

std::vector<std::string> SummarizePlacement(const Graph& graph) {
  std::map<std::string, int> counts;
  for (const Node* node : graph.nodes()) ++counts[node->assigned_device()];
  std::vector<std::string> lines;
  for (const auto& [device, count] : counts) lines.push_back(StrCat(count, " nodes on ", device));
  return lines;
}

std::string PlacementExplanation::ToString() const {
  std::vector<std::string> short_names;
  for (const std::string& d : devices) short_names.push_back(ShortDeviceName(d));
  std::string out = StrCat("placement of ", nodes.size(), " nodes on ", devices.size(), " devices");
  if (simulated_step_micros > 0)
    out += StrCat(", simulated step ", FormatMicros(simulated_step_micros));
  out += "\n";
  char line[512];
  std::snprintf(line, sizeof(line), "%-36s %-18s %-8s %s\n", "node", "op", "device", "reason");
  out += line;
  for (const NodePlacement& n : nodes) {
    std::string device = n.chosen >= 0 ? short_names[n.chosen] : "?";
    std::snprintf(line, sizeof(line), "%-36s %-18s %-8s ", n.node.c_str(), n.op.c_str(),
                  device.c_str());
    out += line;
    out += n.reason;
    out += "\n";
    if (n.finish_micros.size() == n.feasible.size() && !n.finish_micros.empty()) {
      std::vector<std::string> options;
      for (size_t i = 0; i < n.feasible.size(); ++i) {
        std::string option =
            StrCat(short_names[n.feasible[i]], " finish ", FormatMicros(n.finish_micros[i]));
        if (n.transfer_micros[i] > 0)
          option += StrCat(" (transfers ", FormatMicros(n.transfer_micros[i]), ")");
        options.push_back(std::move(option));
      }
      out += StrCat("    ", StrJoin(options, ", "), "\n");
    }
  }
  return out;
}

}  // namespace weir
