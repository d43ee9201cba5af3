#include "weir/runtime/constant_folding.h"

#include <algorithm>
#include <limits>
#include <new>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include "weir/base/cancellation.h"
#include "weir/base/checked_math.h"
#include "weir/base/str_util.h"
#include "weir/framework/attr_value.h"
#include "weir/framework/op_kernel.h"
#include "weir/graph/algorithm.h"
#include "weir/graph/op_kinds.h"

namespace weir {
namespace {

constexpr size_t kMaxChangeLines = 50;
// A round after the first runs only when a frontier node turned out too
// large or failed, exposing the nodes before it as the new frontier. Every
// round leaves a correct graph, so the bound only limits how much folds in
// pathological graphs (and keeps the compile near-linear).
constexpr int kMaxRounds = 16;

// The runtime's plumbing and the structure of loops, branches and groups:
// never folded and never removed.
bool IsStructural(std::string_view op) {
  return IsControlFlowOp(op) || IsRuntimeOp(op) || op == "NoOp";
}

bool IsShapeOp(std::string_view op) {
  return op == "Shape" || op == "Size" || op == "Rank" || op == "ShapeN";
}

bool HasResource(const Node& node) {
  // A variant has no TensorProto encoding, so it cannot become a Const.
  auto is_resource = [](DType t) { return t == DT_RESOURCE || t == DT_VARIANT; };
  return std::any_of(node.input_types().begin(), node.input_types().end(), is_resource) ||
         std::any_of(node.output_types().begin(), node.output_types().end(), is_resource);
}

// Bytes a Const holding `t` keeps alive.
int64_t ConstantBytes(const Tensor& t) {
  if (t.dtype() != DT_STRING) return static_cast<int64_t>(t.TotalBytes());
  int64_t bytes = 0;
  const std::string* s = t.data<std::string>();
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    bytes += static_cast<int64_t>(sizeof(std::string) + s[i].size());
  }
  return bytes;
}

// Output `port`'s bytes when its static shape gives them.
std::optional<int64_t> StaticOutputBytes(const Node& node, int port) {
  const PartialShape& shape = node.output_shape(port);
  const int64_t element = static_cast<int64_t>(DTypeSize(node.output_type(port)));
  if (element == 0 || !shape.IsFullyDefined()) return std::nullopt;
  StatusOr<int64_t> count = CheckedElementCount(shape.dim_sizes(), "output");
  if (!count.ok()) return std::numeric_limits<int64_t>::max();
  return MultiplyWithoutOverflow(*count, element).value_or(std::numeric_limits<int64_t>::max());
}

template <typename T>
Tensor DimsTensor(const std::vector<int64_t>& dims) {
  return Tensor::FromVector(std::vector<T>(dims.begin(), dims.end()));
}

// The outputs of a Shape, Size, Rank or ShapeN node from its inputs' static
// shapes, as the kernels would compute them; false unless every input shape
// is fully known and every value fits out_type.
bool StaticShapeValues(const Node& node, std::vector<Tensor>* values) {
  values->clear();
  std::vector<const PartialShape*> shapes(node.num_inputs(), nullptr);
  for (const Edge* e : node.in_edges()) {
    if (!e->IsControlEdge()) shapes[e->dst_input()] = &e->src()->output_shape(e->src_output());
  }
  for (const PartialShape* shape : shapes) {
    if (shape == nullptr || !shape->IsFullyDefined()) return false;
  }
  const std::string& op = node.type_string();
  const bool int32 = node.output_type(0) == DT_INT32;
  constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
  if (op == "Rank") {
    values->push_back(Tensor::Scalar<int32_t>(shapes[0]->rank()));
    return true;
  }
  if (op == "Size") {
    StatusOr<int64_t> count = CheckedElementCount(shapes[0]->dim_sizes(), "Size");
    if (!count.ok() || (int32 && *count > kInt32Max)) return false;
    values->push_back(int32 ? Tensor::Scalar<int32_t>(static_cast<int32_t>(*count))
                            : Tensor::Scalar<int64_t>(*count));
    return true;
  }
  for (const PartialShape* shape : shapes) {  // Shape, ShapeN
    const std::vector<int64_t>& dims = shape->dim_sizes();
    if (int32 && std::any_of(dims.begin(), dims.end(), [](int64_t d) { return d > kInt32Max; })) {
      return false;
    }
    values->push_back(int32 ? DimsTensor<int32_t>(dims) : DimsTensor<int64_t>(dims));
  }
  return true;
}

enum class Kind : uint8_t {
  kNone,     // computed at run time
  kConst,    // a Const that may be read as a constant
  kShape,    // a shape op whose value the static shapes give
  kCompute,  // computable now from constants
};

class Folder {
 public:
  Folder(Graph* graph, Device* cpu, const KernelRegistry& kernels,
         const ConstantFoldingOptions& options, std::vector<std::string>* changes)
      : graph_(graph), cpu_(cpu), kernels_(kernels), options_(options), changes_(changes) {
    step_.cancellation = &cancellation_;
  }

  StatusOr<int> Run();

 private:
  bool IsProtected(const Node& node) const {
    return options_.protected_nodes != nullptr && options_.protected_nodes->count(node.name());
  }
  Kind Classify(const Node& node);
  Status ClassifyAll();
  // Folding nodes read by a node that does not fold, by id.
  std::vector<int> Frontier() const;
  // Evaluates the nodes of `frontier` (kCompute) and every folding node they
  // read, in topological order, each kernel run once. A node whose kernel
  // fails fails alone (with what reads it): (*failures)[id] gets the error,
  // (*values)[id] the outputs of the others.
  void Evaluate(const std::vector<Node*>& frontier,
                std::unordered_map<int, std::vector<Tensor>>* values,
                std::unordered_map<int, Status>* failures);
  // Runs `node`'s CPU kernel on `inputs`.
  StatusOr<std::vector<Tensor>> RunKernel(const Node& node, std::vector<Tensor> inputs);
  // Replaces `node` by Consts of `values` (by port).
  Status Replace(Node* node, const std::vector<Tensor>& values);
  // Removes `node` if nothing reads it any more and it may go, then the
  // same for its inputs.
  void RemoveIfUnused(Node* node);
  bool Removable(const Node& node) const {
    return !IsProtected(node) && !node.is_stateful() && !IsStructural(node.type_string());
  }
  // Whether to describe the next change (counting it either way), so that
  // lines past the cap are never formatted.
  bool Noting() {
    if (changes_ == nullptr) return false;
    return lines_++ < kMaxChangeLines;
  }

  Graph* graph_;
  Device* cpu_;
  const KernelRegistry& kernels_;
  const ConstantFoldingOptions& options_;
  std::vector<std::string>* changes_;
  size_t lines_ = 0;
  int changed_ = 0;

  std::vector<int> position_;  // by node id: index in topological order
  std::vector<Kind> kind_;     // by node id
  std::vector<bool> excluded_;  // by node id: too large or failed to evaluate
  std::unordered_map<int, std::vector<Tensor>> shape_values_;  // kShape nodes
  std::vector<bool> visited_;   // scratch for Evaluate
  bool has_control_flow_ = false;
  CancellationManager cancellation_;
  StepContext step_;
};

Kind Folder::Classify(const Node& node) {
  if (node.id() < static_cast<int>(excluded_.size()) && excluded_[node.id()]) return Kind::kNone;
  if (IsProtected(node)) return Kind::kNone;
  const std::string& op = node.type_string();
  bool data_inputs_fold = true;
  for (const Edge* e : node.in_edges()) {
    // A loop back edge's source comes later in topological order and is
    // still kNone here, so nothing in a loop folds.
    const bool folds = kind_[e->src()->id()] != Kind::kNone;
    // A control input from a node that runs at run time orders this one
    // after it; folding would lose that.
    if (e->IsControlEdge() && !folds) return Kind::kNone;
    if (!e->IsControlEdge() && !folds) data_inputs_fold = false;
  }
  if (op == "Const") return data_inputs_fold ? Kind::kConst : Kind::kNone;
  if (node.is_stateful() || IsRandomOp(op) || IsStructural(op) || IsPlaceholderOp(op) ||
      HasResource(node) || node.num_outputs() == 0) {
    return Kind::kNone;
  }
  if (IsShapeOp(op)) {
    std::vector<Tensor> values;
    if (StaticShapeValues(node, &values)) {
      shape_values_[node.id()] = std::move(values);
      return Kind::kShape;
    }
  }
  if (!data_inputs_fold || !kernels_.HasKernel(kDeviceCpu, node.def())) return Kind::kNone;
  for (int port = 0; port < node.num_outputs(); ++port) {
    std::optional<int64_t> bytes = StaticOutputBytes(node, port);
    if (bytes && *bytes > options_.max_constant_bytes) return Kind::kNone;
  }
  return Kind::kCompute;
}

Status Folder::ClassifyAll() {
  WEIR_ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(*graph_));
  const size_t ids = graph_->num_node_ids();
  position_.assign(ids, -1);
  kind_.assign(ids, Kind::kNone);
  excluded_.resize(ids, false);
  shape_values_.clear();
  has_control_flow_ = std::any_of(order.begin(), order.end(), [](const Node* node) {
    return IsControlFlowOp(node->type_string());
  });
  for (size_t i = 0; i < order.size(); ++i) {
    position_[order[i]->id()] = static_cast<int>(i);
    kind_[order[i]->id()] = Classify(*order[i]);
  }
  return Status::OK();
}

std::vector<int> Folder::Frontier() const {
  std::vector<int> frontier;
  for (const Node* node : graph_->nodes()) {
    const Kind kind = kind_[node->id()];
    if (kind != Kind::kCompute && kind != Kind::kShape) continue;
    for (const Edge* e : node->out_edges()) {
      if (!e->IsControlEdge() && kind_[e->dst()->id()] == Kind::kNone) {
        frontier.push_back(node->id());
        break;
      }
    }
  }
  return frontier;
}

StatusOr<std::vector<Tensor>> Folder::RunKernel(const Node& node, std::vector<Tensor> inputs) {
  WEIR_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> kernel,
                        kernels_.CreateKernel(cpu_, node.def(), node.op_def()));
  if (kernel->AsAsync() != nullptr) {
    return errors::Unimplemented("constant folding runs synchronous kernels only");
  }
  std::vector<Tensor> outputs(node.num_outputs());
  OpKernelContext::Params params;
  params.device = cpu_;
  params.kernel = kernel.get();
  params.step = &step_;
  params.inputs = std::span<Tensor>(inputs);
  params.outputs = std::span<Tensor>(outputs);
  OpKernelContext context(&params);
  kernel->Compute(&context);
  WEIR_RETURN_IF_ERROR(context.status());
  if (context.outputs_dead()) return errors::Internal("the kernel produced dead outputs");
  for (int i = 0; i < node.num_outputs(); ++i) {
    if (!outputs[i].IsInitialized() || outputs[i].dtype() != node.output_type(i)) {
      return errors::Internal("the kernel did not produce output ", i, " as ",
                              DTypeName(node.output_type(i)));
    }
  }
  return outputs;
}

void Folder::Evaluate(const std::vector<Node*>& frontier,
                      std::unordered_map<int, std::vector<Tensor>>* values,
                      std::unordered_map<int, Status>* failures) {
  // The nodes to evaluate and every folding node they read, in topological
  // order; and how many evaluations still read each, so that intermediate
  // values are released as soon as they are no longer needed.
  std::vector<Node*> needed;
  std::vector<Node*> stack(frontier.begin(), frontier.end());
  visited_.assign(graph_->num_node_ids(), false);
  std::unordered_map<int, int> uses;
  for (Node* node : frontier) uses[node->id()] = 1;  // kept for the caller
  while (!stack.empty()) {
    Node* node = stack.back();
    stack.pop_back();
    if (visited_[node->id()]) continue;
    visited_[node->id()] = true;
    needed.push_back(node);
    if (kind_[node->id()] != Kind::kCompute) continue;
    for (const Edge* e : node->in_edges()) {
      if (e->IsControlEdge()) continue;
      ++uses[e->src()->id()];
      if (!visited_[e->src()->id()]) stack.push_back(e->src());
    }
  }
  std::sort(needed.begin(), needed.end(),
            [&](const Node* a, const Node* b) { return position_[a->id()] < position_[b->id()]; });

  for (Node* node : needed) {
    const int id = node->id();
    const Kind kind = kind_[id];
    if (kind == Kind::kConst) {
      (*values)[id] = {node->def().attrs.at("value").tensor()};
      continue;
    }
    if (kind == Kind::kShape) {
      (*values)[id] = shape_values_.at(id);
      continue;
    }
    std::vector<Tensor> inputs(node->num_inputs());
    Status failed;
    for (const Edge* e : node->in_edges()) {
      if (e->IsControlEdge()) continue;
      const int src = e->src()->id();
      if (auto f = failures->find(src); f != failures->end()) {
        failed = f->second;
      } else {
        inputs[e->dst_input()] = (*values)[src][e->src_output()];
      }
      if (--uses[src] == 0) values->erase(src);
    }
    if (!failed.ok()) {
      (*failures)[id] = failed;
      continue;
    }
    // The kernels and the standard containers may throw on exhaustion: a
    // constant too large to compute is left to the step, not a crash.
    StatusOr<std::vector<Tensor>> outputs = errors::Internal("not evaluated");
    try {
      outputs = RunKernel(*node, std::move(inputs));
    } catch (const std::bad_alloc&) {
      outputs = errors::ResourceExhausted("out of memory evaluating a constant");
    } catch (const std::length_error&) {
      outputs = errors::ResourceExhausted("a container grew past its maximum size");
    }
    if (outputs.ok()) {
      (*values)[id] = std::move(*outputs);
    } else {
      (*failures)[id] = Status(outputs.status().code(),
                               StrCat(node->Describe(), ": ", outputs.status().message()));
    }
  }
}

Status Folder::Replace(Node* node, const std::vector<Tensor>& values) {
  struct Consumer {
    Node* dst;
    int port;  // kControlSlot for a control edge
    int slot;
  };
  std::vector<Consumer> consumers;
  for (const Edge* e : node->out_edges())
    consumers.push_back({e->dst(), e->src_output(), e->dst_input()});
  std::vector<int> sources;
  for (const Edge* e : node->in_edges()) sources.push_back(e->src()->id());
  // A static Shape of a value computed at run time: in a graph with loops
  // or branches the Consts keep a control input from that value's producer,
  // so they stay in its frame and iteration (and dead with it).
  std::vector<Node*> run_time_sources;
  if (has_control_flow_) {
    for (const Edge* e : node->in_edges()) {
      if (!e->IsControlEdge() && kind_[e->src()->id()] == Kind::kNone) {
        run_time_sources.push_back(e->src());
      }
    }
  }
  const std::string name = node->name();
  const std::string description = changes_ != nullptr ? node->Describe() : std::string();
  const std::string requested = node->requested_device();
  const std::string assigned = node->assigned_device();
  const bool single = node->num_outputs() == 1;
  graph_->RemoveNode(node);

  std::vector<Node*> consts(values.size(), nullptr);
  Node* first = nullptr;
  const bool noting = Noting();
  std::vector<std::string> described;
  for (size_t port = 0; port < values.size(); ++port) {
    const Tensor& value = values[port];
    if (!value.IsInitialized()) continue;
    NodeDef def;
    def.name = single ? name : graph_->NewName(StrCat(name, "/output_", port));
    def.op = "Const";
    def.device = requested;
    def.attrs = {{"dtype", value.dtype()}, {"value", value}};
    StatusOr<Node*> added = graph_->AddNode(std::move(def));
    if (!added.ok()) {
      return errors::Internal("constant folding could not replace '", name,
                              "': ", added.status().message());
    }
    Node* c = *added;
    for (Node* source : run_time_sources) graph_->AddControlEdge(source, c);
    c->set_assigned_device(assigned);
    c->set_output_shapes({PartialShape(value.shape())});
    consts[port] = c;
    if (first == nullptr) first = c;
    if (noting) {
      described.push_back(
          StrCat("'", c->name(), "' ", DTypeName(value.dtype()), " ", value.shape().DebugString()));
    }
  }
  for (const Consumer& c : consumers) {
    if (c.port == Edge::kControlSlot) {
      if (first != nullptr) graph_->AddControlEdge(first, c.dst);
    } else {
      graph_->AddEdge(consts[c.port], 0, c.dst, c.slot);
    }
  }
  if (noting)
    changes_->push_back(StrCat("folded ", description, " into ", StrJoin(described, ", ")));
  ++changed_;
  for (int id : sources) {
    if (Node* source = graph_->FindNodeId(id)) RemoveIfUnused(source);
  }
  return Status::OK();
}

void Folder::RemoveIfUnused(Node* start) {
  std::vector<int> work = {start->id()};
  while (!work.empty()) {
    Node* node = graph_->FindNodeId(work.back());
    work.pop_back();
    if (node == nullptr || !node->out_edges().empty() || !Removable(*node)) continue;
    for (const Edge* e : node->in_edges()) work.push_back(e->src()->id());
    if (Noting()) {
      changes_->push_back(StrCat("removed ", node->Describe(), ": only folded nodes read it"));
    }
    graph_->RemoveNode(node);
    ++changed_;
  }
}

StatusOr<int> Folder::Run() {
  for (int round = 0; round < kMaxRounds; ++round) {
    WEIR_RETURN_IF_ERROR(ClassifyAll());
    const std::vector<int> frontier = Frontier();
    if (frontier.empty()) break;
    // Shape values are known; the rest is evaluated.
    std::vector<Node*> compute;
    for (int id : frontier) {
      if (kind_[id] == Kind::kCompute) compute.push_back(graph_->FindNodeId(id));
    }
    std::unordered_map<int, std::vector<Tensor>> values;
    std::unordered_map<int, Status> failures;
    if (!compute.empty()) Evaluate(compute, &values, &failures);
    bool excluded = false;
    for (int id : frontier) {
      Node* node = graph_->FindNodeId(id);
      if (node == nullptr) continue;  // removed: only a folded node read it
      if (auto failed = failures.find(id); failed != failures.end()) {
        if (Noting()) {
          changes_->push_back(
              StrCat("left ", node->Describe(), " unfolded: ", failed->second.message()));
        }
        excluded_[id] = true;
        excluded = true;
        continue;
      }
      std::vector<Tensor> result =
          kind_[id] == Kind::kShape ? shape_values_.at(id) : std::move(values.at(id));
      if (kind_[id] == Kind::kShape) {
        // Outputs nobody reads get no Const.
        std::vector<bool> consumed(result.size(), false);
        for (const Edge* e : node->out_edges()) {
          if (!e->IsControlEdge()) consumed[e->src_output()] = true;
        }
        for (size_t port = 0; port < result.size(); ++port) {
          if (!consumed[port]) result[port] = Tensor();
        }
      }
      int64_t bytes = 0;
      for (const Tensor& t : result) {
        if (t.IsInitialized()) bytes = std::max(bytes, ConstantBytes(t));
      }
      if (bytes > options_.max_constant_bytes) {
        if (Noting()) {
          changes_->push_back(StrCat("left ", node->Describe(), " unfolded: an output of ", bytes,
                                     " bytes is over max_constant_bytes (",
                                     options_.max_constant_bytes, ")"));
        }
        excluded_[id] = true;
        excluded = true;
        continue;
      }
      WEIR_RETURN_IF_ERROR(Replace(node, result));
    }
    if (!excluded) break;
  }
  if (changes_ != nullptr && lines_ > kMaxChangeLines) {
    changes_->push_back(StrCat("... and ", lines_ - kMaxChangeLines, " more changes"));
  }
  return changed_;
}

}  // namespace

StatusOr<int> FoldConstants(Graph* graph, Device* cpu, const KernelRegistry& kernels,
                            const ConstantFoldingOptions& options,
                            std::vector<std::string>* changes) {
  Folder folder(graph, cpu, kernels, options, changes);
  return folder.Run();
}

}  // namespace weir
