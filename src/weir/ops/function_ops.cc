// _Arg and _Retval: how a step's feeds enter and fetches leave a partition.
// The session inserts them; users never build them.
#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/ops/all_ops.h"

namespace weir {

void RegisterFunctionOps(OpRegistry* registry) {
  registry->Register(OpDefBuilder("_Arg")
                         .Output("output: T")
                         .Attr("T: type")
                         .Attr("index: int >= 0")
                         .SetIsStateful()  // as TensorFlow's: never folded or merged
                         .Doc("Reads argument `index` of the step's call frame (a feed)."));
  registry->Register(OpDefBuilder("_Retval")
                         .Input("input: T")
                         .Attr("T: type")
                         .Attr("index: int >= 0")
                         .SetIsStateful()
                         .Doc("Writes `input` to return value `index` of the call frame (a fetch)."));
}

}  // namespace weir
