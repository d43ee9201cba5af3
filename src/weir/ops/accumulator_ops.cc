// The conditional-accumulator family (synchronous replication, OSDI 2016
// §4.4): an accumulator sums the gradients replicas apply for the current
// step, drops those computed for an older step, and gives their mean (or
// sum) to the one op that takes it once enough came. Accumulators are
// resources in the device's ResourceMgr (kernels/conditional_accumulator.h).
//
// OpDefs are TensorFlow's. Two forms: the Resource* ops take a DT_RESOURCE
// handle (what weir.ConditionalAccumulator builds, as tf.compat.v1 does);
// the older ops take TensorFlow's `Ref(string)` handle, a [2] vector
// (container, name). Weir has no reference edges, so those handles are plain
// strings and the ops on them are declared stateful (TensorFlow's are
// stateless, kept from being merged or pruned by the ref edge); both are
// listed in tests/tf_compat/op_def_differences.txt. A string handle names a
// resource of the device its consumer runs on, so those consumers must be
// placed with the accumulator: their handle is declared a TensorFlow
// reference input (framework/ref_inputs.h), and the placer colocates them
// with its producer as TensorFlow's does along the ref edge.
// The sparse accumulator exists only in the string-handle form (as in
// TensorFlow).
#include "weir/framework/op_def.h"
#include "weir/framework/ref_inputs.h"
#include "weir/framework/shape_inference.h"
#include "weir/ops/all_ops.h"
#include "weir/ops/shape_fns.h"

namespace weir {
namespace {

const PartialShape kScalar = PartialShape(std::vector<int64_t>{});

// The string handle is TensorFlow's [2] vector (container, name).
Status StringHandleShape(InferenceContext* c) {
  c->set_output(0, PartialShape(std::vector<int64_t>{2}));
  return Status::OK();
}

Status ResourceHandleShape(InferenceContext* c) {
  c->set_output(0, kScalar);
  return Status::OK();
}

// (handle, local_step, gradient): the step is a scalar; the gradient is
// checked against the accumulator's shape when it is applied.
Status ApplyShape(InferenceContext* c) { return ScalarInputs(c, {1}); }

Status SetGlobalStepShape(InferenceContext* c) { return ScalarInputs(c, {1}); }

Status NumAccumulatedShape(InferenceContext* c) {
  c->set_output(0, kScalar);
  return Status::OK();
}

// (handle, num_required) -> the mean or sum, whose shape only the
// accumulator knows (the Python wrapper sets its static shape).
Status TakeShape(InferenceContext* c) {
  WEIR_RETURN_IF_ERROR(ScalarInputs(c, {1}));
  c->set_output(0, PartialShape::UnknownRank());
  return Status::OK();
}

// (handle, num_required) -> indices [?], values [?] + rows, shape [rank].
Status SparseTakeShape(InferenceContext* c) {
  WEIR_RETURN_IF_ERROR(ScalarInputs(c, {1}));
  c->set_output(0, PartialShape(std::vector<int64_t>{-1}));
  c->set_output(1, PartialShape::UnknownRank());
  c->set_output(2, PartialShape(std::vector<int64_t>{-1}));
  return Status::OK();
}

OpDefBuilder& CreationAttrs(OpDefBuilder& b) {
  return b.Attr("dtype: numbertype")
      .Attr("shape: shape")
      .Attr("container: string = ''")
      .Attr("shared_name: string = ''")
      .Attr("reduction_type: {'MEAN', 'SUM'} = 'MEAN'")
      .SetIsStateful();
}

}  // namespace

void RegisterAccumulatorOps(OpRegistry* registry) {
  {
    OpDefBuilder b("ConditionalAccumulator");
    b.Output("handle: string");
    registry->Register(
        CreationAttrs(b)
            .SetShapeFn(StringHandleShape)
            .Doc("An accumulator of dense gradients of `dtype` and `shape` (a string handle). "
                 "Applied gradients of the current step are summed; a take gives their "
                 "mean (reduction_type MEAN) or sum once enough came. Shared by the ops that "
                 "name the same `shared_name` in `container`."));
  }
  {
    OpDefBuilder b("ResourceConditionalAccumulator");
    b.Output("handle: resource");
    registry->Register(CreationAttrs(b)
                           .SetShapeFn(ResourceHandleShape)
                           .Doc("ConditionalAccumulator with a resource handle."));
  }
  {
    OpDefBuilder b("SparseConditionalAccumulator");
    b.Output("handle: string");
    registry->Register(
        CreationAttrs(b)
            .SetShapeFn(StringHandleShape)
            .Doc("An accumulator of IndexedSlices gradients (a string handle): rows of one "
                 "index are summed; a take gives, per row, the mean over the gradients that "
                 "touched it (reduction_type MEAN) or the sum."));
  }
  // The ops on a handle, in their string-handle and resource-handle forms.
  for (const bool resource : {false, true}) {
    const char* handle = resource ? "handle: resource" : "handle: string";
    const std::string prefix = resource ? "Resource" : "";
    if (!resource) {
      for (const char* op : {"AccumulatorNumAccumulated", "AccumulatorSetGlobalStep",
                             "AccumulatorApplyGradient", "AccumulatorTakeGradient"}) {
        DeclareRefInputs(op, {"handle"});  // TensorFlow's Ref(string)
      }
    }
    registry->Register(OpDefBuilder(prefix + "AccumulatorNumAccumulated")
                           .Input(handle)
                           .Output("num_accumulated: int32")
                           .SetIsStateful()
                           .SetShapeFn(NumAccumulatedShape)
                           .Doc("The number of gradients accumulated for the current step."));
    registry->Register(
        OpDefBuilder(prefix + "AccumulatorSetGlobalStep")
            .Input(handle)
            .Input("new_global_step: int64")
            .SetIsStateful()
            .SetShapeFn(SetGlobalStepShape)
            .Doc("Sets the accumulator's step: later gradients of an older local_step are "
                 "dropped. A smaller value than the current one is allowed (as TensorFlow)."));
    registry->Register(
        OpDefBuilder(prefix + "AccumulatorApplyGradient")
            .Input(handle)
            .Input("local_step: int64")
            .Input("gradient: dtype")
            .Attr("dtype: numbertype")
            .SetIsStateful()
            .SetShapeFn(ApplyShape)
            .Doc("Adds `gradient` to the accumulator, or drops it when local_step is older "
                 "than the accumulator's step (a stale gradient, not an error)."));
    registry->Register(
        OpDefBuilder(prefix + "AccumulatorTakeGradient")
            .Input(handle)
            .Input("num_required: int32")
            .Output("average: dtype")
            .Attr("dtype: numbertype")
            .SetIsStateful()
            .SetShapeFn(TakeShape)
            .Doc("Waits until at least `num_required` gradients are accumulated, then gives "
                 "their mean (or sum), empties the accumulator and advances its step by one. "
                 "Cancelled with the step; num_required < 1 is InvalidArgument."));
  }
  DeclareRefInputs("SparseAccumulatorApplyGradient", {"handle"});
  DeclareRefInputs("SparseAccumulatorTakeGradient", {"handle"});
  registry->Register(
      OpDefBuilder("SparseAccumulatorApplyGradient")
          .Input("handle: string")
          .Input("local_step: int64")
          .Input("gradient_indices: int64")
          .Input("gradient_values: dtype")
          .Input("gradient_shape: int64")
          .Attr("dtype: numbertype")
          .Attr("has_known_shape: bool")
          .SetIsStateful()
          .SetShapeFn(ApplyShape)
          .Doc("Adds an IndexedSlices gradient (indices, values with one row per index), or "
               "drops it when local_step is stale. `gradient_shape` is read only when "
               "has_known_shape."));
  registry->Register(
      OpDefBuilder("SparseAccumulatorTakeGradient")
          .Input("handle: string")
          .Input("num_required: int32")
          .Output("indices: int64")
          .Output("values: dtype")
          .Output("shape: int64")
          .Attr("dtype: numbertype")
          .SetIsStateful()
          .SetShapeFn(SparseTakeShape)
          .Doc("Waits for `num_required` gradients, then gives the accumulated IndexedSlices "
               "(indices increasing), empties it and advances its step by one."));
}

}  // namespace weir
