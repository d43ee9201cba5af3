// Checking a NodeDef against its OpDef and deriving its signature.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "weir/framework/node_def.h"
#include "weir/framework/op_def.h"

namespace weir {

// Fills in attrs the node leaves unset that have defaults in `op`.
void AddDefaultAttrs(const OpDef& op, NodeDef* node);

// Checks every attr of `op` is present with the right kind, in the allowed
// set and above its minimum; attrs the op does not declare are an error
// unless they start with '_' (internal annotations). Errors name the node.
Status ValidateNodeAttrs(const OpDef& op, const NodeDef& node);

// The most entries one number attr (N of AddN and ConcatV2, num_split,
// num of Unpack, num_partitions) may stand for. Real models use at most a
// few thousand; 2^20 still allows a node with a million inputs (the
// fan-in Weir must build in linear time) while a node with that many
// outputs still fits in memory (each costs a dtype, a shape and an
// executor slot). Above it InOutTypesForNode refuses the node.
inline constexpr int64_t kMaxCountAttr = int64_t{1} << 20;

// The dtypes of the node's data inputs and outputs, expanding N * T and
// type lists. Each number attr is bounded before anything is sized by it:
// InvalidArgument, naming the node, attr and value, when it is negative or
// above kMaxCountAttr, or when the node lists its inputs and has fewer
// data inputs than the attrs call for. REQUIRES: ValidateNodeAttrs passed.
Status InOutTypesForNode(const OpDef& op, const NodeDef& node, std::vector<DType>* inputs,
                         std::vector<DType>* outputs);

// How many tensors `arg` stands for under `attrs`: the length of its type
// list, its number attr (0 to kMaxCountAttr), or 1. InvalidArgument naming
// the attr when it is missing, unbound (a placeholder) or out of range.
StatusOr<int64_t> ArgCount(const ArgDef& arg, const AttrMap& attrs);

// Number of data inputs (before control inputs) in node.inputs.
int NumDataInputs(const NodeDef& node);

// Calls `fn(attr name, function)` for every function an attr of `attrs`
// names (a func attr, or each entry of a list of funcs), in attr-name order;
// returns the first error.
Status ForEachFunctionAttr(
    const AttrMap& attrs,
    const std::function<Status(const std::string& attr, const NameAttrList& func)>& fn);

}  // namespace weir
