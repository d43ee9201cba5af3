// Test helpers for op declarations: a validated NodeDef for a registered op,
// and running that op's shape function as graph construction would.
//
//   auto shapes = InferShapes("MatMul", {{"T", DT_FLOAT}}, {{2, 3}, {3, 4}});
//   EXPECT_EQ((*shapes)[0], PartialShape({2, 4}));
#pragma once

#include <string>
#include <vector>

#include "weir/framework/node_def.h"
#include "weir/framework/tensor_shape.h"

namespace weir {

// A node `name` of `op` with `attrs` plus the op's defaults and
// `num_inputs` data inputs ("in0", "in1", ...), checked against the OpDef.
// Registers all ops on first use.
StatusOr<NodeDef> MakeTestNode(const std::string& op, AttrMap attrs, int num_inputs,
                               const std::string& name = "test_node");

// Runs the op's shape function on `node`. `input_tensors[i]`, when given and
// not null, is the constant value of input i. Errors come back with the node
// and the input shapes named, as graph construction reports them.
StatusOr<std::vector<PartialShape>> InferShapes(const NodeDef& node,
                                                std::vector<PartialShape> input_shapes,
                                                std::vector<const Tensor*> input_tensors = {});

// MakeTestNode with one input per shape, then InferShapes.
StatusOr<std::vector<PartialShape>> InferShapes(const std::string& op, AttrMap attrs,
                                                std::vector<PartialShape> input_shapes,
                                                std::vector<const Tensor*> input_tensors = {});

}  // namespace weir
