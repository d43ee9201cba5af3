#include "weir/graph/symbolic_gradient.h"

#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "weir/framework/node_def_util.h"
#include "weir/graph/call_rewrite.h"
#include "weir/graph/function_inline.h"
#include "weir/graph/function_library.h"
#include "weir/graph/graph_constructor.h"

namespace weir {
namespace {

std::shared_mutex builder_mu;
GraphGradientBuilder& Builder() {
  static GraphGradientBuilder* builder = new GraphGradientBuilder;
  return *builder;
}

// The functions whose gradients this thread is building, outermost first:
// a body that asks for the gradient of one of them again (directly, or
// through the builder's own expansion of nested calls, which starts a new
// ExpandFunctions) would never finish.
thread_local std::vector<std::string> building;

std::string TypeList(const std::vector<DType>& types) {
  std::vector<std::string> names;
  for (DType t : types) names.push_back(std::string(DTypeName(t)));
  return StrCat("(", StrJoin(names, ", "), ")");
}

// f's input and output types with `func`'s attrs.
Status FunctionTypes(const FunctionDef& def, const NameAttrList& func,
                     std::vector<DType>* input_types, std::vector<DType>* output_types) {
  NodeDef call;
  call.name = func.name;
  call.op = func.name;
  call.attrs = func.attr;
  AddDefaultAttrs(def.signature, &call);
  WEIR_RETURN_IF_ERROR(ValidateNodeAttrs(def.signature, call));
  return InOutTypesForNode(def.signature, call, input_types, output_types);
}

// An Identity of `src` named after `name`, with its shape.
StatusOr<Node*> AddIdentity(Graph* graph, const std::string& name, const TensorRef& src,
                            const std::string& device) {
  NodeDef def;
  def.name = graph->NewName(name);
  def.op = "Identity";
  def.device = device;
  def.attrs["T"] = src.first->output_type(src.second);
  WEIR_ASSIGN_OR_RETURN(Node * node, graph->AddNode(std::move(def)));
  graph->AddEdge(src.first, src.second, node, 0);
  WEIR_RETURN_IF_ERROR(InferShapes(node));
  return node;
}

}  // namespace

void SetGraphGradientBuilder(GraphGradientBuilder builder) {
  std::unique_lock<std::shared_mutex> lock(builder_mu);
  Builder() = std::move(builder);
}

bool HasGraphGradientBuilder() {
  std::shared_lock<std::shared_mutex> lock(builder_mu);
  return static_cast<bool>(Builder());
}

StatusOr<std::optional<NameAttrList>> RegisteredGradient(const Graph& graph,
                                                         const NameAttrList& func,
                                                         const std::vector<DType>& input_types,
                                                         const std::vector<DType>& output_types) {
  const FunctionLibrary& library = graph.function_library();
  const std::string name = library.FindGradient(func.name);
  if (name.empty()) return std::optional<NameAttrList>();
  const FunctionDef* def = library.Find(name);
  if (def == nullptr) {
    return errors::InvalidArgument("the gradient function '", name, "' of function '", func.name,
                                   "' is not in the graph's function library");
  }
  NameAttrList gradient;
  gradient.name = name;
  for (const AttrDef& attr : def->signature.attrs) {
    auto it = func.attr.find(attr.name);
    if (it != func.attr.end()) gradient.attr[attr.name] = it->second;
  }
  std::vector<DType> takes, gives;
  Status status = FunctionTypes(*def, gradient, &takes, &gives);
  if (!status.ok()) {
    return status.WithContext(
        StrCat("gradient function '", name, "' of function '", func.name, "'"));
  }
  std::vector<DType> expected = input_types;
  expected.insert(expected.end(), output_types.begin(), output_types.end());
  if (takes != expected || gives != input_types) {
    return errors::InvalidArgument(
        "the gradient function '", name, "' of function '", func.name, "' takes ", TypeList(takes),
        " and returns ", TypeList(gives), ", but a gradient of '", func.name,
        "' must take its inputs and one gradient per output ", TypeList(expected),
        " and return one gradient per input ", TypeList(input_types));
  }
  return std::optional<NameAttrList>(std::move(gradient));
}

StatusOr<std::optional<NameAttrList>> RegisteredGradientOfCall(const Graph& graph,
                                                               const Node& node) {
  if (!IsFunctionCall(graph, node)) return std::optional<NameAttrList>();
  WEIR_ASSIGN_OR_RETURN(NameAttrList func, CalledFunction(graph, node));
  if (graph.function_library().FindGradient(func.name).empty()) {
    return std::optional<NameAttrList>();
  }
  std::vector<DType> input_types(node.num_inputs());
  for (int i = 0; i < node.num_inputs(); ++i) input_types[i] = node.input_type(i);
  return RegisteredGradient(graph, func, input_types, node.output_types());
}

Status ExpandSymbolicGradient(Graph* graph, Node* node) {
  const std::string described = node->Describe();
  NameAttrList func;
  Status status = GetAttr(node->def().attrs, "f", &func);
  if (!status.ok()) return status.WithContext(StrCat("node ", described));
  auto error = [&](const Status& s) {
    return s.WithContext(
        StrCat("SymbolicGradient node ", described, " of function '", func.name, "'"));
  };
  const FunctionDef* def = graph->function_library().Find(func.name);
  if (def == nullptr) {
    return error(errors::InvalidArgument("the function is not in the graph's function library"));
  }
  std::vector<DType> input_types, output_types;
  status = FunctionTypes(*def, func, &input_types, &output_types);
  if (!status.ok()) return error(status);
  // Arity: f's inputs and one dy per f output in; one gradient per f input out.
  std::vector<DType> expected = input_types;
  expected.insert(expected.end(), output_types.begin(), output_types.end());
  std::vector<DType> got(node->num_inputs());
  for (int i = 0; i < node->num_inputs(); ++i) got[i] = node->input_type(i);
  if (got != expected) {
    return error(errors::InvalidArgument(
        "the function takes ", TypeList(input_types), " and returns ", TypeList(output_types),
        ", so its SymbolicGradient takes its inputs and one gradient per output ",
        TypeList(expected), ", but the node's inputs (Tin) are ", TypeList(got)));
  }
  if (node->output_types() != input_types) {
    return error(errors::InvalidArgument(
        "the node's outputs (Tout) are ", TypeList(node->output_types()),
        " but the gradients of the function's inputs are ", TypeList(input_types)));
  }
  StatusOr<std::optional<NameAttrList>> registered =
      RegisteredGradient(*graph, func, input_types, output_types);
  if (!registered.ok()) return error(registered.status());
  if (registered->has_value()) {
    // The library's gradient function takes exactly the node's inputs.
    status = ExpandCall(graph, node, **registered);
    return status.ok() ? status : error(status);
  }
  for (size_t k = 0; k < building.size(); ++k) {
    if (building[k] != func.name) continue;
    std::vector<std::string> cycle(building.begin() + k, building.end());
    cycle.push_back(func.name);
    return error(errors::InvalidArgument("its gradient needs its own gradient (",
                                         StrJoin(cycle, " -> "), ")"));
  }
  GraphGradientBuilder builder;
  {
    std::shared_lock<std::shared_mutex> lock(builder_mu);
    builder = Builder();
  }
  if (!builder) {
    return error(errors::FailedPrecondition(
        "no gradient builder is installed: call RegisterFunctionGradients() "
        "(train/function_gradient_builder.h) before compiling it"));
  }

  const ReplacedNode replaced(*node);
  const std::string& name = replaced.name;
  const int num_x = static_cast<int>(input_types.size());
  std::vector<TensorRef> inputs(node->num_inputs());
  for (int i = 0; i < node->num_inputs(); ++i) {
    const Edge* e = node->input_edge(i);
    if (e == nullptr) return error(errors::InvalidArgument("input ", i, " is not connected"));
    inputs[i] = {e->src(), e->src_output()};
  }
  for (int i = 0; i < num_x; ++i) {
    if (input_types[i] == DT_RESOURCE) {
      return error(errors::Unimplemented("input ", i,
                                         " is a resource: SymbolicGradient differentiates "
                                         "tensors only"));
    }
  }

  // The forward body and its gradient are built in a scratch graph, on
  // Placeholders standing for the inputs, then spliced in: so the node may
  // sit inside a while loop (TensorFlow puts the SymbolicGradient of a call
  // in a loop body into the backward loop), which the gradients driver
  // does not differentiate from within.
  Graph scratch;
  *scratch.mutable_function_library() = graph->function_library();
  std::vector<TensorRef> args;
  std::unordered_map<const Node*, int> arg_of;  // scratch Placeholder -> input
  for (int i = 0; i < static_cast<int>(inputs.size()); ++i) {
    NodeDef arg;
    arg.name = StrCat("arg_", i);
    arg.op = "Placeholder";
    arg.attrs["dtype"] = inputs[i].first->output_type(inputs[i].second);
    StatusOr<Node*> added = scratch.AddNode(std::move(arg));
    if (!added.ok()) return error(added.status());
    (*added)->set_output_shapes({inputs[i].first->output_shape(inputs[i].second)});
    args.push_back({*added, 0});
    arg_of[*added] = i;
  }
  std::vector<TensorRef> xs(args.begin(), args.begin() + num_x);
  std::vector<TensorRef> dys(args.begin() + num_x, args.end());
  InlinedFunction body;
  status = InlineFunctionBody(func, xs, {}, "forward", &scratch, &body);
  if (!status.ok()) return error(status);
  std::vector<TensorRef> differentiable;
  std::vector<int> differentiable_index;
  for (int i = 0; i < num_x; ++i) {
    if (IsFloatingDType(input_types[i]) || IsComplexDType(input_types[i])) {
      differentiable.push_back(xs[i]);
      differentiable_index.push_back(i);
    }
  }
  std::vector<TensorRef> dxs;
  building.push_back(func.name);
  status = builder(&scratch, "gradients", body.outputs, differentiable, dys, &dxs);
  building.pop_back();
  if (!status.ok()) return error(status);
  if (dxs.size() != differentiable.size()) {
    return error(errors::Internal("the gradient builder gave ", dxs.size(), " gradients for ",
                                  differentiable.size(), " inputs"));
  }
  // Zeros for the inputs no gradient reaches (TensorFlow's SymbolicGradient
  // gives zeros there too).
  std::vector<TensorRef> grads(num_x, TensorRef{nullptr, 0});
  for (size_t k = 0; k < dxs.size(); ++k) grads[differentiable_index[k]] = dxs[k];
  for (int i = 0; i < num_x; ++i) {
    if (grads[i].first != nullptr) continue;
    NodeDef zeros;
    zeros.name = scratch.NewName(StrCat("zeros_", i));
    zeros.op = "ZerosLike";
    zeros.attrs["T"] = input_types[i];
    StatusOr<Node*> z = scratch.AddNode(std::move(zeros));
    if (!z.ok()) return error(z.status());
    scratch.AddEdge(xs[i].first, xs[i].second, *z, 0);
    status = InferShapes(*z);
    if (!status.ok()) return error(status);
    grads[i] = {*z, 0};
  }

  // A prefix under which every scratch node's name is free in the graph.
  std::vector<Node*> built;
  for (Node* n : scratch.nodes()) {
    if (!arg_of.count(n)) built.push_back(n);
  }
  auto prefix_is_free = [&](const std::string& prefix) {
    for (const Node* n : built) {
      if (graph->FindNode(StrCat(prefix, "/", n->name())) != nullptr) return false;
    }
    return true;
  };
  std::string prefix = name;
  for (int k = 1; !prefix_is_free(prefix); ++k) prefix = StrCat(name, "_gradient_", k);

  std::vector<Node*> control_sources;
  for (const Edge* e : node->control_inputs()) control_sources.push_back(e->src());
  graph->RemoveNode(node);
  node = nullptr;
  const Graph::Mark mark = graph->GetMark();
  // Each input through an Identity: what waits for the inputs waits for a
  // live value (a Switch output is dead on the untaken side), and feeding
  // an input leaves its producer unneeded. The node's control inputs order
  // all of it, as they do a call's body.
  NodeDef gate_def;
  gate_def.name = graph->NewName(StrCat(prefix, "/gate"));
  gate_def.op = "NoOp";
  gate_def.device = replaced.device;
  StatusOr<Node*> gate = graph->AddNode(std::move(gate_def));
  if (!gate.ok()) return error(gate.status());
  std::vector<Node*> identities;
  for (int i = 0; i < static_cast<int>(inputs.size()); ++i) {
    StatusOr<Node*> identity =
        AddIdentity(graph, StrCat(prefix, i < num_x ? "/x_" : "/dy_", i < num_x ? i : i - num_x),
                    inputs[i], replaced.device);
    if (!identity.ok()) return error(identity.status());
    for (Node* src : control_sources) graph->AddControlEdge(src, *identity);
    graph->AddControlEdge(*identity, *gate);
    identities.push_back(*identity);
  }
  if (inputs.empty()) {
    for (Node* src : control_sources) graph->AddControlEdge(src, *gate);
  }
  std::unordered_map<const Node*, Node*> copies;
  for (Node* n : built) {
    NodeDef def = n->def();
    def.inputs.clear();
    def.name = StrCat(prefix, "/", n->name());
    if (def.source_location.empty()) def.source_location = replaced.source_location;
    if (n->type_string() == "Enter") {
      // Frame names are the graph's: two gradients of one function (their
      // loops) must not meet in one frame.
      auto it = def.attrs.find("frame_name");
      if (it != def.attrs.end() && it->second.is_s()) {
        it->second = AttrValue(StrCat(prefix, "/", it->second.s()));
      }
    }
    StatusOr<Node*> added = graph->AddNode(std::move(def));
    if (!added.ok()) return error(added.status());
    std::vector<PartialShape> shapes;
    for (int k = 0; k < n->num_outputs(); ++k) shapes.push_back(n->output_shape(k));
    (*added)->set_output_shapes(std::move(shapes));
    copies[n] = *added;
  }
  auto in_graph = [&](const Node* n) -> Node* {
    auto a = arg_of.find(n);
    return a != arg_of.end() ? identities[a->second] : copies.at(n);
  };
  for (Node* n : built) {
    Node* copy = copies.at(n);
    for (const Edge* e : n->in_edges()) {
      if (e->IsControlEdge()) {
        graph->AddControlEdge(in_graph(e->src()), copy);
      } else {
        graph->AddEdge(in_graph(e->src()), e->src_output(), copy, e->dst_input());
      }
    }
  }
  // Nodes that read nothing (constants) run when the node would have, in
  // its frame and branch.
  for (Node* n : built) {
    Node* copy = copies.at(n);
    if (copy->in_edges().empty()) graph->AddControlEdge(*gate, copy);
  }
  for (TensorRef& g : grads) g = {in_graph(g.first), g.second};
  PlaceBodyAndFindSideEffects(graph, mark, replaced.device, /*stateful=*/false);
  StatusOr<Node*> replacement = AddReplacement(graph, replaced, grads, {});
  if (!replacement.ok()) return error(replacement.status());
  MoveConsumers(graph, replaced, *replacement, &grads);
  return Status::OK();
}

}  // namespace weir
