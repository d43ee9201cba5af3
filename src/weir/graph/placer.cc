#include "weir/graph/placer.h"

#include <numeric>

#include "weir/framework/device_name.h"
#include "weir/framework/kernel_registry.h"

namespace weir {
namespace {

// Union-find over node ids for colocation groups.
class Groups {
 public:
  explicit Groups(int n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  int Find(int x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void Union(int a, int b) { parent_[Find(a)] = Find(b); }

 private:
  std::vector<int> parent_;
};

std::vector<std::string> ColocationTargets(const Node* node) {
  std::vector<std::string> out;
  auto it = node->def().attrs.find("_class");
  if (it == node->def().attrs.end() || !it->second.is_list()) return out;
  for (const std::string& s : it->second.list().s) {
    if (StartsWith(s, "loc:@")) out.push_back(s.substr(5));
  }
  return out;
}

}  // namespace

Status PlaceGraph(Graph* graph, const std::vector<DeviceInfo>& devices, int default_device) {
  std::vector<DeviceName> parsed;
  for (const DeviceInfo& d : devices) {
    WEIR_ASSIGN_OR_RETURN(DeviceName name, DeviceName::Parse(d.name));
    parsed.push_back(name);
  }
  std::vector<std::string> device_names;
  for (const DeviceInfo& d : devices) device_names.push_back(d.name);

  Groups groups(graph->num_node_ids());
  for (Node* node : graph->nodes()) {
    for (const std::string& target : ColocationTargets(node)) {
      Node* other = graph->FindNode(target);
      if (other != nullptr) groups.Union(node->id(), other->id());
    }
    // A resource (variable, queue) is used where it lives.
    for (const Edge* e : node->in_edges()) {
      if (!e->IsControlEdge() && e->src()->output_type(e->src_output()) == DT_RESOURCE) {
        groups.Union(node->id(), e->src()->id());
      }
    }
  }
  // Feasible devices per group: the intersection over its members.
  std::vector<std::vector<bool>> feasible(graph->num_node_ids());
  std::vector<std::vector<Node*>> members(graph->num_node_ids());
  for (Node* node : graph->nodes()) {
    int group = groups.Find(node->id());
    if (feasible[group].empty()) feasible[group].assign(devices.size(), true);
    members[group].push_back(node);
    StatusOr<DeviceName> request = DeviceName::Parse(node->requested_device());
    if (!request.ok()) return request.status().WithContext("node " + node->Describe());
    for (size_t d = 0; d < devices.size(); ++d) {
      if (!request->Matches(parsed[d]) ||
          !KernelRegistry::Global()->HasKernel(devices[d].type, node->def())) {
        feasible[group][d] = false;
      }
    }
  }
  for (Node* node : graph->nodes()) {
    int group = groups.Find(node->id());
    const std::vector<bool>& ok = feasible[group];
    int chosen = -1;
    if (ok[default_device]) {
      chosen = default_device;
    } else {
      for (size_t d = 0; d < ok.size() && chosen < 0; ++d) {
        if (ok[d]) chosen = static_cast<int>(d);
      }
    }
    if (chosen < 0) {
      std::vector<std::string> constraints;
      for (const Node* member : members[group]) {
        bool has_any_kernel = false;
        for (const DeviceInfo& d : devices) {
          has_any_kernel |= KernelRegistry::Global()->HasKernel(d.type, member->def());
        }
        constraints.push_back(StrCat(member->Describe(), " requests '",
                                     member->requested_device(), "'",
                                     has_any_kernel ? "" : " and has no kernel on any device"));
      }
      return errors::InvalidArgument("cannot assign a device for node ", node->Describe(),
                                     ": no device satisfies all of: ",
                                     StrJoin(constraints, "; "),
                                     ". Available devices: ", StrJoin(device_names, ", "));
    }
    node->set_assigned_device(devices[chosen].name);
  }
  return Status::OK();
}

}  // namespace weir
