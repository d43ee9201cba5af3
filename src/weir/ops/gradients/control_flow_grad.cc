// Gradients of the control-flow family (TensorFlow control flow v1). In a
// cond, a Switch's gradient merges the gradients of its two branches (the
// untaken branch's part is dead, so Merge forwards the live one), and a
// Merge's gradient switches on the cond's predicate, so each branch's
// gradient subgraph runs only when that branch ran. A loop's Enter, Exit,
// NextIteration and its Merges and Switches are differentiated as a whole
// by AddSymbolicGradients (train/while_gradients.h), never one by one.
#include <deque>
#include <set>

#include "weir/ops/gradients/gradient_registry.h"
#include "weir/ops/gradients/gradient_util.h"
#include "weir/ops/standard_ops.h"

namespace weir {
namespace {

// The tensor behind a chain of Identities: a cond's Switches on `pred` and
// on Identity(pred) switch on the same value.
Output StripIdentities(Output t) {
  while (t.node()->type_string() == "Identity" && t.node()->input_edge(0) != nullptr) {
    const Edge* e = t.node()->input_edge(0);
    t = Output(e->src(), e->src_output());
  }
  return t;
}

// The predicate of the cond a two-input Merge joins, when every path back
// from input k ends at a Switch's output k on one predicate (as Cond builds
// it); an invalid Output otherwise (nested branches, hand-built graphs).
Output CondPredicate(const Operation& op) {
  Node* merge = op.node();
  if (merge->num_inputs() != 2) return Output();
  Output pred;
  for (int k = 0; k < 2; ++k) {
    const Edge* in = merge->input_edge(k);
    if (in == nullptr) return Output();
    std::deque<const Edge*> queue = {in};
    std::set<int> seen;
    int visited = 0;
    while (!queue.empty()) {
      const Edge* e = queue.front();
      queue.pop_front();
      Node* src = e->src();
      if (src->type_string() == "Switch") {
        if (e->IsControlEdge() || e->src_output() != k) return Output();
        const Edge* p = src->input_edge(1);
        if (p == nullptr) return Output();
        Output candidate = StripIdentities(Output(p->src(), p->src_output()));
        if (!pred.valid()) pred = candidate;
        if (candidate.node() != pred.node() || candidate.index() != pred.index()) return Output();
        continue;
      }
      if (!seen.insert(src->id()).second) continue;
      // A branch too large to trace, or a value that no Switch guards.
      if (++visited > 4096 || src->in_edges().empty()) return Output();
      if (src->type_string() == "Merge" || src->type_string() == "Enter") return Output();
      for (const Edge* up : src->in_edges()) queue.push_back(up);
    }
  }
  return pred;
}

Status SwitchGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                  std::vector<Output>* grads) {
  *grads = {Output(), Output()};
  if (!g[0].valid() && !g[1].valid()) return Status::OK();
  std::vector<Output> parts(2);
  for (int port = 0; port < 2; ++port) {
    if (g[port].valid()) {
      parts[port] = g[port];
    } else if (op.output(port).dtype() == DT_RESOURCE) {
      // A variable's handle: no zeros of its value's shape at hand, and the
      // live part is the only one that can arrive.
      parts[port] = g[1 - port];
    } else {
      // Zeros that are live exactly when this branch ran.
      parts[port] = ops::ZerosLike(scope, op.output(port));
    }
  }
  Operation merge = AddOp(scope, "Merge", {InputList{parts[0], parts[1]}});
  (*grads)[0] = merge.output(0);
  return scope.status();
}

Status MergeGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                 std::vector<Output>* grads) {
  const int n = op.node()->num_inputs();
  grads->assign(n, Output());
  if (!g[0].valid()) return Status::OK();
  Output pred = CondPredicate(op);
  if (pred.valid()) {
    Operation sw = AddOp(scope, "Switch", {g[0], pred});
    *grads = {sw.output(0), sw.output(1)};
    return scope.status();
  }
  // Any Merge: input i's gradient is live only where input i was the one
  // forwarded, which value_index tells.
  for (int i = 0; i < n; ++i) {
    Output chosen = ops::Equal(scope, op.output(1), i);
    (*grads)[i] = Operation(AddOp(scope, "Switch", {g[0], chosen})).output(1);
  }
  return scope.status();
}

Status LoopStructureGrad(const Scope&, const Operation& op, const std::vector<Output>&,
                         std::vector<Output>*) {
  return errors::Unimplemented("node ", op.node()->Describe(),
                               " is not part of a while loop that AddSymbolicGradients "
                               "recognizes (Enter -> Merge -> Switch on a LoopCond -> Exit, "
                               "with a NextIteration back edge)");
}

// Function calls, If, Case, While and SymbolicGradient have no gradient
// function of their own: AddSymbolicGradients expands them in place first
// (train/gradients.h), or calls the gradient function the library
// registers for a call. Reaching this means a node was not expanded.
Status FunctionGrad(const Scope&, const Operation& op, const std::vector<Output>&,
                    std::vector<Output>*) {
  return errors::Internal("node ", op.node()->Describe(), ": a ", op.node()->type_string(),
                          " node reached the gradient pass unexpanded (AddSymbolicGradients "
                          "expands calls and functional control flow before differentiating)");
}

}  // namespace

void RegisterControlFlowGradients(GradientRegistry* registry) {
  registry->Register("Switch", SwitchGrad);
  registry->Register("Merge", MergeGrad);
  for (const char* op : {"Enter", "Exit", "NextIteration"})
    registry->Register(op, LoopStructureGrad);
  registry->RegisterNoGradient("LoopCond");
  registry->RegisterNoGradient("ControlTrigger");
  for (const char* op : {"If", "StatelessIf", "Case", "StatelessCase", "While", "StatelessWhile",
                         "PartitionedCall", "StatefulPartitionedCall", "SymbolicGradient"})
    registry->Register(op, FunctionGrad);
  registry->RegisterNoGradient("ToBool");
}

}  // namespace weir
