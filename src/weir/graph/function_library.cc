#include "weir/graph/function_library.h"

#include <set>
#include <unordered_map>

#include "weir/framework/node_def_util.h"

namespace weir {
namespace {

bool IsDigits(std::string_view s) {
  if (s.empty() || s.size() > 18) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

int64_t ToInt(std::string_view digits) {
  int64_t n = 0;
  for (char c : digits) n = n * 10 + (c - '0');
  return n;
}

const char* const kAttrKinds[] = {"string", "int", "float", "bool", "type", "shape",
                                  "tensor", "func"};

bool IsAttrKind(const std::string& type) {
  std::string base = type;
  if (StartsWith(type, "list(") && EndsWith(type, ")")) base = type.substr(5, type.size() - 6);
  for (const char* kind : kAttrKinds) {
    if (base == kind) return true;
  }
  return false;
}

Status CheckSignature(const OpDef& sig) {
  auto fail = [&](auto&&... parts) {
    return errors::InvalidArgument("function '", sig.name, "': ", parts...);
  };
  std::set<std::string> attrs;
  for (const AttrDef& attr : sig.attrs) {
    if (attr.name.empty()) return fail("an attr has no name");
    if (!attrs.insert(attr.name).second) return fail("attr '", attr.name, "' is declared twice");
    if (!IsAttrKind(attr.type)) {
      return fail("attr '", attr.name, "' has unknown type '", attr.type, "'");
    }
  }
  auto check_args = [&](const std::vector<ArgDef>& args, const char* what) -> Status {
    std::set<std::string> names;
    for (const ArgDef& arg : args) {
      if (arg.name.empty()) return fail("an ", what, " has no name");
      if (!names.insert(arg.name).second) return fail(what, " '", arg.name, "' appears twice");
      int typings = (arg.type != DT_INVALID) + !arg.type_attr.empty() + !arg.type_list_attr.empty();
      if (typings != 1) {
        return fail(what, " '", arg.name,
                    "' must have exactly one of a dtype, a type attr and a type-list attr");
      }
      auto attr_of_kind = [&](const std::string& name, const char* kind, const char* role) {
        const AttrDef* attr = sig.FindAttr(name);
        if (attr == nullptr) {
          return fail(what, " '", arg.name, "' has ", role, " '", name,
                      "', which is not an attr of the function");
        }
        if (attr->type != kind) {
          return fail(what, " '", arg.name, "' has ", role, " '", name, "' of type ", attr->type,
                      ", not ", kind);
        }
        return Status::OK();
      };
      if (!arg.type_attr.empty()) {
        WEIR_RETURN_IF_ERROR(attr_of_kind(arg.type_attr, "type", "type attr"));
      }
      if (!arg.type_list_attr.empty()) {
        WEIR_RETURN_IF_ERROR(attr_of_kind(arg.type_list_attr, "list(type)", "type-list attr"));
        if (!arg.number_attr.empty()) {
          return fail(what, " '", arg.name, "' has both a type list and a number attr");
        }
      }
      if (!arg.number_attr.empty()) {
        WEIR_RETURN_IF_ERROR(attr_of_kind(arg.number_attr, "int", "number attr"));
      }
    }
    return Status::OK();
  };
  WEIR_RETURN_IF_ERROR(check_args(sig.inputs, "input"));
  WEIR_RETURN_IF_ERROR(check_args(sig.outputs, "output"));
  return Status::OK();
}

// The body as the validator sees it: each node's op and its output args'
// sizes.
struct BodyNode {
  const NodeDef* def = nullptr;
  const OpDef* op = nullptr;
  std::vector<int64_t> output_sizes;  // by output arg; -1 unknown
};

// Checks one tensor reference of the body; `what` says where it is used.
Status CheckDataRef(const FunctionDef& def, const std::unordered_map<std::string, BodyNode>& body,
                    const std::set<std::string>& args, const FunctionInput& ref,
                    std::string_view text, const std::string& what) {
  auto fail = [&](auto&&... parts) {
    return errors::InvalidArgument("function '", def.signature.name, "': ", what, " '", text,
                                   "' ", parts...);
  };
  if (ref.output.empty()) {
    if (args.count(ref.node)) return Status::OK();
    if (body.count(ref.node)) {
      return fail("names body node '", ref.node,
                  "' without an output; use 'node:output_arg:index'");
    }
    return fail("names no argument of the function");
  }
  auto it = body.find(ref.node);
  if (it == body.end()) return fail("names no body node '", ref.node, "'");
  if (it->second.op == nullptr) return Status::OK();  // unknown op: checked when instantiated
  const OpDef& op = *it->second.op;
  for (size_t k = 0; k < op.outputs.size(); ++k) {
    if (op.outputs[k].name != ref.output) continue;
    int64_t size = it->second.output_sizes[k];
    if (ref.index >= 0 && size >= 0 && ref.index >= size) {
      return fail("asks for element ", ref.index, " of output '", ref.output, "' of ",
                  it->second.def->Describe(), ", which has ", size);
    }
    return Status::OK();
  }
  std::vector<std::string> names;
  for (const ArgDef& arg : op.outputs) names.push_back(arg.name);
  return fail("names output '", ref.output, "' but op ", op.name, " of body node '", ref.node,
              "' has outputs {", StrJoin(names, ", "), "}");
}

bool ArgDefsEqual(const std::vector<ArgDef>& a, const std::vector<ArgDef>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].type != b[i].type || a[i].type_attr != b[i].type_attr ||
        a[i].type_list_attr != b[i].type_list_attr || a[i].number_attr != b[i].number_attr) {
      return false;
    }
  }
  return true;
}

bool AttrDefsEqual(const std::vector<AttrDef>& a, const std::vector<AttrDef>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].type != b[i].type || a[i].has_default != b[i].has_default ||
        !(a[i].default_value == b[i].default_value) || a[i].allowed_types != b[i].allowed_types ||
        a[i].allowed_strings != b[i].allowed_strings || a[i].has_minimum != b[i].has_minimum ||
        a[i].minimum != b[i].minimum) {
      return false;
    }
  }
  return true;
}

bool NodeDefsEqual(const NodeDef& a, const NodeDef& b) {
  return a.name == b.name && a.op == b.op && a.inputs == b.inputs && a.device == b.device &&
         a.attrs == b.attrs && a.source_location == b.source_location;
}

}  // namespace

StatusOr<FunctionInput> ParseFunctionInput(std::string_view text) {
  FunctionInput in;
  std::string_view rest = text;
  if (!rest.empty() && rest[0] == '^') {
    in.control = true;
    rest.remove_prefix(1);
  }
  auto bad = [&]() {
    return errors::InvalidArgument("input '", text,
                                   "' is not 'arg', 'node:output', 'node:output:index' or "
                                   "'^node'");
  };
  if (rest.empty()) return bad();
  size_t first = rest.find(':');
  if (first == std::string_view::npos) {
    in.node = std::string(rest);
    return in;
  }
  if (in.control || first == 0) return bad();
  in.node = std::string(rest.substr(0, first));
  std::string_view tail = rest.substr(first + 1);
  size_t second = tail.find(':');
  if (second == std::string_view::npos) {
    if (tail.empty()) return bad();
    // "arg:3" indexes an argument; "node:output" is a whole output arg.
    if (IsDigits(tail)) {
      in.index = ToInt(tail);
    } else {
      in.output = std::string(tail);
    }
    return in;
  }
  std::string_view index = tail.substr(second + 1);
  in.output = std::string(tail.substr(0, second));
  if (in.output.empty() || !IsDigits(index)) return bad();
  in.index = ToInt(index);
  return in;
}

std::vector<int64_t> ArgSizes(const std::vector<ArgDef>& args, const AttrMap& attrs) {
  std::vector<int64_t> sizes;
  sizes.reserve(args.size());
  for (const ArgDef& arg : args) {
    StatusOr<int64_t> count = ArgCount(arg, attrs);
    sizes.push_back(count.ok() ? *count : -1);
  }
  return sizes;
}

Status ValidateFunction(const FunctionDef& def, const OpLookup& lookup) {
  const std::string& name = def.signature.name;
  if (name.empty()) return errors::InvalidArgument("a function of the library has no name");
  WEIR_RETURN_IF_ERROR(CheckSignature(def.signature));
  std::set<std::string> args;
  for (const ArgDef& arg : def.signature.inputs) args.insert(arg.name);

  std::unordered_map<std::string, BodyNode> body;
  body.reserve(def.node_def.size());
  for (const NodeDef& node : def.node_def) {
    auto fail = [&](auto&&... parts) {
      return errors::InvalidArgument("function '", name, "': body node ", node.Describe(), ": ",
                                     parts...);
    };
    if (node.name.empty()) {
      return errors::InvalidArgument("function '", name, "': a body node of op ", node.op,
                                     " has no name");
    }
    if (args.count(node.name)) return fail("its name is also the name of an argument");
    if (node.op.empty()) return fail("it has no op");
    if (node.op[0] == '_') {
      // As in a user's graph: a body _Retval or _Recv could write another
      // fetch's result or wait forever.
      return fail("it uses op ", node.op, ", which is internal to Weir's runtime: ops whose "
                  "names start with '_' may not appear in a function body");
    }
    // An unknown op is reported when the function is instantiated: a
    // library often carries functions no step calls (savers, gradients).
    const OpDef* op = lookup(node.op);
    BodyNode entry;
    entry.def = &node;
    entry.op = op;
    if (op != nullptr) {
      NodeDef with_defaults;
      with_defaults.attrs = node.attrs;
      AddDefaultAttrs(*op, &with_defaults);
      entry.output_sizes = ArgSizes(op->outputs, with_defaults.attrs);
    }
    if (!body.emplace(node.name, std::move(entry)).second) {
      return fail("its name is used by another body node");
    }
  }
  for (const NodeDef& node : def.node_def) {
    const std::string what = StrCat("body node ", node.Describe(), " input");
    bool seen_control = false;
    for (const std::string& text : node.inputs) {
      StatusOr<FunctionInput> ref = ParseFunctionInput(text);
      if (!ref.ok()) {
        return errors::InvalidArgument("function '", name, "': body node ", node.Describe(),
                                       ": ", ref.status().message());
      }
      if (ref->control) {
        seen_control = true;
        if (!body.count(ref->node) && !args.count(ref->node)) {
          return errors::InvalidArgument("function '", name, "': ", what, " '", text,
                                         "' names no body node or argument");
        }
        continue;
      }
      if (seen_control) {
        return errors::InvalidArgument("function '", name, "': ", what, " '", text,
                                       "' comes after a control input");
      }
      WEIR_RETURN_IF_ERROR(CheckDataRef(def, body, args, *ref, text, what));
    }
  }
  std::set<std::string> outputs;
  for (const ArgDef& arg : def.signature.outputs) {
    outputs.insert(arg.name);
    auto it = def.ret.find(arg.name);
    if (it == def.ret.end()) {
      return errors::InvalidArgument("function '", name, "': output '", arg.name,
                                     "' has no ret entry saying which tensor it returns");
    }
    StatusOr<FunctionInput> ref = ParseFunctionInput(it->second);
    if (!ref.ok() || ref->control) {
      return errors::InvalidArgument("function '", name, "': ret of output '", arg.name,
                                     "' is '", it->second, "', not 'arg' or 'node:output:index'");
    }
    WEIR_RETURN_IF_ERROR(
        CheckDataRef(def, body, args, *ref, it->second, StrCat("ret of output '", arg.name, "'")));
  }
  for (const auto& [output, value] : def.ret) {
    if (!outputs.count(output)) {
      return errors::InvalidArgument("function '", name, "': ret names '", output,
                                     "', which is not an output of the function");
    }
  }
  for (const auto& [output, node] : def.control_ret) {
    if (!body.count(node)) {
      return errors::InvalidArgument("function '", name, "': control output '", output,
                                     "' names '", node, "', which is not a body node");
    }
  }
  return Status::OK();
}

bool FunctionDefsEqual(const FunctionDef& a, const FunctionDef& b) {
  const OpDef& x = a.signature;
  const OpDef& y = b.signature;
  if (x.name != y.name || x.is_stateful != y.is_stateful || !ArgDefsEqual(x.inputs, y.inputs) ||
      !ArgDefsEqual(x.outputs, y.outputs) || !AttrDefsEqual(x.attrs, y.attrs)) {
    return false;
  }
  if (a.attr != b.attr || a.arg_attr != b.arg_attr ||
      a.resource_arg_unique_id != b.resource_arg_unique_id || a.ret != b.ret ||
      a.control_ret != b.control_ret || a.node_def.size() != b.node_def.size()) {
    return false;
  }
  for (size_t i = 0; i < a.node_def.size(); ++i) {
    if (!NodeDefsEqual(a.node_def[i], b.node_def[i])) return false;
  }
  return true;
}

Status FunctionLibrary::AddFunction(FunctionDef def) {
  FunctionDefLibrary library;
  library.functions.push_back(std::move(def));
  return AddLibrary(library);
}

Status FunctionLibrary::AddLibrary(const FunctionDefLibrary& library) {
  // The functions that are new, by name; all are checked before any is
  // added.
  std::map<std::string, const FunctionDef*, std::less<>> added;
  for (const FunctionDef& def : library.functions) {
    const std::string& name = def.signature.name;
    if (OpRegistry::Global()->Find(name) != nullptr) {
      return errors::InvalidArgument("function '", name,
                                     "' has the name of a registered op; rename the function");
    }
    const FunctionDef* existing = Find(name);
    if (existing == nullptr) {
      auto [it, inserted] = added.emplace(name, &def);
      if (!inserted && !FunctionDefsEqual(*it->second, def)) {
        return errors::AlreadyExists("the library defines function '", name,
                                     "' twice, differently");
      }
    } else if (!FunctionDefsEqual(*existing, def)) {
      return errors::AlreadyExists("the graph already has a different function named '", name,
                                   "'");
    }
  }
  OpLookup lookup = [&](const std::string& op) -> const OpDef* {
    if (const OpDef* registered = OpRegistry::Global()->Find(op)) return registered;
    if (const FunctionDef* f = Find(op)) return &f->signature;
    auto it = added.find(op);
    return it == added.end() ? nullptr : &it->second->signature;
  };
  for (const auto& [name, def] : added) WEIR_RETURN_IF_ERROR(ValidateFunction(*def, lookup));
  auto has_function = [&](const std::string& f) { return Find(f) != nullptr || added.count(f); };
  std::map<std::string, std::string> new_gradients;
  for (const GradientDef& gradient : library.gradients) {
    for (const std::string* f : {&gradient.function_name, &gradient.gradient_func}) {
      if (!has_function(*f)) {
        return errors::InvalidArgument("gradient of '", gradient.function_name, "' is '",
                                       gradient.gradient_func, "', but '", *f,
                                       "' is not a function of the library");
      }
    }
    auto pending = new_gradients.find(gradient.function_name);
    std::string known = pending != new_gradients.end() ? pending->second
                                                       : FindGradient(gradient.function_name);
    if (!known.empty() && known != gradient.gradient_func) {
      return errors::AlreadyExists("function '", gradient.function_name, "' already has gradient '",
                                   known, "', not '", gradient.gradient_func, "'");
    }
    new_gradients[gradient.function_name] = gradient.gradient_func;
  }
  if (added.empty() && new_gradients.empty()) return Status::OK();
  Table* table = MutableTable();
  for (const auto& [name, def] : added) {
    table->functions.emplace(name, std::make_shared<const FunctionDef>(*def));
  }
  for (auto& [function, gradient] : new_gradients) table->gradients[function] = gradient;
  return Status::OK();
}

const std::shared_ptr<const FunctionLibrary::Table>& FunctionLibrary::EmptyTable() {
  static const auto* empty = new std::shared_ptr<const Table>(std::make_shared<const Table>());
  return *empty;
}

FunctionLibrary::Table* FunctionLibrary::MutableTable() {
  // Shared with another copy (or the empty table): this library gets its
  // own. A count that is stale because another copy is being dropped
  // concurrently only costs an unneeded copy.
  if (table_.use_count() != 1 || table_ == EmptyTable()) {
    table_ = std::shared_ptr<const Table>(std::make_shared<Table>(*table_));
  }
  // Only this library holds the table, made as a non-const Table above (or
  // by an earlier call).
  return const_cast<Table*>(table_.get());
}

Status FunctionLibrary::AddGradient(GradientDef def) {
  FunctionDefLibrary library;
  library.gradients.push_back(std::move(def));
  return AddLibrary(library);
}

const FunctionDef* FunctionLibrary::Find(std::string_view name) const {
  auto it = table_->functions.find(name);
  return it == table_->functions.end() ? nullptr : it->second.get();
}

std::string FunctionLibrary::FindGradient(std::string_view name) const {
  auto it = table_->gradients.find(name);
  return it == table_->gradients.end() ? std::string() : it->second;
}

StatusOr<const OpDef*> FunctionLibrary::LookUpOp(const std::string& op) const {
  if (const OpDef* registered = OpRegistry::Global()->Find(op)) return registered;
  if (const FunctionDef* f = Find(op)) return &f->signature;
  StatusOr<const OpDef*> registered = OpRegistry::Global()->LookUp(op);
  if (table_->functions.empty() || registered.ok()) return registered;
  return errors::NotFound(registered.status().message(),
                          ", and the graph's function library has no function of that name");
}

FunctionDefLibrary FunctionLibrary::ToLibrary() const {
  FunctionDefLibrary library;
  for (const auto& [name, def] : table_->functions) library.functions.push_back(*def);
  for (const auto& [name, gradient] : table_->gradients)
    library.gradients.push_back({name, gradient});
  return library;
}

}  // namespace weir
