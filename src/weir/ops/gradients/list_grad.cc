// Gradients of the TensorList and Optional ops, as TensorFlow's list_ops and
// optional gradients define them: the gradient of a list is a list of the
// elements' gradients. What a push appended, the gradient pops; what a pop
// took, the gradient pushes back; a read at i becomes a write at i into a
// list of unset elements (which read as zeros); a write at i reads the
// gradient at i and clears it; stacking and unstacking mirror each other. A
// missing list gradient is zeros (ZerosLike of the forward list). Creating a
// list, its length and element shape have no gradient; the remaining list
// ops' gradients are not written yet and say so.
#include "weir/ops/gradients/gradient_registry.h"
#include "weir/ops/gradients/gradient_util.h"
#include "weir/ops/standard_ops.h"

namespace weir {
namespace {

DType ElementDType(const Operation& op) {
  DType dtype = DT_INVALID;  // an op without the attr fails its validation
  static_cast<void>(GetAttr(op.node()->def().attrs, "element_dtype", &dtype));
  return dtype;
}

// The gradient of list output `port`, or zeros shaped like the forward list.
Output ListGradient(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                    int port) {
  return g[port].valid() ? g[port] : ops::ZerosLike(scope, op.output(port));
}

// A list shaped like `list` (same length and element shape), elements unset.
Output UnsetListLike(const Scope& scope, const Output& list, DType element_dtype) {
  return ops::TensorListReserve(scope, ops::TensorListElementShape(scope, list, DT_INT32),
                                ops::TensorListLength(scope, list), element_dtype);
}

// (list, tensor) -> list
Status PushBackGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                    std::vector<Output>* grads) {
  Output dlist = ListGradient(scope, op, g, 0);
  Operation pop = ops::TensorListPopBack(scope, dlist, ops::Shape(scope, ForwardInput(op, 1)),
                                         ElementDType(op));
  *grads = {pop.output(0), pop.output(1)};
  return scope.status();
}

// (list, element_shape) -> (list, tensor)
Status PopBackGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                   std::vector<Output>* grads) {
  Output dlist = ListGradient(scope, op, g, 0);
  Output delement = g[1].valid() ? g[1] : ops::ZerosLike(scope, op.output(1));
  *grads = {ops::TensorListPushBack(scope, dlist, delement), Output()};
  return scope.status();
}

// (list, index, element_shape) -> item
Status GetItemGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                   std::vector<Output>* grads) {
  Output unset = UnsetListLike(scope, ForwardInput(op, 0), ElementDType(op));
  *grads = {ops::TensorListSetItem(scope, unset, ForwardInput(op, 1), g[0]), Output(), Output()};
  return scope.status();
}

// (list, index, item) -> list
Status SetItemGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                   std::vector<Output>* grads) {
  Output dlist = ListGradient(scope, op, g, 0);
  Output index = ForwardInput(op, 1);
  Output item = ForwardInput(op, 2);
  Output ditem =
      ops::TensorListGetItem(scope, dlist, index, ops::Shape(scope, item), ElementDType(op));
  Output rest = ops::TensorListSetItem(scope, dlist, index, ops::ZerosLike(scope, item));
  *grads = {rest, Output(), ditem};
  return scope.status();
}

// (list, element_shape) -> tensor
Status StackGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                 std::vector<Output>* grads) {
  *grads = {ops::TensorListFromTensor(scope, g[0], ops::Const(scope, -1)), Output()};
  return scope.status();
}

// (tensor, element_shape) -> list
Status FromTensorGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                      std::vector<Output>* grads) {
  Output dlist = ListGradient(scope, op, g, 0);
  Output tensor = ForwardInput(op, 0);
  // The rows' shape, from the forward tensor: a gradient list may have no
  // element set.
  Output rows = ops::Slice(scope, ops::Shape(scope, tensor),
                           ops::Const(scope, Tensor::FromVector<int32_t>({1})),
                           ops::Const(scope, Tensor::FromVector<int32_t>({-1})));
  *grads = {ops::TensorListStack(scope, dlist, rows, ElementDType(op)), Output()};
  return scope.status();
}

// (components...) -> optional
Status OptionalFromValueGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                             std::vector<Output>* grads) {
  grads->assign(op.node()->num_inputs(), Output());
  if (!g[0].valid()) return Status::OK();
  std::vector<DType> types;
  std::vector<PartialShape> shapes;
  for (int i = 0; i < op.node()->num_inputs(); ++i) {
    types.push_back(ForwardInput(op, i).dtype());
    shapes.push_back(PartialShape::UnknownRank());
  }
  Operation value = ops::OptionalGetValue(scope, g[0], types, shapes);
  for (int i = 0; i < op.node()->num_inputs(); ++i) (*grads)[i] = value.output(i);
  return scope.status();
}

// optional -> (components...)
Status OptionalGetValueGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                            std::vector<Output>* grads) {
  std::vector<Input> components;
  for (int i = 0; i < op.node()->num_outputs(); ++i) {
    components.push_back(g[i].valid() ? g[i] : ops::ZerosLike(scope, op.output(i)));
  }
  *grads = {ops::OptionalFromValue(scope, components)};
  return scope.status();
}

Status NotWrittenGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                      std::vector<Output>* grads) {
  return errors::Unimplemented("node ", op.node()->Describe(), ": the gradient of ",
                               op.node()->type_string(), " is not supported yet");
}

}  // namespace

void RegisterListGradients(GradientRegistry* registry) {
  registry->Register("TensorListPushBack", PushBackGrad);
  registry->Register("TensorListPopBack", PopBackGrad);
  registry->Register("TensorListGetItem", GetItemGrad);
  registry->Register("TensorListSetItem", SetItemGrad);
  registry->Register("TensorListStack", StackGrad);
  registry->Register("TensorListFromTensor", FromTensorGrad);
  registry->Register("OptionalFromValue", OptionalFromValueGrad);
  registry->Register("OptionalGetValue", OptionalGetValueGrad);
  for (const char* op : {"EmptyTensorList", "TensorListReserve", "TensorListLength",
                         "TensorListElementShape", "OptionalNone", "OptionalHasValue"}) {
    registry->RegisterNoGradient(op);
  }
  for (const char* op :
       {"TensorListGather", "TensorListScatterIntoExistingList", "TensorListScatterV2",
        "TensorListConcatV2", "TensorListSplit", "TensorListResize"}) {
    registry->Register(op, NotWrittenGrad);
  }
}

}  // namespace weir
