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
  return true;  // func: not checked here
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
                                 l.type.size() + l.shape.size() + l.tensor.size());
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

Status ArgTypes(const ArgDef& arg, const NodeDef& node, std::vector<DType>* out) {
  if (!arg.type_list_attr.empty()) {
    std::vector<DType> types;
    WEIR_RETURN_IF_ERROR(GetAttr(node.attrs, arg.type_list_attr, &types));
    out->insert(out->end(), types.begin(), types.end());
    return Status::OK();
  }
  DType dtype = arg.type;
  if (!arg.type_attr.empty()) WEIR_RETURN_IF_ERROR(GetAttr(node.attrs, arg.type_attr, &dtype));
  int64_t repeat = 1;
  if (!arg.number_attr.empty()) {
    WEIR_RETURN_IF_ERROR(GetAttr(node.attrs, arg.number_attr, &repeat));
    if (repeat < 0) {
      return errors::InvalidArgument("attr '", arg.number_attr, "' is negative: ", repeat);
    }
  }
  out->insert(out->end(), repeat, dtype);
  return Status::OK();
}

}  // namespace

Status InOutTypesForNode(const OpDef& op, const NodeDef& node, std::vector<DType>* inputs,
                         std::vector<DType>* outputs) {
  inputs->clear();
  outputs->clear();
  for (const ArgDef& arg : op.inputs) {
    WEIR_RETURN_IF_ERROR(ArgTypes(arg, node, inputs).WithContext("node " + node.Describe()));
  }
  for (const ArgDef& arg : op.outputs) {
    WEIR_RETURN_IF_ERROR(ArgTypes(arg, node, outputs).WithContext("node " + node.Describe()));
  }
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

}  // namespace weir
