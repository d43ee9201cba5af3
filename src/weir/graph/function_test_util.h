// Small library functions for the tests of function libraries, calls and
// their expansion. Header-only; tests only.
#pragma once

#include <string>
#include <vector>

#include "weir/framework/node_def.h"
#include "weir/framework/tensor.h"

namespace weir {
namespace test {

inline NodeDef BodyNode(const std::string& name, const std::string& op,
                        std::vector<std::string> inputs, AttrMap attrs = {}) {
  NodeDef def;
  def.name = name;
  def.op = op;
  def.inputs = std::move(inputs);
  def.attrs = std::move(attrs);
  return def;
}

inline ArgDef Arg(const std::string& name, DType type) {
  ArgDef arg;
  arg.name = name;
  arg.type = type;
  return arg;
}

inline ArgDef ArgOfAttr(const std::string& name, const std::string& type_attr) {
  ArgDef arg;
  arg.name = name;
  arg.type_attr = type_attr;
  return arg;
}

inline NodeDef FloatConst(const std::string& name, float value) {
  return BodyNode(name, "Const", {}, {{"dtype", DT_FLOAT}, {"value", Tensor::Scalar<float>(value)}});
}

// add_one(x: float) -> y: float = x + 1.
inline FunctionDef AddOneFunction(const std::string& name = "add_one") {
  FunctionDef f;
  f.signature.name = name;
  f.signature.inputs = {Arg("x", DT_FLOAT)};
  f.signature.outputs = {Arg("y", DT_FLOAT)};
  f.node_def = {FloatConst("one", 1), BodyNode("add", "Add", {"x", "one:output:0"}, {{"T", DT_FLOAT}})};
  f.ret["y"] = "add:z:0";
  return f;
}

// square[T](x: T) -> y: T = x * x, its dtype bound from the call ("$T").
inline FunctionDef SquareFunction() {
  FunctionDef f;
  f.signature.name = "square";
  AttrDef t;
  t.name = "T";
  t.type = "type";
  f.signature.attrs = {t};
  f.signature.inputs = {ArgOfAttr("x", "T")};
  f.signature.outputs = {ArgOfAttr("y", "T")};
  f.node_def = {BodyNode("mul", "Mul", {"x", "x"}, {{"T", AttrValue(AttrValue::Placeholder{"T"})}})};
  f.ret["y"] = "mul:z:0";
  return f;
}

// plus_two(x: float) -> (y: float, x_again: float): add_one twice, called
// by name, and its argument returned as is.
inline FunctionDef PlusTwoFunction() {
  FunctionDef f;
  f.signature.name = "plus_two";
  f.signature.inputs = {Arg("x", DT_FLOAT)};
  f.signature.outputs = {Arg("y", DT_FLOAT), Arg("x_again", DT_FLOAT)};
  f.node_def = {BodyNode("first", "add_one", {"x"}), BodyNode("second", "add_one", {"first:y:0"})};
  f.ret["y"] = "second:y:0";
  f.ret["x_again"] = "x";
  return f;
}

// bump(v: resource, delta: float) -> value: float: adds delta to the
// variable and returns the value after the update; the update is a control
// output.
inline FunctionDef BumpFunction() {
  FunctionDef f;
  f.signature.name = "bump";
  f.signature.inputs = {Arg("v", DT_RESOURCE), Arg("delta", DT_FLOAT)};
  f.signature.outputs = {Arg("value", DT_FLOAT)};
  f.signature.is_stateful = true;
  f.node_def = {BodyNode("assign", "AssignAddVariableOp", {"v", "delta"}, {{"dtype", DT_FLOAT}}),
                BodyNode("read", "ReadVariableOp", {"v", "^assign"}, {{"dtype", DT_FLOAT}})};
  f.ret["value"] = "read:value:0";
  f.control_ret["assign"] = "assign";
  return f;
}

// A call of `function` with PartitionedCall (or StatefulPartitionedCall).
inline NodeDef CallNode(const std::string& name, const std::string& function,
                        std::vector<std::string> inputs, std::vector<DType> in,
                        std::vector<DType> out, bool stateful = false) {
  NodeDef def;
  def.name = name;
  def.op = stateful ? "StatefulPartitionedCall" : "PartitionedCall";
  def.inputs = std::move(inputs);
  def.attrs["Tin"] = std::move(in);
  def.attrs["Tout"] = std::move(out);
  NameAttrList f;
  f.name = function;
  def.attrs["f"] = AttrValue(f);
  return def;
}

}  // namespace test
}  // namespace weir
