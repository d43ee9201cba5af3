#include "weir/framework/node_def_util.h"

#include <algorithm>

namespace weir {
namespace {

bool KindMatches(const AttrDef& def, const AttrValue& value) {
  const std::string& t = def.type;
  if (StartsWith(t, "list(")) {
    if (!value.is_list()) return false;
    std::string kind = value.KindName();
    return kind == "list" || kind == t;
  }
  if (t == "string") return value.is_s();
  if (t == "int") return value.is_i();
  if (t == "float") return value.is_f();
  if (t == "bool") return value.is_b();
  if (t == "type") return value.is_type();
  if (t == "shape") return value.is_shape();
  if (t == "tensor") return value.is_tensor();
  // Whether the function exists is for the graph, which holds the library.
  if (t == "func") return value.is_func();
  return true;
}

std::string AllowedTypesString(const AttrDef& def) {
  std::vector<std::string> names;
  for (DType d : def.allowed_types) names.emplace_back(DTypeName(d));
  return "{" + StrJoin(names, ", ") + "}";
}

}  // namespace

void AddDefaultAttrs(const OpDef& op, NodeDef* node) {
  for (const AttrDef& attr : op.attrs) {
    if (attr.has_default && node->attrs.find(attr.name) == node->attrs.end()) {
      node->attrs[attr.name] = attr.default_value;
    }
  }
}

Status ValidateNodeAttrs(const OpDef& op, const NodeDef& node) {
  auto fail = [&](auto&&... parts) {
    return errors::InvalidArgument("node ", node.Describe(), ": ", parts...);
  };
  for (const auto& [name, value] : node.attrs) {
    if (!name.empty() && name[0] == '_') continue;
    if (op.FindAttr(name) == nullptr) {
      return fail("attr '", name, "' is not an attr of op ", op.name);
    }
  }
  for (const AttrDef& def : op.attrs) {
    auto it = node.attrs.find(def.name);
    if (it == node.attrs.end()) {
      return fail("missing attr '", def.name, "' of type ", def.type);
    }
    const AttrValue& value = it->second;
    if (!KindMatches(def, value)) {
      return fail("attr '", def.name, "' should be ", def.type, " but is ", value.KindName(),
                  " (", value.DebugString(), ")");
    }
    if (!def.allowed_types.empty()) {
      std::vector<DType> types;
      if (value.is_type()) types.push_back(value.type());
      if (value.is_list()) types = value.list().type;
      for (DType d : types) {
        if (std::find(def.allowed_types.begin(), def.allowed_types.end(), d) ==
            def.allowed_types.end()) {
          return fail("attr '", def.name, "' = ", d, " is not in the allowed set ",
                      AllowedTypesString(def));
        }
      }
    }
    if (!def.allowed_strings.empty() && value.is_s() &&
        std::find(def.allowed_strings.begin(), def.allowed_strings.end(), value.s()) ==
            def.allowed_strings.end()) {
      return fail("attr '", def.name, "' = \"", value.s(), "\" is not one of {",
                  StrJoin(def.allowed_strings, ", "), "}");
    }
    if (def.has_minimum) {
      int64_t n = -1;
      if (value.is_i()) n = value.i();
      if (value.is_list()) {
        const AttrValue::List& l = value.list();
        n = static_cast<int64_t>(l.s.size() + l.i.size() + l.f.size() + l.b.size() +
                                 l.type.size() + l.shape.size() + l.tensor.size() +
                                 l.func.size());
      }
      if (n < def.minimum) {
        return fail("attr '", def.name, "' = ", value.DebugString(), " is below its minimum ",
                    def.minimum);
      }
    }
  }
  return Status::OK();
}

namespace {

// How many entries `arg` stands for, errors naming the node.
Status ArgCount(const ArgDef& arg, const NodeDef& node, int64_t* count) {
  StatusOr<int64_t> counted = ArgCount(arg, node.attrs);
  if (!counted.ok()) return counted.status().WithContext(StrCat("node ", node.Describe()));
  *count = *counted;
  return Status::OK();
}

Status ArgTypes(const ArgDef& arg, const NodeDef& node, int64_t count, std::vector<DType>* out) {
  if (!arg.type_list_attr.empty()) {
    std::vector<DType> types;
    WEIR_RETURN_IF_ERROR(GetAttr(node.attrs, arg.type_list_attr, &types));
    out->insert(out->end(), types.begin(), types.end());
    return Status::OK();
  }
  DType dtype = arg.type;
  if (!arg.type_attr.empty()) WEIR_RETURN_IF_ERROR(GetAttr(node.attrs, arg.type_attr, &dtype));
  out->insert(out->end(), count, dtype);
  return Status::OK();
}

// Counts the entries of `args`, then expands them; `available` (or -1 when
// unknown) bounds the total before the expansion.
Status ExpandArgs(const std::vector<ArgDef>& args, const NodeDef& node, int64_t available,
                  std::vector<DType>* out) {
  std::vector<int64_t> counts(args.size());
  int64_t total = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    WEIR_RETURN_IF_ERROR(ArgCount(args[i], node, &counts[i]));
    total += counts[i];  // each count <= kMaxCountAttr or a list's length: no overflow
    // Only a number attr can ask for more than the node holds; a short
    // list of fixed args is left to the caller's count check.
    if (available >= 0 && total > available && !args[i].number_attr.empty()) {
      return errors::InvalidArgument("node ", node.Describe(), ": attr '", args[i].number_attr,
                                     "' = ", counts[i], " asks for ", total,
                                     " or more data inputs but the node has ", available);
    }
  }
  out->reserve(static_cast<size_t>(total));
  for (size_t i = 0; i < args.size(); ++i) {
    WEIR_RETURN_IF_ERROR(ArgTypes(args[i], node, counts[i], out));
  }
  return Status::OK();
}

}  // namespace

Status InOutTypesForNode(const OpDef& op, const NodeDef& node, std::vector<DType>* inputs,
                         std::vector<DType>* outputs) {
  inputs->clear();
  outputs->clear();
  // A NodeDef from a GraphDef lists all its inputs; one from the builder
  // lists none yet (its edges come after the node).
  const int64_t available = node.inputs.empty() ? -1 : NumDataInputs(node);
  auto context = [&](Status status) {
    if (status.ok() || status.message().find(node.Describe()) != std::string::npos) return status;
    return status.WithContext("node " + node.Describe());
  };
  WEIR_RETURN_IF_ERROR(context(ExpandArgs(op.inputs, node, available, inputs)));
  WEIR_RETURN_IF_ERROR(context(ExpandArgs(op.outputs, node, -1, outputs)));
  return Status::OK();
}

int NumDataInputs(const NodeDef& node) {
  int n = 0;
  for (const std::string& input : node.inputs) {
    if (!input.empty() && input[0] == '^') break;
    ++n;
  }
  return n;
}

StatusOr<int64_t> ArgCount(const ArgDef& arg, const AttrMap& attrs) {
  if (!arg.type_list_attr.empty()) {
    std::vector<DType> types;
    WEIR_RETURN_IF_ERROR(GetAttr(attrs, arg.type_list_attr, &types));
    return static_cast<int64_t>(types.size());
  }
  if (arg.number_attr.empty()) return 1;
  int64_t count = 1;
  WEIR_RETURN_IF_ERROR(GetAttr(attrs, arg.number_attr, &count));
  if (count < 0 || count > kMaxCountAttr) {
    return errors::InvalidArgument("attr '", arg.number_attr, "' = ", count, " is ",
                                   count < 0 ? "negative" : "too large", " for arg '", arg.name,
                                   "' (at most ", kMaxCountAttr, ")");
  }
  return count;
}

Status ForEachFunctionAttr(
    const AttrMap& attrs,
    const std::function<Status(const std::string& attr, const NameAttrList& func)>& fn) {
  for (const auto& [name, value] : attrs) {
    if (value.is_func()) WEIR_RETURN_IF_ERROR(fn(name, value.func()));
    if (value.is_list()) {
      for (const AttrValue::Func& func : value.list().func) WEIR_RETURN_IF_ERROR(fn(name, *func));
    }
  }
  return Status::OK();
}

}  // namespace weir
