#include "weir/graph/control_flow_info.h"

#include <map>

#include "weir/graph/algorithm.h"

namespace weir {
namespace {

std::string FrameName(const ControlFlowInfo& info, int frame) {
  return frame == 0 ? std::string("the root frame") : "frame '" + info.frames[frame].name + "'";
}

// The frame a node's inputs must come from: an Enter reads from the frame
// around the one it enters.
int InputFrameOf(const ControlFlowInfo& info, const Node* node) {
  const int frame = info.FrameOf(node);
  return IsEnterOp(node->type_string()) ? info.frames[frame].parent : frame;
}

}  // namespace

bool IsEnterOp(std::string_view op) { return op == "Enter" || op == "RefEnter"; }
bool IsExitOp(std::string_view op) { return op == "Exit" || op == "RefExit"; }
bool IsNextIterationOp(std::string_view op) {
  return op == "NextIteration" || op == "RefNextIteration";
}

int ControlFlowInfo::OutputFrameOf(const Node* node) const {
  const int frame = FrameOf(node);
  return IsExitOp(node->type_string()) ? frames[frame].parent : frame;
}

StatusOr<ControlFlowInfo> BuildControlFlowInfo(const Graph& graph) {
  WEIR_ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(graph));
  return BuildControlFlowInfo(graph, order);
}

StatusOr<ControlFlowInfo> BuildControlFlowInfo(const Graph& graph, const std::vector<Node*>& order) {
  ControlFlowInfo info;
  info.frames.push_back(FrameInfo{});
  info.frame_of.assign(graph.num_node_ids(), 0);
  info.first_iteration_only.assign(graph.num_node_ids(), false);
  // Per frame: entered with some value that its parent has in every iteration.
  std::vector<bool> entered_every_iteration = {true};
  std::map<std::string, int, std::less<>> frame_by_name;
  // In topological order every input but a back edge is known already.
  for (const Node* node : order) {
    int input_frame = -1;
    const Node* first_src = nullptr;
    bool any_first_only = false, any_every = false, back_edge = false;
    for (const Edge* e : node->in_edges()) {
      if (IsBackEdge(e)) {
        back_edge = true;
        continue;
      }
      (info.OnlyInFirstIteration(e->src()) ? any_first_only : any_every) = true;
      const int frame = info.OutputFrameOf(e->src());
      if (input_frame < 0) {
        input_frame = frame;
        first_src = e->src();
      } else if (frame != input_frame) {
        return errors::InvalidArgument(
            "node ", node->Describe(), " has inputs from ", FrameName(info, input_frame), " ('",
            first_src->name(), "') and ", FrameName(info, frame), " ('", e->src()->name(), "')");
      }
    }
    if (input_frame < 0) input_frame = 0;
    int frame = input_frame;
    const std::string& op = node->type_string();
    if (IsEnterOp(op)) {
      std::string name;
      Status s = GetAttr(node->def().attrs, "frame_name", &name);
      if (!s.ok() || name.empty()) {
        return errors::InvalidArgument("Enter node ", node->Describe(), " has no frame_name");
      }
      auto [it, inserted] = frame_by_name.try_emplace(name, static_cast<int>(info.frames.size()));
      if (inserted) {
        FrameInfo child;
        child.name = name;
        child.parent = input_frame;
        int64_t parallel = 0;
        if (GetAttr(node->def().attrs, "parallel_iterations", &parallel).ok() && parallel > 0) {
          child.parallel_iterations = parallel;
        }
        info.frames.push_back(std::move(child));
        entered_every_iteration.push_back(false);
      } else if (info.frames[it->second].parent != input_frame) {
        return errors::InvalidArgument("frame '", name, "' is entered from ",
                                       FrameName(info, info.frames[it->second].parent), " and, by ",
                                       node->Describe(), ", from ", FrameName(info, input_frame));
      }
      frame = it->second;
      if (!any_first_only) entered_every_iteration[frame] = true;
      bool is_constant = false;
      (void)GetAttr(node->def().attrs, "is_constant", &is_constant);
      info.first_iteration_only[node->id()] = !is_constant;
    } else if (IsExitOp(op)) {
      if (frame == 0) {
        return errors::InvalidArgument("Exit node ", node->Describe(), " is not inside a loop");
      }
      // Its value reaches the parent's iterations that entered the frame.
      const int parent = info.frames[frame].parent;
      info.first_iteration_only[node->id()] = parent != 0 && !entered_every_iteration[frame];
    } else if (IsNextIterationOp(op) && frame == 0) {
      return errors::InvalidArgument("NextIteration node ", node->Describe(),
                                     " is not inside a loop");
    } else if (frame != 0) {
      if (op == "LoopCond" && info.frames[frame].loop_cond == nullptr) {
        info.frames[frame].loop_cond = node;
      }
      // A Merge runs on any input, and NextIteration feeds iterations after
      // the first; any other node needs all its inputs.
      const bool merge = op == "Merge" || op == "RefMerge";
      info.first_iteration_only[node->id()] =
          !IsNextIterationOp(op) && (merge ? !any_every && !back_edge : any_first_only);
    }
    info.frame_of[node->id()] = frame;
  }
  // Back edges (out of NextIteration) stay in their frame.
  for (const Node* node : order) {
    for (const Edge* e : node->in_edges()) {
      if (!IsBackEdge(e)) continue;
      const int from = info.OutputFrameOf(e->src());
      const int to = InputFrameOf(info, node);
      if (from != to) {
        return errors::InvalidArgument("node ", node->Describe(), " in ", FrameName(info, to),
                                       " has a back edge from ", e->src()->Describe(), " in ",
                                       FrameName(info, from));
      }
    }
  }
  return info;
}

}  // namespace weir
