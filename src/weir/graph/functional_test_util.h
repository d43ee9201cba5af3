// Library functions and If/Case/While nodes for the tests of functional
// control flow (graph/ structure tests, runtime/ value tests). Header-only;
// tests only.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "weir/framework/node_def.h"
#include "weir/framework/tensor.h"
#include "weir/graph/function_test_util.h"

namespace weir {
namespace test {

inline AttrValue Func(const std::string& name) {
  NameAttrList f;
  f.name = name;
  return AttrValue(f);
}

inline AttrValue FuncList(const std::vector<std::string>& names) {
  AttrValue::List list;
  for (const std::string& name : names) {
    list.func.push_back(std::make_shared<const NameAttrList>(NameAttrList{name, {}}));
  }
  return AttrValue(std::move(list));
}

// If / StatelessIf (op) of then_branch / else_branch on `inputs`.
inline NodeDef IfNode(const std::string& name, const std::string& op, std::vector<std::string> inputs,
                      DType cond_type, std::vector<DType> in, std::vector<DType> out,
                      const std::string& then_branch, const std::string& else_branch) {
  return BodyNode(name, op, std::move(inputs),
                  {{"Tcond", cond_type},
                   {"Tin", std::move(in)},
                   {"Tout", std::move(out)},
                   {"then_branch", Func(then_branch)},
                   {"else_branch", Func(else_branch)}});
}

inline NodeDef CaseNode(const std::string& name, const std::string& op,
                        std::vector<std::string> inputs, std::vector<DType> in,
                        std::vector<DType> out, const std::vector<std::string>& branches) {
  return BodyNode(name, op, std::move(inputs),
                  {{"Tin", std::move(in)}, {"Tout", std::move(out)}, {"branches", FuncList(branches)}});
}

inline NodeDef WhileNode(const std::string& name, const std::string& op,
                         std::vector<std::string> inputs, std::vector<DType> types,
                         const std::string& cond, const std::string& body,
                         int64_t parallel_iterations = 10) {
  return BodyNode(name, op, std::move(inputs),
                  {{"T", std::move(types)},
                   {"cond", Func(cond)},
                   {"body", Func(body)},
                   {"parallel_iterations", parallel_iterations}});
}

inline NodeDef IntConst(const std::string& name, int32_t value) {
  return BodyNode(name, "Const", {}, {{"dtype", DT_INT32}, {"value", Tensor::Scalar<int32_t>(value)}});
}

// A function of float x -> float y.
inline FunctionDef UnaryFunction(const std::string& name, std::vector<NodeDef> nodes,
                                 const std::string& ret) {
  FunctionDef f;
  f.signature.name = name;
  f.signature.inputs = {Arg("x", DT_FLOAT)};
  f.signature.outputs = {Arg("y", DT_FLOAT)};
  f.node_def = std::move(nodes);
  f.ret["y"] = ret;
  return f;
}

// scale_<factor>(x) = x * factor (a constant of the body: gated by the branch).
inline FunctionDef ScaleFunction(const std::string& name, float factor) {
  return UnaryFunction(
      name,
      {FloatConst("factor", factor),
       BodyNode("mul", "Mul", {"x", "factor:output:0"}, {{"T", DT_FLOAT}})},
      "mul:z:0");
}

inline FunctionDef NegateFunction() {
  return UnaryFunction("negate", {BodyNode("neg", "Neg", {"x"}, {{"T", DT_FLOAT}})}, "neg:y:0");
}

// reshape_to_3(x) = Reshape(x, [3]): fails at run time unless x has 3
// elements.
inline FunctionDef ReshapeTo3Function() {
  return UnaryFunction(
      "reshape_to_3",
      {BodyNode("shape", "Const", {},
                {{"dtype", DT_INT32}, {"value", Tensor::FromVector<int32_t>({3})}}),
       BodyNode("reshape", "Reshape", {"x", "shape:output:0"},
                {{"T", DT_FLOAT}, {"Tshape", DT_INT32}})},
      "reshape:output:0");
}

// Loop variables (i: int32, n: int32, acc: float).
inline void LoopSignature(FunctionDef* f, const std::string& name) {
  f->signature.name = name;
  f->signature.inputs = {Arg("i", DT_INT32), Arg("n", DT_INT32), Arg("acc", DT_FLOAT)};
}

// i < n.
inline FunctionDef LessThanFunction() {
  FunctionDef f;
  LoopSignature(&f, "i_less_than_n");
  f.signature.outputs = {Arg("ok", DT_BOOL)};
  f.node_def = {BodyNode("less", "Less", {"i", "n"}, {{"T", DT_INT32}})};
  f.ret["ok"] = "less:z:0";
  return f;
}

// n - i, an int32: nonzero is true (ToBool).
inline FunctionDef RemainingFunction() {
  FunctionDef f;
  LoopSignature(&f, "remaining");
  f.signature.outputs = {Arg("left", DT_INT32)};
  f.node_def = {BodyNode("sub", "Sub", {"n", "i"}, {{"T", DT_INT32}})};
  f.ret["left"] = "sub:z:0";
  return f;
}

// (i + 1, n, step(acc)); step is a call of `acc_function` (float -> float)
// by name, or acc * 2 when empty.
inline FunctionDef StepFunction(const std::string& name, const std::string& acc_function = "") {
  FunctionDef f;
  LoopSignature(&f, name);
  f.signature.outputs = {Arg("i_next", DT_INT32), Arg("n_same", DT_INT32), Arg("acc_next", DT_FLOAT)};
  f.node_def = {IntConst("one", 1), BodyNode("add", "AddV2", {"i", "one:output:0"}, {{"T", DT_INT32}})};
  if (acc_function.empty()) {
    f.node_def.push_back(FloatConst("two", 2));
    f.node_def.push_back(BodyNode("mul", "Mul", {"acc", "two:output:0"}, {{"T", DT_FLOAT}}));
    f.ret["acc_next"] = "mul:z:0";
  } else {
    f.node_def.push_back(BodyNode("step", acc_function, {"acc"}));
    f.ret["acc_next"] = "step:y:0";
  }
  f.ret["i_next"] = "add:z:0";
  f.ret["n_same"] = "n";
  return f;
}

// acc < 10 ? acc * 3 : -acc, through a StatelessIf: nested in a loop's body.
inline FunctionDef TripleOrNegateFunction() {
  return UnaryFunction(
      "triple_or_negate",
      {FloatConst("ten", 10), BodyNode("small", "Less", {"x", "ten:output:0"}, {{"T", DT_FLOAT}}),
       IfNode("if", "StatelessIf", {"small:z:0", "x"}, DT_BOOL, {DT_FLOAT}, {DT_FLOAT}, "scale_3",
              "negate")},
      "if:output:0");
}

// Every function above, for a graph's library.
inline std::vector<FunctionDef> FunctionalTestFunctions() {
  return {ScaleFunction("scale_2", 2),    ScaleFunction("scale_3", 3),
          ScaleFunction("scale_10", 10),  NegateFunction(),
          ReshapeTo3Function(),           LessThanFunction(),
          RemainingFunction(),            StepFunction("double_acc"),
          StepFunction("triple_or_negate_acc", "triple_or_negate"),
          TripleOrNegateFunction()};
}

}  // namespace test
}  // namespace weir
