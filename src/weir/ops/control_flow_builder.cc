// Cond and WhileLoop with TensorFlow control flow v1's structure.
//
// The user's functions build through an ordinary Scope, so there is no hook
// on each new node as TensorFlow's control-flow contexts have one. Instead
// the nodes a function built are adopted after it returns: node ids only
// grow, so they are the ids between two marks, and a node with an id below
// the construct's first is outside it. An inner construct adopts its nodes
// before the outer one sees them as its own, so an inner loop's captures
// become Enters of Enters and a branch's Switches get loop Enters, as in
// TensorFlow.
#include "weir/ops/control_flow_builder.h"

#include <map>
#include <utility>

#include "weir/base/logging.h"
#include "weir/graph/graph.h"
#include "weir/ops/const_op.h"

namespace weir {
namespace ops {
namespace {

constexpr int kElsePort = 0;  // Switch's output_false
constexpr int kThenPort = 1;  // Switch's output_true

// The prefix `scope` gives node names ("outer/while_1").
std::string NamePrefix(const Scope& scope) {
  std::string probe = scope.GetUniqueNameForOp("frame");
  size_t slash = probe.rfind('/');
  return slash == std::string::npos ? std::string() : probe.substr(0, slash);
}

// Whether every value of `shape` is a value of `invariant` (TensorFlow's
// _ShapeLessThanOrEqual): same rank, and each known dim of the invariant
// known and equal in `shape`.
bool MeetsInvariant(const PartialShape& shape, const PartialShape& invariant) {
  if (!invariant.known_rank()) return true;
  if (shape.rank() != invariant.rank()) return false;
  for (int d = 0; d < invariant.rank(); ++d) {
    if (invariant.dim(d) != PartialShape::kUnknown && shape.dim(d) != invariant.dim(d)) {
      return false;
    }
  }
  return true;
}

bool MaybeScalar(const PartialShape& shape) { return !shape.known_rank() || shape.rank() == 0; }

std::string Describe(const Output& value) {
  return StrCat("'", value.name(), "' (", value.dtype(), " ", value.shape().DebugString(), ")");
}

bool IsLoopConstantEnter(const Node* node) {
  if (node->type_string() != "Enter") return false;
  auto it = node->def().attrs.find("is_constant");
  return it != node->def().attrs.end() && it->second.is_b() && it->second.b();
}

// A copy: rewiring edits the node's list.
std::vector<const Edge*> InEdges(const Node* node) {
  std::vector<const Edge*> edges;
  edges.reserve(node->in_edges().size());
  for (const Edge* edge : node->in_edges()) edges.push_back(edge);
  return edges;
}

// Moves data input `edge` to come from `from`.
void Rewire(Graph* graph, const Edge* edge, const Output& from) {
  Node* dst = edge->dst();
  const int slot = edge->dst_input();
  graph->RemoveEdge(edge);
  graph->AddEdge(from.node(), from.index(), dst, slot);
}

// Runs a user's function; its failure, or an error it left in the scope,
// comes back naming the construct.
Status RunUserFn(const Scope& scope, const std::string& what, const std::function<Status()>& fn) {
  Status status = fn();
  if (status.ok()) status = scope.status();
  return status.ok() ? status : status.WithContext(what);
}

Status Built(const Scope& scope) { return scope.status(); }

class CondBuilder {
 public:
  CondBuilder(const Scope& scope, std::string_view name)
      : graph_(scope.graph()),
        first_id_(graph_->num_node_ids()),
        scope_(scope.NewSubScope(name)) {}

  Status Build(const Output& pred, const BranchFn& then_fn, const BranchFn& else_fn,
               std::vector<Output>* outputs) {
    if (!pred.valid()) return errors::InvalidArgument("Cond: pred is an invalid Output");
    if (pred.dtype() != DT_BOOL || !MaybeScalar(pred.shape())) {
      return errors::InvalidArgument("Cond: pred must be a bool scalar but is ", Describe(pred));
    }
    Operation pred_switch = AddOp(scope_.WithOpName("Switch"), "Switch", {pred, pred});
    Output switch_t =
        AddOp(scope_.WithOpName("switch_t"), "Identity", {pred_switch.output(1)}).output(0);
    Output switch_f =
        AddOp(scope_.WithOpName("switch_f"), "Identity", {pred_switch.output(0)}).output(0);
    pred_id_ = AddOp(scope_.WithOpName("pred_id"), "Identity", {pred}).output(0);
    WEIR_RETURN_IF_ERROR(Built(scope_));
    what_ = StrCat("Cond '", NamePrefix(scope_), "'");

    // As the branches returned them (for messages), and as seen inside.
    std::vector<Output> then_given, else_given;
    WEIR_RETURN_IF_ERROR(BuildBranch(then_fn, "then", switch_t.node(), kThenPort, &then_given));
    std::vector<Output> then_out = InsideBranch(then_given, kThenPort);
    then_begin_ = branch_begin_;
    then_end_ = branch_end_;
    WEIR_RETURN_IF_ERROR(BuildBranch(else_fn, "else", switch_f.node(), kElsePort, &else_given));
    std::vector<Output> else_out = InsideBranch(else_given, kElsePort);
    WEIR_RETURN_IF_ERROR(Built(scope_));

    if (then_out.size() != else_out.size()) {
      return errors::InvalidArgument(what_, ": the then branch returns ", then_out.size(),
                                     " values but the else branch ", else_out.size());
    }
    if (then_out.empty()) {
      return errors::InvalidArgument(what_, ": the branches must return at least one value");
    }
    for (size_t i = 0; i < then_out.size(); ++i) {
      if (then_out[i].dtype() != else_out[i].dtype()) {
        return errors::InvalidArgument(what_, ": value ", i, " of the then branch is ",
                                       Describe(then_given[i]), " but of the else branch ",
                                       Describe(else_given[i]));
      }
    }
    outputs->clear();
    for (size_t i = 0; i < then_out.size(); ++i) {
      Operation merge =
          AddOp(scope_.WithOpName("Merge"), "Merge", {InputList{else_out[i], then_out[i]}});
      outputs->push_back(merge.output(0));
    }
    return Built(scope_);
  }

 private:
  Status BuildBranch(const BranchFn& fn, const char* branch, Node* pivot, int port,
                     std::vector<Output>* out) {
    branch_begin_ = graph_->num_node_ids();
    WEIR_RETURN_IF_ERROR(
        RunUserFn(scope_, StrCat(what_, ", ", branch, " branch"), [&] { return fn(scope_, out); }));
    branch_end_ = graph_->num_node_ids();
    for (int id = branch_begin_; id < branch_end_; ++id) {
      Node* node = graph_->FindNodeId(id);
      if (node != nullptr) WEIR_RETURN_IF_ERROR(Adopt(node, pivot, port));
    }
    for (size_t i = 0; i < out->size(); ++i) {
      const Output& value = (*out)[i];
      if (!value.valid()) {
        return errors::InvalidArgument(what_, ": value ", i, " of the ", branch,
                                       " branch is an invalid Output");
      }
      WEIR_RETURN_IF_ERROR(CheckNotFromThen(value.node(), value.name()));
      const int id = value.node()->id();
      if (id >= first_id_ && id < branch_begin_) {
        return errors::InvalidArgument(what_, ": value ", i, " of the ", branch,
                                       " branch is the Cond's own node '", value.name(), "'");
      }
    }
    return Built(scope_);
  }

  // The branch's results, those from outside through Switches.
  std::vector<Output> InsideBranch(const std::vector<Output>& given, int port) {
    std::vector<Output> inside;
    for (const Output& value : given) {
      inside.push_back(value.node()->id() < first_id_ ? Capture(value, port) : value);
    }
    return inside;
  }

  // External data inputs come through Switches; a node with no input from
  // inside the branch (a Const) waits on the pivot, or it would run live in
  // the branch not taken.
  Status Adopt(Node* node, Node* pivot, int port) {
    bool has_data = false;
    bool has_inner_control = false;
    for (const Edge* edge : InEdges(node)) {
      Node* src = edge->src();
      if (edge->IsControlEdge()) {
        has_inner_control |= src->id() >= first_id_;
        continue;
      }
      has_data = true;
      WEIR_RETURN_IF_ERROR(CheckNotFromThen(src, node->name()));
      if (src->id() < first_id_) {
        Output inside = Capture(Output(src, edge->src_output()), port);
        WEIR_RETURN_IF_ERROR(Built(scope_));
        Rewire(graph_, edge, inside);
      }
    }
    if (!has_data && !has_inner_control) graph_->AddControlEdge(pivot, node);
    return Status::OK();
  }

  // While the else branch is adopted, nothing may read the then branch.
  Status CheckNotFromThen(const Node* src, const std::string& user) const {
    if (then_end_ > then_begin_ && src->id() >= then_begin_ && src->id() < then_end_) {
      return errors::InvalidArgument(what_, ": '", user, "' in the else branch uses '", src->name(),
                                     "', built in the then branch");
    }
    return Status::OK();
  }

  // One Switch per external tensor serves both branches.
  Output Capture(const Output& external, int port) {
    auto key = std::make_pair(external.node()->id(), external.index());
    auto it = switches_.find(key);
    if (it == switches_.end()) {
      Operation sw = AddOp(scope_.WithOpName("Switch"), "Switch", {external, pred_id_});
      if (!sw.valid()) return Output();
      it = switches_.emplace(key, sw.node()).first;
    }
    return Output(it->second, port);
  }

  Graph* graph_;
  const int first_id_;
  const Scope scope_;
  std::string what_ = "Cond";
  Output pred_id_;
  int branch_begin_ = 0, branch_end_ = 0;
  int then_begin_ = 0, then_end_ = 0;
  std::map<std::pair<int, int>, Node*> switches_;
};

class LoopBuilder {
 public:
  LoopBuilder(const Scope& scope, const WhileLoopOptions& options)
      : graph_(scope.graph()),
        first_id_(graph_->num_node_ids()),
        options_(options),
        scope_(scope.NewSubScope(options.name)) {}

  Status Build(const std::vector<Output>& loop_vars, const LoopCondFn& cond, const LoopBodyFn& body,
               std::vector<Output>* outputs) {
    WEIR_RETURN_IF_ERROR(CheckArguments(loop_vars));
    frame_ = NamePrefix(scope_);
    what_ = StrCat("WhileLoop '", frame_, "'");

    // The user's variables, after an iteration counter if the trip count is bounded.
    std::vector<Output> vars = loop_vars;
    std::vector<PartialShape> invariants = options_.shape_invariants;
    if (invariants.empty()) {
      for (const Output& var : loop_vars) invariants.push_back(var.shape());
    }
    for (size_t i = 0; i < vars.size(); ++i) {
      if (!MeetsInvariant(vars[i].shape(), invariants[i])) {
        return errors::InvalidArgument(what_, ": loop variable ", i, " ", Describe(vars[i]),
                                       " does not have the shape of its shape invariant ",
                                       invariants[i].DebugString());
      }
    }
    const Output& limit = options_.maximum_iterations;
    const int first_user = limit.valid() ? 1 : 0;
    if (limit.valid()) {
      if (limit.dtype() != DT_INT32 || !MaybeScalar(limit.shape())) {
        return errors::InvalidArgument(
            what_, ": maximum_iterations must be an int32 scalar but is ", Describe(limit));
      }
      vars.insert(vars.begin(), Const(scope_.WithOpName("iteration_counter"), 0));
      invariants.insert(invariants.begin(), PartialShape(std::vector<int64_t>{}));
    }

    // Enter -> Merge(enter, enter); input 1 becomes the back edge at the end.
    std::vector<Output> merges;
    for (size_t i = 0; i < vars.size(); ++i) {
      Operation enter = AddOp(scope_.WithOpName("Enter"), "Enter", {vars[i]}, EnterAttrs(false));
      WEIR_RETURN_IF_ERROR(Built(scope_));
      enter.node()->set_output_shapes({invariants[i]});
      Output merge = AddInFrame("Merge", "Merge", {InputList{enter.output(0), enter.output(0)}});
      WEIR_RETURN_IF_ERROR(Built(scope_));
      merge.node()->set_output_shapes({invariants[i], merge.node()->output_shape(1)});
      merges.push_back(merge);
    }

    // The condition, on the Merges; its Consts wait on the first Merge.
    Output pred;
    const std::vector<Output> cond_vars(merges.begin() + first_user, merges.end());
    WEIR_RETURN_IF_ERROR(
        BuildPart("condition", merges[0].node(), [&] { return cond(scope_, cond_vars, &pred); }));
    if (!pred.valid())
      return errors::InvalidArgument(what_, ": the condition is an invalid Output");
    pred = Internalize(pred);
    WEIR_RETURN_IF_ERROR(Built(scope_));
    if (pred.dtype() != DT_BOOL || !MaybeScalar(pred.shape())) {
      return errors::InvalidArgument(what_, ": the condition must be a bool scalar but is ",
                                     Describe(pred));
    }
    if (limit.valid()) {
      Output below = AddInFrame("Less", "Less", {merges[0], Capture(limit)});
      pred = AddInFrame("LogicalAnd", "LogicalAnd", {below, pred});
    }
    Output loop_cond = AddInFrame("LoopCond", "LoopCond", {pred});
    std::vector<Node*> switches;
    std::vector<Output> identities;
    for (const Output& merge : merges) {
      Output sw = AddInFrame("Switch", "Switch", {merge, loop_cond});
      WEIR_RETURN_IF_ERROR(Built(scope_));
      switches.push_back(sw.node());
      identities.push_back(AddInFrame("Identity", "Identity", {Output(sw.node(), kThenPort)}));
    }
    WEIR_RETURN_IF_ERROR(Built(scope_));

    // The body, on the Identities; its Consts wait on the first one.
    std::vector<Output> next;
    const std::vector<Output> body_vars(identities.begin() + first_user, identities.end());
    WEIR_RETURN_IF_ERROR(
        BuildPart("body", identities[0].node(), [&] { return body(scope_, body_vars, &next); }));
    WEIR_RETURN_IF_ERROR(CheckBodyResults(loop_vars, invariants, first_user, &next));
    if (limit.valid()) {
      Output one = Const(scope_.WithOpName("add/y"), 1);
      WEIR_RETURN_IF_ERROR(Built(scope_));
      RemoveControlInputs(one.node());
      graph_->AddControlEdge(identities[0].node(), one.node());
      next.insert(next.begin(), AddInFrame("add", "AddV2", {identities[0], one}));
    }

    // NextIteration closes each back edge; Exits leave on output_false.
    outputs->clear();
    for (size_t i = 0; i < vars.size(); ++i) {
      Output next_iteration = AddInFrame("NextIteration", "NextIteration", {next[i]});
      WEIR_RETURN_IF_ERROR(Built(scope_));
      Rewire(graph_, merges[i].node()->input_edge(1), next_iteration);
      Output exit = AddInFrame("Exit", "Exit", {Output(switches[i], kElsePort)});
      if (static_cast<int>(i) >= first_user) outputs->push_back(exit);
    }
    return Built(scope_);
  }

 private:
  Status CheckArguments(const std::vector<Output>& loop_vars) const {
    if (loop_vars.empty()) {
      return errors::InvalidArgument("WhileLoop '", options_.name, "' needs a loop variable");
    }
    for (size_t i = 0; i < loop_vars.size(); ++i) {
      if (!loop_vars[i].valid()) {
        return errors::InvalidArgument("WhileLoop '", options_.name, "': loop variable ", i,
                                       " is an invalid Output");
      }
    }
    if (options_.name.empty()) return errors::InvalidArgument("WhileLoop: empty name");
    if (options_.parallel_iterations < 1) {
      return errors::InvalidArgument("WhileLoop '", options_.name,
                                     "': parallel_iterations must be at least 1, not ",
                                     options_.parallel_iterations);
    }
    if (!options_.shape_invariants.empty() &&
        options_.shape_invariants.size() != loop_vars.size()) {
      return errors::InvalidArgument("WhileLoop '", options_.name,
                                     "': ", options_.shape_invariants.size(),
                                     " shape invariants for ", loop_vars.size(), " loop variables");
    }
    return Status::OK();
  }

  Status CheckBodyResults(const std::vector<Output>& loop_vars,
                          const std::vector<PartialShape>& invariants, int first_user,
                          std::vector<Output>* next) {
    if (next->size() != loop_vars.size()) {
      return errors::InvalidArgument(what_, ": the body returns ", next->size(), " values for ",
                                     loop_vars.size(), " loop variables");
    }
    for (size_t i = 0; i < next->size(); ++i) {
      Output& value = (*next)[i];
      if (!value.valid()) {
        return errors::InvalidArgument(what_, ": value ", i, " of the body is an invalid Output");
      }
      value = Internalize(value);
      WEIR_RETURN_IF_ERROR(Built(scope_));
      const Output& var = loop_vars[i];
      if (value.dtype() != var.dtype()) {
        return errors::InvalidArgument(what_, ": loop variable ", i, " ", Describe(var),
                                       " becomes ", Describe(value), " in the body");
      }
      const PartialShape& invariant = invariants[i + first_user];
      if (!MeetsInvariant(value.shape(), invariant)) {
        const bool given = !options_.shape_invariants.empty();
        return errors::InvalidArgument(
            what_, ": loop variable ", i, " ", Describe(var),
            given ? StrCat(" has shape invariant ", invariant.DebugString())
                  : StrCat(" enters the loop with shape ", invariant.DebugString()),
            " but has shape ", value.shape().DebugString(), " after one iteration (", value.name(),
            ")", given ? "" : "; set WhileLoopOptions::shape_invariants to allow it");
      }
    }
    return Status::OK();
  }

  AttrMap EnterAttrs(bool is_constant) const {
    return {{"frame_name", frame_},
            {"is_constant", is_constant},
            {"parallel_iterations", static_cast<int64_t>(options_.parallel_iterations)}};
  }

  void RemoveControlInputs(Node* node) {
    for (const Edge* edge : InEdges(node)) {
      if (edge->IsControlEdge()) graph_->RemoveEdge(edge);
    }
  }

  // A node of the loop's own structure, inside the frame: the scope's
  // control dependencies are outside it, and the Enters carry them already.
  Output AddInFrame(std::string_view name, std::string_view op, std::vector<OpArg> args) {
    Operation built = AddOp(scope_.WithOpName(name), op, std::move(args));
    if (!built.valid()) return Output();
    RemoveControlInputs(built.node());
    return built.output(0);
  }

  Status BuildPart(const char* part, Node* pivot, const std::function<Status()>& fn) {
    const int begin = graph_->num_node_ids();
    WEIR_RETURN_IF_ERROR(RunUserFn(scope_, StrCat(what_, ", ", part), fn));
    const int end = graph_->num_node_ids();
    for (int id = begin; id < end; ++id) {
      Node* node = graph_->FindNodeId(id);
      if (node != nullptr) WEIR_RETURN_IF_ERROR(Adopt(node, pivot));
    }
    return Status::OK();
  }

  // External inputs come through constant Enters, external control inputs
  // through the Enter of a value of theirs. A node fed only by loop
  // invariants would run once per frame, not once per iteration: it waits
  // on the pivot, as in TensorFlow.
  Status Adopt(Node* node, Node* pivot) {
    for (const Edge* edge : InEdges(node)) {
      Node* src = edge->src();
      if (src->id() >= first_id_) continue;
      if (edge->IsControlEdge()) {
        graph_->RemoveEdge(edge);
        Node* inside = CaptureControl(src);
        WEIR_RETURN_IF_ERROR(Built(scope_));
        graph_->AddControlEdge(inside, node);
      } else {
        Output inside = Capture(Output(src, edge->src_output()));
        WEIR_RETURN_IF_ERROR(Built(scope_));
        Rewire(graph_, edge, inside);
      }
    }
    for (const Edge* edge : node->in_edges()) {
      if (!IsLoopConstantEnter(edge->src())) return Status::OK();
    }
    graph_->AddControlEdge(pivot, node);
    return Status::OK();
  }

  Output Internalize(const Output& value) {
    return value.node()->id() < first_id_ ? Capture(value) : value;
  }

  // One constant Enter per external tensor.
  Output Capture(const Output& external) {
    auto key = std::make_pair(external.node()->id(), external.index());
    auto it = enters_.find(key);
    if (it == enters_.end()) {
      Operation enter = AddOp(scope_.WithOpName("Enter"), "Enter", {external}, EnterAttrs(true));
      if (!enter.valid()) return Output();
      it = enters_.emplace(key, enter.output(0)).first;
    }
    return it->second;
  }

  // An Enter that is live once `external` ran: of its first output, or of a
  // Const that waits on it (a NoOp has no output).
  Node* CaptureControl(Node* external) {
    auto it = control_enters_.find(external->id());
    if (it != control_enters_.end()) return it->second;
    Output value(external, 0);
    if (external->num_outputs() == 0) {
      value = Const(scope_.WithOpName("control").WithControlDependencies({Operation(external)}), 0);
      if (!value.valid()) return nullptr;
    }
    Output enter = Capture(value);
    if (!enter.valid()) return nullptr;
    control_enters_.emplace(external->id(), enter.node());
    return enter.node();
  }

  Graph* graph_;
  const int first_id_;
  const WhileLoopOptions& options_;
  const Scope scope_;
  std::string frame_;
  std::string what_;
  std::map<std::pair<int, int>, Output> enters_;
  std::map<int, Node*> control_enters_;
};

}  // namespace

Status Cond(const Scope& scope, const Output& pred, const BranchFn& then_fn,
            const BranchFn& else_fn, std::vector<Output>* outputs, std::string_view name) {
  CHECK(outputs != nullptr);
  if (!scope.ok()) return scope.status();
  Status status = CondBuilder(scope, name).Build(pred, then_fn, else_fn, outputs);
  scope.UpdateStatus(status);
  return status;
}

Status WhileLoop(const Scope& scope, const std::vector<Output>& loop_vars, const LoopCondFn& cond,
                 const LoopBodyFn& body, std::vector<Output>* outputs,
                 const WhileLoopOptions& options) {
  CHECK(outputs != nullptr);
  if (!scope.ok()) return scope.status();
  Status status = LoopBuilder(scope, options).Build(loop_vars, cond, body, outputs);
  scope.UpdateStatus(status);
  return status;
}

}  // namespace ops
}  // namespace weir
