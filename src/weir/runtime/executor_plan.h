// ExecutorPlan: what an Executor (executor.h) computes once per partition
// and every step only reads: a kernel and a kind per node, the out-edges
// with their destinations' input slots, and the loop frames (Enter's
// frame_name) with each frame's initial pending words. Ids are dense: the
// nodes of a frame are consecutive (the root frame's first), in topological
// order within it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "weir/base/status.h"
#include "weir/framework/op_kernel.h"
#include "weir/graph/graph.h"

namespace weir {

class KernelRegistry;

// What the executor does with a node beyond running its kernel, decided
// once in the plan so that the hot path never compares op names.
enum class ExecNodeKind : uint8_t {
  kNormal,
  kSwitch,          // one output live, the other dead
  kMerge,           // fires on its first live input
  kEnter,           // into a child frame
  kExit,            // back to the parent frame
  kNextIteration,   // into the next iteration
  kLoopCond,        // the loop's predicate
  kControlTrigger,  // runs (live) even if its inputs are dead
  kSend,            // transfers run even when dead, to pass the deadness on
  kRecv,
  kIdentity,        // a loop's and a branch's pivots: the executor moves the value
};

// The layout of a node's pending word in one iteration (ExecutorPlan
// gives each frame's initial words; the executor updates them).
struct PendingWord {
  // A node's pending word in one iteration. For most nodes: the number of
  // in-edges not yet delivered, a dead bit (some input was dead) and, for an
  // Exit, whether it ran dead. One word, so that the last delivery sees the
  // dead bit of every earlier one.
  static constexpr int32_t kDeadBit = 1 << 30;
  static constexpr int32_t kExitRanDeadBit = 1 << 29;
  static constexpr int32_t kCountMask = (1 << 29) - 1;

  // A Merge's word: it fires once, on its first live data input or when all
  // its data inputs are dead, and only after all its control inputs arrived.
  // Updated by compare-and-swap; the update that makes it ready sets kFired,
  // so exactly one thread runs it. The first live input claims the Merge,
  // writes its value into its own slot and then marks it written, so the
  // Merge never runs before its value is there.
  static constexpr int32_t kMergeLiveClaimed = 1;
  static constexpr int32_t kMergeLiveWritten = 2;
  static constexpr int32_t kMergeFired = 4;
  static constexpr int32_t kMergeForcedDead = 8;  // a dead Enter: no back edge will come
  static constexpr int kMergeControlShift = 4;
  static constexpr int32_t kMergeControlOne = 1 << kMergeControlShift;
  static constexpr int32_t kMergeControlMask = 0xfff << kMergeControlShift;
  static constexpr int kMergeDeadShift = 16;
  static constexpr int32_t kMergeDeadOne = 1 << kMergeDeadShift;
  static constexpr int kMaxMergeControls = 0xfff;
  static constexpr int kMaxMergeInputs = 0x7fff;
};

struct ExecutorPlan {
  // Flags on an edge about its destination, so delivery needs no look at it.
  static constexpr uint8_t kToMerge = 1;
  static constexpr uint8_t kToControlTrigger = 2;
  // The destination's only in-edge: it is ready now, no count to update (an
  // atomic read-modify-write is a good part of a cheap node's dispatch).
  static constexpr uint8_t kToSingleInput = 4;
  // An Exit (always with kToSingleInput here): a dead value only marks it, no
  // dispatch (every iteration but the last sends its Exits a dead value).
  static constexpr uint8_t kToExit = 8;
  // The source hands on the same tensor every time (a Const's, or an
  // is_constant Enter's in one frame invocation) to a kernel, which cannot
  // take it (the source keeps a reference): the slot keeps it between runs
  // of the destination (NodeItem::kept_inputs), and a delivery that finds it
  // there skips the copy and its reference count updates.
  static constexpr uint8_t kKeepsValue = 16;
  static constexpr int kControlFlagBits = 3;

  // A data edge as the plan stores it: where one output goes.
  struct EdgeInfo {
    int dst_id;
    int dst_slot;  // into the destination iteration's inputs
    int src_output;
    bool is_last;  // the output's last consumer: move instead of copy
    uint8_t dst_flags;
  };

  // A control edge: the destination id shifted by kControlFlagBits, plus its
  // kTo* flags.
  using ControlEdge = int;

  // Everything about a node that does not change between steps.
  struct NodeItem {
    std::unique_ptr<OpKernel> kernel;
    ExecNodeKind kind = ExecNodeKind::kNormal;
    bool is_async = false;
    bool is_expensive = false;
    bool runs_when_dead = false;  // _Send/_Recv forward deadness to their peer
    // Enter, Exit, NextIteration, LoopCond, Identity: the executor moves the value.
    bool forwards_input = false;
    bool outputs_may_be_unset = false;  // Switch: an unset output is dead
    bool is_constant_enter = false;
    // Const: its kernel's tensor (OpKernel::ConstantOutput), which the
    // executor hands on without calling the kernel.
    const Tensor* constant_output = nullptr;
    std::vector<Tensor> merge_indices;  // Merge: value_index of each input
    bool merge_index_used = false;      // Merge: an edge reads value_index
    int child_frame = -1;  // Enter: the frame it enters
    int parallel_iterations = 1;
    int input_start = 0;  // into its frame's input slots
    int num_inputs = 0;
    int num_outputs = 0;
    int edges_start = 0;  // into edges
    int num_edges = 0;
    int controls_start = 0;  // into control_edges
    int num_controls = 0;
    uint32_t kept_inputs = 0;  // bit i: input i comes by a kKeepsValue edge
    // Nodes on the longest path from here to a sink. Of the expensive nodes
    // ready at once, the one with the most work still behind it runs first
    // (list scheduling by "bottom level"): on two cores a short branch that
    // runs first can delay the critical path by its whole length.
    int priority = 0;
  };

  // A loop frame as the plan knows it (by Enter's frame_name); frame 0 is the
  // root. A frame's nodes have consecutive ids from node_base, so a node's
  // index in an iteration's arrays is its id minus node_base.
  struct FrameInfo {
    std::string name;
    int parent = -1;
    int node_base = 0;
    int num_nodes = 0;
    int num_inputs = 0;  // input slots of all its nodes
    int num_enters = 0;
    std::vector<int32_t> pending_init;  // per node of the frame
    // The same for iterations after the first: a Merge's inputs that exist in
    // the first iteration only (from an Enter) count as dead already, so a
    // Merge whose back edges are all dead is dead. Empty: pending_init.
    std::vector<int32_t> pending_after_first;
    std::vector<int> exits;             // ids of its Exit nodes
    std::vector<int> kept_slots;        // input slots fed by kKeepsValue edges, ascending
    // Every node of the frame is cheap and synchronous, and none enters a
    // child frame: all nodes of an iteration that nothing outside it can
    // reach any more run on the thread that started it, so that thread may
    // update the iteration's pending words without read-modify-writes.
    bool runs_inline = false;
  };

  // Builds the plan of `graph` on `device`, a kernel from `kernels` per
  // node. Errors name the node: no kernel for its dtypes, bad attrs, a
  // cycle, inputs from two frames, an Exit or NextIteration outside a loop.
  Status Build(const Graph& graph, Device* device, const KernelRegistry& kernels);

  Device* device = nullptr;
  std::vector<NodeItem> items;
  std::vector<EdgeInfo> edges;
  std::vector<ControlEdge> control_edges;
  std::vector<int> roots;  // root-frame nodes without inputs
  bool has_expensive_root = false;
  std::vector<FrameInfo> frames;
};

}  // namespace weir
