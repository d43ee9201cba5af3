// Lowering of If, Case and While to control flow v1, as TensorFlow's
// LowerIfWhile pass does it.
//
// If: Switch(pred, pred) gives the pivots (an Identity of each output), each
// input goes through Switch(input, pred), then_branch is inlined on the true
// outputs and else_branch on the false ones, each pair of results meets in a
// Merge. The untaken branch is dead, so it costs nothing and its Merge
// inputs are dead; the Merges are live.
//
// Case: a chain of two-way conds, "index == 0 ? branches[0] : (index == 1 ?
// ... : branches[N-1])", so that an index out of range runs the last branch
// as TensorFlow's Case does. TensorFlow lowers Case to one N-way _SwitchN;
// Weir's executor knows only the two-way Switch, and a chain of them needs
// no new kind of node there. The cost is N - 1 Switches per input instead
// of one; the branches not taken stay dead either way.
//
// While: Enter -> Merge -> cond -> LoopCond -> Switch -> (false) Exit,
// (true) Identity -> body -> NextIteration -> back to the Merge: the
// structure ops::WhileLoop builds (which lives in a layer above this one).
// A While passes every value its cond and body read as a loop variable, so
// there are no loop invariants to capture.
//
// The node's own name ends on an IdentityN of the results (a NoOp when
// there are none), so feeds, fetches and the node's consumers are unchanged.
#include "weir/graph/lower_functional_ops.h"

#include <functional>
#include <string_view>
#include <utility>

#include "weir/base/logging.h"
#include "weir/framework/node_def_util.h"
#include "weir/graph/call_rewrite.h"
#include "weir/graph/function_inline.h"
#include "weir/graph/function_library.h"
#include "weir/graph/graph_constructor.h"

namespace weir {
namespace {

using Tensors = std::vector<std::pair<Node*, int>>;

constexpr int kElsePort = 0;  // Switch's output_false
constexpr int kThenPort = 1;  // Switch's output_true

// A branch of a cond, built on the inputs as seen in the branch; `pivot`
// is live exactly when the branch runs. Appends its results to `outputs`
// and the nodes it must finish before the cond is done to `controls`.
using BranchFn = std::function<Status(const Tensors& inputs, Node* pivot, Tensors* outputs,
                                      std::vector<Node*>* controls)>;

class Lowering {
 public:
  Lowering(Graph* graph, Node* node)
      : graph_(graph),
        node_(node),
        base_(node->name()),
        described_(node->Describe()),
        device_(node->requested_device()),
        mark_(graph->GetMark()) {}

  Status Run() {
    for (const Edge* e : node_->control_inputs()) control_sources_.push_back(e->src());
    inputs_.resize(node_->num_inputs());
    for (int i = 0; i < node_->num_inputs(); ++i) {
      const Edge* e = node_->input_edge(i);
      if (e == nullptr) return errors::InvalidArgument("input ", i, " is not connected");
      inputs_[i] = {e->src(), e->src_output()};
    }
    const std::string& op = node_->type_string();
    Tensors outputs;
    std::vector<Node*> done;
    Status status;
    if (op == "If" || op == "StatelessIf") {
      status = LowerIf(&outputs, &done);
    } else if (op == "Case" || op == "StatelessCase") {
      status = LowerCase(&outputs, &done);
    } else {
      status = LowerWhile(&outputs);
    }
    if (status.ok()) status = CheckOutputs(outputs);
    if (!status.ok()) {
      graph_->RollBackTo(mark_);
      return status;
    }
    return Replace(outputs, done);
  }

 private:
  // A node of the lowered structure, "<node>/<suffix>" (made unique), on
  // the node's device, with its shapes inferred.
  StatusOr<Node*> Add(std::string_view suffix, std::string_view op, AttrMap attrs,
                      const Tensors& inputs, const std::vector<Node*>& controls = {}) {
    NodeDef def;
    def.name = graph_->NewName(StrCat(base_, "/", suffix));
    def.op = std::string(op);
    def.device = device_;
    def.source_location = node_->def().source_location;
    def.attrs = std::move(attrs);
    const std::string context =
        StrCat("lowering node ", described_, ": adding ", op, " '", def.name, "'");
    StatusOr<Node*> added = graph_->AddNode(std::move(def));
    if (!added.ok()) return added.status().WithContext(context);
    for (size_t i = 0; i < inputs.size(); ++i) {
      graph_->AddEdge(inputs[i].first, inputs[i].second, *added, static_cast<int>(i));
    }
    for (Node* control : controls) graph_->AddControlEdge(control, *added);
    WEIR_RETURN_IF_ERROR(InferShapes(*added).WithContext(context));
    return *added;
  }

  static DType TypeOf(const std::pair<Node*, int>& t) { return t.first->output_type(t.second); }

  // `value` as a bool scalar for a Switch or LoopCond: as is when it is one
  // already, else through ToBool.
  StatusOr<std::pair<Node*, int>> Truth(const std::pair<Node*, int>& value, std::string_view name) {
    const PartialShape& shape = value.first->output_shape(value.second);
    if (TypeOf(value) == DT_BOOL && shape.known_rank() && shape.rank() == 0) return value;
    WEIR_ASSIGN_OR_RETURN(Node * truth, Add(name, "ToBool", {{"T", TypeOf(value)}}, {value}));
    return std::make_pair(truth, 0);
  }

  // The function of attr `attr`, checked to be in the library.
  StatusOr<const FunctionDef*> Function(const NameAttrList& func, std::string_view attr) const {
    const FunctionDef* def = graph_->function_library().Find(func.name);
    if (def == nullptr) {
      return errors::InvalidArgument("node ", node_->Describe(), ": ", attr, " names function '",
                                     func.name, "', which is not in the graph's function library");
    }
    return def;
  }

  // Inlines `func` (attr `attr` of the node) under "<node>/<part>" (made
  // free of clashes), its sources gated by `gate`. Collects what the lowered
  // node must wait for into `controls`.
  Status Inline(const NameAttrList& func, std::string_view attr, std::string_view part,
                const Tensors& inputs, Node* gate, Tensors* outputs, std::vector<Node*>* controls) {
    WEIR_ASSIGN_OR_RETURN(const FunctionDef* def, Function(func, attr));
    std::string prefix = StrCat(base_, "/", part);
    for (int k = 1; graph_->FindNode(prefix) != nullptr || !BodyNamesAreFree(*graph_, prefix, *def);
         ++k) {
      prefix = StrCat(base_, "/", part, "_", k);
    }
    const Graph::Mark before = graph_->GetMark();
    InlinedFunction result;
    std::vector<Node*> gates;
    if (gate != nullptr) gates.push_back(gate);
    Status status = InlineFunctionBody(func, inputs, gates, prefix, graph_, &result);
    if (!status.ok()) {
      return status.WithContext(StrCat("lowering node ", node_->Describe(), ", ", attr));
    }
    // Body nodes run where the node was asked to run unless they say
    // otherwise; the lowered node waits for the body's control outputs and
    // side effects.
    std::vector<Node*> side_effects =
        PlaceBodyAndFindSideEffects(graph_, before, device_, node_->is_stateful());
    *outputs = std::move(result.outputs);
    controls->insert(controls->end(), result.control_outputs.begin(),
                     result.control_outputs.end());
    controls->insert(controls->end(), side_effects.begin(), side_effects.end());
    return Status::OK();
  }

  Status CheckBranchOutputs(std::string_view what, const Tensors& outputs) const {
    if (outputs.size() != static_cast<size_t>(node_->num_outputs())) {
      return errors::InvalidArgument("node ", node_->Describe(), ": ", what, " returns ",
                                     outputs.size(), " values but the node has ",
                                     node_->num_outputs(), " outputs");
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (TypeOf(outputs[i]) != node_->output_type(static_cast<int>(i))) {
        return errors::InvalidArgument("node ", node_->Describe(), ": value ", i, " of ", what,
                                       " is ", TypeOf(outputs[i]), " ('",
                                       outputs[i].first->name(), "') but output ", i,
                                       " of the node is ", node_->output_type(static_cast<int>(i)));
      }
    }
    return Status::OK();
  }

  Status CheckOutputs(const Tensors& outputs) const { return CheckBranchOutputs("the node", outputs); }

  // The two halves of a cond "pred ? then : else" on `inputs`: the Switches
  // (of pred, whose Identities are the pivots, and of each input), then,
  // once both sides are built, the Merges of their results.
  struct Cond {
    Node* pivot_t = nullptr;
    Node* pivot_f = nullptr;
    Tensors then_in, else_in;  // the inputs as each side sees them
  };

  // `gates` are control inputs of the Switches, so both sides wait for them.
  StatusOr<Cond> OpenCond(const std::pair<Node*, int>& pred, const Tensors& inputs,
                          const std::vector<Node*>& gates) {
    Cond cond;
    WEIR_ASSIGN_OR_RETURN(Node * pred_switch,
                          Add("switch_pred", "Switch", {{"T", DT_BOOL}}, {pred, pred}, gates));
    WEIR_ASSIGN_OR_RETURN(cond.pivot_t,
                          Add("pivot_t", "Identity", {{"T", DT_BOOL}}, {{pred_switch, kThenPort}}));
    WEIR_ASSIGN_OR_RETURN(cond.pivot_f,
                          Add("pivot_f", "Identity", {{"T", DT_BOOL}}, {{pred_switch, kElsePort}}));
    for (const auto& input : inputs) {
      WEIR_ASSIGN_OR_RETURN(Node * sw,
                            Add("switch", "Switch", {{"T", TypeOf(input)}}, {input, pred}, gates));
      cond.then_in.push_back({sw, kThenPort});
      cond.else_in.push_back({sw, kElsePort});
    }
    return cond;
  }

  // `done`, when there are branch controls (or no outputs to wait for), is
  // a node live once the taken side's controls ran. REQUIRES: both sides'
  // outputs were checked against the node's.
  Status CloseCond(const Cond& cond, const Tensors& then_out,
                   const std::vector<Node*>& then_controls, const Tensors& else_out,
                   const std::vector<Node*>& else_controls, Tensors* outputs,
                   std::vector<Node*>* done) {
    outputs->clear();
    for (size_t i = 0; i < then_out.size(); ++i) {
      WEIR_ASSIGN_OR_RETURN(Node * merge, Add("merge", "Merge",
                                              {{"T", TypeOf(then_out[i])}, {"N", int64_t{2}}},
                                              {else_out[i], then_out[i]}));
      outputs->push_back({merge, 0});
    }
    done->clear();
    if (!then_controls.empty() || !else_controls.empty() || outputs->empty()) {
      // Each side's Identity of its pivot is live once that side's controls
      // ran (and dead on the side not taken); the Merge of the two is live
      // once the taken side is done.
      WEIR_ASSIGN_OR_RETURN(Node * then_done, Add("then_done", "Identity", {{"T", DT_BOOL}},
                                                  {{cond.pivot_t, 0}}, then_controls));
      WEIR_ASSIGN_OR_RETURN(Node * else_done, Add("else_done", "Identity", {{"T", DT_BOOL}},
                                                  {{cond.pivot_f, 0}}, else_controls));
      WEIR_ASSIGN_OR_RETURN(Node * executed,
                            Add("branch_executed", "Merge", {{"T", DT_BOOL}, {"N", int64_t{2}}},
                                {{else_done, 0}, {then_done, 0}}));
      done->push_back(executed);
    }
    return Status::OK();
  }

  // pred ? then_fn(inputs) : else_fn(inputs), as OpenCond and CloseCond.
  Status LowerCond(const std::pair<Node*, int>& pred, const Tensors& inputs,
                   const std::vector<Node*>& gates, const BranchFn& then_fn,
                   const BranchFn& else_fn, std::string_view then_name, std::string_view else_name,
                   Tensors* outputs, std::vector<Node*>* done) {
    WEIR_ASSIGN_OR_RETURN(Cond cond, OpenCond(pred, inputs, gates));
    Tensors then_out, else_out;
    std::vector<Node*> then_controls, else_controls;
    WEIR_RETURN_IF_ERROR(then_fn(cond.then_in, cond.pivot_t, &then_out, &then_controls));
    WEIR_RETURN_IF_ERROR(CheckBranchOutputs(then_name, then_out));
    WEIR_RETURN_IF_ERROR(else_fn(cond.else_in, cond.pivot_f, &else_out, &else_controls));
    WEIR_RETURN_IF_ERROR(CheckBranchOutputs(else_name, else_out));
    return CloseCond(cond, then_out, then_controls, else_out, else_controls, outputs, done);
  }

  BranchFn InlineBranch(const NameAttrList& func, std::string attr, std::string part) {
    return [this, func, attr, part](const Tensors& inputs, Node* pivot, Tensors* outputs,
                                    std::vector<Node*>* controls) {
      return Inline(func, attr, part, inputs, pivot, outputs, controls);
    };
  }

  Status LowerIf(Tensors* outputs, std::vector<Node*>* done) {
    NameAttrList then_branch, else_branch;
    WEIR_RETURN_IF_ERROR(GetAttr(node_->def().attrs, "then_branch", &then_branch));
    WEIR_RETURN_IF_ERROR(GetAttr(node_->def().attrs, "else_branch", &else_branch));
    WEIR_ASSIGN_OR_RETURN(auto pred, Truth(inputs_[0], "to_bool"));
    const Tensors inputs(inputs_.begin() + 1, inputs_.end());
    return LowerCond(pred, inputs, control_sources_, InlineBranch(then_branch, "then_branch", "then"),
                     InlineBranch(else_branch, "else_branch", "else"),
                     StrCat("then_branch '", then_branch.name, "'"),
                     StrCat("else_branch '", else_branch.name, "'"), outputs, done);
  }

  // branches[k](inputs) if index == k, else the chain from k + 1 on; the
  // last branch takes every other index. Built level by level without
  // recursion (a Case of 10^5 branches must not take 10^5 stack frames):
  // down the chain the Switches and the branch taken at each level, then
  // back up the Merges. Below the first level the index is switched with
  // the inputs.
  Status LowerCaseChain(const std::vector<NameAttrList>& branches, Tensors* outputs,
                        std::vector<Node*>* done) {
    struct Level {
      Cond cond;
      Tensors then_out;
      std::vector<Node*> then_controls;
    };
    std::vector<Level> levels;
    levels.reserve(branches.size() - 1);
    std::pair<Node*, int> index = inputs_[0];
    Tensors inputs(inputs_.begin() + 1, inputs_.end());
    std::vector<Node*> gates = control_sources_;
    Node* pivot = nullptr;
    for (size_t k = 0; k + 1 < branches.size(); ++k) {
      // The constant k, in the index's frame and branch: it waits for an
      // Identity of the index (a Switch output is no control source, the
      // Switch itself runs on both sides).
      WEIR_ASSIGN_OR_RETURN(Node * index_here,
                            Add(StrCat("index", k), "Identity", {{"T", DT_INT32}}, {index}));
      WEIR_ASSIGN_OR_RETURN(
          Node * constant,
          Add(StrCat("branch", k, "_index"), "Const",
              {{"dtype", DT_INT32}, {"value", Tensor::Scalar<int32_t>(static_cast<int32_t>(k))}},
              {}, {index_here}));
      WEIR_ASSIGN_OR_RETURN(Node * is_k, Add(StrCat("is_branch", k), "Equal", {{"T", DT_INT32}},
                                             {{index_here, 0}, {constant, 0}}));
      Tensors switched = std::move(inputs);
      switched.push_back({index_here, 0});
      Level level;
      WEIR_ASSIGN_OR_RETURN(level.cond, OpenCond({is_k, 0}, switched, gates));
      const Tensors args(level.cond.then_in.begin(), level.cond.then_in.end() - 1);
      WEIR_RETURN_IF_ERROR(Inline(branches[k], StrCat("branches[", k, "]"), StrCat("branch", k),
                                  args, level.cond.pivot_t, &level.then_out, &level.then_controls));
      WEIR_RETURN_IF_ERROR(
          CheckBranchOutputs(StrCat("branch ", k, " '", branches[k].name, "'"), level.then_out));
      inputs.assign(level.cond.else_in.begin(), level.cond.else_in.end() - 1);
      index = level.cond.else_in.back();
      gates.clear();
      pivot = level.cond.pivot_f;
      levels.push_back(std::move(level));
    }
    const size_t last = branches.size() - 1;
    WEIR_RETURN_IF_ERROR(Inline(branches[last], StrCat("branches[", last, "]"),
                                StrCat("branch", last), inputs, pivot, outputs, done));
    WEIR_RETURN_IF_ERROR(
        CheckBranchOutputs(StrCat("branch ", last, " '", branches[last].name, "'"), *outputs));
    for (size_t k = levels.size(); k-- > 0;) {
      const Tensors else_out = std::move(*outputs);
      const std::vector<Node*> else_controls = std::move(*done);
      WEIR_RETURN_IF_ERROR(CloseCond(levels[k].cond, levels[k].then_out, levels[k].then_controls,
                                     else_out, else_controls, outputs, done));
    }
    return Status::OK();
  }

  Status LowerCase(Tensors* outputs, std::vector<Node*>* done) {
    std::vector<NameAttrList> branches;
    WEIR_RETURN_IF_ERROR(GetAttr(node_->def().attrs, "branches", &branches));
    if (branches.empty()) {
      return errors::InvalidArgument("node ", node_->Describe(), " has no branches");
    }
    const Tensors inputs(inputs_.begin() + 1, inputs_.end());
    if (branches.size() > 1) return LowerCaseChain(branches, outputs, done);
    // One branch: a call that still waits for the index and for the
    // node's control inputs.
    std::vector<Node*> gates = control_sources_;
    WEIR_ASSIGN_OR_RETURN(Node * index, Add("index0", "Identity", {{"T", DT_INT32}}, {inputs_[0]},
                                            gates));
    gates.push_back(index);
    Tensors gated;
    for (const auto& input : inputs) {
      WEIR_ASSIGN_OR_RETURN(Node * id, Add("input", "Identity", {{"T", TypeOf(input)}}, {input},
                                           gates));
      gated.push_back({id, 0});
    }
    std::vector<Node*> controls;
    WEIR_RETURN_IF_ERROR(Inline(branches[0], "branches[0]", "branch0", gated, index, outputs,
                                &controls));
    *done = std::move(controls);
    if (outputs->empty()) done->push_back(index);
    return Status::OK();
  }

  Status LowerWhile(Tensors* outputs) {
    NameAttrList cond, body;
    WEIR_RETURN_IF_ERROR(GetAttr(node_->def().attrs, "cond", &cond));
    WEIR_RETURN_IF_ERROR(GetAttr(node_->def().attrs, "body", &body));
    int64_t parallel_iterations = 10;
    WEIR_RETURN_IF_ERROR(GetAttr(node_->def().attrs, "parallel_iterations", &parallel_iterations));
    if (parallel_iterations < 1) {
      return errors::InvalidArgument("node ", node_->Describe(),
                                     ": parallel_iterations must be at least 1, not ",
                                     parallel_iterations);
    }
    if (inputs_.empty()) {
      return errors::InvalidArgument("node ", node_->Describe(), " has no loop variables");
    }
    std::vector<PartialShape> shapes;
    auto it = node_->def().attrs.find("output_shapes");
    if (it != node_->def().attrs.end() && it->second.is_list()) shapes = it->second.list().shape;
    if (shapes.size() != inputs_.size()) shapes.assign(inputs_.size(), PartialShape::UnknownRank());

    // A frame per node: node names are unique in the graph.
    const AttrMap enter_attrs = {{"frame_name", base_},
                                 {"is_constant", false},
                                 {"parallel_iterations", parallel_iterations}};
    Tensors merges;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      AttrMap attrs = enter_attrs;
      attrs["T"] = TypeOf(inputs_[i]);
      WEIR_ASSIGN_OR_RETURN(Node * enter, Add("enter", "Enter", std::move(attrs), {inputs_[i]},
                                              control_sources_));
      // The back edge replaces the second input below. The Merge has the
      // shape the body keeps (the declared invariant), not the first
      // iteration's.
      WEIR_ASSIGN_OR_RETURN(Node * merge,
                            Add("merge", "Merge", {{"T", TypeOf(inputs_[i])}, {"N", int64_t{2}}},
                                {{enter, 0}, {enter, 0}}));
      enter->set_output_shapes({shapes[i]});
      merge->set_output_shapes({shapes[i], merge->output_shape(1)});
      merges.push_back({merge, 0});
    }

    Tensors cond_out;
    std::vector<Node*> cond_controls;
    WEIR_RETURN_IF_ERROR(
        Inline(cond, "cond", "cond", merges, merges[0].first, &cond_out, &cond_controls));
    if (cond_out.size() != 1) {
      return errors::InvalidArgument("node ", node_->Describe(), ": cond '", cond.name,
                                     "' returns ", cond_out.size(), " values, not one");
    }
    WEIR_ASSIGN_OR_RETURN(auto pred, Truth(cond_out[0], "to_bool"));
    WEIR_ASSIGN_OR_RETURN(Node * loop_cond, Add("loop_cond", "LoopCond", {}, {pred}, cond_controls));

    Tensors exits, body_in;
    std::vector<Node*> switches;
    for (size_t i = 0; i < merges.size(); ++i) {
      const AttrMap type = {{"T", TypeOf(merges[i])}};
      WEIR_ASSIGN_OR_RETURN(Node * sw, Add("switch", "Switch", type, {merges[i], {loop_cond, 0}}));
      WEIR_ASSIGN_OR_RETURN(Node * exit, Add("exit", "Exit", type, {{sw, kElsePort}}));
      WEIR_ASSIGN_OR_RETURN(Node * identity, Add("identity", "Identity", type, {{sw, kThenPort}}));
      exits.push_back({exit, 0});
      body_in.push_back({identity, 0});
    }

    Tensors body_out;
    std::vector<Node*> body_controls;
    WEIR_RETURN_IF_ERROR(
        Inline(body, "body", "body", body_in, body_in[0].first, &body_out, &body_controls));
    if (body_out.size() != merges.size()) {
      return errors::InvalidArgument("node ", node_->Describe(), ": body '", body.name,
                                     "' returns ", body_out.size(), " values for ", merges.size(),
                                     " loop variables");
    }
    for (size_t i = 0; i < body_out.size(); ++i) {
      if (TypeOf(body_out[i]) != TypeOf(merges[i])) {
        return errors::InvalidArgument("node ", node_->Describe(), ": loop variable ", i, " is ",
                                       TypeOf(merges[i]), " but body '", body.name, "' makes it ",
                                       TypeOf(body_out[i]), " ('", body_out[i].first->name(), "')");
      }
      // The next iteration starts once this one's side effects are done.
      WEIR_ASSIGN_OR_RETURN(Node * next, Add("next_iteration", "NextIteration",
                                             {{"T", TypeOf(body_out[i])}}, {body_out[i]},
                                             body_controls));
      Node* merge = merges[i].first;
      graph_->RemoveEdge(merge->input_edge(1));
      graph_->AddEdge(next, 0, merge, 1);
    }
    *outputs = std::move(exits);
    return Status::OK();
  }

  // Removes the node; a node of its name (IdentityN of `outputs`, or a NoOp)
  // takes over its consumers and waits for `done`.
  Status Replace(const Tensors& outputs, const std::vector<Node*>& done) {
    const ReplacedNode replaced(*node_);
    std::vector<PartialShape> shapes;
    for (int i = 0; i < node_->num_outputs(); ++i) shapes.push_back(node_->output_shape(i));
    graph_->RemoveNode(node_);
    node_ = nullptr;
    StatusOr<Node*> added = AddReplacement(graph_, replaced, outputs, done);
    if (!added.ok()) {
      return added.status().WithContext(StrCat("lowering node ", described_, ": its replacement"));
    }
    Node* lowered = *added;
    // Keep what the node declared where the lowered structure knows less
    // (a Merge of two branches of different shapes).
    std::vector<PartialShape> now;
    for (int k = 0; k < lowered->num_outputs(); ++k) {
      const PartialShape& inferred = lowered->output_shape(k);
      now.push_back(inferred.known_rank() ? inferred : shapes[k]);
    }
    lowered->set_output_shapes(std::move(now));
    MoveConsumers(graph_, replaced, lowered);
    return Status::OK();
  }

  Graph* graph_;
  Node* node_;
  const std::string base_;
  const std::string described_;  // the node's, for errors after it is removed
  const std::string device_;
  const Graph::Mark mark_;
  Tensors inputs_;
  std::vector<Node*> control_sources_;
};

}  // namespace

bool IsFunctionalControlFlow(const Node& node) {
  return IsFunctionalControlFlowOp(node.type_string());
}

bool IsFunctionalControlFlowOp(std::string_view op) {
  return op == "If" || op == "StatelessIf" || op == "Case" || op == "StatelessCase" ||
         op == "While" || op == "StatelessWhile";
}

Status LowerFunctionalControlFlow(Graph* graph, Node* node) {
  CHECK(IsFunctionalControlFlow(*node)) << node->Describe();
  return Lowering(graph, node).Run();
}

}  // namespace weir
