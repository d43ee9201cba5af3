#include "weir/runtime/executor_plan.h"

#include <algorithm>

#include "weir/framework/kernel_registry.h"
#include "weir/graph/algorithm.h"
#include "weir/graph/control_flow_info.h"

namespace weir {
namespace {

ExecNodeKind KindOf(std::string_view op) {
  if (op == "Switch" || op == "RefSwitch") return ExecNodeKind::kSwitch;
  if (op == "Merge" || op == "RefMerge") return ExecNodeKind::kMerge;
  if (op == "Enter" || op == "RefEnter") return ExecNodeKind::kEnter;
  if (op == "Exit" || op == "RefExit") return ExecNodeKind::kExit;
  if (op == "NextIteration" || op == "RefNextIteration") return ExecNodeKind::kNextIteration;
  if (op == "LoopCond") return ExecNodeKind::kLoopCond;
  if (op == "ControlTrigger") return ExecNodeKind::kControlTrigger;
  if (op == "_Send" || op == "_HostSend") return ExecNodeKind::kSend;
  if (op == "_Recv" || op == "_HostRecv") return ExecNodeKind::kRecv;
  if (op == "Identity") return ExecNodeKind::kIdentity;
  return ExecNodeKind::kNormal;
}

using NodeItem = ExecutorPlan::NodeItem;

}  // namespace

Status ExecutorPlan::Build(const Graph& graph, Device* device, const KernelRegistry& kernels) {
  this->device = device;
  WEIR_ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(graph));
  // The frame each node runs in: an Enter in the frame around the one it
  // enters (its output is the child frame's), an Exit in the frame it leaves.
  WEIR_ASSIGN_OR_RETURN(ControlFlowInfo info, BuildControlFlowInfo(graph, order));
  frames.clear();
  for (const weir::FrameInfo& f : info.frames) {
    frames.emplace_back();
    frames.back().name = f.name;
    frames.back().parent = f.parent;
  }
  std::vector<int> node_frame(graph.num_node_ids(), 0);
  for (const Node* node : order) {
    const int frame = info.FrameOf(node);
    node_frame[node->id()] = IsEnterOp(node->type_string()) ? frames[frame].parent : frame;
  }
  // Dense ids: the nodes of each frame together (the root's first), in
  // topological order within it, so roots come first and the plan is laid
  // out in the order nodes tend to run.
  std::vector<std::vector<const Node*>> by_frame(frames.size());
  for (const Node* node : order) by_frame[node_frame[node->id()]].push_back(node);
  std::vector<const Node*> plan;
  plan.reserve(order.size());
  for (size_t f = 0; f < frames.size(); ++f) {
    frames[f].node_base = static_cast<int>(plan.size());
    frames[f].num_nodes = static_cast<int>(by_frame[f].size());
    plan.insert(plan.end(), by_frame[f].begin(), by_frame[f].end());
  }
  std::vector<int> dense(graph.num_node_ids(), -1);
  for (size_t i = 0; i < plan.size(); ++i) dense[plan[i]->id()] = static_cast<int>(i);

  items.resize(plan.size());
  for (size_t i = 0; i < plan.size(); ++i) {
    const Node* node = plan[i];
    NodeItem& item = items[i];
    ExecutorPlan::FrameInfo& frame = frames[node_frame[node->id()]];
    WEIR_ASSIGN_OR_RETURN(item.kernel, kernels.CreateKernel(device, node->def(), node->op_def()));
    item.kind = KindOf(node->type_string());
    item.is_async = item.kernel->AsAsync() != nullptr;
    item.is_expensive = item.kernel->IsExpensive() || item.is_async;
    item.runs_when_dead = item.kind == ExecNodeKind::kSend || item.kind == ExecNodeKind::kRecv;
    item.forwards_input = item.kind == ExecNodeKind::kEnter || item.kind == ExecNodeKind::kExit ||
                          item.kind == ExecNodeKind::kNextIteration ||
                          item.kind == ExecNodeKind::kLoopCond || item.kind == ExecNodeKind::kIdentity;
    item.outputs_may_be_unset = item.kind == ExecNodeKind::kSwitch;
    item.num_inputs = node->num_inputs();
    item.num_outputs = node->num_outputs();
    if (item.kind == ExecNodeKind::kNormal && !item.is_async && item.num_inputs == 0 &&
        item.num_outputs == 1) {
      item.constant_output = item.kernel->ConstantOutput();
    }
    if (item.kind == ExecNodeKind::kSwitch && (item.num_inputs != 2 || item.num_outputs != 2)) {
      return errors::InvalidArgument("Switch node ", node->Describe(),
                                     " must have 2 inputs and 2 outputs");
    }
    if (item.forwards_input && (item.num_inputs != 1 || item.num_outputs != 1)) {
      return errors::InvalidArgument("node ", node->Describe(),
                                     " must have one input and one output");
    }
    item.input_start = frame.num_inputs;
    frame.num_inputs += item.num_inputs;
    for (const Edge* e : node->data_inputs()) {
      if (e == nullptr) {
        return errors::InvalidArgument("node ", node->Describe(), " has an unconnected input");
      }
    }
    int32_t pending = static_cast<int32_t>(node->in_edges().size());
    int32_t pending_after_first = 0;  // added to `pending` in later iterations
    if (item.kind == ExecNodeKind::kMerge) {
      const int controls = pending - item.num_inputs;
      if (controls > PendingWord::kMaxMergeControls || item.num_inputs > PendingWord::kMaxMergeInputs) {
        return errors::InvalidArgument("Merge node ", node->Describe(), " has ", item.num_inputs,
                                       " inputs and ", controls, " control inputs; at most ",
                                       PendingWord::kMaxMergeInputs, " and ", PendingWord::kMaxMergeControls);
      }
      pending = controls * PendingWord::kMergeControlOne;
      for (const Edge* e : node->data_inputs()) {
        if (info.OnlyInFirstIteration(e->src())) pending_after_first += PendingWord::kMergeDeadOne;
      }
      for (int k = 0; k < item.num_inputs; ++k) {
        item.merge_indices.push_back(Tensor::Scalar<int32_t>(k));
      }
      if (item.num_outputs != 2) {
        return errors::InvalidArgument("Merge node ", node->Describe(), " must have 2 outputs");
      }
    } else if (pending == 0 && node_frame[node->id()] == 0) {
      roots.push_back(static_cast<int>(i));
    }
    frame.pending_init.push_back(pending);
    frame.pending_after_first.push_back(pending + pending_after_first);
    if (item.kind == ExecNodeKind::kExit) frame.exits.push_back(static_cast<int>(i));
    if (item.kind == ExecNodeKind::kEnter) {
      const AttrMap& attrs = node->def().attrs;
      item.child_frame = info.FrameOf(node);
      ++frames[item.child_frame].num_enters;
      bool is_constant = false;
      if (attrs.count("is_constant")) WEIR_RETURN_IF_ERROR(GetAttr(attrs, "is_constant", &is_constant));
      int64_t parallel = 10;
      if (attrs.count("parallel_iterations")) {
        WEIR_RETURN_IF_ERROR(GetAttr(attrs, "parallel_iterations", &parallel));
      }
      if (parallel < 1) {
        return errors::InvalidArgument("Enter node ", node->Describe(),
                                       " has parallel_iterations ", parallel, "; it must be >= 1");
      }
      item.is_constant_enter = is_constant;
      item.parallel_iterations = static_cast<int>(std::min<int64_t>(parallel, 1 << 30));
    }
  }
  auto dst_flags = [&](int dst) -> uint8_t {
    const ExecNodeKind kind = items[dst].kind;
    if (kind == ExecNodeKind::kMerge) return kToMerge;
    uint8_t flags = kind == ExecNodeKind::kControlTrigger ? kToControlTrigger : 0;
    if (plan[dst]->in_edges().size() == 1) {
      flags |= kToSingleInput;
      if (kind == ExecNodeKind::kExit) flags |= kToExit;
    }
    return flags;
  };
  for (size_t i = 0; i < plan.size(); ++i) {
    const Node* node = plan[i];
    NodeItem& item = items[i];
    std::vector<const Edge*> data, control;
    for (const Edge* e : node->out_edges()) (e->IsControlEdge() ? control : data).push_back(e);
    std::stable_sort(data.begin(), data.end(), [](const Edge* a, const Edge* b) {
      return a->src_output() < b->src_output();
    });
    item.edges_start = static_cast<int>(edges.size());
    item.num_edges = static_cast<int>(data.size());
    for (size_t k = 0; k < data.size(); ++k) {
      const Edge* e = data[k];
      const int dst = dense[e->dst()->id()];
      const bool is_last = k + 1 == data.size() || data[k + 1]->src_output() != e->src_output();
      uint8_t flags = dst_flags(dst);
      NodeItem& dst_item = items[dst];
      if ((item.constant_output != nullptr || item.is_constant_enter) &&
          dst_item.kind == ExecNodeKind::kNormal && !dst_item.is_async && e->dst_input() < 32) {
        flags |= kKeepsValue;
        dst_item.kept_inputs |= uint32_t{1} << e->dst_input();
        const int slot = dst_item.input_start + e->dst_input();
        frames[node_frame[e->dst()->id()]].kept_slots.push_back(slot);
      }
      edges.push_back(
          {dst, dst_item.input_start + e->dst_input(), e->src_output(), is_last, flags});
      if (item.kind == ExecNodeKind::kMerge && e->src_output() == 1) item.merge_index_used = true;
    }
    item.controls_start = static_cast<int>(control_edges.size());
    item.num_controls = static_cast<int>(control.size());
    for (const Edge* e : control) {
      const int dst = dense[e->dst()->id()];
      control_edges.push_back((dst << kControlFlagBits) | (dst_flags(dst) & ~kToExit));
    }
  }
  for (ExecutorPlan::FrameInfo& frame : frames) {
    if (frame.pending_after_first == frame.pending_init) frame.pending_after_first.clear();
    std::sort(frame.kept_slots.begin(), frame.kept_slots.end());
  }
  for (ExecutorPlan::FrameInfo& frame : frames) frame.runs_inline = true;
  frames[0].runs_inline = false;  // fed by the caller and by any thread
  for (size_t i = 0; i < plan.size(); ++i) {
    const NodeItem& item = items[i];
    if (item.is_expensive || item.is_async || item.kind == ExecNodeKind::kEnter ||
        item.kind == ExecNodeKind::kSend || item.kind == ExecNodeKind::kRecv) {
      frames[node_frame[plan[i]->id()]].runs_inline = false;
    }
  }
  for (int id : roots) has_expensive_root |= items[id].is_expensive;
  // In reverse topological order every successor's priority is known first.
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    NodeItem& item = items[dense[(*it)->id()]];
    int below = 0;
    for (const Edge* e : (*it)->out_edges()) {
      if (!IsBackEdge(e)) below = std::max(below, items[dense[e->dst()->id()]].priority);
    }
    item.priority = below + 1;
  }
  return Status::OK();
}

}  // namespace weir
