// The loop frame of every node (white paper §4.4), found from the Enter and
// Exit structure as TensorFlow's control flow v1 builds it: an Enter belongs
// to the frame it enters, an Exit to the frame it leaves, every other node to
// the frame of its inputs. Frames are named by Enter's `frame_name`; frame 0
// is the root (name ""). Passes that cut or reorder a graph with loops use it
// to keep every value in its frame.
#pragma once

#include <string>
#include <vector>

#include "weir/graph/graph.h"

namespace weir {

struct FrameInfo {
  std::string name;                  // empty for the root frame
  int parent = -1;                   // index of the enclosing frame; -1 for the root
  const Node* loop_cond = nullptr;   // the frame's LoopCond, if it has one
  int64_t parallel_iterations = 10;  // from the frame's first Enter
};

struct ControlFlowInfo {
  std::vector<FrameInfo> frames;  // parents before children; frames[0] is the root
  std::vector<int> frame_of;      // node id -> frame index (root for unknown ids)
  // Node id -> true if the node's outputs exist only in the first
  // iteration of their frame: they come from a non-constant Enter without
  // passing a Merge (a constant Enter's value reaches every iteration).
  std::vector<bool> first_iteration_only;

  // The frame a node runs in (an Enter's: the frame it enters).
  int FrameOf(const Node* node) const { return frame_of[node->id()]; }
  // The frame the node's outputs live in: an Exit's go to the parent frame.
  int OutputFrameOf(const Node* node) const;
  bool OnlyInFirstIteration(const Node* node) const { return first_iteration_only[node->id()]; }
  // True if the graph has a loop frame at all.
  bool has_loops() const { return frames.size() > 1; }
};

bool IsEnterOp(std::string_view op);
bool IsExitOp(std::string_view op);
bool IsNextIterationOp(std::string_view op);

// InvalidArgument naming the node for inconsistent structure: a node whose
// inputs come from different frames, an Exit or NextIteration outside any loop, a frame name
// entered from two different frames, an Enter without `frame_name`.
StatusOr<ControlFlowInfo> BuildControlFlowInfo(const Graph& graph);
// The same, given the graph's TopologicalOrder (algorithm.h).
StatusOr<ControlFlowInfo> BuildControlFlowInfo(const Graph& graph, const std::vector<Node*>& order);

}  // namespace weir
