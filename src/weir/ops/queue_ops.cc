// The queue family: queues are resources in the device's ResourceMgr
// (kernels/queue_base.h); the creation ops output a DT_RESOURCE handle and
// the other ops take it. OpDefs are TensorFlow's V2 queue ops, so imported
// graphs run unchanged. Everything is stateful: a queue op is never pruned by
// CSE or folded.
//
// Shape functions are TensorFlow's. Handles carry no element shapes here, so
// dequeued components have unknown shapes (TensorFlow falls back to the
// same when its handle data is missing).
#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/framework/tensor.h"
#include "weir/ops/all_ops.h"

namespace weir {
namespace {

Status ScalarOutput(InferenceContext* c) {
  c->set_output(0, PartialShape(std::vector<int64_t>{}));
  return Status::OK();
}

Status NoOutputs(InferenceContext*) { return Status::OK(); }

Status UnknownOutputs(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, PartialShape::UnknownRank());
  return Status::OK();
}

// DequeueMany's `n`, when a constant, must be >= 0 (TensorFlow's check).
Status DequeueManyShape(InferenceContext* c) {
  if (const Tensor* n = c->input_tensor(1);
      n != nullptr && n->dtype() == DT_INT32 && n->NumElements() == 1) {
    const int32_t value = *n->data<int32_t>();
    if (value < 0) return errors::InvalidArgument("Input 'n' must be >= 0, but is ", value);
  }
  return UnknownOutputs(c);
}

// The attrs every queue kind shares. PriorityQueueV2 alone lets
// component_types default to [] (its int64 priority component is implicit)
// and requires shapes.
void QueueAttrs(OpDefBuilder& builder, bool priority) {
  if (priority) {
    builder.Attr("component_types: list(type) >= 0 = []").Attr("shapes: list(shape) >= 0");
  } else {
    builder.Attr("component_types: list(type) >= 1").Attr("shapes: list(shape) >= 0 = []");
  }
  builder.Attr("capacity: int = -1");
}

}  // namespace

void RegisterQueueOps(OpRegistry* registry) {
  {
    OpDefBuilder b("FIFOQueueV2");
    b.Output("handle: resource");
    QueueAttrs(b, false);
    registry->Register(
        b.Attr("container: string = ''")
            .Attr("shared_name: string = ''")
            .SetIsStateful()
            .SetShapeFn(ScalarOutput)
            .Doc("A queue that gives elements in the order they were enqueued. `shapes` (empty: "
                 "any) fixes each component's shape; `capacity` < 0 is unbounded. Shared by the "
                 "ops that name the same `shared_name` in `container` (empty: private to the "
                 "node)."));
  }
  {
    OpDefBuilder b("RandomShuffleQueueV2");
    b.Output("handle: resource");
    QueueAttrs(b, false);
    registry->Register(
        b.Attr("min_after_dequeue: int = 0")
            .Attr("seed: int = 0")
            .Attr("seed2: int = 0")
            .Attr("container: string = ''")
            .Attr("shared_name: string = ''")
            .SetIsStateful()
            .SetShapeFn(ScalarOutput)
            .Doc("A queue that gives its elements in random order, keeping at least "
                 "`min_after_dequeue` of them until it is closed. Fixed `seed`/`seed2` give a "
                 "fixed order (both 0: random)."));
  }
  {
    OpDefBuilder b("PaddingFIFOQueueV2");
    b.Output("handle: resource");
    QueueAttrs(b, false);
    registry->Register(
        b.Attr("container: string = ''")
            .Attr("shared_name: string = ''")
            .SetIsStateful()
            .SetShapeFn(ScalarOutput)
            .Doc("A FIFO queue whose `shapes` may have unknown dims (-1); DequeueMany pads each "
                 "component to the batch's largest size with zeros (empty strings)."));
  }
  {
    OpDefBuilder b("PriorityQueueV2");
    b.Output("handle: resource");
    QueueAttrs(b, true);
    registry->Register(
        b.Attr("container: string = ''")
            .Attr("shared_name: string = ''")
            .SetIsStateful()
            .SetShapeFn(ScalarOutput)
            .Doc("A queue that gives the element of lowest priority first. Elements have an "
                 "int64 scalar priority as component 0, then `component_types`."));
  }
  for (const char* op : {"QueueEnqueueV2", "QueueEnqueueManyV2"}) {
    const bool many = std::string_view(op) == "QueueEnqueueManyV2";
    registry->Register(
        OpDefBuilder(op)
            .Input("handle: resource")
            .Input("components: Tcomponents")
            .Attr("Tcomponents: list(type) >= 1")
            .Attr("timeout_ms: int = -1")
            .SetIsStateful()
            .SetShapeFn(NoOutputs)
            .Doc(many ? "Enqueues each slice of the components along dim 0, in order, waiting "
                        "while the queue is full. Cancelled if the queue is closed."
                      : "Enqueues one element, waiting while the queue is full. Cancelled if "
                        "the queue is closed."));
  }
  registry->Register(OpDefBuilder("QueueDequeueV2")
                         .Input("handle: resource")
                         .Output("components: component_types")
                         .Attr("component_types: list(type) >= 1")
                         .Attr("timeout_ms: int = -1")
                         .SetIsStateful()
                         .SetShapeFn(UnknownOutputs)
                         .Doc("Dequeues one element, waiting while the queue is empty. "
                              "OutOfRange once the queue is closed and empty."));
  registry->Register(OpDefBuilder("QueueDequeueManyV2")
                         .Input("handle: resource")
                         .Input("n: int32")
                         .Output("components: component_types")
                         .Attr("component_types: list(type) >= 1")
                         .Attr("timeout_ms: int = -1")
                         .SetIsStateful()
                         .SetShapeFn(DequeueManyShape)
                         .Doc("Dequeues `n` elements stacked along a new dim 0, waiting until "
                              "there are that many. OutOfRange once the queue is closed with "
                              "fewer."));
  registry->Register(OpDefBuilder("QueueDequeueUpToV2")
                         .Input("handle: resource")
                         .Input("n: int32")
                         .Output("components: component_types")
                         .Attr("component_types: list(type) >= 1")
                         .Attr("timeout_ms: int = -1")
                         .SetIsStateful()
                         .SetShapeFn(UnknownOutputs)
                         .Doc("As QueueDequeueManyV2, but once the queue is closed gives what "
                              "is left (at least one element) as a smaller batch."));
  registry->Register(OpDefBuilder("QueueCloseV2")
                         .Input("handle: resource")
                         .Attr("cancel_pending_enqueues: bool = false")
                         .SetIsStateful()
                         .SetShapeFn(NoOutputs)
                         .Doc("Closes the queue: later enqueues fail, dequeues drain what is "
                              "left. With `cancel_pending_enqueues`, blocked enqueues are "
                              "cancelled."));
  registry->Register(OpDefBuilder("QueueSizeV2")
                         .Input("handle: resource")
                         .Output("size: int32")
                         .SetIsStateful()
                         .SetShapeFn(ScalarOutput)
                         .Doc("The number of elements in the queue."));
  registry->Register(OpDefBuilder("QueueIsClosedV2")
                         .Input("handle: resource")
                         .Output("is_closed: bool")
                         .SetIsStateful()
                         .SetShapeFn(ScalarOutput)
                         .Doc("Whether the queue is closed."));
}

}  // namespace weir
