#include "weir/ops/op_test_util.h"

#include "weir/framework/node_def_util.h"
#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/ops/all_ops.h"

namespace weir {

StatusOr<NodeDef> MakeTestNode(const std::string& op, AttrMap attrs, int num_inputs,
                               const std::string& name) {
  RegisterAllOps();
  WEIR_ASSIGN_OR_RETURN(const OpDef* op_def, OpRegistry::Global()->LookUp(op));
  NodeDef node;
  node.name = name;
  node.op = op;
  node.attrs = std::move(attrs);
  for (int i = 0; i < num_inputs; ++i) node.inputs.push_back(StrCat("in", i));
  AddDefaultAttrs(*op_def, &node);
  WEIR_RETURN_IF_ERROR(ValidateNodeAttrs(*op_def, node));
  std::vector<DType> input_types, output_types;
  WEIR_RETURN_IF_ERROR(InOutTypesForNode(*op_def, node, &input_types, &output_types));
  if (static_cast<int>(input_types.size()) != num_inputs) {
    return errors::InvalidArgument("node ", node.Describe(), " has ", num_inputs,
                                   " inputs but its op takes ", input_types.size());
  }
  return node;
}

StatusOr<std::vector<PartialShape>> InferShapes(const NodeDef& node,
                                                std::vector<PartialShape> input_shapes,
                                                std::vector<const Tensor*> input_tensors) {
  RegisterAllOps();
  WEIR_ASSIGN_OR_RETURN(const OpDef* op_def, OpRegistry::Global()->LookUp(node.op));
  std::vector<DType> input_types, output_types;
  WEIR_RETURN_IF_ERROR(InOutTypesForNode(*op_def, node, &input_types, &output_types));
  InferenceContext context(&node, std::move(input_shapes), std::move(input_tensors),
                           static_cast<int>(output_types.size()));
  if (op_def->shape_fn) {
    Status status = op_def->shape_fn(&context);
    if (!status.ok()) {
      return status.WithContext(StrCat("node ", node.Describe(), " with input shapes ",
                                       context.InputShapesString()));
    }
  }
  return context.TakeOutputs();
}

StatusOr<std::vector<PartialShape>> InferShapes(const std::string& op, AttrMap attrs,
                                                std::vector<PartialShape> input_shapes,
                                                std::vector<const Tensor*> input_tensors) {
  WEIR_ASSIGN_OR_RETURN(NodeDef node, MakeTestNode(op, std::move(attrs),
                                                   static_cast<int>(input_shapes.size())));
  return InferShapes(node, std::move(input_shapes), std::move(input_tensors));
}

}  // namespace weir
