#include "weir/graph/ref_variables.h"

#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "weir/base/str_util.h"
#include "weir/framework/op_def.h"
#include "weir/graph/graph.h"
#include "weir/graph/subgraph.h"

namespace weir {
namespace {

enum class RefKind {
  kNone,         // not a reference op
  kVariable,     // VariableV2, Variable: makes a reference
  kUpdate,       // Assign, Apply*, Scatter*...: updates its reference input 0, outputs it
  kDirect,       // IsVariableInitialized, CountUpTo: reads the reference, outputs a value
  kCarrier,      // RefIdentity, RefEnter...: forwards references
  kUnsupported,  // a reference op with no resource form
};

struct RefOp {
  RefKind kind = RefKind::kNone;
  std::string target;  // the op it becomes; for kUnsupported, why not
};

bool IsScatterOp(std::string_view op) {
  static const std::unordered_set<std::string_view> kScatter = {
      "ScatterUpdate", "ScatterAdd",   "ScatterSub",   "ScatterMul",
      "ScatterDiv",    "ScatterMin",   "ScatterMax",   "ScatterNdUpdate",
      "ScatterNdAdd",  "ScatterNdSub", "ScatterNdMin", "ScatterNdMax"};
  return kScatter.count(op) != 0;
}

// What TensorFlow op `op` is to this pass. An op Weir declares itself is
// never a reference op (Weir has none).
RefOp Classify(const std::string& op) {
  static const std::unordered_map<std::string_view, RefOp>* const kOps =
      new std::unordered_map<std::string_view, RefOp>{
          {"VariableV2", {RefKind::kVariable, "VarHandleOp"}},
          {"Variable", {RefKind::kVariable, "VarHandleOp"}},
          {"Assign", {RefKind::kUpdate, "AssignVariableOp"}},
          {"AssignAdd", {RefKind::kUpdate, "AssignAddVariableOp"}},
          {"AssignSub", {RefKind::kUpdate, "AssignSubVariableOp"}},
          {"IsVariableInitialized", {RefKind::kDirect, "VarIsInitializedOp"}},
          {"CountUpTo", {RefKind::kDirect, "ResourceCountUpTo"}},
          {"RefIdentity", {RefKind::kCarrier, "Identity"}},
          {"RefEnter", {RefKind::kCarrier, "Enter"}},
          {"RefExit", {RefKind::kCarrier, "Exit"}},
          {"RefSwitch", {RefKind::kCarrier, "Switch"}},
          {"RefMerge", {RefKind::kCarrier, "Merge"}},
          {"RefNextIteration", {RefKind::kCarrier, "NextIteration"}},
          {"TemporaryVariable",
           {RefKind::kUnsupported, "Weir has no temporary variables (no resource form)"}},
          {"DestroyTemporaryVariable",
           {RefKind::kUnsupported, "Weir has no temporary variables (no resource form)"}},
          {"RefSelect", {RefKind::kUnsupported, "Weir has no Select of resource handles"}},
      };
  auto it = kOps->find(op);
  RefOp result;
  if (it != kOps->end()) {
    result = it->second;
  } else if (op.starts_with("Apply") || op.starts_with("SparseApply") || IsScatterOp(op)) {
    result = {RefKind::kUpdate, "Resource" + op};
  }
  if (result.kind != RefKind::kNone && OpRegistry::Global()->Find(op) != nullptr) return {};
  return result;
}

// The data inputs of a carrier that take references; the outputs that give
// them are the same for all but RefMerge (output 0 only) and RefSwitch (both).
bool IsCarrierRefInput(const std::string& op, int index) { return op == "RefMerge" || index == 0; }
bool IsCarrierRefOutput(const std::string& op, int port) {
  return op == "RefSwitch" ? port <= 1 : port == 0;
}

struct Reference {
  std::string handle;  // "node:port" of the DT_RESOURCE handle
  DType dtype = DT_INVALID;
  std::string after;  // a node the consumer must run after, or empty
};

class Rewriter {
 public:
  Rewriter(GraphDef* def, const Graph* existing) : def_(def), existing_(existing) {}

  Status Run();

 private:
  const NodeDef* Find(std::string_view name) const {
    auto it = index_.find(name);
    return it == index_.end() ? nullptr : &def_->nodes[it->second];
  }
  bool Taken(const std::string& name) const {
    return names_.count(name) != 0 || (existing_ != nullptr && existing_->FindNode(name));
  }
  // `base`, or `base_1`, `base_2`... whichever is free; reserves it.
  std::string UniqueName(const std::string& base) {
    std::string name = base;
    for (int i = 1; Taken(name); ++i) name = StrCat(base, "_", i);
    names_.insert(name);
    return name;
  }

  StatusOr<Reference> Resolve(const NodeDef& consumer, int index, const std::string& input);
  StatusOr<Reference> ResolveExisting(const NodeDef& consumer, int index, const std::string& input,
                                      const std::string& name);
  // `input` of a value consumer, read through a ReadVariableOp when it is
  // a carrier's reference output.
  StatusOr<std::string> ValueInput(const NodeDef& consumer, int index, const std::string& input);
  // A control input on a variable waits for its handle: the read that now
  // has the variable's name would fail while it is uninitialized, where
  // TensorFlow's VariableV2 runs regardless.
  std::string ControlInput(const std::string& input) const {
    const NodeDef* node = Find(std::string_view(input).substr(1));
    if (node == nullptr || Classify(node->op).kind != RefKind::kVariable) return input;
    return "^" + handles_.at(node->name);
  }
  // Sets `out`'s data inputs from `nd`'s, references resolved where
  // `is_ref(i)`; the controls of references through updates are appended
  // after `nd`'s own control inputs.
  template <typename IsRef>
  Status RewriteInputs(const NodeDef& nd, IsRef is_ref, NodeDef* out,
                       Reference* first_ref = nullptr);
  // `nd`'s attrs that `target` declares (T becomes dtype where the target
  // says dtype), and every internal ('_') attr.
  static AttrMap TargetAttrs(const NodeDef& nd, const OpDef& target);

  Status RewriteVariable(const NodeDef& nd);
  Status RewriteUpdate(const NodeDef& nd, const RefOp& ref);
  Status RewriteDirect(const NodeDef& nd, const RefOp& ref);
  Status RewriteCarrier(const NodeDef& nd, const RefOp& ref);
  Status RewriteOther(const NodeDef& nd);

  GraphDef* def_;
  const Graph* existing_;
  std::unordered_map<std::string_view, size_t> index_;  // into def_->nodes
  std::unordered_set<std::string> names_;
  std::unordered_map<std::string, std::string> handles_;   // variable -> its VarHandleOp
  std::unordered_map<std::string, std::string> reads_;     // carrier "node:port" -> its read
  std::unordered_map<std::string, Reference> resolved_;    // "node:port" -> handle and dtype
  std::vector<NodeDef> out_;
};

Status Rewriter::Run() {
  index_.reserve(def_->nodes.size());
  for (size_t i = 0; i < def_->nodes.size(); ++i) {
    index_.emplace(def_->nodes[i].name, i);
    names_.insert(def_->nodes[i].name);
  }
  // The handles' names first: consumers may come before their variable.
  for (const NodeDef& nd : def_->nodes) {
    if (Classify(nd.op).kind == RefKind::kVariable) {
      handles_[nd.name] = UniqueName(nd.name + "/_handle");
    }
  }
  out_.reserve(def_->nodes.size() + handles_.size());
  for (const NodeDef& nd : def_->nodes) {
    const RefOp ref = Classify(nd.op);
    switch (ref.kind) {
      case RefKind::kNone: WEIR_RETURN_IF_ERROR(RewriteOther(nd)); break;
      case RefKind::kVariable: WEIR_RETURN_IF_ERROR(RewriteVariable(nd)); break;
      case RefKind::kUpdate: WEIR_RETURN_IF_ERROR(RewriteUpdate(nd, ref)); break;
      case RefKind::kDirect: WEIR_RETURN_IF_ERROR(RewriteDirect(nd, ref)); break;
      case RefKind::kCarrier: WEIR_RETURN_IF_ERROR(RewriteCarrier(nd, ref)); break;
      case RefKind::kUnsupported:
        return errors::InvalidArgument("node ", nd.Describe(),
                                       " is a TensorFlow reference-variable op that Weir cannot "
                                       "run as a resource-variable op: ",
                                       ref.target);
    }
  }
  // `out_` holds new strings; the views in `index_` point into the old nodes.
  index_.clear();
  def_->nodes = std::move(out_);
  return Status::OK();
}

StatusOr<Reference> Rewriter::Resolve(const NodeDef& consumer, int index,
                                      const std::string& input) {
  WEIR_ASSIGN_OR_RETURN(TensorId id, ParseTensorName(input));
  auto not_a_reference = [&](const std::string& why) {
    return errors::InvalidArgument("input ", index, " ('", input, "') of node ",
                                   consumer.Describe(),
                                   " must be a TensorFlow reference (a variable, an update of one "
                                   "or a Ref* op forwarding one), but ",
                                   why);
  };
  if (id.port < 0) return not_a_reference("it is a control input");
  Reference ref;
  if (const NodeDef* first = Find(id.node)) {
    if (Classify(first->op).kind == RefKind::kUpdate) ref.after = first->name;
  } else if (existing_ != nullptr) {
    return ResolveExisting(consumer, index, input, id.node);
  }
  // Follows input 0 through updates and carriers to the variable (or a
  // reference resolved before): the handle is the first carrier's output
  // or the variable's handle, the dtype the variable's. Bounded: a longer
  // walk is a cycle. Each reference on the way is remembered, so a chain
  // of n updates costs O(n), not O(n^2).
  std::vector<std::pair<std::string, bool>> path;  // "node:port", and whether a carrier
  Reference source;
  bool found = false;
  for (size_t steps = 0; steps <= def_->nodes.size() && !found; ++steps) {
    std::string key = StrCat(id.node, ":", id.port);
    if (auto known = resolved_.find(key); known != resolved_.end()) {
      source = known->second;
      found = true;
      break;
    }
    const NodeDef* node = Find(id.node);
    if (node == nullptr) return not_a_reference(StrCat("no node is named '", id.node, "'"));
    switch (Classify(node->op).kind) {
      case RefKind::kVariable: {
        if (id.port != 0) return not_a_reference(StrCat(node->Describe(), " has one output"));
        auto dtype = node->attrs.find("dtype");
        if (dtype == node->attrs.end() || !dtype->second.is_type()) {
          return errors::InvalidArgument("variable ", node->Describe(),
                                         " has no dtype attr of type 'type'");
        }
        source.handle = handles_.at(node->name) + ":0";
        source.dtype = dtype->second.type();
        found = true;
        continue;
      }
      case RefKind::kUpdate:
        if (id.port != 0) return not_a_reference(StrCat(node->Describe(), " has one output"));
        path.emplace_back(std::move(key), false);
        break;
      case RefKind::kCarrier:
        if (!IsCarrierRefOutput(node->op, id.port)) {
          return not_a_reference(
              StrCat("output ", id.port, " of ", node->Describe(), " is not a reference"));
        }
        path.emplace_back(std::move(key), true);
        break;
      default: return not_a_reference(StrCat(node->Describe(), " gives a value"));
    }
    if (node->inputs.empty() || node->inputs[0].starts_with("^")) {
      return errors::InvalidArgument("node ", node->Describe(), " has no reference input");
    }
    WEIR_ASSIGN_OR_RETURN(id, ParseTensorName(node->inputs[0]));
  }
  if (!found) return not_a_reference("its references form a cycle that reaches no variable");
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    if (it->second) source.handle = it->first;
    resolved_.emplace(it->first, source);
  }
  ref.handle = std::move(source.handle);
  ref.dtype = source.dtype;
  return ref;
}

StatusOr<Reference> Rewriter::ResolveExisting(const NodeDef& consumer, int index,
                                              const std::string& input, const std::string& name) {
  // A variable (or update) imported before: its node is a ReadVariableOp
  // of the handle.
  const Node* read = existing_->FindNode(name);
  if (read == nullptr) {
    return errors::InvalidArgument("input ", index, " ('", input, "') of node ",
                                   consumer.Describe(),
                                   " must be a TensorFlow reference, but no "
                                   "node is named '",
                                   name, "'");
  }
  const Edge* edge = read->type_string() == "ReadVariableOp" ? read->input_edge(0) : nullptr;
  if (edge == nullptr || (input.find(':') != std::string::npos && !input.ends_with(":0"))) {
    return errors::InvalidArgument("input ", index, " ('", input, "') of node ",
                                   consumer.Describe(),
                                   " must be a TensorFlow reference, but the graph's node '", name,
                                   "' is not a variable imported from one");
  }
  Reference ref;
  ref.handle = StrCat(edge->src()->name(), ":", edge->src_output());
  ref.dtype = read->output_type(0);
  if (!read->control_inputs().empty()) ref.after = name;
  return ref;
}

StatusOr<std::string> Rewriter::ValueInput(const NodeDef& consumer, int index,
                                           const std::string& input) {
  StatusOr<TensorId> id = ParseTensorName(input);
  if (!id.ok()) return input;  // the import reports it, naming the node
  const NodeDef* node = Find(id->node);
  if (node == nullptr || Classify(node->op).kind != RefKind::kCarrier ||
      !IsCarrierRefOutput(node->op, id->port)) {
    return input;
  }
  const std::string key = StrCat(id->node, ":", id->port);
  auto it = reads_.find(key);
  if (it != reads_.end()) return it->second;
  WEIR_ASSIGN_OR_RETURN(Reference ref, Resolve(consumer, index, input));
  NodeDef read;
  read.name =
      UniqueName(id->port == 0 ? id->node + "/_read" : StrCat(id->node, "/_read_", id->port));
  read.op = "ReadVariableOp";
  read.inputs = {key};
  read.device = node->device;
  read.attrs["dtype"] = ref.dtype;
  read.source_location = node->source_location;
  reads_.emplace(key, read.name);
  out_.push_back(std::move(read));
  return out_.back().name;
}

template <typename IsRef>
Status Rewriter::RewriteInputs(const NodeDef& nd, IsRef is_ref, NodeDef* out,
                               Reference* first_ref) {
  std::vector<std::string> controls;
  int index = 0;
  for (const std::string& input : nd.inputs) {
    if (input.starts_with("^")) {
      controls.push_back(ControlInput(input));
      continue;
    }
    if (is_ref(index)) {
      WEIR_ASSIGN_OR_RETURN(Reference ref, Resolve(nd, index, input));
      out->inputs.push_back(ref.handle);
      if (!ref.after.empty()) controls.push_back("^" + ref.after);
      if (first_ref != nullptr && first_ref->handle.empty()) *first_ref = ref;
    } else {
      WEIR_ASSIGN_OR_RETURN(std::string value, ValueInput(nd, index, input));
      out->inputs.push_back(std::move(value));
    }
    ++index;
  }
  std::unordered_set<std::string> seen;
  for (std::string& control : controls) {
    if (seen.insert(control).second) out->inputs.push_back(std::move(control));
  }
  return Status::OK();
}

AttrMap Rewriter::TargetAttrs(const NodeDef& nd, const OpDef& target) {
  AttrMap attrs;
  for (const auto& [name, value] : nd.attrs) {
    if (name == "_output_shapes") continue;  // the replaced node's outputs
    if (name.starts_with("_") || target.FindAttr(name) != nullptr) {
      attrs.emplace(name, value);
    } else if (name == "T" && target.FindAttr("dtype") != nullptr) {
      attrs.emplace("dtype", value);
    }
  }
  return attrs;
}

// Internal attrs for the read that stands for a replaced node: its
// colocation, recorded output shapes and the like.
AttrMap InternalAttrs(const NodeDef& nd) {
  AttrMap attrs;
  for (const auto& [name, value] : nd.attrs) {
    if (name.starts_with("_")) attrs.emplace(name, value);
  }
  return attrs;
}

Status Rewriter::RewriteVariable(const NodeDef& nd) {
  NodeDef handle;
  handle.name = handles_.at(nd.name);
  handle.op = "VarHandleOp";
  handle.device = nd.device;
  handle.source_location = nd.source_location;
  auto copy = [&](const char* name) {
    auto it = nd.attrs.find(name);
    if (it != nd.attrs.end()) handle.attrs[name] = it->second;
  };
  copy("container");
  copy("dtype");
  copy("shape");
  copy("_class");
  auto shared = nd.attrs.find("shared_name");
  handle.attrs["shared_name"] =
      shared != nd.attrs.end() && shared->second.is_s() && !shared->second.s().empty()
          ? shared->second.s()
          : nd.name;
  if (!handle.attrs.count("shape")) handle.attrs["shape"] = PartialShape::UnknownRank();
  // A variable's control inputs (a control_dependencies block) order its
  // creation; they stay on the handle.
  for (const std::string& input : nd.inputs) {
    if (!input.starts_with("^")) {
      return errors::InvalidArgument("variable ", nd.Describe(), " has data input '", input,
                                     "'; a variable takes none");
    }
    handle.inputs.push_back(ControlInput(input));
  }
  NodeDef read;
  read.name = nd.name;
  read.op = "ReadVariableOp";
  read.inputs = {handle.name};
  read.device = nd.device;
  read.source_location = nd.source_location;
  read.attrs = InternalAttrs(nd);
  if (auto dtype = nd.attrs.find("dtype"); dtype != nd.attrs.end()) {
    read.attrs["dtype"] = dtype->second;
  }
  read.attrs[kFetchAtStepEndAttr] = AttrValue(true);
  out_.push_back(std::move(handle));
  out_.push_back(std::move(read));
  return Status::OK();
}

Status Rewriter::RewriteUpdate(const NodeDef& nd, const RefOp& ref) {
  const OpDef* target = OpRegistry::Global()->Find(ref.target);
  if (target == nullptr) {
    return errors::InvalidArgument("node ", nd.Describe(),
                                   " is a TensorFlow reference-variable op; Weir runs such ops as "
                                   "their resource-variable form, and Weir has no ",
                                   ref.target);
  }
  NodeDef update;
  update.name = UniqueName(nd.name + "/_update");
  update.op = ref.target;
  update.device = nd.device;
  update.source_location = nd.source_location;
  update.attrs = TargetAttrs(nd, *target);
  const std::vector<ArgDef>& args = target->inputs;
  auto is_ref = [&](int i) {
    return i < static_cast<int>(args.size()) && args[i].type == DT_RESOURCE;
  };
  Reference var;
  WEIR_RETURN_IF_ERROR(RewriteInputs(nd, is_ref, &update, &var));
  if (var.handle.empty() || !is_ref(0)) {
    return errors::InvalidArgument("node ", nd.Describe(), " has no reference input 0 (",
                                   ref.target, " takes the variable first)");
  }
  NodeDef read;
  read.name = nd.name;
  read.op = "ReadVariableOp";
  read.inputs = {var.handle, "^" + update.name};
  read.device = nd.device;
  read.source_location = nd.source_location;
  read.attrs = InternalAttrs(nd);
  read.attrs["dtype"] = var.dtype;
  read.attrs[kFetchAtStepEndAttr] = AttrValue(true);
  out_.push_back(std::move(update));
  out_.push_back(std::move(read));
  return Status::OK();
}

Status Rewriter::RewriteDirect(const NodeDef& nd, const RefOp& ref) {
  const OpDef* target = OpRegistry::Global()->Find(ref.target);
  if (target == nullptr) {
    return errors::InvalidArgument("node ", nd.Describe(), " needs Weir's ", ref.target,
                                   ", which is not registered");
  }
  NodeDef direct;
  direct.name = nd.name;
  direct.op = ref.target;
  direct.device = nd.device;
  direct.source_location = nd.source_location;
  direct.attrs = TargetAttrs(nd, *target);
  WEIR_RETURN_IF_ERROR(RewriteInputs(
      nd, [](int i) { return i == 0; }, &direct));
  out_.push_back(std::move(direct));
  return Status::OK();
}

Status Rewriter::RewriteCarrier(const NodeDef& nd, const RefOp& ref) {
  NodeDef carrier;
  carrier.name = nd.name;
  carrier.op = ref.target;
  carrier.device = nd.device;
  carrier.source_location = nd.source_location;
  carrier.attrs = nd.attrs;
  carrier.attrs.erase("_output_shapes");  // the values', not the handles'
  carrier.attrs["T"] = DT_RESOURCE;
  WEIR_RETURN_IF_ERROR(RewriteInputs(
      nd, [&](int i) { return IsCarrierRefInput(nd.op, i); }, &carrier));
  out_.push_back(std::move(carrier));
  return Status::OK();
}

Status Rewriter::RewriteOther(const NodeDef& nd) {
  NodeDef copy = nd;
  int index = 0;
  for (std::string& input : copy.inputs) {
    if (input.starts_with("^")) {
      input = ControlInput(input);
      continue;
    }
    WEIR_ASSIGN_OR_RETURN(input, ValueInput(nd, index++, input));
  }
  out_.push_back(std::move(copy));
  return Status::OK();
}

}  // namespace

bool HasRefVariableOps(const GraphDef& def) {
  for (const NodeDef& nd : def.nodes) {
    if (Classify(nd.op).kind != RefKind::kNone) return true;
  }
  return false;
}

Status RewriteRefVariables(GraphDef* def, const Graph* existing) {
  return Rewriter(def, existing).Run();
}

}  // namespace weir
