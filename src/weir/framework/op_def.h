// OpDef and OpRegistry: the single declaration of each op.
//
// An op is declared once, in TensorFlow's text notation:
//
//   OpDefBuilder("MatMul")
//       .Input("a: T").Input("b: T").Output("product: T")
//       .Attr("transpose_a: bool = false").Attr("transpose_b: bool = false")
//       .Attr("T: {float, double}")
//       .SetShapeFn(MatMulShape)
//       .Doc("Multiplies matrix a by matrix b.")
//
// Everything else (validation, the C++ wrappers, docs) derives from it.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "weir/framework/attr_value.h"

namespace weir {

class InferenceContext;
using ShapeFn = std::function<Status(InferenceContext*)>;

struct ArgDef {
  std::string name;
  DType type = DT_INVALID;     // a fixed dtype, or
  std::string type_attr;       // the name of a "type" attr, or
  std::string type_list_attr;  // the name of a "list(type)" attr
  std::string number_attr;     // with type/type_attr: "N * T" repeats N times
};

struct AttrDef {
  std::string name;
  std::string type;  // "int", "float", "bool", "string", "type", "shape",
                     // "tensor", "func", or "list(<one of those>)"
  bool has_default = false;
  AttrValue default_value;
  // Allowed values: dtypes for "type"/"list(type)", strings for "string".
  std::vector<DType> allowed_types;
  std::vector<std::string> allowed_strings;
  bool has_minimum = false;
  int64_t minimum = 0;  // for "int" (the value) and "list(...)" (the length)
};

struct OpDef {
  std::string name;
  std::vector<ArgDef> inputs;
  std::vector<ArgDef> outputs;
  std::vector<AttrDef> attrs;
  bool is_stateful = false;  // never pruned by CSE or constant folding
  ShapeFn shape_fn;          // null: outputs have unknown shape
  std::string doc;

  const AttrDef* FindAttr(const std::string& attr_name) const;
};

// Builds an OpDef from TensorFlow-style spec strings. Spec errors are
// programmer errors and surface when the op is registered.
class OpDefBuilder {
 public:
  explicit OpDefBuilder(std::string name);
  // "name: float", "name: T", "name: N * T", "name: Tlist".
  OpDefBuilder& Input(std::string spec);
  OpDefBuilder& Output(std::string spec);
  // "name: type", "name: type = default", "T: {float, double}",
  // "N: int >= 1", "padding: {'SAME', 'VALID'}", "T: numbertype".
  OpDefBuilder& Attr(std::string spec);
  // Sets a default the text notation cannot express (shapes, tensors).
  OpDefBuilder& AttrDefault(const std::string& name, AttrValue value);
  OpDefBuilder& SetIsStateful();
  OpDefBuilder& SetShapeFn(ShapeFn fn);
  OpDefBuilder& Doc(std::string doc);

  // Parses the specs; an error names the op and the offending spec.
  StatusOr<OpDef> Build() const;

 private:
  OpDef op_;
  std::vector<std::string> input_specs_;
  std::vector<std::string> output_specs_;
  std::vector<std::string> attr_specs_;
  std::vector<std::pair<std::string, AttrValue>> extra_defaults_;
};

class OpRegistry {
 public:
  // The process-wide registry, filled by RegisterAllOps() (ops/all_ops.h).
  static OpRegistry* Global();

  // CHECK-fails on a malformed spec or a duplicate name: both are bugs.
  void Register(const OpDefBuilder& builder);
  // NotFound naming the op, with close matches when there are any and the
  // ops Weir has of the op's family (those sharing its leading words,
  // "TensorList*", else its longest word, "*Pool*").
  StatusOr<const OpDef*> LookUp(const std::string& op_name) const;
  // The op's OpDef, or null: for lookups that expect to miss (a function's
  // name), without LookUp's error message.
  const OpDef* Find(const std::string& op_name) const;
  std::vector<const OpDef*> ListOps() const;

 private:
  mutable std::shared_mutex mu_;
  std::map<std::string, std::unique_ptr<const OpDef>> ops_;
};

}  // namespace weir
