#include "weir/graph/partition.h"

#include <cctype>

#include "weir/base/logging.h"

namespace weir {
namespace {

constexpr std::string_view kSendPrefix = "_send/";
constexpr std::string_view kRecvPrefix = "_recv/";

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

NodeDef MakeCast(const std::string& name, const std::string& input, DType from, DType to,
                 const std::string& device) {
  NodeDef def;
  def.name = name;
  def.op = "Cast";
  def.device = device;
  def.attrs["SrcT"] = from;
  def.attrs["DstT"] = to;
  def.attrs["Truncate"] = false;  // round to nearest even
  def.inputs.push_back(input);
  return def;
}

// A device name as node-name characters: "/job:a/task:0/device:CPU:1" ->
// "job_a/task_0/device_CPU_1". Transfer names carry the destination so
// that sends of one tensor to several devices get distinct names.
std::string DeviceForName(const std::string& device) {
  std::string out;
  out.reserve(device.size());
  for (char c : device) {
    bool ok =
        std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '/';
    if (c == '/' && out.empty()) continue;
    out.push_back(ok ? c : '_');
  }
  return out;
}

}  // namespace

std::string_view TransferPairName(std::string_view node_name) {
  if (node_name.starts_with(kSendPrefix)) return node_name.substr(kSendPrefix.size());
  if (node_name.starts_with(kRecvPrefix)) return node_name.substr(kRecvPrefix.size());
  return {};
}

bool IsSendName(std::string_view node_name) { return node_name.starts_with(kSendPrefix); }

Status PartitionGraph(const Graph& graph, const PartitionOptions& options,
                      std::map<std::string, GraphDef>* partitions,
                      std::vector<std::string>* changes) {
  partitions->clear();
  RecvSchedule schedule;
  if (options.schedule_recvs) {
    WEIR_ASSIGN_OR_RETURN(schedule, ScheduleRecvs(graph, options.recv_schedule, changes));
  }
  auto incarnation = [&](const std::string& device) -> uint64_t {
    return options.incarnation ? options.incarnation(device) : 0;
  };
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
  int lossy_transfers = 0;
  // (src node, src output, dst device) -> what its consumers there read.
  std::map<TransferKey, std::string> recvs;
  auto recv_for = [&](const Node* src, int output, const std::string& dst_device) {
    TransferKey key{src->id(), output, dst_device};
    auto it = recvs.find(key);
    if (it != recvs.end()) return it->second;
    const std::string& src_device = src->assigned_device();
    bool control = output == Edge::kControlSlot;
    std::string tensor_name = control ? StrCat("edge_", src->name(), "_control")
                                      : StrCat("edge_", src->name(), "_", output);
    std::string suffix =
        StrCat(control ? "control" : std::to_string(output), "/to/", DeviceForName(dst_device));
    GraphDef& src_part = (*partitions)[src_device];
    GraphDef& dst_part = (*partitions)[dst_device];
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
    const bool lossy = options.lossy_float_transfers && !control && dtype == DT_FLOAT;
    if (lossy) {
      NodeDef narrow = MakeCast(StrCat("_lossy/", src->name(), "/", suffix), sent, DT_FLOAT,
                                DT_BFLOAT16, src_device);
      sent = narrow.name;
      src_part.nodes.push_back(std::move(narrow));
      dtype = DT_BFLOAT16;
      ++lossy_transfers;
    }
    NodeDef send = MakeTransferNode("_Send", StrCat(kSendPrefix, src->name(), "/", suffix), dtype,
                                    tensor_name, src_device, dst_device, incarnation(src_device));
    send.device = src_device;
    send.inputs.push_back(sent);
    src_part.nodes.push_back(std::move(send));
    NodeDef recv = MakeTransferNode("_Recv", StrCat(kRecvPrefix, src->name(), "/", suffix), dtype,
                                    tensor_name, src_device, dst_device, incarnation(src_device));
    recv.device = dst_device;
    auto scheduled = schedule.start_after.find(key);
    if (scheduled != schedule.start_after.end()) {
      recv.inputs.push_back("^" + scheduled->second->name());
    }
    std::string received = recv.name;
    dst_part.nodes.push_back(std::move(recv));
    if (lossy) {
      NodeDef widen = MakeCast(StrCat("_widen/", src->name(), "/", suffix), received, DT_BFLOAT16,
                               DT_FLOAT, dst_device);
      received = widen.name;
      dst_part.nodes.push_back(std::move(widen));
    }
    recvs.emplace(key, received);
    return received;
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
  if (changes != nullptr && lossy_transfers > 0) {
    changes->push_back(StrCat(lossy_transfers, " float32 transfers sent as bfloat16"));
  }
  return Status::OK();
}

}  // namespace weir
