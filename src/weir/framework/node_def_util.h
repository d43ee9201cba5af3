// Checking a NodeDef against its OpDef and deriving its signature.
#pragma once

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

// The dtypes of the node's data inputs and outputs, expanding N * T and
// type lists. REQUIRES: ValidateNodeAttrs passed.
Status InOutTypesForNode(const OpDef& op, const NodeDef& node, std::vector<DType>* inputs,
                         std::vector<DType>* outputs);

// Number of data inputs (before control inputs) in node.inputs.
int NumDataInputs(const NodeDef& node);

}  // namespace weir
