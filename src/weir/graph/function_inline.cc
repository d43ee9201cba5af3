#include "weir/graph/function_inline.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "weir/framework/node_def_util.h"
#include "weir/graph/algorithm.h"
#include "weir/graph/call_rewrite.h"
#include "weir/graph/function_library.h"
#include "weir/graph/graph_constructor.h"
#include "weir/graph/lower_functional_ops.h"
#include "weir/graph/symbolic_gradient.h"

namespace weir {

// The state of InferFunctionCallShapes on this thread: how deep scratch
// instantiations nest now, the nodes they may still add (the budget is
// shared by one FunctionShapeScope, an import, so that calls nested
// `depth` deep and `width` wide cost neither width^depth time nor memory)
// and the output shapes already found per (function, attrs, input shapes).
struct FunctionShapeScope::State {
  int depth = 0;
  int64_t budget = kMaxShapeInferenceNodes;
  struct Memo {
    NameAttrList func;
    std::vector<DType> input_types;
    std::vector<PartialShape> input_shapes;
    std::optional<std::vector<PartialShape>> output_shapes;  // none: not instantiable
    int depth;  // where it was found: deeper, fewer nested calls were inferred
  };
  std::unordered_map<std::string, Memo> memo;  // by MemoKey
};

namespace {

using ShapeInferenceState = FunctionShapeScope::State;

constexpr char kPartitionedCall[] = "PartitionedCall";
constexpr char kStatefulPartitionedCall[] = "StatefulPartitionedCall";
constexpr char kSymbolicGradient[] = "SymbolicGradient";

// How deep InferFunctionCallShapes nests scratch instantiations (a body's
// calls are instantiated for their shapes too), and the largest body it
// instantiates: beyond either, shapes stay unknown.
constexpr int kMaxShapeInferenceDepth = 4;
constexpr size_t kMaxShapeInferenceBodyNodes = 4096;

thread_local ShapeInferenceState* shape_inference = nullptr;

// A memo entry's key; entries are checked field by field on a hit (the
// debug strings of tensor attrs are abridged).
std::string MemoKey(const NameAttrList& func, const std::vector<DType>& types,
                    const std::vector<PartialShape>& shapes) {
  std::string key = func.name;
  for (const auto& [name, value] : func.attr) key += StrCat(";", name, "=", value.DebugString());
  for (size_t i = 0; i < types.size(); ++i) {
    key += StrCat("|", DTypeName(types[i]), shapes[i].DebugString());
  }
  return key;
}

// Replaces placeholders ("$T") in `value`, also inside func attrs, by the
// bound attr values.
Status BindPlaceholders(const AttrMap& bound, AttrValue* value) {
  if (value->is_placeholder()) {
    auto it = bound.find(value->placeholder());
    if (it == bound.end()) {
      return errors::InvalidArgument("placeholder $", value->placeholder(),
                                     " names no attr of the function");
    }
    *value = it->second;
    return Status::OK();
  }
  if (value->is_func()) {
    NameAttrList func = value->func();
    for (auto& [name, v] : func.attr) WEIR_RETURN_IF_ERROR(BindPlaceholders(bound, &v));
    *value = AttrValue(std::move(func));
    return Status::OK();
  }
  if (value->is_list() && !value->list().func.empty()) {
    AttrValue::List list = value->list();
    for (AttrValue::Func& f : list.func) {
      NameAttrList func = *f;
      for (auto& [name, v] : func.attr) WEIR_RETURN_IF_ERROR(BindPlaceholders(bound, &v));
      f = std::make_shared<const NameAttrList>(std::move(func));
    }
    *value = AttrValue(std::move(list));
  }
  return Status::OK();
}

using Tensors = std::vector<std::pair<Node*, int>>;

// The body being inlined: what names in function form resolve to.
class BodyScope {
 public:
  BodyScope(const FunctionDef& def, const Tensors& inputs, const AttrMap& bound)
      : inputs_(inputs) {
    std::vector<int64_t> sizes = ArgSizes(def.signature.inputs, bound);
    int64_t start = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
      args_[def.signature.inputs[i].name] = {start, sizes[i]};
      start += sizes[i];
    }
  }

  void AddNode(const std::string& name, Node* node) { body_[name] = node; }
  Node* FindBodyNode(const std::string& name) const {
    auto it = body_.find(name);
    return it == body_.end() ? nullptr : it->second;
  }

  // Appends the tensors `text` stands for.
  Status Resolve(const FunctionInput& ref, std::string_view text, Tensors* out) const {
    if (ref.output.empty()) {
      auto it = args_.find(ref.node);
      if (it == args_.end()) return errors::InvalidArgument("'", text, "' names no argument");
      auto [start, size] = it->second;
      if (ref.index >= size) {
        return errors::InvalidArgument("'", text, "' asks for element ", ref.index,
                                       " of an argument of ", size);
      }
      if (ref.index >= 0) {
        out->push_back(inputs_[start + ref.index]);
      } else {
        out->insert(out->end(), inputs_.begin() + start, inputs_.begin() + start + size);
      }
      return Status::OK();
    }
    Node* node = FindBodyNode(ref.node);
    if (node == nullptr) return errors::InvalidArgument("'", text, "' names no body node");
    const std::vector<ArgDef>& outputs = node->op_def().outputs;
    std::vector<int64_t> sizes = ArgSizes(outputs, node->def().attrs);
    int64_t start = 0;
    for (size_t k = 0; k < outputs.size(); ++k) {
      if (outputs[k].name != ref.output) {
        start += sizes[k];
        continue;
      }
      if (ref.index >= sizes[k]) {
        return errors::InvalidArgument("'", text, "' asks for element ", ref.index, " of output '",
                                       ref.output, "', which has ", sizes[k]);
      }
      if (ref.index >= 0) {
        out->push_back({node, static_cast<int>(start + ref.index)});
      } else {
        for (int64_t j = 0; j < sizes[k]; ++j) out->push_back({node, static_cast<int>(start + j)});
      }
      return Status::OK();
    }
    return errors::InvalidArgument("'", text, "': op ", node->type_string(), " has no output '",
                                   ref.output, "'");
  }

  // The nodes a control input "^name" waits for: a body node, or the
  // producers of an argument.
  std::vector<Node*> ControlSources(const std::string& name) const {
    if (Node* node = FindBodyNode(name)) return {node};
    std::vector<Node*> out;
    auto it = args_.find(name);
    if (it == args_.end()) return out;
    for (int64_t i = 0; i < it->second.second; ++i) out.push_back(inputs_[it->second.first + i].first);
    return out;
  }

 private:
  const Tensors& inputs_;
  std::unordered_map<std::string, std::pair<int64_t, int64_t>> args_;  // start, size
  std::unordered_map<std::string, Node*> body_;
};

// Orders the nodes added since `mark` (their inputs from before the mark
// are ready); InvalidArgument naming a node on a cycle.
StatusOr<std::vector<Node*>> OrderNewNodes(const Graph& graph, const Graph::Mark& mark) {
  std::vector<Node*> nodes;
  for (int id = mark.node_ids; id < graph.num_node_ids(); ++id) {
    if (Node* node = graph.FindNodeId(id)) nodes.push_back(node);
  }
  std::vector<int> pending(nodes.size(), 0);
  std::vector<Node*> ready;
  auto index = [&](const Node* n) { return n->id() - mark.node_ids; };
  for (Node* node : nodes) {
    for (const Edge* e : node->in_edges()) {
      if (e->src()->id() >= mark.node_ids && !IsBackEdge(e)) ++pending[index(node)];
    }
    if (pending[index(node)] == 0) ready.push_back(node);
  }
  std::vector<Node*> order;
  order.reserve(nodes.size());
  while (!ready.empty()) {
    Node* node = ready.back();
    ready.pop_back();
    order.push_back(node);
    for (const Edge* e : node->out_edges()) {
      if (IsBackEdge(e)) continue;
      if (--pending[index(e->dst())] == 0) ready.push_back(e->dst());
    }
  }
  if (order.size() != nodes.size()) {
    for (Node* node : nodes) {
      if (pending[index(node)] > 0) {
        return errors::InvalidArgument("the body has a cycle through ", node->Describe());
      }
    }
  }
  return order;
}

Status Inline(const FunctionDef& def, const NameAttrList& func, const Tensors& inputs,
              const std::vector<Node*>& control_inputs, const std::string& prefix, Graph* graph,
              InlinedFunction* result) {
  const OpDef& sig = def.signature;
  // The function's attrs, bound as a call node's would be.
  NodeDef call;
  call.name = prefix;
  call.op = sig.name;
  call.attrs = func.attr;
  AddDefaultAttrs(sig, &call);
  WEIR_RETURN_IF_ERROR(ValidateNodeAttrs(sig, call));
  std::vector<DType> input_types, output_types;
  WEIR_RETURN_IF_ERROR(InOutTypesForNode(sig, call, &input_types, &output_types));
  if (inputs.size() != input_types.size()) {
    return errors::InvalidArgument("it takes ", input_types.size(), " arguments but is given ",
                                   inputs.size());
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    DType got = inputs[i].first->output_type(inputs[i].second);
    if (got != input_types[i]) {
      return errors::InvalidArgument("argument ", i, " must be ", input_types[i], " but ",
                                     inputs[i].first->Describe(), " output ", inputs[i].second,
                                     " is ", got);
    }
  }
  BodyScope scope(def, inputs, call.attrs);
  auto body_error = [&](const NodeDef& nd, const Status& status) {
    return Status(status.code(), StrCat("body node '", nd.name, "' (", nd.op, "): ",
                                                status.message()));
  };
  std::vector<Node*> added;
  added.reserve(def.node_def.size());
  for (const NodeDef& nd : def.node_def) {
    NodeDef copy;
    copy.name = StrCat(prefix, "/", nd.name);
    copy.op = nd.op;
    copy.device = nd.device;
    copy.source_location = nd.source_location;
    copy.attrs = nd.attrs;
    for (auto& [name, value] : copy.attrs) {
      Status status = BindPlaceholders(call.attrs, &value);
      if (!status.ok()) return body_error(nd, status.WithContext(StrCat("attr '", name, "'")));
    }
    StatusOr<Node*> node = graph->AddNode(std::move(copy));
    if (!node.ok()) return body_error(nd, node.status());
    scope.AddNode(nd.name, *node);
    added.push_back(*node);
  }
  for (size_t k = 0; k < added.size(); ++k) {
    const NodeDef& nd = def.node_def[k];
    Node* node = added[k];
    int slot = 0;
    Tensors sources;
    for (const std::string& text : nd.inputs) {
      StatusOr<FunctionInput> ref = ParseFunctionInput(text);
      if (!ref.ok()) return body_error(nd, ref.status());
      if (ref->control) {
        for (Node* src : scope.ControlSources(ref->node)) graph->AddControlEdge(src, node);
        continue;
      }
      sources.clear();
      Status status = scope.Resolve(*ref, text, &sources);
      if (!status.ok()) return body_error(nd, status.WithContext("input"));
      for (const auto& [src, port] : sources) {
        if (slot < node->num_inputs()) {
          DType got = src->output_type(port);
          if (got != node->input_type(slot)) {
            return body_error(nd, errors::InvalidArgument("input ", slot, " ('", text, "') is ",
                                                          got, " but the op expects ",
                                                          node->input_type(slot)));
          }
          graph->AddEdge(src, port, node, slot);
        }
        ++slot;
      }
    }
    if (slot != node->num_inputs()) {
      return body_error(nd, errors::InvalidArgument("it has ", slot, " data inputs but op ", nd.op,
                                                    " expects ", node->num_inputs()));
    }
    if (slot == 0) {
      for (Node* gate : control_inputs) graph->AddControlEdge(gate, node);
    }
  }
  result->outputs.clear();
  result->control_outputs.clear();
  std::vector<int64_t> output_sizes = ArgSizes(sig.outputs, call.attrs);
  for (size_t i = 0; i < sig.outputs.size(); ++i) {
    const ArgDef& arg = sig.outputs[i];
    auto it = def.ret.find(arg.name);
    if (it == def.ret.end()) {
      return errors::InvalidArgument("output '", arg.name, "' has no ret");  // validated
    }
    StatusOr<FunctionInput> ref = ParseFunctionInput(it->second);
    if (!ref.ok()) return ref.status().WithContext(StrCat("ret of output '", arg.name, "'"));
    Tensors tensors;
    WEIR_RETURN_IF_ERROR(scope.Resolve(*ref, it->second, &tensors)
                             .WithContext(StrCat("ret of output '", arg.name, "'")));
    if (static_cast<int64_t>(tensors.size()) != output_sizes[i]) {
      return errors::InvalidArgument("output '", arg.name, "' stands for ", output_sizes[i],
                                     " tensors but its ret '", it->second, "' gives ",
                                     tensors.size());
    }
    for (const auto& tensor : tensors) {
      size_t k = result->outputs.size();
      DType got = tensor.first->output_type(tensor.second);
      if (got != output_types[k]) {
        return errors::InvalidArgument("output '", arg.name, "' must be ", output_types[k],
                                       " but its ret '", it->second, "' is ", got);
      }
      result->outputs.push_back(tensor);
    }
  }
  for (const auto& [output, name] : def.control_ret) {
    Node* node = scope.FindBodyNode(name);
    if (node == nullptr) {
      return errors::InvalidArgument("control output '", output, "' names no body node");
    }
    result->control_outputs.push_back(node);
  }
  return Status::OK();
}

// The shapes of the nodes added since `mark`, in dependency order.
Status InferNewShapes(Graph* graph, const Graph::Mark& mark) {
  WEIR_ASSIGN_OR_RETURN(std::vector<Node*> order, OrderNewNodes(*graph, mark));
  for (Node* node : order) {
    Status status = InferShapes(node);
    if (!status.ok()) return status;
    if (shape_inference != nullptr && shape_inference->depth > 0 && IsFunctionCall(*graph, *node)) {
      InferFunctionCallShapes(*graph, node);
    }
  }
  return Status::OK();
}

}  // namespace

StatusOr<NameAttrList> CalledFunction(const Graph& graph, const Node& node) {
  const std::string& op = node.type_string();
  if (op == kPartitionedCall || op == kStatefulPartitionedCall) {
    NameAttrList func;
    WEIR_RETURN_IF_ERROR(GetAttr(node.def().attrs, "f", &func));
    return func;
  }
  NameAttrList func;
  func.name = op;
  // The call's attrs are the function's (internal '_' annotations aside).
  for (const AttrDef& attr : node.op_def().attrs) {
    auto it = node.def().attrs.find(attr.name);
    if (it != node.def().attrs.end()) func.attr[attr.name] = it->second;
  }
  (void)graph;
  return func;
}

namespace {

bool IsSwitch(const Node& node) {
  const std::string& op = node.type_string();
  return op == "Switch" || op == "RefSwitch" || op == "_SwitchN";
}

// A prefix under which no body node's name (nor the gate's) is taken: the
// call's name (the call itself is removed first), else name_inlined_k.
std::string FreePrefix(const Graph& graph, const std::string& name, const FunctionDef& def,
                       const std::string& gate) {
  if (BodyNamesAreFree(graph, name, def, gate)) return name;
  for (int k = 1;; ++k) {
    std::string prefix = StrCat(name, "_inlined_", k);
    if (graph.FindNode(prefix) == nullptr && BodyNamesAreFree(graph, prefix, def, gate)) {
      return prefix;
    }
  }
}

}  // namespace

Status ExpandCall(Graph* graph, Node* node, const NameAttrList& func) {
  const FunctionDef* def = graph->function_library().Find(func.name);
  if (def == nullptr) {
    return errors::InvalidArgument("calls function '", func.name,
                                   "', which is not in the graph's function library");
  }
  const ReplacedNode replaced(*node);
  const std::string& name = replaced.name;
  const std::string& device = replaced.device;
  const bool stateful = node->is_stateful() || def->signature.is_stateful;
  Tensors inputs(node->num_inputs());
  for (int i = 0; i < node->num_inputs(); ++i) {
    const Edge* e = node->input_edge(i);
    if (e == nullptr) return errors::InvalidArgument("input ", i, " is not connected");
    inputs[i] = {e->src(), e->src_output()};
  }
  std::vector<Node*> control_sources;
  for (const Edge* e : node->control_inputs()) control_sources.push_back(e->src());

  // The gate: body nodes without data inputs (constants) wait for it, so
  // they run when the call would, in its frame and branch.
  std::string gate_name = "input_control_node";
  bool body_has_sources = false;
  std::unordered_set<std::string> body_names;
  for (const NodeDef& nd : def->node_def) {
    body_names.insert(nd.name);
    if (NumDataInputs(nd) == 0) body_has_sources = true;
  }
  while (body_names.count(gate_name)) gate_name += "_";
  const std::string prefix = FreePrefix(*graph, name, *def, gate_name);

  graph->RemoveNode(node);
  const Graph::Mark mark = graph->GetMark();
  std::vector<Node*> gates;
  // An Identity of input i, "<gate>/<what>_i".
  auto identity_of = [&](size_t i, std::string_view what) -> StatusOr<Node*> {
    auto [src, port] = inputs[i];
    NodeDef identity;
    identity.name = graph->NewName(StrCat(prefix, "/", gate_name, "/", what, "_", i));
    identity.op = "Identity";
    identity.device = device;
    identity.attrs["T"] = src->output_type(port);
    WEIR_ASSIGN_OR_RETURN(Node * id, graph->AddNode(std::move(identity)));
    graph->AddEdge(src, port, id, 0);
    return id;
  };
  // With control inputs the gate is needed even without sources: every
  // argument then goes through it (below).
  if ((body_has_sources && !inputs.empty()) || !control_sources.empty()) {
    NodeDef noop;
    noop.name = StrCat(prefix, "/", gate_name);
    noop.op = "NoOp";
    noop.device = device;
    WEIR_ASSIGN_OR_RETURN(Node * gate, graph->AddNode(std::move(noop)));
    for (size_t i = 0; i < inputs.size(); ++i) {
      Node* src = inputs[i].first;
      if (IsSwitch(*src)) {
        // A Switch runs even on the untaken side; only its output there is
        // dead, so the gate waits for that output, not for the Switch.
        WEIR_ASSIGN_OR_RETURN(src, identity_of(i, "input"));
      }
      graph->AddControlEdge(src, gate);
    }
    for (Node* src : control_sources) graph->AddControlEdge(src, gate);
    gates.push_back(gate);
    if (!control_sources.empty()) {
      // The call's control inputs order all of its body, as in TF's inliner:
      // a body node reading an argument must not run before them either
      // (`assign; y = f(v)` with ^assign on the call reads the new value).
      for (size_t i = 0; i < inputs.size(); ++i) {
        WEIR_ASSIGN_OR_RETURN(Node * id, identity_of(i, "arg"));
        graph->AddControlEdge(gate, id);
        inputs[i] = {id, 0};
      }
    }
  }
  InlinedFunction result;
  WEIR_RETURN_IF_ERROR(InlineFunctionBody(func, inputs, gates, prefix, graph, &result));
  std::vector<Node*> controls = std::move(result.control_outputs);
  for (Node* n : PlaceBodyAndFindSideEffects(graph, mark, device, stateful)) controls.push_back(n);
  if (result.outputs.empty() && controls.empty()) {
    // Nothing to wait for in the body: the call still waits for its inputs.
    for (const auto& [src, port] : inputs) controls.push_back(src);
    controls.insert(controls.end(), control_sources.begin(), control_sources.end());
  }
  StatusOr<Node*> outputs = AddReplacement(graph, replaced, result.outputs, controls);
  if (!outputs.ok()) return outputs.status().WithContext(StrCat("function '", func.name, "'"));
  // Reading an output of a stateful call runs its side effects; consumers
  // of a pure call read the body directly.
  MoveConsumers(graph, replaced, *outputs, stateful ? nullptr : &result.outputs);
  return Status::OK();
}

namespace {

// The functions a functional control-flow node instantiates.
std::vector<std::string> BranchFunctions(const Node& node) {
  std::vector<std::string> names;
  (void)ForEachFunctionAttr(node.def().attrs, [&](const std::string&, const NameAttrList& func) {
    names.push_back(func.name);
    return Status::OK();
  });
  return names;
}

// What the count of a SymbolicGradient takes its function's body to grow
// to, in bodies: the forward body and its gradient.
constexpr int kGradientBodies = 16;

// Nodes added by the ExpandFunctions runs on this thread inside the
// outermost ExpansionWorkScope (a SymbolicGradient's gradient builder
// expands the calls it differentiates on scratch graphs, and a gradient of
// a gradient nests again; the gradients driver expands the calls on its
// path one by one): their sum is held to kMaxExpansionWork, so work that
// multiplies at each level fails at once instead of running for minutes.
// A nested run's nodes are counted again when its result lands in the
// enclosing graph, hence the margin.
struct ExpansionWork {
  int depth = 0;
  int64_t added = 0;
};
thread_local ExpansionWork expansion_work;
constexpr int64_t kMaxExpansionWork = int64_t{4} * kMaxExpandedNodes;

// Saturating sums of node counts (a doubling chain 64 deep overflows).
constexpr int64_t kSaturatedSize = int64_t{1} << 62;
int64_t AddSizes(int64_t a, int64_t b) { return std::min(kSaturatedSize, a + b); }

// The number of nodes a call or functional control-flow node grows to once
// expanded through every level, counted without expanding anything. Each
// function's expanded size is counted once, iteratively (a chain of 10^5
// functions must not recurse 10^5 deep). A call of a function being counted
// (recursion) counts as one node: ExpandFunctions reports the cycle when it
// meets it; so does a func attr bound by a placeholder, whose expansion is
// checked when it is met. The nodes an expansion adds around a body
// (gates, Switches, Merges) are estimated from the node's inputs.
class ExpansionSizer {
 public:
  explicit ExpansionSizer(const FunctionLibrary& library) : library_(library) {}

  // What a node of `op` with `attrs` and `num_inputs` data inputs grows to
  // (1 for a node that is not expanded).
  int64_t NodeSize(std::string_view op, const AttrMap& attrs, int64_t num_inputs) {
    std::vector<const FunctionDef*> callees;
    int64_t size = Callees(op, attrs, num_inputs, &callees);
    for (const FunctionDef* def : callees) size = AddSizes(size, FunctionSize(def));
    return size;
  }

 private:
  // The functions a node expands into (appended to `callees`) and the nodes
  // its expansion adds besides their bodies.
  int64_t Callees(std::string_view op, const AttrMap& attrs, int64_t num_inputs,
                  std::vector<const FunctionDef*>* callees) const {
    const FunctionDef* def = nullptr;
    if (op == kPartitionedCall || op == kStatefulPartitionedCall) {
      auto it = attrs.find("f");
      if (it != attrs.end() && it->second.is_func()) def = library_.Find(it->second.func().name);
    } else if (IsFunctionalControlFlowOp(op)) {
      int64_t branches = 0;
      (void)ForEachFunctionAttr(attrs, [&](const std::string&, const NameAttrList& func) {
        ++branches;
        if (const FunctionDef* branch = library_.Find(func.name)) callees->push_back(branch);
        return Status::OK();
      });
      return (num_inputs + 16) * std::max<int64_t>(1, branches);
    } else if (op == kSymbolicGradient) {
      auto it = attrs.find("f");
      if (it == attrs.end() || !it->second.is_func()) return 1;
      const std::string& f = it->second.func().name;
      if (std::string g = library_.FindGradient(f); !g.empty()) {
        def = library_.Find(g);  // a call of the gradient function
      } else if (const FunctionDef* body = library_.Find(f)) {
        // The forward body and its gradient, counted as
        // kGradientBodies bodies: an op's gradient function adds up to
        // about a dozen nodes. So a gradient of a gradient of ... counts
        // as growing that much per level, as it does (work past the count
        // still meets the checks during the expansion).
        for (int k = 0; k < kGradientBodies; ++k) callees->push_back(body);
        return 4 * num_inputs + 4;
      }
    } else {
      def = library_.Find(op);
    }
    if (def == nullptr) return 1;
    callees->push_back(def);
    return 2 * num_inputs + 2;
  }

  int64_t FunctionSize(const FunctionDef* root) {
    if (auto it = sizes_.find(root); it != sizes_.end()) return it->second;
    struct Frame {
      const FunctionDef* def;
      size_t node = 0;  // the next body node to count
      std::vector<const FunctionDef*> callees;  // of the body node before it
      size_t callee = 0;
      int64_t size = 0;
    };
    std::vector<Frame> stack;
    std::unordered_set<const FunctionDef*> open;
    stack.push_back({root});
    open.insert(root);
    while (!stack.empty()) {
      Frame& frame = stack.back();
      if (frame.callee < frame.callees.size()) {
        const FunctionDef* callee = frame.callees[frame.callee];
        if (auto it = sizes_.find(callee); it != sizes_.end()) {
          frame.size = AddSizes(frame.size, it->second);
          ++frame.callee;
        } else if (open.count(callee)) {
          frame.size = AddSizes(frame.size, 1);
          ++frame.callee;
        } else {
          open.insert(callee);
          stack.push_back({callee});  // `frame` is stale from here on
        }
        continue;
      }
      if (frame.node < frame.def->node_def.size()) {
        const NodeDef& nd = frame.def->node_def[frame.node++];
        frame.callees.clear();
        frame.callee = 0;
        frame.size =
            AddSizes(frame.size, Callees(nd.op, nd.attrs, NumDataInputs(nd), &frame.callees));
        continue;
      }
      sizes_[frame.def] = frame.size;
      open.erase(frame.def);
      stack.pop_back();
    }
    return sizes_.at(root);
  }

  const FunctionLibrary& library_;
  std::unordered_map<const FunctionDef*, int64_t> sizes_;
};

// The error of an expansion past the budget, naming node `node` and what it
// calls.
Status ExpansionBudgetError(const Node& node, const std::vector<std::string>& called,
                            int64_t node_size, int64_t total) {
  std::vector<std::string> quoted;
  for (const std::string& f : called) quoted.push_back(StrCat("'", f, "'"));
  return errors::ResourceExhausted("expanding the graph's function calls would make it about ",
                                   total, " nodes, more than the budget of ", kMaxExpandedNodes,
                                   " (kMaxExpandedNodes): node ", node.Describe(),
                                   " alone expands function ", StrJoin(quoted, ", "), " to about ",
                                   node_size, " nodes; calls are nested too deep or too wide");
}

// The error of nested expansions (gradients of gradients) past
// kMaxExpansionWork.
Status ExpansionWorkError(const Node& node, int64_t work) {
  return errors::ResourceExhausted(
      "expanding node ", node.Describe(), " would bring the nodes built by the expansions of ",
      "one pass (the calls a gradient expands one by one, SymbolicGradient of functions whose ",
      "bodies hold more) to about ", work, ", more than ", kMaxExpansionWork,
      " (4 x kMaxExpandedNodes): calls or gradients are nested too deep or too wide");
}

}  // namespace

Status InlineFunctionBody(const NameAttrList& func, const std::vector<std::pair<Node*, int>>& inputs,
                          const std::vector<Node*>& control_inputs, const std::string& prefix,
                          Graph* graph, InlinedFunction* result) {
  const FunctionDef* def = graph->function_library().Find(func.name);
  if (def == nullptr) {
    return errors::InvalidArgument("function '", func.name,
                                   "' is not in the graph's function library");
  }
  const Graph::Mark mark = graph->GetMark();
  Status status = Inline(*def, func, inputs, control_inputs, prefix, graph, result);
  if (status.ok()) status = InferNewShapes(graph, mark);
  if (!status.ok()) {
    graph->RollBackTo(mark);
    return status.WithContext(StrCat("function '", func.name, "'"));
  }
  return Status::OK();
}

bool IsFunctionCall(const Graph& graph, const Node& node) {
  const std::string& op = node.type_string();
  return op == kPartitionedCall || op == kStatefulPartitionedCall ||
         graph.function_library().Find(op) != nullptr;
}

ExpansionWorkScope::ExpansionWorkScope() {
  if (expansion_work.depth++ == 0) expansion_work.added = 0;
}

ExpansionWorkScope::~ExpansionWorkScope() { --expansion_work.depth; }

namespace {

// The functions `node` expands into, for errors.
std::vector<std::string> CalledNames(const Graph& graph, const Node& node) {
  if (IsFunctionalControlFlow(node)) return BranchFunctions(node);
  NameAttrList func;
  if (node.type_string() == kSymbolicGradient) {
    if (!GetAttr(node.def().attrs, "f", &func).ok()) return {};
    return {func.name};
  }
  StatusOr<NameAttrList> called = CalledFunction(graph, node);
  return called.ok() ? std::vector<std::string>{called->name} : std::vector<std::string>{};
}

}  // namespace

Status CheckExpansionBudget(const Graph& graph, const std::vector<Node*>& nodes) {
  ExpansionSizer sizer(graph.function_library());
  int64_t total = graph.num_nodes();
  const Node* largest = nullptr;
  int64_t largest_size = 0;
  for (const Node* node : nodes) {
    const int64_t size = sizer.NodeSize(node->type_string(), node->def().attrs, node->num_inputs());
    total = AddSizes(total, size - 1);
    if (largest == nullptr || size > largest_size) {
      largest = node;
      largest_size = size;
    }
  }
  if (total <= kMaxExpandedNodes) return Status::OK();
  return ExpansionBudgetError(*largest, CalledNames(graph, *largest), largest_size, total);
}

Status ExpandFunctions(Graph* graph, const ExpandFunctionsOptions& options) {
  const ExpansionWorkScope work_scope;
  // The functions being expanded around each new node, outermost first: a
  // call of one of them is recursion.
  using Chain = std::shared_ptr<const std::vector<std::string>>;
  std::unordered_map<int, Chain> chains;
  auto needs_expansion = [&](const Node& node) {
    if (node.type_string() == kSymbolicGradient || IsFunctionalControlFlow(node)) return true;
    if (!IsFunctionCall(*graph, node)) return false;
    if (!options.keep_calls_with_gradients) return true;
    StatusOr<NameAttrList> func = CalledFunction(*graph, node);
    // A call that cannot be resolved is expanded, to report why.
    return !func.ok() || graph->function_library().FindGradient(func->name).empty();
  };
  // What each call calls, as expanded below.
  auto called_functions = [&](const Node& node) -> StatusOr<std::vector<std::string>> {
    if (IsFunctionalControlFlow(node)) return BranchFunctions(node);
    if (node.type_string() == kSymbolicGradient) {
      NameAttrList func;
      WEIR_RETURN_IF_ERROR(GetAttr(node.def().attrs, "f", &func));
      std::vector<std::string> called = {func.name};
      std::string gradient = graph->function_library().FindGradient(func.name);
      if (!gradient.empty()) called.push_back(std::move(gradient));
      return called;
    }
    WEIR_ASSIGN_OR_RETURN(NameAttrList func, CalledFunction(*graph, node));
    return std::vector<std::string>{func.name};
  };
  ExpansionSizer sizer(graph->function_library());
  auto size_of = [&](const Node& node) {
    return sizer.NodeSize(node.type_string(), node.def().attrs, node.num_inputs());
  };
  std::deque<int> work;
  int64_t total = graph->num_nodes();
  const Node* largest = nullptr;
  int64_t largest_size = 0;
  for (Node* node : graph->nodes()) {
    if (!needs_expansion(*node)) continue;
    work.push_back(node->id());
    const int64_t size = size_of(*node);
    total = AddSizes(total, size - 1);
    if (largest == nullptr || size > largest_size) {
      largest = node;
      largest_size = size;
    }
  }
  // Counted before anything is expanded: a hostile library fails here, at
  // once, instead of after building most of kMaxExpandedNodes nodes.
  if (total > kMaxExpandedNodes) {
    StatusOr<std::vector<std::string>> called = called_functions(*largest);
    return ExpansionBudgetError(*largest, called.ok() ? *called : std::vector<std::string>{},
                                largest_size, total);
  }
  while (!work.empty()) {
    Node* node = graph->FindNodeId(work.front());
    work.pop_front();
    if (node == nullptr) continue;
    const std::string described = node->Describe();
    auto context = [&](const Status& status) {
      return status.WithContext(StrCat("expanding call node ", described));
    };
    const bool control_flow = IsFunctionalControlFlow(*node);
    StatusOr<std::vector<std::string>> called_or = called_functions(*node);
    if (!called_or.ok()) return context(called_or.status());
    const std::vector<std::string> called = std::move(called_or).value();
    auto chain_it = chains.find(node->id());
    Chain chain = chain_it == chains.end() ? nullptr : chain_it->second;
    if (chain) {
      for (const std::string& f : called) {
        for (size_t k = 0; k < chain->size(); ++k) {
          if ((*chain)[k] != f) continue;
          std::vector<std::string> cycle(chain->begin() + k, chain->end());
          cycle.push_back(f);
          return errors::InvalidArgument("node ", described, ": function '", f,
                                         "' calls itself (", StrJoin(cycle, " -> "),
                                         "); recursive functions cannot be inlined");
        }
      }
    }
    // Checked again before each expansion: a func attr bound from a
    // placeholder was counted as one node above.
    const int64_t size = size_of(*node);
    if (graph->num_nodes() + size - 1 > kMaxExpandedNodes) {
      return ExpansionBudgetError(*node, called, size, graph->num_nodes() + size - 1);
    }
    if (expansion_work.added + size > kMaxExpansionWork) {
      return ExpansionWorkError(*node, expansion_work.added + size);
    }
    const int nodes_before = graph->num_nodes();
    const Graph::Mark mark = graph->GetMark();
    if (control_flow) {
      Status status = LowerFunctionalControlFlow(graph, node);
      if (!status.ok()) return context(status);
    } else if (node->type_string() == kSymbolicGradient) {
      // Its errors name the node and function already.
      WEIR_RETURN_IF_ERROR(ExpandSymbolicGradient(graph, node));
    } else {
      NameAttrList func = *CalledFunction(*graph, *node);
      Status status = ExpandCall(graph, node, func);
      if (!status.ok()) return context(status);
    }
    expansion_work.added += std::max(0, graph->num_nodes() - nodes_before);
    if (expansion_work.added > kMaxExpansionWork) {
      return ExpansionWorkError(*node, expansion_work.added);
    }
    if (graph->num_nodes() > kMaxExpandedNodes) {
      return errors::ResourceExhausted("expanding function calls made the graph larger than ",
                                       kMaxExpandedNodes, " nodes (at node ", described,
                                       "): calls are nested too deep or too wide");
    }
    auto extended = std::make_shared<std::vector<std::string>>();
    if (chain) *extended = *chain;
    extended->insert(extended->end(), called.begin(), called.end());
    Chain new_chain = std::move(extended);
    for (int id = mark.node_ids; id < graph->num_node_ids(); ++id) {
      Node* added = graph->FindNodeId(id);
      if (added == nullptr) continue;
      chains[id] = new_chain;
      if (needs_expansion(*added)) work.push_back(id);
    }
  }
  return Status::OK();
}

FunctionShapeScope::FunctionShapeScope() : previous_(shape_inference) {
  if (previous_ == nullptr) {
    state_ = std::make_unique<ShapeInferenceState>();
    shape_inference = state_.get();
  }
}

FunctionShapeScope::~FunctionShapeScope() {
  if (state_ != nullptr) shape_inference = previous_;
}

void InferFunctionCallShapes(const Graph& graph, Node* node) {
  // Outside a scope, this call is a scope of its own.
  std::optional<FunctionShapeScope> scope;
  if (shape_inference == nullptr) scope.emplace();
  ShapeInferenceState& state = *shape_inference;
  if (state.depth >= kMaxShapeInferenceDepth) return;
  StatusOr<NameAttrList> func = CalledFunction(graph, *node);
  if (!func.ok()) return;
  const FunctionDef* def = graph.function_library().Find(func->name);
  if (def == nullptr || def->node_def.size() > kMaxShapeInferenceBodyNodes) return;

  std::vector<DType> input_types(node->num_inputs());
  std::vector<PartialShape> input_shapes(node->num_inputs());
  for (int i = 0; i < node->num_inputs(); ++i) {
    input_types[i] = node->input_type(i);
    const Edge* e = node->input_edge(i);
    if (e != nullptr) input_shapes[i] = e->src()->output_shape(e->src_output());
  }
  const std::string key = MemoKey(*func, input_types, input_shapes);
  std::optional<std::vector<PartialShape>> body_shapes;
  auto memo = state.memo.find(key);
  const bool same = memo != state.memo.end() && memo->second.func == *func &&
                    memo->second.input_types == input_types &&
                    memo->second.input_shapes == input_shapes;
  if (same && memo->second.depth <= state.depth) {
    body_shapes = memo->second.output_shapes;
  } else {
    // Each instantiation costs its body, its inputs and the copy of the
    // library the scratch graph holds.
    const int64_t cost = static_cast<int64_t>(def->node_def.size()) + node->num_inputs() + 1 +
                         static_cast<int64_t>(graph.function_library().num_functions() / 8);
    if (state.budget < cost) return;  // spent: shapes stay unknown
    state.budget -= cost;
    ++state.depth;
    struct Leave {
      int* depth;
      ~Leave() { --*depth; }
    } leave{&state.depth};
    Graph scratch;
    *scratch.mutable_function_library() = graph.function_library();
    Tensors inputs;
    bool ok = true;
    for (int i = 0; i < node->num_inputs() && ok; ++i) {
      NodeDef placeholder;
      placeholder.name = StrCat("input_", i);
      placeholder.op = "Placeholder";
      placeholder.attrs["dtype"] = input_types[i];
      StatusOr<Node*> input = scratch.AddNode(std::move(placeholder));
      ok = input.ok();
      if (!ok) break;
      (*input)->set_output_shapes({input_shapes[i]});
      inputs.push_back({*input, 0});
    }
    InlinedFunction result;
    ok = ok && InlineFunctionBody(*func, inputs, {}, "body", &scratch, &result).ok();
    if (ok && static_cast<int>(result.outputs.size()) == node->num_outputs()) {
      body_shapes.emplace();
      for (const auto& [src, port] : result.outputs)
        body_shapes->push_back(src->output_shape(port));
    }
    // Found at most kMaxShapeInferenceDepth times per key, each time
    // shallower.
    // (The nested calls above may have added entries: look the key up
    // again.)
    const int depth = state.depth - 1;  // this call's, before the ++ above
    memo = state.memo.find(key);
    if (memo == state.memo.end()) {
      state.memo.emplace(
          key, ShapeInferenceState::Memo{*func, std::move(input_types), std::move(input_shapes),
                                         body_shapes, depth});
    } else if (same) {
      memo->second.output_shapes = body_shapes;
      memo->second.depth = depth;
    }
  }
  if (!body_shapes.has_value()) return;
  std::vector<PartialShape> shapes(node->num_outputs());
  for (int k = 0; k < node->num_outputs(); ++k) {
    const PartialShape& known = node->output_shape(k);
    shapes[k] = known.known_rank() ? known : (*body_shapes)[k];
  }
  node->set_output_shapes(std::move(shapes));
}

}  // namespace weir
