#include "weir/graph/partition.h"

#include "weir/base/logging.h"

namespace weir {
namespace {

NodeDef MakeTransferNode(const std::string& op, const std::string& name, DType dtype,
                         const std::string& tensor_name, const std::string& src_device,
                         const std::string& dst_device, uint64_t incarnation) {
  NodeDef def;
  def.name = name;
  def.op = op;
  def.attrs[op == "_Send" ? "T" : "tensor_type"] = dtype;
  def.attrs["tensor_name"] = tensor_name;
  def.attrs["send_device"] = src_device;
  def.attrs["send_device_incarnation"] = static_cast<int64_t>(incarnation);
  def.attrs["recv_device"] = dst_device;
  def.attrs["client_terminated"] = false;
  return def;
}

}  // namespace

Status PartitionGraph(const Graph& graph,
                      const std::function<uint64_t(const std::string&)>& incarnation,
                      std::map<std::string, GraphDef>* partitions) {
  partitions->clear();
  std::vector<int> def_index(graph.num_node_ids(), -1);
  for (const Node* node : graph.nodes()) {
    const std::string& device = node->assigned_device();
    if (device.empty()) {
      return errors::Internal("node ", node->Describe(), " reached partitioning unplaced");
    }
    GraphDef& part = (*partitions)[device];
    NodeDef def = node->def();
    def.inputs.clear();
    def.device = device;
    def_index[node->id()] = static_cast<int>(part.nodes.size());
    part.nodes.push_back(std::move(def));
  }
  // (src node, src output, dst device) -> the name of its _Recv.
  std::map<std::tuple<int, int, std::string>, std::string> recvs;
  auto recv_for = [&](const Node* src, int output, const std::string& dst_device) {
    auto key = std::make_tuple(src->id(), output, dst_device);
    auto it = recvs.find(key);
    if (it != recvs.end()) return it->second;
    const std::string& src_device = src->assigned_device();
    bool control = output == Edge::kControlSlot;
    std::string tensor_name = control ? StrCat("edge_", src->name(), "_control")
                                      : StrCat("edge_", src->name(), "_", output);
    std::string suffix = StrCat(control ? "control" : std::to_string(output), "_to_",
                                (*partitions)[dst_device].nodes.size());
    GraphDef& src_part = (*partitions)[src_device];
    std::string sent = src->name() + (output > 0 ? StrCat(":", output) : "");
    DType dtype = control ? DT_FLOAT : src->output_type(output);
    if (control) {
      // A scalar that exists only to carry "src has run" across devices.
      NodeDef dummy;
      dummy.name = StrCat("_control/", src->name(), "/", suffix);
      dummy.op = "Const";
      dummy.device = src_device;
      dummy.attrs["dtype"] = DT_FLOAT;
      dummy.attrs["value"] = Tensor::Scalar<float>(0.0f);
      dummy.inputs.push_back("^" + src->name());
      sent = dummy.name;
      src_part.nodes.push_back(std::move(dummy));
    }
    NodeDef send = MakeTransferNode("_Send", StrCat("_send/", src->name(), "/", suffix), dtype,
                                    tensor_name, src_device, dst_device,
                                    incarnation(src_device));
    send.device = src_device;
    send.inputs.push_back(sent);
    src_part.nodes.push_back(std::move(send));
    NodeDef recv = MakeTransferNode("_Recv", StrCat("_recv/", src->name(), "/", suffix), dtype,
                                    tensor_name, src_device, dst_device,
                                    incarnation(src_device));
    recv.device = dst_device;
    std::string recv_name = recv.name;
    (*partitions)[dst_device].nodes.push_back(std::move(recv));
    recvs.emplace(key, recv_name);
    return recv_name;
  };
  for (const Node* node : graph.nodes()) {
    const std::string& device = node->assigned_device();
    std::vector<std::string> inputs;
    inputs.reserve(node->in_edges().size());
    for (const Edge* e : node->data_inputs()) {
      if (e == nullptr) continue;  // unconnected; the partition's import reports it
      const Node* src = e->src();
      inputs.push_back(src->assigned_device() == device
                           ? TensorId{src->name(), e->src_output()}.ToString()
                           : recv_for(src, e->src_output(), device));
    }
    for (const Edge* e : node->control_inputs()) {
      const Node* src = e->src();
      bool local = src->assigned_device() == device;
      inputs.push_back("^" + (local ? src->name() : recv_for(src, Edge::kControlSlot, device)));
    }
    NodeDef& def = (*partitions)[device].nodes[def_index[node->id()]];
    def.inputs = std::move(inputs);
  }
  return Status::OK();
}

}  // namespace weir
