// The string family: regular-expression matching and replacement on RE2
// syntax, with TensorFlow's op signatures. The Static* forms take the
// pattern as an attr (compiled once per kernel); the others take it as a
// scalar string input. StringJoin, the string op of save graphs, is in
// io_ops.cc; StringFormat in logging_ops.cc; StringToNumber in parsing_ops.cc.
#include "weir/ops/string_ops.h"

#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/ops/shape_fns.h"

namespace weir {
namespace {

// The output has input 0's shape; inputs 1.. (pattern, rewrite) are scalars.
Status InputShapeScalarArgs(InferenceContext* c) {
  PartialShape unused;
  for (int i = 1; i < c->num_inputs(); ++i) WEIR_RETURN_IF_ERROR(c->WithRank(i, 0, &unused));
  c->set_output(0, c->input(0));
  return Status::OK();
}

}  // namespace

void RegisterStringOps(OpRegistry* registry) {
  registry->Register(
      OpDefBuilder("StaticRegexFullMatch")
          .Input("input: string")
          .Output("output: bool")
          .Attr("pattern: string")
          .SetShapeFn(UnchangedShape)
          .Doc("Whether each string of `input` matches the RE2 regular expression `pattern` "
               "as a whole (not only a substring). An invalid pattern fails when the kernel "
               "is built."));
  registry->Register(
      OpDefBuilder("RegexFullMatch")
          .Input("input: string")
          .Input("pattern: string")
          .Output("output: bool")
          .SetShapeFn(InputShapeScalarArgs)
          .Doc("Whether each string of `input` matches the RE2 regular expression `pattern` "
               "(a scalar) as a whole."));
  registry->Register(
      OpDefBuilder("StaticRegexReplace")
          .Input("input: string")
          .Output("output: string")
          .Attr("pattern: string")
          .Attr("rewrite: string")
          .Attr("replace_global: bool = true")
          .SetShapeFn(UnchangedShape)
          .Doc("Each string of `input` with the matches of the RE2 regular expression "
               "`pattern` replaced by `rewrite`, in which \\1 to \\9 insert the groups and "
               "\\0 the whole match (\\\\ is a backslash): every non-overlapping match when "
               "`replace_global`, else the first."));
  registry->Register(
      OpDefBuilder("RegexReplace")
          .Input("input: string")
          .Input("pattern: string")
          .Input("rewrite: string")
          .Output("output: string")
          .Attr("replace_global: bool = true")
          .SetShapeFn(InputShapeScalarArgs)
          .Doc("StaticRegexReplace with `pattern` and `rewrite` as scalar string inputs."));
  registry->Register(
      OpDefBuilder("StringLength")
          .Input("input: string")
          .Output("output: int32")
          .Attr("unit: {'BYTE', 'UTF8_CHAR'} = 'BYTE'")
          .SetShapeFn(UnchangedShape)
          .Doc("The length of each string in bytes, or in UTF-8 characters (a byte that does "
               "not continue a character counts as one)."));
  registry->Register(
      OpDefBuilder("Substr")
          .Input("input: string")
          .Input("pos: T")
          .Input("len: T")
          .Output("output: string")
          .Attr("T: {int32, int64}")
          .Attr("unit: {'BYTE', 'UTF8_CHAR'} = 'BYTE'")
          .SetShapeFn(BroadcastAllInputsShape)
          .Doc("input[pos : pos + len] of each string (bytes or UTF-8 characters), pos "
               "negative counting from the end; pos and len have one shape and broadcast "
               "against input; a pos past the end is an error."));
}

}  // namespace weir
