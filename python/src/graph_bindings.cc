// _C.Graph: the weir Graph the Python frontend builds into.
//
// Nodes are named by id (dense, creation order); an endpoint is a tuple
// (node_id, index). add_node does what the C++ builder's AddOp does (type
// attrs inferred from the inputs, defaults and validation by Graph::AddNode,
// shape inference now) but with Python's exact name and source location, and
// a failed add leaves the graph as it was (Graph::RollBackTo), so ids stay
// dense. Gradients, cond and while_loop run the C++ builders on a Scope over
// this graph; their nodes get the caller's source location.
//
// Deviations from the spec, all small:
// - cond's and while_loop's own nodes are named "<name>/..." exactly.
// - cond and while_loop take an optional `source_location` too.
// - node_outputs lists each output's consumers in consumer-id order.
// - set_output_shape(id, index, shape), beyond the spec: Tensor.set_shape.
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <memory>

#include "bindings.h"
#include "common.h"
#include "proto/graph.pb.h"
#include "weir/graph/graph_constructor.h"
#include "weir/graph/graph_def_io.h"
#include "weir/graph/scope.h"
#include "weir/ops/control_flow_builder.h"
#include "weir/train/gradients.h"
#include "weir/train/while_gradients.h"

namespace weir::python {
namespace {

using Endpoint = std::pair<int, int>;

class PyGraph {
 public:
  PyGraph() : root_(Scope::NewRootScope()), graph_(root_.graph()) {}

  Graph* graph() const { return graph_; }

  Node* NodeOrThrow(int id) const {
    Node* node = graph_->FindNodeId(id);
    if (node == nullptr) {
      ThrowInvalidArgument("no node with id " + std::to_string(id) + " (the graph has " +
                           std::to_string(graph_->num_node_ids()) + " node ids)");
    }
    return node;
  }

  Output OutputOf(nb::handle value, const std::string& what) const {
    if (!PyTuple_Check(value.ptr()) || PyTuple_GET_SIZE(value.ptr()) != 2) {
      ThrowInvalidArgument(what + " must be an endpoint (node_id, index), got " + PyTypeName(value));
    }
    Endpoint e = nb::cast<Endpoint>(value);
    Node* node = NodeOrThrow(e.first);
    if (e.second < 0 || e.second >= node->num_outputs()) {
      ThrowInvalidArgument(StrCat(what, ": node ", node->Describe(), " has ", node->num_outputs(),
                                  " outputs, there is no output ", e.second));
    }
    return Output(node, e.second);
  }

  int AddNode(const std::string& op_type, const std::string& name, nb::sequence inputs,
              nb::dict attrs, const std::vector<int>& control_inputs, const std::string& device,
              const std::vector<std::string>& colocate_with, const std::string& location) {
    const OpDef* op = Check(OpRegistry::Global()->LookUp(op_type));
    if (graph_->FindNode(name) != nullptr) {
      ThrowInvalidArgument("node name '" + name + "' (op " + op_type +
                           ") is already used in the graph");
    }
    const std::string what_node = "node '" + name + "' (" + op_type + ")";
    NodeDef def;
    def.name = name;
    def.op = op_type;
    def.device = device;
    def.source_location = location;
    for (auto [key, value] : attrs) {
      std::string attr_name = nb::cast<std::string>(key);
      const AttrDef* attr = op->FindAttr(attr_name);
      std::string what = what_node + ", attr '" + attr_name + "'";
      if (attr != nullptr) {
        def.attrs[attr_name] = AttrFromPython(value, attr->type, what);
      } else if (!attr_name.empty() && attr_name[0] == '_') {
        def.attrs[attr_name] = AttrFromPythonUntyped(value, what);
      } else {
        ThrowInvalidArgument(what_node + " has no attr '" + attr_name + "'");
      }
    }
    if (!colocate_with.empty()) {
      std::vector<std::string> classes;
      for (const std::string& c : colocate_with) classes.push_back("loc:@" + c);
      def.attrs["_class"] = classes;
    }

    // Inputs: one entry per input arg; type attrs from them.
    const size_t num_args = nb::len(inputs);
    if (num_args != op->inputs.size()) {
      ThrowInvalidArgument(StrCat(what_node, " takes ", op->inputs.size(), " input arguments but ",
                                  num_args, " were given"));
    }
    std::vector<Output> flat;
    for (size_t a = 0; a < num_args; ++a) {
      const ArgDef& arg = op->inputs[a];
      nb::object value = inputs[a];
      const std::string what = what_node + ", input '" + arg.name + "'";
      const bool list_arg = !arg.number_attr.empty() || !arg.type_list_attr.empty();
      std::vector<Output> values;
      if (list_arg) {
        if (!PyList_Check(value.ptr()) && !(PyTuple_Check(value.ptr()) &&
                                            (PyTuple_GET_SIZE(value.ptr()) == 0 ||
                                             PyTuple_Check(PyTuple_GET_ITEM(value.ptr(), 0))))) {
          ThrowInvalidArgument(what + " takes a list of endpoints, got " + PyTypeName(value));
        }
        for (nb::handle item : value) values.push_back(OutputOf(item, what));
      } else {
        values.push_back(OutputOf(value, what));
      }
      if (!arg.type_attr.empty() && !def.attrs.count(arg.type_attr) && !values.empty()) {
        def.attrs[arg.type_attr] = values[0].dtype();
      }
      if (!arg.number_attr.empty() && !def.attrs.count(arg.number_attr)) {
        def.attrs[arg.number_attr] = static_cast<int64_t>(values.size());
      }
      if (!arg.type_list_attr.empty() && !def.attrs.count(arg.type_list_attr)) {
        std::vector<DType> types;
        for (const Output& v : values) types.push_back(v.dtype());
        def.attrs[arg.type_list_attr] = types;
      }
      flat.insert(flat.end(), values.begin(), values.end());
    }
    std::vector<Node*> controls;
    controls.reserve(control_inputs.size());
    for (int id : control_inputs) controls.push_back(NodeOrThrow(id));

    const Graph::Mark mark = graph_->GetMark();
    StatusOr<Node*> added = graph_->AddNode(std::move(def));
    Check(added.status());
    Node* node = *added;
    auto fail = [&](const Status& status) {
      graph_->RollBackTo(mark);
      ThrowStatus(status);
    };
    if (static_cast<int>(flat.size()) != node->num_inputs()) {
      fail(errors::InvalidArgument("node ", node->Describe(), " got ", flat.size(),
                                   " inputs but expects ", node->num_inputs()));
    }
    for (int i = 0; i < node->num_inputs(); ++i) {
      if (flat[i].dtype() != node->input_type(i)) {
        fail(errors::InvalidArgument("input ", i, " of node ", node->Describe(), " expects ",
                                     node->input_type(i), " but '", flat[i].name(), "' is ",
                                     flat[i].dtype()));
      }
      graph_->AddEdge(flat[i].node(), flat[i].index(), node, i);
    }
    for (Node* c : controls) graph_->AddControlEdge(c, node);
    Status shapes = InferShapes(node);
    if (!shapes.ok()) fail(shapes);
    return node->id();
  }

  // Refines an output's inferred shape (Tensor.set_shape, as TF's
  // TF_GraphSetTensorShape): merged with what inference found (so passing
  // the already merged shape is the same), and an incompatible shape is an
  // InvalidArgument; shape functions of nodes added later see the result.
  void SetOutputShape(int id, int index, nb::handle shape) {
    Node* node = NodeOrThrow(id);
    if (index < 0 || index >= node->num_outputs()) {
      ThrowInvalidArgument(StrCat("node ", node->Describe(), " has no output ", index));
    }
    PartialShape given = ShapeFromPython(shape, "set_output_shape");
    StatusOr<PartialShape> merged = node->output_shape(index).Merge(given);
    if (!merged.ok()) {
      ThrowInvalidArgument(StrCat("output ", index, " of node ", node->Describe(), " has shape ",
                                  node->output_shape(index).DebugString(),
                                  ", not compatible with ", given.DebugString()));
    }
    std::vector<PartialShape> shapes;
    for (int i = 0; i < node->num_outputs(); ++i) shapes.push_back(node->output_shape(i));
    shapes[index] = *merged;
    node->set_output_shapes(std::move(shapes));
  }

  nb::list NodeInputs(int id) const {
    Node* node = NodeOrThrow(id);
    nb::list out;
    for (const Edge* e : node->data_inputs()) {
      if (e == nullptr) {
        out.append(nb::none());
      } else {
        out.append(nb::make_tuple(e->src()->id(), e->src_output()));
      }
    }
    return out;
  }

  std::vector<int> NodeControlInputs(int id) const {
    std::vector<int> out;
    for (const Edge* e : NodeOrThrow(id)->control_inputs()) out.push_back(e->src()->id());
    return out;
  }

  nb::list NodeOutputs(int id) const {
    Node* node = NodeOrThrow(id);
    std::vector<std::vector<Endpoint>> consumers(node->num_outputs());
    for (const Edge* e : node->out_edges()) {
      if (!e->IsControlEdge()) consumers[e->src_output()].push_back({e->dst()->id(), e->dst_input()});
    }
    nb::list out;
    for (auto& list : consumers) {
      std::sort(list.begin(), list.end());
      nb::list l;
      for (const Endpoint& e : list) l.append(nb::make_tuple(e.first, e.second));
      out.append(l);
    }
    return out;
  }

  nb::dict NodeAttrs(int id) const {
    nb::dict out;
    for (const auto& [name, value] : NodeOrThrow(id)->def().attrs) out[name.c_str()] = AttrToPython(value);
    return out;
  }

  nb::bytes NodeDefBytes(int id) const {
    NodeOrThrow(id);
    GraphDef def = graph_->ToGraphDef(id);
    def.nodes.resize(1);  // the node itself is the first from its id on
    wire::GraphDef proto;
    GraphDefToProto(def, &proto);
    std::string bytes = proto.node(0).SerializeAsString();
    return nb::bytes(bytes.data(), bytes.size());
  }

  nb::bytes ToGraphDefBytes(int start_id) const {
    GraphDef def = graph_->ToGraphDef(start_id);
    if (def.producer == 0) def.producer = kGraphDefVersion;
    std::string wire = SerializeGraphDef(def);
    return nb::bytes(wire.data(), wire.size());
  }

  // producer_op_list: None, or a binary OpList (TensorFlow's forward-
  // compatibility rule, ImportGraphDefOptions::producer_op_list).
  std::vector<int> ImportGraphDefBytes(nb::bytes data, const std::string& prefix,
                                       nb::dict input_map, const std::string& location,
                                       nb::object producer_op_list) {
    GraphDef def = Check(ParseGraphDef(std::string_view(data.c_str(), data.size())));
    ImportGraphDefOptions options;
    std::vector<OpDef> producer_ops;
    if (!producer_op_list.is_none()) {
      nb::bytes list = nb::cast<nb::bytes>(producer_op_list);
      producer_ops = Check(ParseOpList(std::string_view(list.c_str(), list.size())));
      options.producer_op_list = &producer_ops;
    }
    std::unordered_map<std::string, std::string> mapped;  // "name:idx" / "^name" -> input text
    for (auto [key, value] : input_map) {
      std::string k = nb::cast<std::string>(key);
      if (!k.empty() && k[0] == '^') {
        int id = PyTuple_Check(value.ptr()) ? nb::cast<Endpoint>(value).first : nb::cast<int>(value);
        mapped[k] = "^" + NodeOrThrow(id)->name();
        continue;
      }
      if (k.find(':') == std::string::npos) k += ":0";
      Output out = OutputOf(value, "input_map['" + k + "']");
      mapped[k] = out.node()->name() + ":" + std::to_string(out.index());
    }
    std::unordered_map<std::string, int> names;
    for (const NodeDef& nd : def.nodes) names.emplace(nd.name, 0);
    for (const auto& [key, unused] : mapped) {
      std::string node = key[0] == '^' ? key.substr(1) : key.substr(0, key.rfind(':'));
      if (!names.count(node)) {
        ThrowInvalidArgument("input_map key '" + key + "' names no node of the imported graph");
      }
    }
    auto renamed = [&](const std::string& name) { return prefix.empty() ? name : prefix + "/" + name; };
    for (NodeDef& nd : def.nodes) {
      nd.name = renamed(nd.name);
      if (nd.source_location.empty()) nd.source_location = location;
      for (std::string& input : nd.inputs) {
        StatusOr<TensorId> id = ParseTensorName(input);
        if (!id.ok()) continue;  // the import reports it, naming the node
        std::string key = id->port < 0 ? "^" + id->node : id->node + ":" + std::to_string(id->port);
        auto it = mapped.find(key);
        if (it != mapped.end()) {
          input = it->second;
        } else if (id->port < 0) {
          input = "^" + renamed(id->node);
        } else {
          input = renamed(id->node) + ":" + std::to_string(id->port);
        }
      }
      // Colocation with imported nodes follows their new names, as in TF.
      auto classes = nd.attrs.find("_class");
      if (!prefix.empty() && classes != nd.attrs.end() && classes->second.is_list()) {
        for (std::string& c : classes->second.mutable_list()->s) {
          if (c.starts_with("loc:@") && names.count(c.substr(5))) c = "loc:@" + renamed(c.substr(5));
        }
      }
    }
    const int first = graph_->num_node_ids();
    Check(ImportGraphDef(def, graph_, options));
    std::vector<int> ids;
    ids.reserve(graph_->num_node_ids() - first);
    for (int id = first; id < graph_->num_node_ids(); ++id) ids.push_back(id);
    return ids;
  }

  // Each x's gradient as (node id, index), None when unreachable, or, with
  // `keep_sparse`, a sparse one (gathered rows, TF's IndexedSlices) as the
  // three endpoints (values, indices, dense_shape).
  nb::list AddGradients(nb::sequence ys, nb::sequence xs, nb::sequence grad_ys,
                        const std::string& name_prefix, const std::string& location,
                        bool keep_sparse) {
    std::vector<Output> y, x, dy;
    for (nb::handle v : ys) y.push_back(OutputOf(v, "ys"));
    for (nb::handle v : xs) x.push_back(OutputOf(v, "xs"));
    const size_t num_grad_ys = nb::len(grad_ys);
    if (num_grad_ys != 0 && num_grad_ys != y.size()) {
      ThrowInvalidArgument(StrCat("gradients: ", y.size(), " ys but ", num_grad_ys, " grad_ys"));
    }
    const int first = graph_->num_node_ids();
    root_.ClearStatus();
    Scope scope = root_.NewSubScope(name_prefix);
    bool any_grad_y = false;
    for (nb::handle v : grad_ys) any_grad_y |= !v.is_none();
    if (any_grad_y) {
      for (size_t i = 0; i < num_grad_ys; ++i) {
        nb::object v = grad_ys[i];
        dy.push_back(v.is_none() ? AddOp(scope.WithOpName("OnesLike"), "OnesLike", {y[i]}).output(0)
                                 : OutputOf(v, "grad_ys"));
      }
    }
    SymbolicGradientsOptions options;
    options.unreachable_is_invalid = true;
    // Calls and functional control flow on the path are expanded in place:
    // their nodes get new ids (the Python side rebinds its Operations).
    std::vector<std::pair<std::string, int>> expanded;
    options.expanded_nodes = &expanded;
    std::vector<Gradient> grads;
    Status status = AddSymbolicGradients(scope, y, x, dy, options, &grads);
    std::vector<Output> dense;
    if (status.ok()) {
      for (const Gradient& g : grads) {
        dense.push_back(g.valid() && !(keep_sparse && g.is_sparse) ? Densify(scope, g) : Output());
      }
      status = scope.status();
    }
    root_.ClearStatus();
    SetLocations(first, location);
    for (const auto& [name, old_id] : expanded) {
      if (Node* node = graph_->FindNode(name)) rewritten_.push_back({name, old_id, node->id()});
    }
    Check(status);
    nb::list out;
    auto endpoint = [](const Output& o) { return nb::make_tuple(o.node()->id(), o.index()); };
    for (size_t i = 0; i < dense.size(); ++i) {
      const Output& g = dense[i];
      if (g.valid()) {
        out.append(endpoint(g));
      } else if (grads[i].valid() && grads[i].is_sparse) {
        const IndexedSlices& s = grads[i].sparse;
        out.append(
            nb::make_tuple(endpoint(s.values), endpoint(s.indices), endpoint(s.dense_shape)));
      } else {
        out.append(nb::none());
      }
    }
    return out;
  }

  nb::list Cond(nb::handle pred, nb::callable then_fn, nb::callable else_fn,
                const std::string& name, const std::string& location) {
    Output p = OutputOf(pred, "cond: pred");
    const int first = graph_->num_node_ids();
    std::unique_ptr<nb::python_error> raised;
    auto branch = [&](nb::callable fn, const char* which) {
      return [this, fn, which, &raised](const Scope&, std::vector<Output>* out) -> Status {
        return CallPython(raised, [&] {
          nb::object result = fn();
          for (nb::handle v : result) out->push_back(OutputOf(v, std::string("cond: ") + which));
        });
      };
    };
    root_.ClearStatus();
    std::vector<Output> outputs;
    Status status = ops::Cond(root_, p, branch(then_fn, "then_fn's result"),
                              branch(else_fn, "else_fn's result"), &outputs, name);
    return Finish(status, raised, outputs, first, location);
  }

  nb::list WhileLoop(nb::callable cond_fn, nb::callable body_fn, nb::sequence loop_vars,
                     int parallel_iterations, nb::object maximum_iterations,
                     nb::object shape_invariants, const std::string& name,
                     const std::string& location) {
    std::vector<Output> vars;
    for (nb::handle v : loop_vars) vars.push_back(OutputOf(v, "while_loop: loop_vars"));
    ops::WhileLoopOptions options;
    options.parallel_iterations = parallel_iterations;
    options.name = name;
    if (!maximum_iterations.is_none()) {
      options.maximum_iterations = OutputOf(maximum_iterations, "while_loop: maximum_iterations");
    }
    if (!shape_invariants.is_none()) {
      for (nb::handle s : shape_invariants) {
        options.shape_invariants.push_back(ShapeFromPython(s, "while_loop: shape_invariants"));
      }
    }
    const int first = graph_->num_node_ids();
    std::unique_ptr<nb::python_error> raised;
    auto endpoints = [](const std::vector<Output>& outs) {
      nb::list l;
      for (const Output& o : outs) l.append(nb::make_tuple(o.node()->id(), o.index()));
      return l;
    };
    ops::LoopCondFn cond = [&](const Scope&, const std::vector<Output>& v, Output* pred) {
      return CallPython(raised, [&] { *pred = OutputOf(cond_fn(endpoints(v)), "while_loop: cond_fn's result"); });
    };
    ops::LoopBodyFn body = [&](const Scope&, const std::vector<Output>& v, std::vector<Output>* next) {
      return CallPython(raised, [&] {
        nb::object result = body_fn(endpoints(v));
        for (nb::handle r : result) next->push_back(OutputOf(r, "while_loop: body_fn's result"));
      });
    };
    root_.ClearStatus();
    std::vector<Output> outputs;
    Status status = ops::WhileLoop(root_, vars, cond, body, &outputs, options);
    return Finish(status, raised, outputs, first, location);
  }

 private:
  // Runs Python code inside a C++ builder's callback: a Python exception is
  // kept (to be raised unchanged once the builder returns) and reported to
  // the builder as an error.
  template <typename Fn>
  static Status CallPython(std::unique_ptr<nb::python_error>& raised, Fn&& fn) {
    if (raised) return errors::Aborted("an earlier Python callback raised");
    try {
      fn();
    } catch (nb::python_error& e) {
      raised = std::make_unique<nb::python_error>(std::move(e));
      return errors::Aborted("a Python callback raised");
    }
    return Status::OK();
  }

  nb::list Finish(Status status, std::unique_ptr<nb::python_error>& raised,
                  const std::vector<Output>& outputs, int first, const std::string& location) {
    root_.ClearStatus();
    SetLocations(first, location);
    if (raised) throw std::move(*raised);
    Check(status);
    nb::list out;
    for (const Output& o : outputs) out.append(nb::make_tuple(o.node()->id(), o.index()));
    return out;
  }

  // The builders' own nodes carry a C++ file:line; the user's is better.
  void SetLocations(int first, const std::string& location) {
    if (location.empty()) return;
    for (int id = first; id < graph_->num_node_ids(); ++id) {
      Node* node = graph_->FindNodeId(id);
      if (node == nullptr) continue;
      const std::string& current = node->def().source_location;
      if (current.empty() || current.find(".cc:") != std::string::npos) {
        node->set_source_location(location);
      }
    }
  }

  Scope root_;
  Graph* graph_;

 public:
  // Every node add_gradients expanded in place, in order: its name, its
  // former id and the id of the node that now has the name.
  struct Rewrite {
    std::string name;
    int old_id;
    int new_id;
  };
  std::vector<Rewrite> rewritten_;
};

}  // namespace

Graph* GraphOf(nb::handle py_graph) { return nb::cast<PyGraph*>(py_graph)->graph(); }

void DefineGraph(nb::module_& m) {
  nb::class_<PyGraph>(m, "Graph", "The C++ graph a weir.Graph builds into.")
      .def(nb::init<>())
      .def("add_node", &PyGraph::AddNode, nb::arg("op"), nb::arg("name"), nb::arg("inputs"),
           nb::arg("attrs"), nb::arg("control_inputs") = std::vector<int>(), nb::arg("device") = "",
           nb::arg("colocate_with") = std::vector<std::string>(), nb::arg("source_location") = "")
      .def("num_node_ids", [](const PyGraph& g) { return g.graph()->num_node_ids(); })
      .def("node_exists",
           [](const PyGraph& g, int id) { return g.graph()->FindNodeId(id) != nullptr; })
      .def("num_rewritten", [](const PyGraph& g) { return g.rewritten_.size(); })
      .def(
          "rewritten_nodes",
          [](const PyGraph& g, size_t start) {
            nb::list out;
            for (size_t i = start; i < g.rewritten_.size(); ++i) {
              const auto& r = g.rewritten_[i];
              out.append(nb::make_tuple(r.name, r.old_id, r.new_id));
            }
            return out;
          },
          nb::arg("start") = 0)
      .def(
          "find_node",
          [](const PyGraph& g, const std::string& name) {
            Node* node = g.graph()->FindNode(name);
            return node ? node->id() : -1;
          },
          nb::arg("name"))
      .def("node_name", [](const PyGraph& g, int id) { return g.NodeOrThrow(id)->name(); })
      .def("node_op", [](const PyGraph& g, int id) { return g.NodeOrThrow(id)->type_string(); })
      .def("node_device",
           [](const PyGraph& g, int id) { return g.NodeOrThrow(id)->requested_device(); })
      .def("node_inputs", &PyGraph::NodeInputs)
      .def("node_control_inputs", &PyGraph::NodeControlInputs)
      .def("node_outputs", &PyGraph::NodeOutputs)
      .def("num_outputs", [](const PyGraph& g, int id) { return g.NodeOrThrow(id)->num_outputs(); })
      .def("output_dtype",
           [](const PyGraph& g, int id, int i) {
             Node* node = g.NodeOrThrow(id);
             if (i < 0 || i >= node->num_outputs())
               ThrowInvalidArgument(StrCat("node ", node->Describe(), " has no output ", i));
             return static_cast<int>(node->output_type(i));
           })
      .def("input_dtype",
           [](const PyGraph& g, int id, int i) {
             Node* node = g.NodeOrThrow(id);
             if (i < 0 || i >= node->num_inputs())
               ThrowInvalidArgument(StrCat("node ", node->Describe(), " has no input ", i));
             return static_cast<int>(node->input_type(i));
           })
      .def("output_shape",
           [](const PyGraph& g, int id, int i) {
             Node* node = g.NodeOrThrow(id);
             if (i < 0 || i >= node->num_outputs())
               ThrowInvalidArgument(StrCat("node ", node->Describe(), " has no output ", i));
             return ShapeToPython(node->output_shape(i));
           })
      .def("set_output_shape", &PyGraph::SetOutputShape, nb::arg("id"), nb::arg("index"),
           nb::arg("shape"))
      .def("node_attrs", &PyGraph::NodeAttrs)
      .def("node_source_location",
           [](const PyGraph& g, int id) { return g.NodeOrThrow(id)->def().source_location; })
      .def("node_def", &PyGraph::NodeDefBytes)
      .def("to_graph_def", &PyGraph::ToGraphDefBytes, nb::arg("start_id") = 0)
      .def("import_graph_def", &PyGraph::ImportGraphDefBytes, nb::arg("data"),
           nb::arg("prefix") = "", nb::arg("input_map") = nb::dict(),
           nb::arg("source_location") = "", nb::arg("producer_op_list") = nb::none())
      .def("add_gradients", &PyGraph::AddGradients, nb::arg("ys"), nb::arg("xs"),
           nb::arg("grad_ys") = nb::list(), nb::arg("name_prefix") = "gradients",
           nb::arg("source_location") = "", nb::arg("keep_sparse") = false)
      .def("cond", &PyGraph::Cond, nb::arg("pred"), nb::arg("then_fn"), nb::arg("else_fn"),
           nb::arg("name") = "cond", nb::arg("source_location") = "")
      .def("while_loop", &PyGraph::WhileLoop, nb::arg("cond_fn"), nb::arg("body_fn"),
           nb::arg("loop_vars"), nb::arg("parallel_iterations") = 10,
           nb::arg("maximum_iterations") = nb::none(), nb::arg("shape_invariants") = nb::none(),
           nb::arg("name") = "while", nb::arg("source_location") = "");
}

}  // namespace weir::python
