// Gradients of the TensorArray ops, as TensorFlow's tensor_array_grad: a
// gradient array (TensorArrayGradV3, one per forward array and gradient
// computation) holds the gradients of the elements. What a read took from
// index i, the gradient writes at i (writes to one index add up); what a
// write put at i, the gradient reads from i. Gather and scatter, concat and
// split mirror each other the same way. The gradient of a flow is the flow
// of the gradient array, so the gradient ops on one array run in the
// reverse order of the forward ones. Creating, sizing and closing arrays
// and the stack ops have no gradient.
#include "weir/base/str_util.h"
#include "weir/ops/gradients/gradient_registry.h"
#include "weir/ops/gradients/gradient_util.h"
#include "weir/ops/standard_ops.h"

namespace weir {
namespace {

// Names the gradient computation the scope builds, as TensorFlow does:
// the scope's prefix up to its last "gradients" component. The driver
// numbers its sub-scopes per node ("gradients_7"), so the number is
// dropped: every gradient op of one computation must meet the same array.
std::string GradientSource(const Scope& scope) {
  std::vector<std::string> parts = StrSplit(scope.GetUniqueNameForOp("source"), '/');
  size_t last = parts.size();
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    if (StartsWith(parts[i], "gradients")) last = i;
  }
  if (last == parts.size()) return "gradients";
  parts[last] = "gradients";
  parts.resize(last + 1);
  return StrJoin(parts, "/");
}

struct GradientArray {
  Output handle;
  Output flow;
};

// The gradient array of the forward op's array (its input 0), made after
// `flow`; its own flow follows the array's creation.
GradientArray GradientArrayOf(const Scope& scope, const Operation& op, const Output& flow) {
  Operation grad = ops::TensorArrayGradV3(scope, ForwardInput(op, 0), flow, GradientSource(scope));
  Output grad_flow = ops::Identity(scope.WithControlDependencies({grad}), flow);
  return {grad.output(0), grad_flow};
}

// The incoming gradient of a forward op's flow_out, held back until that
// op ran: a gradient array made before the forward write would not know
// the written element's shape.
Output AfterForward(const Scope& scope, const Operation& op, const Output& flow_grad) {
  return ops::Identity(scope.WithControlDependencies({op}), flow_grad);
}

// (handle, index, flow_in) -> value
Status ReadGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                std::vector<Output>* grads) {
  GradientArray array = GradientArrayOf(scope, op, ForwardInput(op, 2));
  Output flow = ops::TensorArrayWriteV3(scope, array.handle, ForwardInput(op, 1), g[0], array.flow);
  *grads = {Output(), Output(), flow};
  return scope.status();
}

// (handle, index, value, flow_in) -> flow_out
Status WriteGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                 std::vector<Output>* grads) {
  Output flow = AfterForward(scope, op, g[0]);
  GradientArray array = GradientArrayOf(scope, op, flow);
  Output value = ops::TensorArrayReadV3(scope, array.handle, ForwardInput(op, 1), array.flow,
                                        ForwardInput(op, 2).dtype());
  *grads = {Output(), Output(), value, flow};
  return scope.status();
}

// (handle, indices, flow_in) -> value
Status GatherGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                  std::vector<Output>* grads) {
  GradientArray array = GradientArrayOf(scope, op, ForwardInput(op, 2));
  Output flow =
      ops::TensorArrayScatterV3(scope, array.handle, ForwardInput(op, 1), g[0], array.flow);
  *grads = {Output(), Output(), flow};
  return scope.status();
}

// (handle, indices, value, flow_in) -> flow_out
Status ScatterGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                   std::vector<Output>* grads) {
  Output flow = AfterForward(scope, op, g[0]);
  GradientArray array = GradientArrayOf(scope, op, flow);
  Output value = ops::TensorArrayGatherV3(scope, array.handle, ForwardInput(op, 1), array.flow,
                                          ForwardInput(op, 2).dtype());
  *grads = {Output(), Output(), value, flow};
  return scope.status();
}

// (handle, flow_in) -> (value, lengths)
Status ConcatGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                  std::vector<Output>* grads) {
  *grads = {Output(), Output()};
  if (!g[0].valid()) return Status::OK();  // only the lengths were used
  GradientArray array = GradientArrayOf(scope, op, ForwardInput(op, 1));
  (*grads)[1] = ops::TensorArraySplitV3(scope, array.handle, g[0], op.output(1), array.flow);
  return scope.status();
}

// (handle, value, lengths, flow_in) -> flow_out
Status SplitGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                 std::vector<Output>* grads) {
  Output flow = AfterForward(scope, op, g[0]);
  GradientArray array = GradientArrayOf(scope, op, flow);
  Operation value =
      ops::TensorArrayConcatV3(scope, array.handle, array.flow, ForwardInput(op, 1).dtype());
  *grads = {Output(), value.output(0), Output(), flow};
  return scope.status();
}

}  // namespace

void RegisterDataFlowGradients(GradientRegistry* registry) {
  registry->Register("TensorArrayReadV3", ReadGrad);
  registry->Register("TensorArrayWriteV3", WriteGrad);
  registry->Register("TensorArrayGatherV3", GatherGrad);
  registry->Register("TensorArrayScatterV3", ScatterGrad);
  registry->Register("TensorArrayConcatV3", ConcatGrad);
  registry->Register("TensorArraySplitV3", SplitGrad);
  for (const char* op :
       {"TensorArrayV3", "TensorArrayGradV3", "TensorArraySizeV3", "TensorArrayCloseV3", "StackV2",
        "StackPushV2", "StackPopV2", "StackCloseV2"}) {
    registry->RegisterNoGradient(op);
  }
  for (const char* op : {"FIFOQueueV2", "RandomShuffleQueueV2", "PaddingFIFOQueueV2",
                         "PriorityQueueV2", "QueueEnqueueV2", "QueueEnqueueManyV2",
                         "QueueDequeueV2", "QueueDequeueManyV2", "QueueDequeueUpToV2",
                         "QueueCloseV2", "QueueSizeV2", "QueueIsClosedV2"}) {
    registry->RegisterNoGradient(op);
  }
  for (const char* op :
       {"ConditionalAccumulator", "ResourceConditionalAccumulator", "AccumulatorApplyGradient",
        "ResourceAccumulatorApplyGradient", "AccumulatorTakeGradient",
        "ResourceAccumulatorTakeGradient", "AccumulatorNumAccumulated",
        "ResourceAccumulatorNumAccumulated", "AccumulatorSetGlobalStep",
        "ResourceAccumulatorSetGlobalStep", "SparseConditionalAccumulator",
        "SparseAccumulatorApplyGradient", "SparseAccumulatorTakeGradient"}) {
    registry->RegisterNoGradient(op);
  }
  // Summaries: serialized protos out, for TensorBoard only.
  for (const char* op : {"ScalarSummary", "HistogramSummary", "MergeSummary", "Assert"}) {
    registry->RegisterNoGradient(op);
  }
  // Logging: Print passes its input's gradient through (its data gets none);
  // the strings of tf.print carry none.
  registry->Register("Print", [](const Scope&, const Operation& op, const std::vector<Output>& g,
                                 std::vector<Output>* grads) {
    grads->assign(op.node()->num_inputs(), Output());
    (*grads)[0] = g[0];
    return Status::OK();
  });
  for (const char* op : {"PrintV2", "StringFormat"}) registry->RegisterNoGradient(op);
  // CheckNumerics checks the gradient on its way back too (as TensorFlow
  // does), with the forward check's message after a note that it is the
  // gradient's.
  for (const char* name : {"CheckNumerics", "CheckNumericsV2"}) {
    registry->Register(name, [name](const Scope& scope, const Operation& op,
                                    const std::vector<Output>& g, std::vector<Output>* grads) {
      std::string message;
      (void)GetAttr(op.node()->def().attrs, "message", &message);
      AttrMap attrs;
      attrs["message"] =
          AttrValue(StrCat("NaN or Inf in the gradient of ", op.name(), ": ", message));
      *grads = {AddOp(scope, name, {g[0]}, attrs).output(0)};
      return scope.status();
    });
  }
}

}  // namespace weir
