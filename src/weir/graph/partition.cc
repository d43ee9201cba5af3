#include "weir/graph/partition.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <set>

#include "weir/base/logging.h"
#include "weir/graph/control_flow_info.h"

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

// A node of the control loops: a float scalar flows through them.
NodeDef MakeFloatNode(const std::string& name, const std::string& op, const std::string& device,
                      std::vector<std::string> inputs) {
  NodeDef def;
  def.name = name;
  def.op = op;
  def.device = device;
  def.inputs = std::move(inputs);
  if (op == "Const") {
    def.attrs["dtype"] = DT_FLOAT;
    def.attrs["value"] = Tensor::Scalar<float>(0.0f);
  } else {
    def.attrs["T"] = DT_FLOAT;
  }
  return def;
}

// A device or frame name as node-name characters: "/job:a/task:0/device:CPU:1"
// -> "job_a/task_0/device_CPU_1". Transfer names carry the destination so
// that sends of one tensor to several devices get distinct names.
std::string NameFragment(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    bool ok =
        std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '/';
    if (c == '/' && out.empty()) continue;
    out.push_back(ok ? c : '_');
  }
  return out;
}

// One device's control state machine for one loop frame (white paper §4.4):
//   Enter -> Merge -> Switch(pred) -> NextIteration -> Merge,  Switch:0 -> Exit
// where pred is the frame's LoopCond, received from its device each
// iteration. It gives the device the loop's iterations in step with the
// LoopCond's device; the device's _Recvs of the frame wait for `merge`, so
// each runs once per iteration, in the iteration its value was sent in (or
// for `enter`, to run in the first iteration only, where their value is).
struct ControlLoop {
  std::string enter;   // live in the first iteration only
  std::string merge;   // live once per iteration of the frame on this device
  std::string pivot;   // Switch:1: live in iterations the loop body runs
};

class Partitioner {
 public:
  Partitioner(const Graph& graph, const PartitionOptions& options,
              std::map<std::string, GraphDef>* partitions)
      : graph_(graph), options_(options), partitions_(*partitions) {}

  Status Run(std::vector<std::string>* changes);

 private:
  uint64_t Incarnation(const std::string& device) const {
    return options_.incarnation ? options_.incarnation(device) : 0;
  }
  // The frame a transfer of `src`'s outputs runs in (0 without loops).
  int ValueFrame(const Node* src) const { return loops_ ? loops_->OutputFrameOf(src) : 0; }
  // What a consumer on `device` reads for in-edge `e` (a data input, or
  // the node after "^" for a control input).
  std::string InputFor(const Edge* e, const std::string& device);
  // The name that consumers on `dst_device` read for `src`:`output`
  // (Edge::kControlSlot: a control edge): its _Recv, or the Cast after it.
  std::string RecvFor(const Node* src, int output, const std::string& dst_device);
  // A copy of `node`, an Enter or a NextIteration, on `device`, reading its
  // inputs there: a value crosses devices before it changes frame or
  // iteration, never after. (A _Recv in iteration i+1 would wait for a
  // _Send that ran in iteration i; and a loop's Merge must see its Enter,
  // not a _Recv, to know that a dead Enter means no back edge will come.)
  std::string CopyOn(const Node* node, const std::string& device);
  Status AddControlLoops();

  const Graph& graph_;
  const PartitionOptions& options_;
  std::map<std::string, GraphDef>& partitions_;
  RecvSchedule schedule_;
  std::unique_ptr<ControlFlowInfo> loops_;  // null: the graph has no Enter
  std::map<TransferKey, std::string> recvs_;
  std::map<std::pair<int, std::string>, std::string> copies_;  // (node id, device)
  std::vector<bool> read_locally_;  // node id -> some node on its own device reads it
  std::map<std::pair<int, std::string>, ControlLoop> control_loops_;  // (frame, device)
  int lossy_transfers_ = 0;
};

std::string Partitioner::InputFor(const Edge* e, const std::string& device) {
  const Node* src = e->src();
  if (src->assigned_device() == device) {
    read_locally_[src->id()] = true;
    return e->IsControlEdge() ? src->name() : TensorId{src->name(), e->src_output()}.ToString();
  }
  if (loops_ != nullptr &&
      (IsNextIterationOp(src->type_string()) || IsEnterOp(src->type_string()))) {
    return CopyOn(src, device);
  }
  return RecvFor(src, e->src_output(), device);
}

std::string Partitioner::CopyOn(const Node* node, const std::string& device) {
  auto [it, inserted] = copies_.try_emplace({node->id(), device});
  if (!inserted) return it->second;
  NodeDef def = node->def();
  const char* kind = IsEnterOp(node->type_string()) ? "_enter/" : "_next/";
  def.name = StrCat(kind, node->name(), "/to/", NameFragment(device));
  def.device = device;
  def.inputs.clear();
  for (const Edge* e : node->data_inputs()) {
    if (e != nullptr) def.inputs.push_back(InputFor(e, device));
  }
  for (const Edge* e : node->control_inputs()) def.inputs.push_back("^" + InputFor(e, device));
  it->second = def.name;
  partitions_[device].nodes.push_back(std::move(def));
  return it->second;
}

std::string Partitioner::RecvFor(const Node* src, int output, const std::string& dst_device) {
  TransferKey key{src->id(), output, dst_device};
  auto it = recvs_.find(key);
  if (it != recvs_.end()) return it->second;
  const std::string& src_device = src->assigned_device();
  bool control = output == Edge::kControlSlot;
  std::string tensor_name = control ? StrCat("edge_", src->name(), "_control")
                                    : StrCat("edge_", src->name(), "_", output);
  std::string suffix =
      StrCat(control ? "control" : std::to_string(output), "/to/", NameFragment(dst_device));
  GraphDef& src_part = partitions_[src_device];
  std::string sent = src->name() + (output > 0 ? StrCat(":", output) : "");
  DType dtype = control ? DT_FLOAT : src->output_type(output);
  if (control) {
    // A scalar that exists only to carry "src has run" across devices.
    NodeDef dummy = MakeFloatNode(StrCat("_control/", src->name(), "/", suffix), "Const",
                                  src_device, {"^" + src->name()});
    sent = dummy.name;
    src_part.nodes.push_back(std::move(dummy));
  }
  const bool lossy = options_.lossy_float_transfers && !control && dtype == DT_FLOAT;
  if (lossy) {
    NodeDef narrow = MakeCast(StrCat("_lossy/", src->name(), "/", suffix), sent, DT_FLOAT,
                              DT_BFLOAT16, src_device);
    sent = narrow.name;
    src_part.nodes.push_back(std::move(narrow));
    dtype = DT_BFLOAT16;
    ++lossy_transfers_;
  }
  NodeDef send = MakeTransferNode("_Send", StrCat(kSendPrefix, src->name(), "/", suffix), dtype,
                                  tensor_name, src_device, dst_device, Incarnation(src_device));
  send.device = src_device;
  send.inputs.push_back(sent);
  src_part.nodes.push_back(std::move(send));
  NodeDef recv = MakeTransferNode("_Recv", StrCat(kRecvPrefix, src->name(), "/", suffix), dtype,
                                  tensor_name, src_device, dst_device, Incarnation(src_device));
  recv.device = dst_device;
  auto scheduled = schedule_.start_after.find(key);
  if (scheduled != schedule_.start_after.end()) {
    recv.inputs.push_back("^" + scheduled->second->name());
  }
  // A _Recv has no input to place it in a frame: the control loop does,
  // so that it runs in each iteration its _Send runs in (the first only,
  // for a value that comes from an Enter and passed no Merge).
  if (const int frame = ValueFrame(src); frame != 0) {
    auto loop = control_loops_.find({frame, dst_device});
    CHECK(loop != control_loops_.end()) << "no control loop for " << recv.name;
    const bool first_only = loops_->OnlyInFirstIteration(src);
    recv.inputs.push_back("^" + (first_only ? loop->second.enter : loop->second.merge));
  }
  std::string received = recv.name;
  GraphDef& dst_part = partitions_[dst_device];
  dst_part.nodes.push_back(std::move(recv));
  if (lossy) {
    NodeDef widen = MakeCast(StrCat("_widen/", src->name(), "/", suffix), received, DT_BFLOAT16,
                             DT_FLOAT, dst_device);
    received = widen.name;
    dst_part.nodes.push_back(std::move(widen));
  }
  recvs_.emplace(key, received);
  return received;
}

Status Partitioner::AddControlLoops() {
  const std::vector<FrameInfo>& frames = loops_->frames;
  // The devices each frame runs on: those of its nodes and of both ends
  // of its transfers.
  std::vector<std::set<std::string>> devices(frames.size());
  for (const Node* node : graph_.nodes()) {
    const std::string& device = node->assigned_device();
    devices[loops_->FrameOf(node)].insert(device);
    for (const Edge* e : node->in_edges()) {
      const std::string& src_device = e->src()->assigned_device();
      if (src_device == device) continue;
      const int frame = ValueFrame(e->src());
      devices[frame].insert(src_device);
      devices[frame].insert(device);
    }
  }
  // A device that runs a child frame's control loop runs the parent's too:
  // the parent's iterations start the child's. Children come after parents.
  for (size_t f = frames.size() - 1; f > 0; --f) {
    if (devices[f].size() > 1 && frames[f].parent > 0) {
      devices[frames[f].parent].insert(devices[f].begin(), devices[f].end());
    }
  }
  std::set<std::string> used_names;
  for (size_t f = 1; f < frames.size(); ++f) {
    if (devices[f].size() < 2) continue;
    const FrameInfo& frame = frames[f];
    if (frame.loop_cond == nullptr) {
      return errors::InvalidArgument("loop frame '", frame.name, "' runs on ", devices[f].size(),
                                     " devices (", *devices[f].begin(), ", ", *devices[f].rbegin(),
                                     ") but has no LoopCond to step them together");
    }
    std::string frame_part = NameFragment(frame.name);
    if (!used_names.insert(frame_part).second) frame_part += StrCat("_", f);
    const std::string& cond_device = frame.loop_cond->assigned_device();
    for (const std::string& device : devices[f]) {
      const std::string base = StrCat("_loop/", frame_part, "/", NameFragment(device), "/");
      std::vector<NodeDef>& nodes = partitions_[device].nodes;
      std::string start;
      if (frame.parent == 0) {
        nodes.push_back(MakeFloatNode(base + "start", "Const", device, {}));
        start = base + "start";
      } else {
        // Entered once per iteration of the parent in which the body runs,
        // as the frame's own Enters are (they read from the parent's body).
        start = control_loops_.at({frame.parent, device}).pivot;
      }
      NodeDef enter = MakeFloatNode(base + "enter", "Enter", device, {start});
      enter.attrs["frame_name"] = frame.name;
      enter.attrs["is_constant"] = false;
      enter.attrs["parallel_iterations"] = frame.parallel_iterations;
      nodes.push_back(std::move(enter));
      NodeDef merge =
          MakeFloatNode(base + "merge", "Merge", device, {base + "enter", base + "next"});
      merge.attrs["N"] = 2;
      nodes.push_back(std::move(merge));
      control_loops_[{static_cast<int>(f), device}] = {base + "enter", base + "merge",
                                                       base + "switch:1"};
      // The predicate's _Recv waits for this loop's merge (just registered).
      std::string pred =
          device == cond_device ? frame.loop_cond->name() : RecvFor(frame.loop_cond, 0, device);
      nodes.push_back(MakeFloatNode(base + "switch", "Switch", device, {base + "merge", pred}));
      nodes.push_back(MakeFloatNode(base + "next", "NextIteration", device, {base + "switch:1"}));
      nodes.push_back(MakeFloatNode(base + "exit", "Exit", device, {base + "switch"}));
    }
  }
  return Status::OK();
}

Status Partitioner::Run(std::vector<std::string>* changes) {
  partitions_.clear();
  if (options_.schedule_recvs) {
    WEIR_ASSIGN_OR_RETURN(schedule_, ScheduleRecvs(graph_, options_.recv_schedule, changes));
  }
  std::vector<int> def_index(graph_.num_node_ids(), -1);
  read_locally_.assign(graph_.num_node_ids(), false);
  bool has_enter = false;
  for (const Node* node : graph_.nodes()) {
    const std::string& device = node->assigned_device();
    if (device.empty()) {
      return errors::Internal("node ", node->Describe(), " reached partitioning unplaced");
    }
    has_enter = has_enter || IsEnterOp(node->type_string());
    GraphDef& part = partitions_[device];
    NodeDef def = node->def();
    def.inputs.clear();
    def.device = device;
    def_index[node->id()] = static_cast<int>(part.nodes.size());
    part.nodes.push_back(std::move(def));
  }
  if (has_enter && partitions_.size() > 1) {
    WEIR_ASSIGN_OR_RETURN(ControlFlowInfo info, BuildControlFlowInfo(graph_));
    loops_ = std::make_unique<ControlFlowInfo>(std::move(info));
    WEIR_RETURN_IF_ERROR(AddControlLoops());
  }
  auto wire = [&](const Node* node) {
    const std::string& device = node->assigned_device();
    std::vector<std::string> inputs;
    inputs.reserve(node->in_edges().size());
    for (const Edge* e : node->data_inputs()) {
      if (e == nullptr) continue;  // unconnected; the partition's import reports it
      inputs.push_back(InputFor(e, device));
    }
    for (const Edge* e : node->control_inputs()) inputs.push_back("^" + InputFor(e, device));
    partitions_[device].nodes[def_index[node->id()]].inputs = std::move(inputs);
  };
  // An Enter or NextIteration whose consumers are all on other devices, each
  // reading its own copy there, is left out with its inputs' transfers,
  // unless a copy of another reads it on its device.
  std::vector<const Node*> maybe_unused;
  for (const Node* node : graph_.nodes()) {
    if (loops_ != nullptr && !node->out_edges().empty() &&
        (IsEnterOp(node->type_string()) || IsNextIterationOp(node->type_string())) &&
        std::none_of(node->out_edges().begin(), node->out_edges().end(), [&](const Edge* e) {
          return e->dst()->assigned_device() == node->assigned_device();
        })) {
      maybe_unused.push_back(node);
    } else {
      wire(node);
    }
  }
  for (bool more = true; more;) {
    more = false;
    for (const Node*& node : maybe_unused) {
      if (node != nullptr && read_locally_[node->id()]) {
        wire(node);
        node = nullptr;
        more = true;
      }
    }
  }
  std::set<std::string> unused;
  for (const Node* node : maybe_unused) {
    if (node != nullptr) unused.insert(node->name());
  }
  if (!unused.empty()) {
    for (auto& [device, part] : partitions_) {
      std::erase_if(part.nodes, [&](const NodeDef& def) { return unused.count(def.name) > 0; });
    }
  }
  if (changes != nullptr && !control_loops_.empty()) {
    changes->push_back(
        StrCat(control_loops_.size(), " control loops keep the devices of loop frames in step"));
  }
  if (changes != nullptr && lossy_transfers_ > 0) {
    changes->push_back(StrCat(lossy_transfers_, " float32 transfers sent as bfloat16"));
  }
  return Status::OK();
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
  return Partitioner(graph, options, partitions).Run(changes);
}

}  // namespace weir
