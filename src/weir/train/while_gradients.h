// The loop part of AddSymbolicGradients (internal to train/): gradients
// through while loops as TensorFlow control flow v1 builds them (OSDI 3.4,
// white paper 4.4), found from the graph itself (Enter frame names and the
// Merge/Switch/LoopCond/NextIteration/Exit around them), so loops imported
// from TensorFlow differentiate like built ones.
//
// The forward loop counts its iterations; a backward loop in a frame of its
// own runs that many, applying the body ops' gradient functions. A forward
// value the backward body needs is pushed onto a stack in every forward
// iteration and popped in reverse (values in a cond branch are popped only
// where the branch ran); a value from outside the loop enters the backward
// frame as a constant; gradients of captured tensors are summed over the
// iterations in an accumulator loop variable. A loop variable or captured
// tensor that is a variant (a TensorList: a TensorArray the loop writes or
// reads) carries the gradients of the values in it, as a list of them.
//
// Nodes built for the backward pass are built in a GradContext (the root,
// or a backward frame) and then moved into it: every input from another
// frame becomes a stack pop or a constant Enter (memoized per tensor).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "weir/graph/control_flow_info.h"
#include "weir/graph/scope.h"
#include "weir/train/indexed_slices.h"

namespace weir {

using TensorKey = std::pair<int, int>;  // (node id, output index)

// The dense tensor a gradient stands for: sparse rows scatter-added
// (ScatterNd adds repeated indices) into zeros of the dense shape.
Output Densify(const Scope& scope, const Gradient& g);

// Where backward nodes are built: the root frame, or the backward frame of
// one forward loop, nested like the forward loops are.
struct GradContext {
  int frame = 0;     // in WhileGradients' frame table; 0 is the root
  int forward = 0;   // the forward frame this context differentiates
  GradContext* parent = nullptr;
  std::string frame_name;
  int64_t parallel_iterations = 10;
  Node* pivot = nullptr;                // live exactly in the iterations that run the body
  std::map<TensorKey, Output> values;   // forward or outer tensor -> its value here
  std::vector<Node*> pops;              // ordered before the next iteration
};

class WhileGradients {
 public:
  // A gradient pass over the nodes of one frame (loops inside it taken
  // whole), built in `ctx`: gradients of `xs` (invalid where none reaches)
  // from `ys` seeded with `seeds`.
  using RegionPass = std::function<Status(
      GradContext* ctx, int region, const std::vector<Output>& ys, const std::vector<Output>& seeds,
      const std::vector<Output>& xs, std::vector<Gradient>* grads)>;

  // Analyzes the frames of `scope`'s graph as it is now.
  static StatusOr<std::unique_ptr<WhileGradients>> Create(const Scope& scope);

  GradContext* root() { return &root_; }
  // The frame a node's outputs live in (an Exit's: the loop's parent).
  int OutputFrameOf(const Node* node) const;
  bool has_loops() const { return frames_.size() > 1; }

  // A region pass sees one unit per node of `region` (loop structure left
  // out) and one per loop directly inside it (its Enters, body and Exits):
  // the node's id, or kLoopUnit - frame for a loop; kNoUnit when the node
  // is not in the region or was built after Create.
  static constexpr int kNoUnit = -1;
  static constexpr int kLoopUnit = -2;
  int UnitOf(const Node* node, int region) const;
  static bool IsLoopUnit(int unit) { return unit <= kLoopUnit; }
  static int LoopFrameOf(int unit) { return kLoopUnit - unit; }
  // The Enter and Exit nodes of a forward frame.
  const std::vector<Node*>& enters(int frame) const { return enters_[frame]; }
  const std::vector<Node*>& exits(int frame) const { return exits_[frame]; }

  // Runs `build`, then moves every node it added into `ctx`. A node it
  // built may be replaced there (a Shape the graph knows is a constant):
  // read what `build` returned through Resolve.
  Status InContext(GradContext* ctx, const std::function<Status()>& build);
  Output Resolve(const Output& t) const;
  // Removes the replaced nodes; call once the gradients are built.
  Status Finish();

  // The gradient of loop `frame` (a child of ctx->forward): `exit_grads`
  // holds one entry per exits(frame) (invalid: none), `wanted` the Enters
  // whose inputs need gradients. Sets one entry per enters(frame).
  Status LoopGradient(GradContext* ctx, int frame, const std::vector<Output>& exit_grads,
                      const std::set<const Node*>& wanted, const RegionPass& pass,
                      std::vector<Output>* enter_grads);

 private:
  struct LoopVar {
    Node* enter = nullptr;
    Node* merge = nullptr;
    Node* sw = nullptr;
    Node* exit = nullptr;
    Node* next = nullptr;
  };
  struct ForwardLoop {
    int frame = 0;
    std::string name;
    int64_t parallel_iterations = 10;
    Node* loop_cond = nullptr;
    std::vector<LoopVar> vars;
    std::set<const Node*> structure;  // Enters, Merges, Switches, LoopCond, NextIterations, Exits
    Node* pivot = nullptr;  // found or built on first use
    Output count;  // Exit of the iteration counter, once built
    Node* count_index = nullptr;  // the counter in the body: before every push
    Node* count_next = nullptr;  // the counter's NextIteration: after every push
    Node* push_sync = nullptr;  // between the pushes and count_next
  };
  // A cond branch inside a loop body: live where `pred` was `branch`.
  struct Guard {
    Output pred;
    int branch = 0;
    const Guard* parent = nullptr;
    int depth = 1;
  };
  struct Frame {
    int parent = -1;
    std::string name;
  };

  explicit WhileGradients(const Scope& scope) : scope_(scope) {}
  Status Analyze();
  StatusOr<ForwardLoop*> Loop(int frame);

  int FrameOf(const Node* node) const;
  bool Inside(int frame, int ancestor) const;
  void Place(Node* node, int frame) const;
  // AddOp for a node of the loop machinery, placed in `frame` with none of
  // the scope's control dependencies.
  StatusOr<Node*> Build(int frame, std::string_view op, std::vector<OpArg> args,
                        AttrMap attrs = {});
  StatusOr<Node*> BuildEnter(int frame, const std::string& frame_name, int64_t parallel_iterations,
                             const Output& data, bool is_constant);
  // A Merge of (enter, enter) whose input 1 becomes the back edge later.
  StatusOr<Node*> BuildMerge(int frame, const Output& enter, const PartialShape& shape);
  void CloseBackEdge(Node* merge, Node* next_iteration);

  StatusOr<Node*> ForwardPivot(ForwardLoop* loop);
  // Makes a node with no inputs run once per iteration of forward `frame`.
  Status TieToForward(Node* node, int frame);
  StatusOr<Output> IterationCount(ForwardLoop* loop);
  StatusOr<Node*> StackFor(const Output& value);

  StatusOr<Output> Translate(const Output& value, GradContext* ctx);
  StatusOr<Output> Pop(const Output& value, GradContext* ctx);
  Status Fixup(GradContext* ctx, int first_id);
  // A Const built outside backward frame `ctx` and entered into it.
  StatusOr<Output> InvariantConst(GradContext* ctx, const AttrMap& attrs);
  void ReplaceWith(Node* node, const Output& replacement);

  const Guard* GuardOf(const Node* node, int frame);
  const Guard* GuardOfTensor(const Output& t, int frame);
  const Guard* InternGuard(const Output& pred, int branch, const Guard* parent);
  bool IsLoopSwitch(const Node* node) const;

  std::string NewFrameName(const std::string& base);

  Scope scope_;
  Graph* graph_ = nullptr;
  int first_new_id_ = 0;
  std::vector<Frame> frames_;
  std::vector<int> frame_of_;  // node id -> frame (an Enter's and an Exit's: the loop's)
  std::vector<std::vector<Node*>> enters_, exits_;
  std::map<int, std::unique_ptr<ForwardLoop>> loops_;
  std::set<std::string> frame_names_;
  GradContext root_;
  std::vector<std::unique_ptr<GradContext>> contexts_;
  std::map<TensorKey, Node*> stacks_;
  std::map<int, Output> replaced_;  // node id -> what its consumers read instead
  std::map<int, const Guard*> node_guards_;
  std::map<std::pair<TensorKey, int>, std::vector<std::unique_ptr<Guard>>> guards_;
};

}  // namespace weir
