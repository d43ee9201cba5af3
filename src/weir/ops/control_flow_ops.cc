// Control flow ops: NoOp, and the primitives of conditionals and loops
// (white paper 4.4). Their names, inputs, outputs and attrs are
// TensorFlow's, so graphs exported by tf.compat.v1 import unchanged. The
// kernels only move values; frames, iterations and deadness are the
// executor's (runtime/executor.h).
#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/ops/all_ops.h"
#include "weir/ops/array_shape_fns.h"
#include "weir/ops/shape_fns.h"

namespace weir {
namespace {

// Both outputs have the data's shape; the predicate is a scalar.
Status SwitchShape(InferenceContext* c) {
  PartialShape pred;
  WEIR_RETURN_IF_ERROR(c->WithRank(1, 0, &pred));
  c->set_output(0, c->input(0));
  c->set_output(1, c->input(0));
  // Either branch gets the handle data of a list or resource (Merge, which
  // may see either, keeps none, as TensorFlow's).
  if (const HandleData* data = c->input_handle_data(0)) {
    c->set_output_handle_data(0, *data);
    c->set_output_handle_data(1, *data);
  }
  return Status::OK();
}

// The shape all inputs agree on: a dim that differs between inputs, or an
// input of unknown or different rank (a loop's back edge before its shape is
// known), makes that dim or the whole shape unknown. Never an error: which
// input arrives is decided at run time.
Status MergeShape(InferenceContext* c) {
  PartialShape out = c->input(0);
  for (int i = 1; i < c->num_inputs() && out.known_rank(); ++i) {
    const PartialShape& in = c->input(i);
    if (!in.known_rank() || in.rank() != out.rank()) {
      out = PartialShape::UnknownRank();
      break;
    }
    std::vector<int64_t> dims = out.dim_sizes();
    for (int d = 0; d < in.rank(); ++d) {
      if (dims[d] != in.dim(d)) dims[d] = PartialShape::kUnknown;
    }
    out = PartialShape(std::move(dims));
  }
  c->set_output(0, std::move(out));
  c->set_output(1, PartialShape(std::vector<int64_t>{}));
  return Status::OK();
}

// A scalar (the executor refuses any other value at run time).
Status LoopCondShape(InferenceContext* c) {
  PartialShape pred;
  WEIR_RETURN_IF_ERROR(c->WithRank(0, 0, &pred));
  c->set_output(0, std::move(pred));
  return Status::OK();
}

}  // namespace

void RegisterControlFlowOps(OpRegistry* registry) {
  registry->Register(OpDefBuilder("NoOp").Doc(
      "Does nothing. Groups control dependencies: run it as a target to run its inputs."));
  registry->Register(
      OpDefBuilder("Switch")
          .Input("data: T")
          .Input("pred: bool")
          .Output("output_false: T")
          .Output("output_true: T")
          .Attr("T: type")
          .SetShapeFn(SwitchShape)
          .Doc("Forwards data to output_true if pred is true, else to output_false; the other "
               "output is dead, and so is everything that depends on it."));
  registry->Register(
      OpDefBuilder("Merge")
          .Input("inputs: N * T")
          .Output("output: T")
          .Output("value_index: int32")
          .Attr("T: type")
          .Attr("N: int >= 1")
          .SetShapeFn(MergeShape)
          .Doc("Forwards the first of its inputs to arrive live, and that input's index. Dead "
               "only when every input is dead. Joins the branches of a cond and, in a loop, "
               "the value entering the frame with the one from the previous iteration."));
  registry->Register(
      OpDefBuilder("Enter")
          .Input("data: T")
          .Output("output: T")
          .Attr("T: type")
          .Attr("frame_name: string")
          .Attr("is_constant: bool = false")
          .Attr("parallel_iterations: int = 10")
          .SetShapeFn(UnchangedShape)
          .Doc("Forwards data into the child frame named frame_name (its first iteration; "
               "every iteration if is_constant). At most parallel_iterations iterations of the "
               "frame run at once."));
  registry->Register(OpDefBuilder("Exit")
                         .Input("data: T")
                         .Output("output: T")
                         .Attr("T: type")
                         .SetShapeFn(UnchangedShape)
                         .Doc("Forwards data from a loop's frame to its parent frame."));
  registry->Register(OpDefBuilder("NextIteration")
                         .Input("data: T")
                         .Output("output: T")
                         .Attr("T: type")
                         .SetShapeFn(UnchangedShape)
                         .Doc("Forwards data to the next iteration of its frame."));
  registry->Register(
      OpDefBuilder("LoopCond")
          .Input("input: bool")
          .Output("output: bool")
          .SetShapeFn(LoopCondShape)
          .Doc("Forwards a loop's predicate, a scalar, to the Switches of its loop variables: "
               "true runs another iteration, false sends the variables to their Exits."));
  registry->Register(OpDefBuilder("ControlTrigger")
                         .Doc("Does nothing, and runs even when its inputs are dead: its output "
                              "is live. A control input that fires whichever branch ran."));
}

}  // namespace weir
