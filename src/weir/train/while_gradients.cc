#include "weir/train/while_gradients.h"

#include <deque>

#include "weir/ops/const_op.h"
#include "weir/ops/standard_ops.h"

namespace weir {
namespace {

constexpr int kUnassigned = -1;

bool IsFloatingOrResource(DType dtype) {
  return IsFloatingDType(dtype) || IsComplexDType(dtype) || dtype == DT_RESOURCE;
}

bool IsConstantEnter(const Node* node) {
  bool is_constant = false;
  return IsEnterOp(node->type_string()) &&
         GetAttr(node->def().attrs, "is_constant", &is_constant).ok() && is_constant;
}

Output InputOf(const Node* node, int i) {
  const Edge* e = node->input_edge(i);
  return e == nullptr ? Output() : Output(e->src(), e->src_output());
}

// The consumer of `node`'s output `port` whose op is `op` (the first).
Node* ConsumerOfType(const Node* node, int port, std::string_view op) {
  for (const Edge* e : node->out_edges()) {
    if (!e->IsControlEdge() && e->src_output() == port && e->dst()->type_string() == op) {
      return e->dst();
    }
  }
  return nullptr;
}

void Rewire(Graph* graph, const Edge* edge, const Output& from) {
  Node* dst = edge->dst();
  const int slot = edge->dst_input();
  graph->RemoveEdge(edge);
  graph->AddEdge(from.node(), from.index(), dst, slot);
}

}  // namespace

Output Densify(const Scope& scope, const Gradient& g) {
  if (!g.is_sparse) return g.dense;
  const IndexedSlices& s = g.sparse;
  auto as_int32 = [&](const Output& t) {
    return t.dtype() == DT_INT32 ? t : ops::Cast(scope, t, DT_INT32);
  };
  return ops::ScatterNd(scope, ops::Reshape(scope, as_int32(s.indices), {-1, 1}), s.values,
                        as_int32(s.dense_shape));
}

StatusOr<std::unique_ptr<WhileGradients>> WhileGradients::Create(const Scope& scope) {
  std::unique_ptr<WhileGradients> grads(new WhileGradients(scope.NewSubScope("gradients")));
  WEIR_RETURN_IF_ERROR(grads->Analyze());
  return grads;
}

Status WhileGradients::Analyze() {
  graph_ = scope_.graph();
  first_new_id_ = graph_->num_node_ids();
  WEIR_ASSIGN_OR_RETURN(ControlFlowInfo info, BuildControlFlowInfo(*graph_));
  for (const FrameInfo& f : info.frames) {
    frames_.push_back({f.parent, f.name});
    frame_names_.insert(f.name);
  }
  frame_of_ = info.frame_of;
  frame_of_.resize(first_new_id_, 0);
  enters_.resize(frames_.size());
  exits_.resize(frames_.size());
  for (Node* node : graph_->nodes()) {
    if (IsEnterOp(node->type_string())) enters_[FrameOf(node)].push_back(node);
    if (IsExitOp(node->type_string())) exits_[FrameOf(node)].push_back(node);
  }
  return Status::OK();
}

int WhileGradients::FrameOf(const Node* node) const {
  const int id = node->id();
  if (id >= static_cast<int>(frame_of_.size()) || frame_of_[id] == kUnassigned) return 0;
  return frame_of_[id];
}

int WhileGradients::OutputFrameOf(const Node* node) const {
  const int frame = FrameOf(node);
  return IsExitOp(node->type_string()) ? frames_[frame].parent : frame;
}

bool WhileGradients::Inside(int frame, int ancestor) const {
  for (; frame >= 0; frame = frames_[frame].parent) {
    if (frame == ancestor) return true;
  }
  return false;
}

void WhileGradients::Place(Node* node, int frame) const {
  auto* frame_of = const_cast<std::vector<int>*>(&frame_of_);
  if (node->id() >= static_cast<int>(frame_of->size()))
    frame_of->resize(node->id() + 1, kUnassigned);
  (*frame_of)[node->id()] = frame;
}

int WhileGradients::UnitOf(const Node* node, int region) const {
  if (node->id() >= first_new_id_) return kNoUnit;
  int frame = FrameOf(node);
  if (frame == region) {
    if (region != 0) {
      auto it = loops_.find(region);
      if (it != loops_.end() && it->second->structure.count(node)) return kNoUnit;
    }
    return node->id();
  }
  while (frame > 0 && frames_[frame].parent != region) frame = frames_[frame].parent;
  return frame > 0 ? kLoopUnit - frame : kNoUnit;
}

bool WhileGradients::IsLoopSwitch(const Node* node) const {
  if (node->type_string() != "Switch") return false;
  const Edge* pred = node->input_edge(1);
  return pred != nullptr && pred->src()->type_string() == "LoopCond";
}

StatusOr<WhileGradients::ForwardLoop*> WhileGradients::Loop(int frame) {
  auto it = loops_.find(frame);
  if (it != loops_.end()) return it->second.get();
  auto loop = std::make_unique<ForwardLoop>();
  loop->frame = frame;
  loop->name = frames_[frame].name;
  const std::string what = StrCat("while loop '", loop->name, "': ");
  for (Node* enter : enters_[frame]) {
    loop->structure.insert(enter);
    int64_t parallel = 0;
    if (GetAttr(enter->def().attrs, "parallel_iterations", &parallel).ok() && parallel > 0) {
      loop->parallel_iterations = parallel;
    }
    if (IsConstantEnter(enter)) continue;
    LoopVar var;
    var.enter = enter;
    var.merge = ConsumerOfType(enter, 0, "Merge");
    if (var.merge == nullptr || var.merge->num_inputs() != 2) {
      return errors::Unimplemented(what, "Enter ", enter->Describe(),
                                   " does not feed a two-input Merge");
    }
    for (int i = 0; i < 2; ++i) {
      Output in = InputOf(var.merge, i);
      if (in.valid() && IsNextIterationOp(in.node()->type_string())) var.next = in.node();
    }
    for (const Edge* e : var.merge->out_edges()) {
      if (!e->IsControlEdge() && e->src_output() == 0 && IsLoopSwitch(e->dst())) var.sw = e->dst();
    }
    if (var.next == nullptr || var.sw == nullptr) {
      return errors::Unimplemented(
          what, "Merge ", var.merge->Describe(),
          " lacks its NextIteration back edge or its Switch on a LoopCond");
    }
    var.exit = ConsumerOfType(var.sw, 0, "Exit");
    if (loop->loop_cond == nullptr) loop->loop_cond = var.sw->input_edge(1)->src();
    for (Node* n : {var.merge, var.sw, var.next}) loop->structure.insert(n);
    loop->vars.push_back(var);
  }
  if (loop->vars.empty()) return errors::Unimplemented(what, "no loop variable found");
  loop->structure.insert(loop->loop_cond);
  for (Node* exit : exits_[frame]) loop->structure.insert(exit);
  ForwardLoop* result = loop.get();
  loops_.emplace(frame, std::move(loop));
  return result;
}

StatusOr<Node*> WhileGradients::Build(int frame, std::string_view op, std::vector<OpArg> args,
                                      AttrMap attrs) {
  Operation built = AddOp(scope_, op, std::move(args), std::move(attrs));
  WEIR_RETURN_IF_ERROR(scope_.status());
  Node* node = built.node();
  for (const Edge* e : node->control_inputs()) graph_->RemoveEdge(e);
  Place(node, frame);
  return node;
}

StatusOr<Node*> WhileGradients::BuildEnter(int frame, const std::string& frame_name,
                                           int64_t parallel_iterations, const Output& data,
                                           bool is_constant) {
  return Build(frame, "Enter", {data},
               {{"frame_name", frame_name},
                {"is_constant", is_constant},
                {"parallel_iterations", parallel_iterations}});
}

StatusOr<Node*> WhileGradients::BuildMerge(int frame, const Output& enter,
                                           const PartialShape& shape) {
  WEIR_ASSIGN_OR_RETURN(Node * merge, Build(frame, "Merge", {InputList{enter, enter}}));
  merge->set_output_shapes({shape, merge->output_shape(1)});
  return merge;
}

void WhileGradients::CloseBackEdge(Node* merge, Node* next_iteration) {
  Rewire(graph_, merge->input_edge(1), Output(next_iteration, 0));
}

StatusOr<Node*> WhileGradients::ForwardPivot(ForwardLoop* loop) {
  if (loop->pivot != nullptr) return loop->pivot;
  for (const LoopVar& var : loop->vars) {
    if (Node* identity = ConsumerOfType(var.sw, 1, "Identity")) {
      loop->pivot = identity;
      return identity;
    }
  }
  WEIR_ASSIGN_OR_RETURN(loop->pivot, Build(loop->frame, "Identity", {Output(loop->vars[0].sw, 1)}));
  return loop->pivot;
}

Status WhileGradients::TieToForward(Node* node, int frame) {
  if (frame == 0) return Status::OK();
  WEIR_ASSIGN_OR_RETURN(ForwardLoop * loop, Loop(frame));
  WEIR_ASSIGN_OR_RETURN(Node * pivot, ForwardPivot(loop));
  graph_->AddControlEdge(pivot, node);
  return Status::OK();
}

// TensorFlow's f_count: a loop variable counting the forward iterations.
// Only the backward pass reads it (and the pushes hang on it), so a step
// that fetches only forward values prunes it and the pushes away.
StatusOr<Output> WhileGradients::IterationCount(ForwardLoop* loop) {
  if (loop->count.valid()) return loop->count;
  const int outer = frames_[loop->frame].parent;
  WEIR_ASSIGN_OR_RETURN(
      Node * zero,
      Build(outer, "Const", {}, {{"value", Tensor::Scalar<int32_t>(0)}, {"dtype", DT_INT32}}));
  WEIR_RETURN_IF_ERROR(TieToForward(zero, outer));
  WEIR_ASSIGN_OR_RETURN(Node * enter, BuildEnter(loop->frame, loop->name, loop->parallel_iterations,
                                                 Output(zero), false));
  WEIR_ASSIGN_OR_RETURN(Node * merge, BuildMerge(loop->frame, Output(enter), PartialShape({})));
  WEIR_ASSIGN_OR_RETURN(Node * sw,
                        Build(loop->frame, "Switch", {Output(merge), Output(loop->loop_cond)}));
  WEIR_ASSIGN_OR_RETURN(loop->count_index, Build(loop->frame, "Identity", {Output(sw, 1)}));
  WEIR_ASSIGN_OR_RETURN(
      Node * one,
      Build(outer, "Const", {}, {{"value", Tensor::Scalar<int32_t>(1)}, {"dtype", DT_INT32}}));
  WEIR_RETURN_IF_ERROR(TieToForward(one, outer));
  WEIR_ASSIGN_OR_RETURN(Node * one_enter, BuildEnter(loop->frame, loop->name,
                                                     loop->parallel_iterations, Output(one), true));
  WEIR_ASSIGN_OR_RETURN(
      Node * add, Build(loop->frame, "AddV2", {Output(loop->count_index), Output(one_enter)}));
  WEIR_ASSIGN_OR_RETURN(loop->count_next, Build(loop->frame, "NextIteration", {Output(add)}));
  CloseBackEdge(merge, loop->count_next);
  WEIR_ASSIGN_OR_RETURN(Node * exit, Build(loop->frame, "Exit", {Output(sw, 0)}));
  loop->count = Output(exit);
  return loop->count;
}

// One stack per forward tensor, created once per run of the loop (in the
// frame around it) and pushed once per iteration where the value is live.
StatusOr<Node*> WhileGradients::StackFor(const Output& value) {
  const TensorKey key{value.node()->id(), value.index()};
  auto it = stacks_.find(key);
  if (it != stacks_.end()) return it->second;
  const int frame = OutputFrameOf(value.node());
  const int outer = frames_[frame].parent;
  WEIR_ASSIGN_OR_RETURN(ForwardLoop * loop, Loop(frame));
  WEIR_RETURN_IF_ERROR(IterationCount(loop).status());
  WEIR_ASSIGN_OR_RETURN(
      Node * max_size,
      Build(outer, "Const", {}, {{"value", Tensor::Scalar<int32_t>(-1)}, {"dtype", DT_INT32}}));
  WEIR_RETURN_IF_ERROR(TieToForward(max_size, outer));
  WEIR_ASSIGN_OR_RETURN(Node * stack,
                        Build(outer, "StackV2", {Output(max_size)},
                              {{"elem_type", value.dtype()},
                               {"stack_name", StrCat(value.node()->name(), "_", value.index())}}));
  WEIR_ASSIGN_OR_RETURN(
      Node * handle, BuildEnter(frame, loop->name, loop->parallel_iterations, Output(stack), true));
  WEIR_ASSIGN_OR_RETURN(Node * push, Build(frame, "StackPushV2", {Output(handle), value}));
  // A stack holds its values in iteration order whatever runs in parallel:
  // iteration k's pushes come before the counter's next iteration, and
  // iteration k + 1's after it. (Through a ControlTrigger: a push in an
  // untaken branch is dead, and must not stop the count.)
  graph_->AddControlEdge(loop->count_index, push);
  if (loop->push_sync == nullptr) {
    WEIR_ASSIGN_OR_RETURN(loop->push_sync, Build(frame, "ControlTrigger", {}));
    graph_->AddControlEdge(loop->push_sync, loop->count_next);
  }
  graph_->AddControlEdge(push, loop->push_sync);
  stacks_.emplace(key, stack);
  return stack;
}

const WhileGradients::Guard* WhileGradients::InternGuard(const Output& pred, int branch,
                                                         const Guard* parent) {
  auto& list = guards_[{{pred.node()->id(), pred.index()}, branch}];
  for (const auto& g : list) {
    if (g->parent == parent) return g.get();
  }
  auto guard = std::make_unique<Guard>();
  guard->pred = pred;
  guard->branch = branch;
  guard->parent = parent;
  guard->depth = parent == nullptr ? 1 : parent->depth + 1;
  list.push_back(std::move(guard));
  return list.back().get();
}

const WhileGradients::Guard* WhileGradients::GuardOfTensor(const Output& t, int frame) {
  const Node* node = t.node();
  if (node->type_string() == "Switch" && !IsLoopSwitch(node) && FrameOf(node) == frame) {
    return InternGuard(InputOf(node, 1), t.index(), GuardOf(node, frame));
  }
  return GuardOf(node, frame);
}

// The innermost cond branch of `frame`'s body that `node` runs in (null:
// every iteration), from the structure Cond builds: a Switch's outputs open
// a branch, a Merge closes one.
const WhileGradients::Guard* WhileGradients::GuardOf(const Node* node, int frame) {
  auto it = node_guards_.find(node->id());
  if (it != node_guards_.end()) return it->second;
  const Guard* guard = nullptr;
  const auto deeper = [&](const Guard* g) {
    if (g != nullptr && (guard == nullptr || g->depth > guard->depth)) guard = g;
  };
  const std::string& op = node->type_string();
  if (FrameOf(node) != frame) {
    // An Exit of an inner loop: the loop runs where its Enters' inputs do.
    if (IsExitOp(op)) {
      for (const Node* enter : enters_[FrameOf(node)]) {
        Output in = InputOf(enter, 0);
        if (in.valid()) deeper(GuardOfTensor(in, frame));
      }
    }
  } else if (IsEnterOp(op) || op == "LoopCond" || IsLoopSwitch(node) ||
             (op == "Merge" && node->input_edge(1) != nullptr &&
              IsNextIterationOp(node->input_edge(1)->src()->type_string()))) {
    // Loop structure: every iteration.
  } else if (op == "Merge") {
    bool first = true;
    for (const Edge* e : node->in_edges()) {
      if (e->IsControlEdge()) continue;
      const Guard* in = GuardOfTensor(Output(e->src(), e->src_output()), frame);
      const Guard* closed = in == nullptr ? nullptr : in->parent;
      if (first || closed == nullptr || (guard != nullptr && closed->depth < guard->depth))
        guard = closed;
      first = false;
    }
  } else {
    for (const Edge* e : node->in_edges()) {
      deeper(e->IsControlEdge() ? GuardOf(e->src(), frame)
                                : GuardOfTensor(Output(e->src(), e->src_output()), frame));
    }
  }
  node_guards_[node->id()] = guard;
  return guard;
}

StatusOr<Output> WhileGradients::Pop(const Output& value, GradContext* ctx) {
  WEIR_ASSIGN_OR_RETURN(Node * stack, StackFor(value));
  WEIR_ASSIGN_OR_RETURN(Output handle, Translate(Output(stack), ctx));
  // A value of a cond branch was pushed only where the branch ran: pop it
  // only there, through a Switch on the (popped) predicate.
  if (const Guard* guard = GuardOfTensor(value, ctx->forward)) {
    WEIR_ASSIGN_OR_RETURN(Output pred, Translate(guard->pred, ctx));
    WEIR_ASSIGN_OR_RETURN(Node * sw, Build(ctx->frame, "Switch", {handle, pred}));
    graph_->AddControlEdge(ctx->pivot, sw);
    handle = Output(sw, guard->branch);
  }
  WEIR_ASSIGN_OR_RETURN(Node * pop,
                        Build(ctx->frame, "StackPopV2", {handle}, {{"elem_type", value.dtype()}}));
  pop->set_output_shapes({value.shape()});
  graph_->AddControlEdge(ctx->pivot, pop);
  ctx->pops.push_back(pop);
  return Output(pop);
}

StatusOr<Output> WhileGradients::Translate(const Output& value, GradContext* ctx) {
  const int frame = OutputFrameOf(value.node());
  if (frame == ctx->frame) return value;
  if (ctx->parent == nullptr) {
    return errors::Internal("the gradient needs '", value.name(), "' from inside frame '",
                            frames_[frame].name, "' outside of it");
  }
  const TensorKey key{value.node()->id(), value.index()};
  auto it = ctx->values.find(key);
  if (it != ctx->values.end()) return it->second;
  Output result;
  Node* node = value.node();
  if (frame == ctx->forward) {
    if (IsConstantEnter(node)) {
      WEIR_ASSIGN_OR_RETURN(result, Translate(InputOf(node, 0), ctx));
    } else if (IsEnterOp(node->type_string())) {
      return errors::Unimplemented("the gradient needs the value of loop variable Enter ",
                                   node->Describe(), " itself");
    } else if (node->type_string() == "Const") {
      WEIR_ASSIGN_OR_RETURN(result, InvariantConst(ctx, node->def().attrs));
    } else {
      WEIR_ASSIGN_OR_RETURN(result, Pop(value, ctx));
    }
  } else {
    WEIR_ASSIGN_OR_RETURN(Output outer, Translate(value, ctx->parent));
    WEIR_ASSIGN_OR_RETURN(Node * enter, BuildEnter(ctx->frame, ctx->frame_name,
                                                   ctx->parallel_iterations, outer, true));
    result = Output(enter);
  }
  ctx->values[key] = result;
  return result;
}

// The value of Shape, Size or Rank of `node`'s input where its static shape
// tells it; an empty Tensor otherwise.
Tensor StaticShapeValue(const Node* node) {
  const std::string& op = node->type_string();
  if (op != "Shape" && op != "Size" && op != "Rank") return Tensor();
  const PartialShape shape = InputOf(node, 0).shape();
  if (op == "Rank" ? !shape.known_rank() : !shape.IsFullyDefined()) return Tensor();
  DType out_type = DT_INT32;
  if (op != "Rank") (void)GetAttr(node->def().attrs, "out_type", &out_type);
  std::vector<int64_t> values;
  if (op == "Shape") values = shape.dim_sizes();
  if (op == "Size") values = {shape.num_elements()};
  if (op == "Rank") values = {shape.rank()};
  const TensorShape dims =
      op == "Shape" ? TensorShape({static_cast<int64_t>(values.size())}) : TensorShape({});
  if (out_type == DT_INT64) return Tensor::FromVector<int64_t>(values, dims);
  std::vector<int32_t> narrow(values.begin(), values.end());
  return Tensor::FromVector<int32_t>(narrow, dims);
}

// Moves every consumer of `node` (data and control) to `replacement`;
// `node` is removed by Finish (a caller may hold it until then: Resolve).
void WhileGradients::ReplaceWith(Node* node, const Output& replacement) {
  replaced_[node->id()] = replacement;
  std::vector<const Edge*> outs(node->out_edges().begin(), node->out_edges().end());
  for (const Edge* e : outs) {
    Node* dst = e->dst();
    if (e->IsControlEdge()) {
      graph_->RemoveEdge(e);
      graph_->AddControlEdge(replacement.node(), dst);
    } else {
      const int slot = e->dst_input();
      graph_->RemoveEdge(e);
      graph_->AddEdge(replacement.node(), replacement.index(), dst, slot);
    }
  }
}

Output WhileGradients::Resolve(const Output& t) const {
  if (!t.valid()) return t;
  auto it = replaced_.find(t.node()->id());
  return it == replaced_.end() ? t : it->second;
}

Status WhileGradients::Finish() {
  for (const auto& [id, replacement] : replaced_) {
    Node* node = graph_->FindNodeId(id);
    if (node == nullptr) continue;
    if (!node->out_edges().empty()) {
      return errors::Internal("node ", node->Describe(), " was replaced by '", replacement.name(),
                              "' but is still used");
    }
    graph_->RemoveNode(node);
  }
  replaced_.clear();
  return Status::OK();
}

StatusOr<Output> WhileGradients::InvariantConst(GradContext* ctx, const AttrMap& attrs) {
  GradContext* outer = ctx->parent;
  WEIR_ASSIGN_OR_RETURN(Node * constant, Build(outer->frame, "Const", {}, attrs));
  if (outer->pivot != nullptr) graph_->AddControlEdge(outer->pivot, constant);
  WEIR_ASSIGN_OR_RETURN(Node * enter, BuildEnter(ctx->frame, ctx->frame_name,
                                                 ctx->parallel_iterations, Output(constant), true));
  return Output(enter);
}

Status WhileGradients::Fixup(GradContext* ctx, int first_id) {
  for (int id = first_id; id < graph_->num_node_ids(); ++id) {
    Node* node = graph_->FindNodeId(id);
    if (node == nullptr) continue;
    if (id < static_cast<int>(frame_of_.size()) && frame_of_[id] != kUnassigned) continue;
    if (ctx->parent == nullptr) {
      Place(node, 0);
      continue;
    }
    // A shape the graph already knows is a constant, not a reason to keep
    // a forward value on a stack (or to recompute it every iteration).
    if (Tensor value = StaticShapeValue(node); value.IsInitialized()) {
      WEIR_ASSIGN_OR_RETURN(Output constant,
                            InvariantConst(ctx, {{"value", value}, {"dtype", value.dtype()}}));
      ReplaceWith(node, constant);
      Place(node, ctx->frame);
      continue;
    }
    // A constant is made once, outside, not once per iteration: it moves
    // to the enclosing context and enters this one.
    if (node->type_string() == "Const" && node->num_inputs() == 0) {
      for (const Edge* e : node->control_inputs()) graph_->RemoveEdge(e);
      Place(node, ctx->parent->frame);
      if (ctx->parent->pivot != nullptr) graph_->AddControlEdge(ctx->parent->pivot, node);
      std::vector<const Edge*> outs(node->out_edges().begin(), node->out_edges().end());
      WEIR_ASSIGN_OR_RETURN(Output entered, Translate(Output(node), ctx));
      for (const Edge* e : outs) {
        if (e->dst() == entered.node()) continue;
        if (e->IsControlEdge()) {
          Node* dst = e->dst();
          graph_->RemoveEdge(e);
          graph_->AddControlEdge(entered.node(), dst);
        } else {
          Rewire(graph_, e, entered);
        }
      }
      continue;
    }
    std::vector<const Edge*> inputs(node->in_edges().begin(), node->in_edges().end());
    for (const Edge* e : inputs) {
      if (OutputFrameOf(e->src()) == ctx->frame) continue;
      if (e->IsControlEdge()) {
        graph_->RemoveEdge(e);
        continue;
      }
      WEIR_ASSIGN_OR_RETURN(Output moved, Translate(Output(e->src(), e->src_output()), ctx));
      Rewire(graph_, e, moved);
    }
    Place(node, ctx->frame);
    // A node fed only by loop invariants (or nothing) would run in every
    // iteration, the last one too: tie it to the body's pivot.
    bool free = node->control_inputs().empty();
    for (const Edge* e : node->in_edges()) free &= e->IsControlEdge() || IsConstantEnter(e->src());
    if (free) graph_->AddControlEdge(ctx->pivot, node);
  }
  return Status::OK();
}

Status WhileGradients::InContext(GradContext* ctx, const std::function<Status()>& build) {
  const int first_id = graph_->num_node_ids();
  WEIR_RETURN_IF_ERROR(build());
  WEIR_RETURN_IF_ERROR(scope_.status());
  return Fixup(ctx, first_id);
}

std::string WhileGradients::NewFrameName(const std::string& base) {
  std::string name = base;
  for (int i = 1; frame_names_.count(name); ++i) name = StrCat(base, "_", i);
  frame_names_.insert(name);
  return name;
}

Status WhileGradients::LoopGradient(GradContext* ctx, int frame,
                                    const std::vector<Output>& exit_grads,
                                    const std::set<const Node*>& wanted, const RegionPass& pass,
                                    std::vector<Output>* enter_grads) {
  WEIR_ASSIGN_OR_RETURN(ForwardLoop * loop, Loop(frame));
  // Copies: the frame tables grow below.
  const std::vector<Node*> enters = enters_[frame];
  const std::vector<Node*> exits = exits_[frame];
  enter_grads->assign(enters.size(), Output());

  // The loop's nodes between the wanted Enters and the Exits with
  // gradients, back edges included: which variables and captured tensors
  // the backward loop carries.
  const auto member = [&](const Node* n) {
    return n->id() < first_new_id_ && Inside(FrameOf(n), frame);
  };
  std::set<const Node*> from_enters, to_exits;
  std::deque<const Node*> queue;
  for (const Node* enter : enters) {
    if (wanted.count(enter)) {
      from_enters.insert(enter);
      queue.push_back(enter);
    }
  }
  while (!queue.empty()) {
    const Node* n = queue.front();
    queue.pop_front();
    for (const Edge* e : n->out_edges()) {
      if (e->IsControlEdge() || !member(e->dst())) continue;
      if (e->dst()->type_string() == "Switch" && e->dst_input() == 1) continue;  // a predicate
      if (from_enters.insert(e->dst()).second) queue.push_back(e->dst());
    }
  }
  std::map<const Node*, Output> exit_grad;
  for (size_t i = 0; i < exits.size(); ++i) {
    if (exit_grads[i].valid() && from_enters.count(exits[i])) {
      exit_grad[exits[i]] = exit_grads[i];
      to_exits.insert(exits[i]);
      queue.push_back(exits[i]);
    }
  }
  while (!queue.empty()) {
    const Node* n = queue.front();
    queue.pop_front();
    for (const Edge* e : n->in_edges()) {
      if (e->IsControlEdge() || !from_enters.count(e->src())) continue;
      if (to_exits.insert(e->src()).second) queue.push_back(e->src());
    }
  }
  std::vector<const LoopVar*> vars;
  for (const LoopVar& var : loop->vars) {
    const DType dtype = var.enter->output_type(0);
    // A variant (a TensorList, an Optional) carries the gradients of the
    // values in it: its gradient is a list of theirs.
    if (to_exits.count(var.merge) &&
        (IsFloatingDType(dtype) || IsComplexDType(dtype) || dtype == DT_VARIANT)) {
      vars.push_back(&var);
    }
  }
  std::vector<Node*> invariants;
  for (Node* enter : enters) {
    if (IsConstantEnter(enter) && to_exits.count(enter) &&
        (IsFloatingOrResource(enter->output_type(0)) || enter->output_type(0) == DT_VARIANT)) {
      invariants.push_back(enter);
    }
  }
  if (vars.empty() && invariants.empty()) return Status::OK();

  // The backward frame and its counter (TensorFlow's b_count): it starts
  // at the forward count and runs while it is at least 1.
  WEIR_ASSIGN_OR_RETURN(Output count, IterationCount(loop));
  WEIR_ASSIGN_OR_RETURN(Output start, Translate(count, ctx));
  auto owned = std::make_unique<GradContext>();
  GradContext* back = owned.get();
  contexts_.push_back(std::move(owned));
  back->frame = static_cast<int>(frames_.size());
  frames_.push_back({ctx->frame, NewFrameName(loop->name + "_grad")});
  enters_.emplace_back();
  exits_.emplace_back();
  back->forward = frame;
  back->parent = ctx;
  back->frame_name = frames_[back->frame].name;
  back->parallel_iterations = loop->parallel_iterations;
  const int bf = back->frame;
  const AttrMap one_attrs = {{"value", Tensor::Scalar<int32_t>(1)}, {"dtype", DT_INT32}};
  Output one;
  if (ctx->parent == nullptr) {
    WEIR_ASSIGN_OR_RETURN(Node * node, Build(ctx->frame, "Const", {}, one_attrs));
    one = Output(node);
  } else {
    WEIR_ASSIGN_OR_RETURN(one, InvariantConst(ctx, one_attrs));
  }
  WEIR_ASSIGN_OR_RETURN(Node * one_enter,
                        BuildEnter(bf, back->frame_name, back->parallel_iterations, one, true));
  WEIR_ASSIGN_OR_RETURN(Node * count_enter,
                        BuildEnter(bf, back->frame_name, back->parallel_iterations, start, false));
  WEIR_ASSIGN_OR_RETURN(Node * count_merge, BuildMerge(bf, Output(count_enter), PartialShape({})));
  WEIR_ASSIGN_OR_RETURN(Node * more,
                        Build(bf, "GreaterEqual", {Output(count_merge), Output(one_enter)}));
  WEIR_ASSIGN_OR_RETURN(Node * loop_cond, Build(bf, "LoopCond", {Output(more)}));
  WEIR_ASSIGN_OR_RETURN(Node * count_switch,
                        Build(bf, "Switch", {Output(count_merge), Output(loop_cond)}));
  WEIR_ASSIGN_OR_RETURN(Node * index,
                        Build(bf, "Sub", {Output(count_switch, 1), Output(one_enter)}));
  back->pivot = index;
  WEIR_ASSIGN_OR_RETURN(Node * count_next, Build(bf, "NextIteration", {Output(index)}));
  CloseBackEdge(count_merge, count_next);
  WEIR_RETURN_IF_ERROR(Build(bf, "Exit", {Output(count_switch, 0)}).status());
  std::vector<Node*> next_iterations = {count_next};

  // One backward variable per forward variable: the gradient of its value
  // at the start of the iteration being undone.
  std::vector<Output> ys, seeds, xs;
  std::vector<Node*> grad_merges, grad_exits;
  for (const LoopVar* var : vars) {
    Output init;
    auto it = var->exit ? exit_grad.find(var->exit) : exit_grad.end();
    if (it != exit_grad.end()) {
      init = it->second;
    } else {
      if (var->exit == nullptr) {
        return errors::Unimplemented("while loop '", loop->name, "': loop variable ",
                                     var->enter->Describe(), " has no Exit");
      }
      WEIR_RETURN_IF_ERROR(InContext(ctx, [&] {
        init = ops::ZerosLike(scope_, Output(var->exit));
        return Status::OK();
      }));
    }
    WEIR_ASSIGN_OR_RETURN(Node * enter,
                          BuildEnter(bf, back->frame_name, back->parallel_iterations, init, false));
    WEIR_ASSIGN_OR_RETURN(Node * merge, BuildMerge(bf, Output(enter), var->merge->output_shape(0)));
    WEIR_ASSIGN_OR_RETURN(Node * sw, Build(bf, "Switch", {Output(merge), Output(loop_cond)}));
    WEIR_ASSIGN_OR_RETURN(Node * exit, Build(bf, "Exit", {Output(sw, 0)}));
    grad_merges.push_back(merge);
    grad_exits.push_back(exit);
    ys.push_back(InputOf(var->next, 0));
    seeds.push_back(Output(sw, 1));
    xs.push_back(Output(var->sw, 1));
  }
  for (Node* c : invariants) xs.push_back(Output(c));

  // The backward body: the body's gradient, built in the backward frame.
  std::vector<Gradient> grads;
  WEIR_RETURN_IF_ERROR(pass(back, frame, ys, seeds, xs, &grads));

  std::vector<Output> next(vars.size());
  std::vector<Output> acc_grads(invariants.size());
  WEIR_RETURN_IF_ERROR(InContext(back, [&] {
    for (size_t i = 0; i < vars.size(); ++i) {
      if (grads[i].valid()) {
        next[i] = Densify(scope_, grads[i]);
      } else {
        // No gradient reaches the variable through the body this time.
        const bool same_shape = vars[i]->merge->output_shape(0).IsFullyDefined();
        next[i] = ops::ZerosLike(scope_, same_shape ? seeds[i] : Output(vars[i]->sw, 1));
      }
    }
    for (size_t i = 0; i < invariants.size(); ++i) {
      const Gradient& g = grads[vars.size() + i];
      if (g.valid()) acc_grads[i] = Densify(scope_, g);
    }
    return Status::OK();
  }));
  for (size_t i = 0; i < vars.size(); ++i) {
    WEIR_ASSIGN_OR_RETURN(Node * n, Build(bf, "NextIteration", {next[i]}));
    CloseBackEdge(grad_merges[i], n);
    next_iterations.push_back(n);
  }

  // Captured tensors: their gradients summed over the iterations
  // (TensorFlow's b_acc), from zeros when the loop ran no iteration.
  std::vector<Node*> acc_exits(invariants.size(), nullptr);
  for (size_t i = 0; i < invariants.size(); ++i) {
    if (!acc_grads[i].valid()) continue;
    const Output& g = acc_grads[i];
    Output captured = InputOf(invariants[i], 0);
    Output zeros;
    WEIR_RETURN_IF_ERROR(InContext(ctx, [&] {
      // A named copy: Output::shape() returns a temporary, and a range-for
      // over its dim_sizes() would read it after it is destroyed.
      const PartialShape shape = g.shape();
      if (g.dtype() == DT_VARIANT) {
        // A list of zeros like the captured one (a variant's shape is
        // that of the handle, not of its values).
        zeros = ops::ZerosLike(scope_, captured);
      } else if (shape.IsFullyDefined()) {
        std::vector<int32_t> dims;
        for (int64_t d : shape.dim_sizes()) dims.push_back(static_cast<int32_t>(d));
        zeros = ops::Fill(scope_, Tensor::FromVector<int32_t>(dims),
                          ops::Cast(scope_, ops::Const(scope_, 0.0), g.dtype()));
      } else if (captured.dtype() == DT_RESOURCE) {
        zeros = ops::ZerosLike(scope_, ops::ReadVariableOp(scope_, captured, g.dtype()));
      } else {
        zeros = ops::ZerosLike(scope_, captured);
      }
      return Status::OK();
    }));
    WEIR_ASSIGN_OR_RETURN(
        Node * enter, BuildEnter(bf, back->frame_name, back->parallel_iterations, zeros, false));
    WEIR_ASSIGN_OR_RETURN(Node * merge, BuildMerge(bf, Output(enter), g.shape()));
    WEIR_ASSIGN_OR_RETURN(Node * sw, Build(bf, "Switch", {Output(merge), Output(loop_cond)}));
    // AddN sums variants by value (AddV2 has no variant kernel).
    WEIR_ASSIGN_OR_RETURN(Node * add, g.dtype() == DT_VARIANT
                                          ? Build(bf, "AddN", {InputList{Output(sw, 1), g}})
                                          : Build(bf, "AddV2", {Output(sw, 1), g}));
    WEIR_ASSIGN_OR_RETURN(Node * n, Build(bf, "NextIteration", {Output(add)}));
    CloseBackEdge(merge, n);
    next_iterations.push_back(n);
    WEIR_ASSIGN_OR_RETURN(acc_exits[i], Build(bf, "Exit", {Output(sw, 0)}));
  }

  // Pops of one iteration finish before the next iteration starts
  // (TensorFlow's b_sync), so each stack is read in reverse order.
  if (!back->pops.empty()) {
    WEIR_ASSIGN_OR_RETURN(Node * sync, Build(bf, "ControlTrigger", {}));
    for (Node* pop : back->pops) graph_->AddControlEdge(pop, sync);
    for (Node* n : next_iterations) graph_->AddControlEdge(sync, n);
  }

  for (size_t e = 0; e < enters.size(); ++e) {
    for (size_t i = 0; i < vars.size(); ++i) {
      if (vars[i]->enter == enters[e]) (*enter_grads)[e] = Output(grad_exits[i]);
    }
    for (size_t i = 0; i < invariants.size(); ++i) {
      if (invariants[i] == enters[e] && acc_exits[i] != nullptr)
        (*enter_grads)[e] = Output(acc_exits[i]);
    }
  }
  return Status::OK();
}

}  // namespace weir
