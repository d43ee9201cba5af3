// The logging family: Print (TensorFlow 1's pass-through that prints),
// PrintV2 and StringFormat (what tf.print builds), and CheckNumerics[V2]
// (tf.debugging.check_numerics), with TensorFlow 2.21's declarations.
// Assert lives with the summaries (summary_ops.cc).
#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/ops/all_ops.h"
#include "weir/ops/array_shape_fns.h"
#include "weir/ops/shape_fns.h"

namespace weir {

void RegisterLoggingOps(OpRegistry* registry) {
  registry->Register(
      OpDefBuilder("Print")
          .Input("input: T")
          .Input("data: U")
          .Output("output: T")
          .Attr("T: type")
          .Attr("U: list(type) >= 0")
          .Attr("message: string = ''")
          .Attr("first_n: int = -1")
          .Attr("summarize: int = 3")
          .SetIsStateful()
          .SetShapeFn(UnchangedShape)
          .Doc("Passes `input` through and writes `message` followed by each `data` tensor's "
               "first `summarize` entries (all when negative) in brackets to stderr, the first "
               "`first_n` times it runs (always when negative)."));
  for (const char* name : {"CheckNumerics", "CheckNumericsV2"}) {
    registry->Register(
        OpDefBuilder(name)
            .Input("tensor: T")
            .Output("output: T")
            .Attr("T: {bfloat16, half, float, double}")
            .Attr("message: string")
            .SetIsStateful()
            .SetShapeFn(UnchangedShape)
            .Doc(std::string(name) == "CheckNumerics"
                     ? "Passes `tensor` through, or fails the step with InvalidArgument "
                       "\"<message> : Tensor had NaN values\" (Inf, or Inf and NaN) when it "
                       "holds any."
                     : "CheckNumerics that tells -Inf from +Inf: \"<message> : Tensor had "
                       "-Inf, +Inf, and NaN values\" (those present)."));
  }
  registry->Register(
      OpDefBuilder("PrintV2")
          .Input("input: string")
          .Attr("output_stream: string = 'stderr'")
          .Attr("end: string = '\n'")
          .SetIsStateful()
          .SetShapeFn([](InferenceContext* c) {
            PartialShape unused;
            return c->WithRank(0, 0, &unused);
          })
          .Doc("Writes the scalar string `input` and then `end` to `output_stream`: 'stderr', "
               "'stdout', 'log(info)', 'log(warning)', 'log(error)' or 'file://<path>' "
               "(appended)."));
  registry->Register(
      OpDefBuilder("StringFormat")
          .Input("inputs: T")
          .Output("output: string")
          .Attr("T: list(type) >= 0")
          .Attr("template: string = '%s'")
          .Attr("placeholder: string = '%s'")
          .Attr("summarize: int = 3")
          .SetShapeFn(ScalarShape)
          .Doc("`template` with its i-th `placeholder` replaced by inputs[i] as tf.print shows "
               "tensors: numpy-like, each dimension longer than 2 * `summarize` elided to its "
               "first and last `summarize` entries (none elided when negative). The template "
               "must have as many placeholders as there are inputs."));
}

}  // namespace weir
