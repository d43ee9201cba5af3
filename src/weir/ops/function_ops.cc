// _Arg and _Retval: how a step's feeds enter and fetches leave a partition
// (the session inserts them; users never build them). PartitionedCall and
// StatefulPartitionedCall: calls of a function of the graph's library,
// inlined when a step is compiled (graph/function_inline.h), so they have no
// kernels; nor has SymbolicGradient, expanded then into the gradient graph
// of its function (graph/symbolic_gradient.h).
#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/ops/all_ops.h"

namespace weir {
namespace {

// The shapes TensorFlow recorded on the node ("_output_shapes"), else
// unknown. Graph import refines them from the function's body
// (InferFunctionCallShapes), which a shape function cannot see.
Status CallShape(InferenceContext* c) {
  auto it = c->attrs().find("_output_shapes");
  if (it == c->attrs().end() || !it->second.is_list()) return Status::OK();
  const std::vector<PartialShape>& shapes = it->second.list().shape;
  if (static_cast<int>(shapes.size()) != c->num_outputs()) return Status::OK();
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, shapes[i]);
  return Status::OK();
}

OpDefBuilder CallOp(const char* name) {
  return std::move(OpDefBuilder(name)
                       .Input("args: Tin")
                       .Output("output: Tout")
                       .Attr("Tin: list(type) >= 0")
                       .Attr("Tout: list(type) >= 0")
                       .Attr("f: func")
                       .Attr("config: string = ''")
                       .Attr("config_proto: string = ''")
                       .Attr("executor_type: string = ''")
                       .SetShapeFn(CallShape));
}

}  // namespace

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
  registry->Register(CallOp("PartitionedCall")
                         .Doc("Calls function `f` on `args` (a function without side effects)."));
  registry->Register(
      OpDefBuilder("SymbolicGradient")
          .Input("input: Tin")
          .Output("output: Tout")
          .Attr("Tin: list(type) >= 1")
          .Attr("Tout: list(type) >= 1")
          .Attr("f: func")
          .SetShapeFn([](InferenceContext* c) {
            // The gradient of input i has input i's shape.
            for (int i = 0; i < c->num_outputs() && i < c->num_inputs(); ++i) {
              c->set_output(i, c->input(i));
            }
            return Status::OK();
          })
          .Doc("The gradient of function `f`: given f's inputs and one gradient per f output, "
               "the gradient of each f input. Expanded into f's gradient graph (or a call of the "
               "gradient function its library registers) when a step is compiled."));
  registry->Register(CallOp("StatefulPartitionedCall")
                         .SetIsStateful()
                         .Doc("Calls function `f` on `args`; its side effects happen even when "
                              "no output is used."));
}

}  // namespace weir
