#include "weir/train/gradients.h"

#include <deque>
#include <map>
#include <optional>
#include <set>

#include "weir/graph/expand_node.h"
#include "weir/graph/function_inline.h"
#include "weir/graph/function_library.h"
#include "weir/graph/symbolic_gradient.h"
#include "weir/ops/gradients/gradient_registry.h"
#include "weir/ops/standard_ops.h"
#include "weir/train/function_gradient_builder.h"
#include "weir/train/while_gradients.h"

namespace weir {
namespace {

// Ones shaped like `y`: the default seed.
Output OnesLike(const Scope& scope, const Output& y) {
  // y * 0 + 1 keeps y's dtype and (dynamic) shape with ops every dtype has.
  return ops::Add(scope, ops::Mul(scope, y, 0.0), 1.0);
}

Output AsInt32(const Scope& scope, const Output& t) {
  return t.dtype() == DT_INT32 ? t : ops::Cast(scope, t, DT_INT32);
}

// The sum of partial gradients, in a fixed order: sparse when every part
// is (their rows concatenated), else dense.
Gradient SumPartials(const Scope& scope, const std::vector<Gradient>& partials) {
  if (partials.size() == 1) return partials[0];
  bool all_sparse = true;
  for (const Gradient& g : partials) all_sparse &= g.is_sparse;
  if (all_sparse) {
    InputList values, indices;
    for (const Gradient& g : partials) {
      values.push_back(g.sparse.values);
      indices.push_back(AsInt32(scope, g.sparse.indices));
    }
    return Gradient::Sparse({ops::ConcatV2(scope, values, 0), ops::ConcatV2(scope, indices, 0),
                             partials[0].sparse.dense_shape});
  }
  Output sum = Densify(scope, partials[0]);
  if (sum.dtype() == DT_VARIANT) {
    // Lists' or optionals' gradients: AddN sums variants by value (AddV2 has
    // no variant kernel).
    InputList all;
    for (const Gradient& g : partials) all.push_back(Densify(scope, g));
    return Gradient::Dense(ops::AddN(scope, all));
  }
  for (size_t i = 1; i < partials.size(); ++i)
    sum = ops::AddV2(scope, sum, Densify(scope, partials[i]));
  return Gradient::Dense(sum);
}

// Calls the op's gradient functions: the sparse one first where the op has
// one and it applies, the dense one otherwise.
Status CallGradientFunction(const Scope& scope, Node* node, const std::vector<Output>& grad_outputs,
                            const GradientFunction& dense, std::vector<Gradient>* grad_inputs) {
  grad_inputs->assign(node->num_inputs(), Gradient());
  if (const SparseGradientFunction* sparse =
          GradientRegistry::Global()->LookupSparse(node->type_string())) {
    std::vector<IndexedSlices> rows;
    WEIR_RETURN_IF_ERROR((*sparse)(scope, Operation(node), grad_outputs, &rows));
    if (!rows.empty()) {
      if (static_cast<int>(rows.size()) != node->num_inputs()) {
        return errors::Internal("sparse gradient function of ", node->type_string(), " returned ",
                                rows.size(), " gradients for ", node->num_inputs(), " inputs");
      }
      for (size_t i = 0; i < rows.size(); ++i) {
        if (rows[i].values.valid()) {
          (*grad_inputs)[i] = Gradient::Sparse(rows[i]);
        }
      }
      return Status::OK();
    }
  }
  std::vector<Output> dense_inputs(node->num_inputs());
  WEIR_RETURN_IF_ERROR(dense(scope, Operation(node), grad_outputs, &dense_inputs));
  if (static_cast<int>(dense_inputs.size()) != node->num_inputs()) {
    return errors::Internal("gradient function of ", node->type_string(), " returned ",
                            dense_inputs.size(), " gradients for ", node->num_inputs(), " inputs");
  }
  for (size_t i = 0; i < dense_inputs.size(); ++i) {
    if (dense_inputs[i].valid()) (*grad_inputs)[i] = Gradient::Dense(dense_inputs[i]);
  }
  return Status::OK();
}

// The gradient of a call whose function has a gradient function in the
// library (GradientDef): a call of that function on the call's inputs and
// the gradients of its outputs (zeros where none flows), giving one
// gradient per input.
Status CallRegisteredGradient(const Scope& scope, Node* node, const NameAttrList& gradient,
                              const std::vector<Output>& grad_outputs,
                              std::vector<Gradient>* grad_inputs) {
  InputList args;
  std::vector<DType> types;
  for (int i = 0; i < node->num_inputs(); ++i) {
    const Edge* e = node->input_edge(i);
    if (e == nullptr) {
      return errors::InvalidArgument("node ", node->Describe(), ": input ", i, " is not connected");
    }
    args.push_back(Output(e->src(), e->src_output()));
    types.push_back(node->input_type(i));
  }
  for (int i = 0; i < node->num_outputs(); ++i) {
    args.push_back(grad_outputs[i].valid() ? grad_outputs[i]
                                           : ops::ZerosLike(scope, Output(node, i)));
  }
  const FunctionDef* def = scope.graph()->function_library().Find(gradient.name);
  const bool stateful = def != nullptr && def->signature.is_stateful;
  Operation call = AddOp(scope.WithOpName(gradient.name),
                         stateful ? "StatefulPartitionedCall" : "PartitionedCall", {args},
                         {{"f", AttrValue(gradient)}, {"Tout", AttrValue(types)}});
  WEIR_RETURN_IF_ERROR(scope.status());
  grad_inputs->assign(node->num_inputs(), Gradient());
  for (int i = 0; i < node->num_inputs(); ++i) (*grad_inputs)[i] = Gradient::Dense(call.output(i));
  return Status::OK();
}

// One gradient pass over a region: the nodes of one frame, with each loop
// directly inside it taken whole (WhileGradients builds its gradient, and
// runs a pass over the loop's body for it).
class GradientPass {
 public:
  GradientPass(const Scope& scope, WhileGradients* loops)
      : scope_(scope), graph_(scope.graph()), loops_(loops) {}

  // Gradients of `xs` (invalid where none reaches) from `ys` seeded with
  // `seeds`, built in `ctx`. `reached[i]`: some y depends on xs[i].
  Status Run(GradContext* ctx, int region, const std::vector<Output>& ys,
             const std::vector<Output>& seeds, const std::vector<Output>& xs,
             std::vector<Gradient>* grads, std::vector<bool>* reached = nullptr);

  const std::vector<std::string>& blocked() const { return blocked_; }

 private:
  // Data edges out of a unit's outputs (a loop's: out of its Exits) to
  // other units of the region; a predicate carries no gradient.
  std::vector<const Edge*> OutEdges(int unit, int region) const {
    std::vector<const Edge*> result;
    auto add = [&](const Node* node) {
      for (const Edge* e : node->out_edges()) {
        if (e->IsControlEdge() || (e->dst()->type_string() == "Switch" && e->dst_input() == 1))
          continue;
        const int dst = loops_->UnitOf(e->dst(), region);
        if (dst != WhileGradients::kNoUnit && dst != unit) result.push_back(e);
      }
    };
    if (WhileGradients::IsLoopUnit(unit)) {
      for (const Node* exit : loops_->exits(WhileGradients::LoopFrameOf(unit))) add(exit);
    } else {
      add(graph_->FindNodeId(unit));
    }
    return result;
  }
  // Data edges into a unit (a loop's: into its Enters) from outside it:
  // from other units, or from loop structure (a body's inputs).
  std::vector<const Edge*> InEdges(int unit, int region) const {
    std::vector<const Edge*> result;
    auto add = [&](const Node* node) {
      for (const Edge* e : node->in_edges()) {
        if (!e->IsControlEdge() && loops_->UnitOf(e->src(), region) != unit) result.push_back(e);
      }
    };
    if (WhileGradients::IsLoopUnit(unit)) {
      for (const Node* enter : loops_->enters(WhileGradients::LoopFrameOf(unit))) add(enter);
    } else {
      add(graph_->FindNodeId(unit));
    }
    return result;
  }

  const Scope scope_;
  Graph* graph_;
  WhileGradients* loops_;
  std::vector<std::string> blocked_;  // non-differentiable ops on a path
};

Status GradientPass::Run(GradContext* ctx, int region, const std::vector<Output>& ys,
                         const std::vector<Output>& seeds, const std::vector<Output>& xs,
                         std::vector<Gradient>* grads, std::vector<bool>* reached) {
  auto unit_of = [&](const Node* node) { return loops_->UnitOf(node, region); };
  // Units reachable forward from xs, then those of them from which ys are
  // reachable backward: the only units gradients pass through.
  std::set<int> from_x, on_path;
  std::deque<int> queue;
  auto visit = [&](std::set<int>* set, int unit) {
    if (unit != WhileGradients::kNoUnit && set->insert(unit).second) queue.push_back(unit);
  };
  for (const Output& x : xs) {
    if (unit_of(x.node()) != WhileGradients::kNoUnit) {
      visit(&from_x, unit_of(x.node()));
      continue;
    }
    // A loop body's input or captured tensor: start from its consumers.
    for (const Edge* e : x.node()->out_edges()) {
      if (!e->IsControlEdge() && e->src_output() == x.index()) visit(&from_x, unit_of(e->dst()));
    }
  }
  while (!queue.empty()) {
    const int unit = queue.front();
    queue.pop_front();
    for (const Edge* e : OutEdges(unit, region)) visit(&from_x, unit_of(e->dst()));
  }
  for (const Output& y : ys) {
    if (from_x.count(unit_of(y.node()))) visit(&on_path, unit_of(y.node()));
  }
  while (!queue.empty()) {
    const int unit = queue.front();
    queue.pop_front();
    for (const Edge* e : InEdges(unit, region)) {
      if (from_x.count(unit_of(e->src()))) visit(&on_path, unit_of(e->src()));
    }
  }
  std::set<TensorKey> wanted;
  for (const Output& x : xs) wanted.insert({x.node()->id(), x.index()});
  // A unit is ready once every consumer on the path has sent its gradient.
  std::map<int, int> pending;
  for (int unit : on_path) {
    int count = 0;
    for (const Edge* e : OutEdges(unit, region)) count += on_path.count(unit_of(e->dst()));
    pending[unit] = count;
  }
  std::map<TensorKey, std::vector<Gradient>> partials;
  for (size_t i = 0; i < ys.size(); ++i) {
    const TensorKey key{ys[i].node()->id(), ys[i].index()};
    if (on_path.count(unit_of(ys[i].node())) || wanted.count(key))
      partials[key].push_back(Gradient::Dense(seeds[i]));
  }
  std::map<TensorKey, Gradient> sums;
  auto sum = [&](const TensorKey& key) -> Gradient {
    auto done = sums.find(key);
    if (done != sums.end()) return done->second;
    auto it = partials.find(key);
    if (it == partials.end()) return Gradient();
    return sums[key] = SumPartials(scope_, it->second);
  };
  std::vector<int> ready;
  for (const auto& [unit, count] : pending) {
    if (count == 0) ready.push_back(unit);
  }
  while (!ready.empty()) {
    const int unit = ready.back();
    ready.pop_back();
    const std::vector<const Edge*> inputs = InEdges(unit, region);
    // Go on only toward inputs on the path (an x with nothing upstream
    // stops here).
    auto wanted_input = [&](const Edge* e) {
      return on_path.count(unit_of(e->src())) > 0 ||
             wanted.count({e->src()->id(), e->src_output()}) > 0;
    };
    bool upstream = false;
    for (const Edge* e : inputs) upstream |= wanted_input(e);
    // The gradient for each input edge.
    std::map<const Edge*, Gradient> to_inputs;
    if (WhileGradients::IsLoopUnit(unit)) {
      const int frame = WhileGradients::LoopFrameOf(unit);
      const std::vector<Node*> exits = loops_->exits(frame);
      const std::vector<Node*> enters = loops_->enters(frame);
      std::vector<Output> exit_grads(exits.size());
      bool any = false;
      WEIR_RETURN_IF_ERROR(loops_->InContext(ctx, [&] {
        for (size_t i = 0; i < exits.size(); ++i) {
          Gradient g = sum({exits[i]->id(), 0});
          if (g.valid()) exit_grads[i] = Densify(scope_, g);
          any |= g.valid();
        }
        return Status::OK();
      }));
      if (any && upstream) {
        std::set<const Node*> wanted_enters;
        for (const Edge* e : inputs) {
          if (wanted_input(e)) wanted_enters.insert(e->dst());
        }
        std::vector<Output> enter_grads;
        WhileGradients::RegionPass pass =
            [this](GradContext* c, int r, const std::vector<Output>& y,
                   const std::vector<Output>& s, const std::vector<Output>& x,
                   std::vector<Gradient>* g) { return Run(c, r, y, s, x, g); };
        Status s = loops_->LoopGradient(ctx, frame, exit_grads, wanted_enters, pass, &enter_grads);
        if (!s.ok()) return s.WithContext("gradient of while loop '" + exits.front()->name() + "'");
        for (const Edge* e : inputs) {
          for (size_t i = 0; i < enters.size(); ++i) {
            if (enters[i] == e->dst() && enter_grads[i].valid())
              to_inputs[e] = Gradient::Dense(enter_grads[i]);
          }
        }
      }
    } else {
      Node* node = graph_->FindNodeId(unit);
      std::vector<Gradient> node_sums(node->num_outputs());
      bool any = false;
      std::vector<Gradient> grad_inputs(node->num_inputs());
      StatusOr<const GradientFunction*> fn =
          GradientRegistry::Global()->Lookup(node->type_string());
      // A call whose function's library names its gradient function.
      StatusOr<std::optional<NameAttrList>> registered = RegisteredGradientOfCall(*graph_, *node);
      WEIR_RETURN_IF_ERROR(loops_->InContext(ctx, [&] {
        for (int i = 0; i < node->num_outputs(); ++i) {
          node_sums[i] = sum({node->id(), i});
          any |= node_sums[i].valid();
        }
        if (!any || !upstream) return Status::OK();
        if (!registered.ok()) {
          return registered.status().WithContext("gradient of node " + node->Describe());
        }
        if (registered->has_value()) {
          std::vector<Output> grad_outputs(node->num_outputs());
          for (int i = 0; i < node->num_outputs(); ++i) {
            if (node_sums[i].valid()) grad_outputs[i] = Densify(scope_, node_sums[i]);
          }
          Status s = CallRegisteredGradient(scope_.NewSubScope("gradients"), node, **registered,
                                            grad_outputs, &grad_inputs);
          if (!s.ok()) return s.WithContext("gradient of node " + node->Describe());
          return scope_.status();
        }
        if (!fn.ok()) {
          return errors::NotFound("no gradient is defined for op ", node->type_string(), " (node ",
                                  node->Describe(), "), which lies between the ys and xs");
        }
        if (*fn == nullptr) {
          blocked_.push_back(node->Describe());
          return Status::OK();
        }
        // Gradient functions take dense gradients: a sparse one flowing on
        // through another op is densified here.
        std::vector<Output> grad_outputs(node->num_outputs());
        for (int i = 0; i < node->num_outputs(); ++i) {
          if (node_sums[i].valid()) grad_outputs[i] = Densify(scope_, node_sums[i]);
        }
        Status s = CallGradientFunction(scope_.NewSubScope("gradients"), node, grad_outputs, **fn,
                                        &grad_inputs);
        if (!s.ok()) return s.WithContext("gradient of node " + node->Describe());
        return scope_.status();
      }));
      for (Gradient& g : grad_inputs) {
        g.dense = loops_->Resolve(g.dense);
        g.sparse = {loops_->Resolve(g.sparse.values), loops_->Resolve(g.sparse.indices),
                    loops_->Resolve(g.sparse.dense_shape)};
      }
      for (const Edge* e : inputs) {
        if (grad_inputs[e->dst_input()].valid()) to_inputs[e] = grad_inputs[e->dst_input()];
      }
    }
    for (const Edge* e : inputs) {
      if (!wanted_input(e)) continue;
      auto it = to_inputs.find(e);
      if (it != to_inputs.end()) partials[{e->src()->id(), e->src_output()}].push_back(it->second);
      const int src = unit_of(e->src());
      if (on_path.count(src) && --pending[src] == 0) ready.push_back(src);
    }
  }
  grads->assign(xs.size(), Gradient());
  WEIR_RETURN_IF_ERROR(loops_->InContext(ctx, [&] {
    for (size_t i = 0; i < xs.size(); ++i) (*grads)[i] = sum({xs[i].node()->id(), xs[i].index()});
    return Status::OK();
  }));
  if (reached != nullptr) {
    reached->assign(xs.size(), false);
    for (size_t i = 0; i < xs.size(); ++i) (*reached)[i] = on_path.count(unit_of(xs[i].node())) > 0;
  }
  return Status::OK();
}

bool HasRegisteredGradient(const Graph& graph, const Node& node) {
  if (!IsFunctionCall(graph, node)) return false;
  StatusOr<NameAttrList> func = CalledFunction(graph, node);
  return func.ok() && !graph.function_library().FindGradient(func->name).empty();
}

// Expands every function call and functional control-flow node (If, Case,
// While, ...) on a data path from `xs` to `ys` in place, so that the
// gradients go through their bodies as through any v1 cond or loop. The
// outputs in `tensors` are found again by name afterwards (an expanded
// node's name now belongs to the IdentityN that keeps its outputs). A graph
// with none on the path is left as it is.
Status ExpandFunctionsOnPath(Graph* graph, const std::vector<Output>& ys,
                             const std::vector<Output>& xs,
                             std::vector<std::vector<Output>*> tensors,
                             std::vector<std::pair<std::string, int>>* expanded) {
  // Every expandable node calls a library function.
  if (graph->function_library().num_functions() == 0) return Status::OK();
  std::vector<bool> from_x(graph->num_node_ids()), to_y(graph->num_node_ids());
  std::vector<Node*> stack;
  for (const Output& x : xs) {
    for (const Edge* e : x.node()->out_edges()) {
      if (e->src_output() == x.index() && !from_x[e->dst()->id()]) {
        from_x[e->dst()->id()] = true;
        stack.push_back(e->dst());
      }
    }
  }
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Edge* e : n->out_edges()) {
      if (!e->IsControlEdge() && !from_x[e->dst()->id()]) {
        from_x[e->dst()->id()] = true;
        stack.push_back(e->dst());
      }
    }
  }
  std::vector<int> on_path;
  for (const Output& y : ys) {
    if (from_x[y.node()->id()] && !to_y[y.node()->id()]) {
      to_y[y.node()->id()] = true;
      stack.push_back(y.node());
    }
  }
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    // A call whose function has a registered gradient function stays a
    // call: the gradient pass calls that function.
    if (NeedsFunctionExpansion(*graph, *n) && !HasRegisteredGradient(*graph, *n)) {
      on_path.push_back(n->id());
    }
    for (const Edge* e : n->in_edges()) {
      Node* src = e->src();
      if (!e->IsControlEdge() && from_x[src->id()] && !to_y[src->id()]) {
        to_y[src->id()] = true;
        stack.push_back(src);
      }
    }
  }
  if (on_path.empty()) return Status::OK();
  // Counted first, as the compiler counts a whole graph: many calls on the
  // path, each within the budget alone, fail here at once. The expansions
  // below then share one budget of work.
  std::vector<Node*> to_expand;
  for (int id : on_path) to_expand.push_back(graph->FindNodeId(id));
  WEIR_RETURN_IF_ERROR(CheckExpansionBudget(*graph, to_expand)
                           .WithContext("AddSymbolicGradients: expanding the calls on the path"));
  const ExpansionWorkScope work_scope;
  struct Named {
    std::string node;
    int index;
  };
  std::vector<std::vector<Named>> names;
  for (const std::vector<Output>* list : tensors) {
    names.emplace_back();
    for (const Output& t : *list) names.back().push_back({t.node()->name(), t.index()});
  }
  for (int id : on_path) {
    Node* node = graph->FindNodeId(id);
    if (node == nullptr) continue;
    const std::string name = node->name();
    ExpandFunctionsOptions options;
    options.keep_calls_with_gradients = true;
    Status s = ExpandFunctionalNode(graph, node, options);
    if (!s.ok()) return s.WithContext("differentiating through node '" + name + "'");
    if (expanded != nullptr) expanded->push_back({name, id});
  }
  for (size_t k = 0; k < tensors.size(); ++k) {
    for (size_t i = 0; i < names[k].size(); ++i) {
      Node* node = graph->FindNode(names[k][i].node);
      if (node == nullptr || names[k][i].index >= node->num_outputs()) {
        return errors::Internal("AddSymbolicGradients: '", names[k][i].node, ":", names[k][i].index,
                                "' is gone after expanding function calls");
      }
      (*tensors[k])[i] = Output(node, names[k][i].index);
    }
  }
  return Status::OK();
}

// The gradients once no call or functional node lies between ys and xs.
Status AddGradientsExpanded(const Scope& scope, const std::vector<Output>& ys,
                            const std::vector<Output>& xs, const std::vector<Output>& grad_ys,
                            const SymbolicGradientsOptions& options,
                            std::vector<Gradient>* grad_xs) {
  WEIR_ASSIGN_OR_RETURN(std::unique_ptr<WhileGradients> loops, WhileGradients::Create(scope));
  for (const std::vector<Output>* list : {&ys, &xs}) {
    for (const Output& t : *list) {
      if (loops->OutputFrameOf(t.node()) != 0) {
        return errors::InvalidArgument("AddSymbolicGradients: '", t.name(),
                                       "' is inside a while loop; differentiate values outside it");
      }
    }
  }
  std::vector<Output> seeds;
  for (size_t i = 0; i < ys.size(); ++i) {
    seeds.push_back(grad_ys.empty() ? OnesLike(scope, ys[i]) : grad_ys[i]);
  }
  GradientPass pass(scope, loops.get());
  std::vector<bool> reached;
  WEIR_RETURN_IF_ERROR(pass.Run(loops->root(), 0, ys, seeds, xs, grad_xs, &reached));
  WEIR_RETURN_IF_ERROR(loops->Finish());
  for (size_t i = 0; i < xs.size(); ++i) {
    if ((*grad_xs)[i].valid() || options.unreachable_is_invalid) continue;
    std::string why = !reached[i] ? "no y depends on it"
                                  : StrCat("every path passes through a non-differentiable op (",
                                           StrJoin(pass.blocked(), "; "), ")");
    return errors::InvalidArgument("no gradient reaches '", xs[i].name(), "': ", why);
  }
  return scope.status();
}

}  // namespace

Status AddSymbolicGradients(const Scope& scope, const std::vector<Output>& ys,
                            const std::vector<Output>& xs, const std::vector<Output>& grad_ys,
                            std::vector<Gradient>* grad_xs) {
  return AddSymbolicGradients(scope, ys, xs, grad_ys, SymbolicGradientsOptions(), grad_xs);
}

Status AddSymbolicGradients(const Scope& scope, const std::vector<Output>& ys,
                            const std::vector<Output>& xs, const std::vector<Output>& grad_ys,
                            const SymbolicGradientsOptions& options,
                            std::vector<Gradient>* grad_xs) {
  RegisterAllGradients();
  RegisterFunctionGradients();  // for SymbolicGradient nodes on the path
  WEIR_RETURN_IF_ERROR(scope.status());
  if (!grad_ys.empty() && grad_ys.size() != ys.size()) {
    return errors::InvalidArgument("AddSymbolicGradients: ", ys.size(), " ys but ", grad_ys.size(),
                                   " grad_ys");
  }
  for (const Output& x : xs) {
    if (!x.valid()) return errors::InvalidArgument("AddSymbolicGradients: an x is invalid");
    // A resource x is a variable's handle: the gradient of its value.
    if (!IsFloatingDType(x.dtype()) && !IsComplexDType(x.dtype()) && x.dtype() != DT_RESOURCE) {
      return errors::InvalidArgument("cannot differentiate with respect to '", x.name(),
                                     "': its dtype ", x.dtype(), " is not a floating type");
    }
  }
  for (const Output& y : ys) {
    if (!y.valid()) return errors::InvalidArgument("AddSymbolicGradients: a y is invalid");
  }
  std::vector<Output> ys_now = ys, xs_now = xs, grad_ys_now = grad_ys;
  WEIR_RETURN_IF_ERROR(ExpandFunctionsOnPath(
      scope.graph(), ys, xs, {&ys_now, &xs_now, &grad_ys_now}, options.expanded_nodes));
  return AddGradientsExpanded(scope, ys_now, xs_now, grad_ys_now, options, grad_xs);
}

Status AddSymbolicGradients(const Scope& scope, const std::vector<Output>& ys,
                            const std::vector<Output>& xs, const std::vector<Output>& grad_ys,
                            std::vector<Output>* grad_xs) {
  std::vector<Gradient> grads;
  WEIR_RETURN_IF_ERROR(AddSymbolicGradients(scope, ys, xs, grad_ys, &grads));
  grad_xs->clear();
  for (const Gradient& g : grads) grad_xs->push_back(Densify(scope.NewSubScope("gradients"), g));
  return scope.status();
}

Status AddSymbolicGradients(const Scope& scope, const std::vector<Output>& ys,
                            const std::vector<Output>& xs, std::vector<Output>* grad_xs) {
  return AddSymbolicGradients(scope, ys, xs, {}, grad_xs);
}

}  // namespace weir
