// Strings made from other values or other strings, elementwise or by
// reduction: AsString, the hash buckets (StringToHashBucketFast: FarmHash's
// Fingerprint64, TensorFlow's, so bucket ids match TF's), case and
// whitespace, web-safe base64, and ReduceJoin. OpDefs are TensorFlow 2.21's.
#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/ops/all_ops.h"
#include "weir/ops/shape_fns.h"

namespace weir {

void RegisterStringConvertOps(OpRegistry* registry) {
  registry->Register(
      OpDefBuilder("AsString")
          .Input("input: T")
          .Output("output: string")
          .Attr("T: {float, double, int8, int16, int32, int64, uint8, uint16, uint32, uint64, "
                "bool, string, complex64, complex128, half, bfloat16, variant}")
          .Attr("precision: int = -1")
          .Attr("scientific: bool = false")
          .Attr("shortest: bool = false")
          .Attr("width: int = -1")
          .Attr("fill: string = ''")
          .SetShapeFn(UnchangedShape)
          .Doc("Each element as text: integers in decimal, floats as printf's %f (%e with "
               "`scientific`, %g with `shortest`) with `precision` digits, bools as "
               "true/false; `width` pads on the left with `fill` (one character: a space, "
               "or '0' for numbers)."));
  registry->Register(OpDefBuilder("StringToHashBucketFast")
                         .Input("input: string")
                         .Output("output: int64")
                         .Attr("num_buckets: int >= 1")
                         .SetShapeFn(UnchangedShape)
                         .Doc("Each string's bucket: FarmHash Fingerprint64 modulo `num_buckets` "
                              "(TensorFlow's, so the ids are TensorFlow's)."));
  registry->Register(OpDefBuilder("StringStrip")
                         .Input("input: string")
                         .Output("output: string")
                         .SetShapeFn(UnchangedShape)
                         .Doc("Each string without its leading and trailing ASCII whitespace."));
  for (const char* op : {"StringLower", "StringUpper"}) {
    registry->Register(OpDefBuilder(op)
                           .Input("input: string")
                           .Output("output: string")
                           .Attr("encoding: string = ''")
                           .SetShapeFn(UnchangedShape)
                           .Doc("Each string with its ASCII letters in the other case "
                                "(`encoding` '' or 'utf-8': other characters are kept)."));
  }
  registry->Register(OpDefBuilder("EncodeBase64")
                         .Input("input: string")
                         .Output("output: string")
                         .Attr("pad: bool = false")
                         .SetShapeFn(UnchangedShape)
                         .Doc("Web-safe base64 ('-' and '_' for '+' and '/') of each string, "
                              "'='-padded with `pad`."));
  registry->Register(OpDefBuilder("DecodeBase64")
                         .Input("input: string")
                         .Output("output: string")
                         .SetShapeFn(UnchangedShape)
                         .Doc("The bytes of each web-safe base64 string, padded or not; "
                              "InvalidArgument for any other character."));
  registry->Register(
      OpDefBuilder("ReduceJoin")
          .Input("inputs: string")
          .Input("reduction_indices: int32")
          .Output("output: string")
          .Attr("keep_dims: bool = false")
          .Attr("separator: string = ''")
          .SetShapeFn(ReductionShape)
          .Doc("The strings joined with `separator` along the axes `reduction_indices` "
               "(negative from the end; empty: none), in row-major order."));
}

}  // namespace weir
