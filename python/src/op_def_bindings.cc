// _C.op_defs() and _C.op_def(name): the op registry as Python dicts, from
// which python/tools/gen_ops.py writes one function per op.
//
// Weir's declarations have one doc string per op (no per-arg or per-attr
// docs, no ref args): "summary" is its first line, "description" the rest,
// and the args' and attrs' "description" and "is_ref" are "" and False.
#include <nanobind/stl/string.h>

#include "bindings.h"
#include "common.h"

namespace weir::python {
namespace {

nb::list ArgsToPython(const std::vector<ArgDef>& args) {
  nb::list out;
  for (const ArgDef& arg : args) {
    nb::dict d;
    d["name"] = arg.name;
    d["description"] = "";
    d["type"] = static_cast<int>(arg.type);
    d["type_attr"] = arg.type_attr;
    d["number_attr"] = arg.number_attr;
    d["type_list_attr"] = arg.type_list_attr;
    d["is_ref"] = false;
    out.append(d);
  }
  return out;
}

nb::object AllowedValues(const AttrDef& attr) {
  if (!attr.allowed_types.empty()) {
    nb::list out;
    for (DType t : attr.allowed_types) out.append(static_cast<int>(t));
    return out;
  }
  if (!attr.allowed_strings.empty()) {
    nb::list out;
    for (const std::string& s : attr.allowed_strings) out.append(nb::bytes(s.data(), s.size()));
    return out;
  }
  return nb::none();
}

nb::dict OpDefToDict(const OpDef& op) {
  nb::dict d;
  d["name"] = op.name;
  size_t newline = op.doc.find('\n');
  std::string summary = op.doc.substr(0, newline);
  std::string description;
  if (newline != std::string::npos) {
    description = op.doc.substr(newline + 1);
    size_t start = description.find_first_not_of('\n');
    description = start == std::string::npos ? "" : description.substr(start);
  }
  d["summary"] = summary;
  d["description"] = description;
  d["is_stateful"] = op.is_stateful;
  d["inputs"] = ArgsToPython(op.inputs);
  d["outputs"] = ArgsToPython(op.outputs);
  nb::list attrs;
  for (const AttrDef& attr : op.attrs) {
    nb::dict a;
    a["name"] = attr.name;
    a["type"] = attr.type;
    a["has_default"] = attr.has_default;
    a["default"] = attr.has_default ? AttrToPython(attr.default_value) : nb::none();
    a["allowed_values"] = AllowedValues(attr);
    a["has_minimum"] = attr.has_minimum;
    a["minimum"] = attr.minimum;
    a["description"] = "";
    attrs.append(a);
  }
  d["attrs"] = attrs;
  return d;
}

}  // namespace

nb::dict OpDefToPython(const OpDef& op) { return OpDefToDict(op); }

void DefineOpDefs(nb::module_& m) {
  m.def("op_defs", [] {
    nb::list out;
    for (const OpDef* op : OpRegistry::Global()->ListOps()) out.append(OpDefToDict(*op));
    return out;
  }, "Every registered op, in name order, as dicts.");
  m.def("op_def", [](const std::string& name) {
    return OpDefToDict(*Check(OpRegistry::Global()->LookUp(name)));
  }, nb::arg("name"), "One registered op as a dict; NotFoundError for an unknown op.");
}

}  // namespace weir::python
