// The summary family (TensorFlow's logging ops): ops that turn tensors into
// serialized Summary protos (proto/summary.proto) for TensorBoard, and
// Assert, with TensorFlow's declarations. train/event_writer.h writes the
// summaries to event files.
#include "weir/framework/op_def.h"
#include "weir/ops/all_ops.h"
#include "weir/ops/array_shape_fns.h"

namespace weir {
namespace {

constexpr char kRealNumberTypes[] =
    "{float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64}";

}  // namespace

void RegisterSummaryOps(OpRegistry* registry) {
  registry->Register(
      OpDefBuilder("ScalarSummary")
          .Input("tags: string")
          .Input("values: T")
          .Output("summary: string")
          .Attr(std::string("T: ") + kRealNumberTypes)
          .SetShapeFn(ScalarShape)
          .Doc("A Summary with one simple_value per element: values[i] (as float) under "
               "tags[i]. tags and values have the same shape."));
  registry->Register(
      OpDefBuilder("HistogramSummary")
          .Input("tag: string")
          .Input("values: T")
          .Output("summary: string")
          .Attr(std::string("T: ") + kRealNumberTypes + " = float")
          .SetShapeFn(ScalarShape)
          .Doc("A Summary with one histogram of all of `values` under the scalar `tag`, in "
               "TensorFlow's default buckets (limits +-1e-12 * 1.1^k, 0 and +-DBL_MAX; runs of "
               "empty buckets merged). NaN or infinite values are InvalidArgument."));
  registry->Register(
      OpDefBuilder("MergeSummary")
          .Input("inputs: N * string")
          .Output("summary: string")
          .Attr("N: int >= 1")
          .SetShapeFn(ScalarShape)
          .Doc("One Summary holding the values of every serialized Summary in `inputs` (of "
               "any shape), in order. A tag seen twice is InvalidArgument."));
  registry->Register(
      OpDefBuilder("Assert")
          .Input("condition: bool")
          .Input("data: T")
          .Attr("T: list(type) >= 1")
          .Attr("summarize: int = 3")
          .SetIsStateful()
          .Doc("InvalidArgument 'assertion failed' with the first `summarize` entries of each "
               "`data` tensor when the scalar `condition` is false; nothing otherwise. Run it "
               "as a control input of what it guards."));
}

}  // namespace weir
