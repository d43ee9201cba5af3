// Function calls, expanded in place: the body of a library function added
// to the calling graph, and the step compiler's pass that does this for
// every call (PartitionedCall, StatefulPartitionedCall, a node whose op is a
// library function) and, through lower_functional_ops.h, for every
// functional control-flow node, until none is left.
//
// A call's semantics, kept by the expansion:
// - the body waits for what the call waited for (body nodes without data
//   inputs get a control edge from a NoOp that waits for the call's inputs);
// - a node with the call's name (an IdentityN of the outputs, a NoOp when
//   there are none) replaces it, so feeds, fetches and targets of "call" or
//   "call:i" still resolve; consumers of a stateful call's outputs read it,
//   those of a pure call read the body's outputs directly (so pruning keeps
//   only the part of the body a step needs);
// - that node waits for the body's control outputs (control_ret) and, for a
//   call that is stateful, for every stateful body node: fetching or
//   targeting the call runs its side effects, and whatever waited for the
//   call's control edge waits for them too.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "weir/base/status.h"
#include "weir/graph/graph.h"

namespace weir {

struct InlinedFunction {
  std::vector<std::pair<Node*, int>> outputs;
  std::vector<Node*> control_outputs;
};

// Adds the body of `func` (a library function with the call's attrs;
// placeholders "$T" bound from them) to `graph`, each body node named
// `prefix` + "/" + its name, argument i read from inputs[i]; body nodes
// without data inputs get `control_inputs` as control inputs, so the body
// waits for what the call waited for. Body nodes get their shapes
// inferred. Errors name the function and the body node; on error `graph` is
// as it was.
Status InlineFunctionBody(const NameAttrList& func, const std::vector<std::pair<Node*, int>>& inputs,
                          const std::vector<Node*>& control_inputs, const std::string& prefix,
                          Graph* graph, InlinedFunction* result);

// True for PartitionedCall, StatefulPartitionedCall and nodes whose op is a
// function of the graph's library.
bool IsFunctionCall(const Graph& graph, const Node& node);

// The function call node `node` calls, with its attrs (InvalidArgument when
// a PartitionedCall has no valid `f`). REQUIRES: IsFunctionCall.
StatusOr<NameAttrList> CalledFunction(const Graph& graph, const Node& node);

// Replaces call node `node` by the body of `func` (any function of the
// library that takes the node's inputs and gives its outputs), as
// ExpandFunctions expands a call: nested calls stay calls.
Status ExpandCall(Graph* graph, Node* node, const NameAttrList& func);

struct ExpandFunctionsOptions {
  // Calls of a function for which the library registers a gradient function
  // (GradientDef) stay calls, so that the gradients driver differentiates
  // them with that function instead of through their body.
  bool keep_calls_with_gradients = false;
};

// Expands every call, functional control-flow node and SymbolicGradient
// (graph/symbolic_gradient.h) of `graph` until none is left (the
// compiler's pass). A function that calls itself, directly or
// not, is InvalidArgument naming the cycle. The size of the expanded graph
// is counted before anything is expanded (each function's expanded size
// once): past kMaxExpandedNodes nodes it is ResourceExhausted naming the
// largest call, its function and the budget, so nesting that doubles at
// each level fails at once instead of after gigabytes. Errors name the call
// node and function.
Status ExpandFunctions(Graph* graph, const ExpandFunctionsOptions& options = {});
// 2^20: far above any real model's graph (10^4-10^5 nodes), and small
// enough that reaching it costs well under a second, sanitizers included.
inline constexpr int kMaxExpandedNodes = 1 << 20;

// What ExpandFunctions counts before it starts, for expanding only `nodes`
// of `graph` (calls, functional control flow, SymbolicGradient), as the
// gradients driver expands those on its path one by one: ResourceExhausted
// naming the largest when the graph would grow past kMaxExpandedNodes.
Status CheckExpansionBudget(const Graph& graph, const std::vector<Node*>& nodes);

// While one lives on this thread (outermost wins), the ExpandFunctions runs
// inside it share one budget of work, 4 x kMaxExpandedNodes nodes built
// (ResourceExhausted past it): for a pass that expands nodes one at a time
// in scratch graphs, as the gradients driver does. An ExpandFunctions run
// outside any scope is a scope of its own; the expansion of a
// SymbolicGradient (whose gradient builder expands calls in turn) runs
// inside the one around it.
class ExpansionWorkScope {
 public:
  ExpansionWorkScope();
  ~ExpansionWorkScope();
  ExpansionWorkScope(const ExpansionWorkScope&) = delete;
  ExpansionWorkScope& operator=(const ExpansionWorkScope&) = delete;
};

// Sets the output shapes of call node `node` from its function's body,
// instantiated on the shapes of the node's inputs in a scratch graph, where
// that is cheap (bodies of at most a few thousand nodes, calls nested a few
// deep, at most kMaxShapeInferenceNodes scratch nodes per
// FunctionShapeScope); outputs whose shape is already known keep it. Never
// fails: a body that cannot be instantiated, or one past the budget, leaves
// the shapes as they are.
void InferFunctionCallShapes(const Graph& graph, Node* node);
inline constexpr int64_t kMaxShapeInferenceNodes = int64_t{1} << 20;

// While one lives on this thread (outermost wins), InferFunctionCallShapes
// shares one budget of scratch nodes and one memo of body shapes (by
// function, attrs and input shapes) across calls: an import holds one, so
// a library of many calls of the same nested functions instantiates each
// body once. The graph's library must not change during its life.
class FunctionShapeScope {
 public:
  FunctionShapeScope();
  ~FunctionShapeScope();
  FunctionShapeScope(const FunctionShapeScope&) = delete;
  FunctionShapeScope& operator=(const FunctionShapeScope&) = delete;

  struct State;  // function_inline.cc's

 private:
  std::unique_ptr<State> state_;
  State* previous_;
};

}  // namespace weir
