// Functional control flow (If, Case, While and their stateless forms): the
// branches and bodies are functions of the graph's library, named by "func"
// attrs. They have no kernels: the step compiler lowers them to Switch,
// Merge and loop frames (graph/lower_functional_ops.h). ToBool is what that
// lowering uses for a predicate that is not a bool scalar.
#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/ops/all_ops.h"

namespace weir {
namespace {

// The shapes the node declares (output_shapes, one per output), else
// unknown: the branch and body functions are not visible to a shape
// function. A While's body may change a loop variable's shape, so its
// inputs' shapes are no bound either.
Status DeclaredOutputShapes(InferenceContext* c) {
  auto it = c->attrs().find("output_shapes");
  if (it == c->attrs().end() || !it->second.is_list()) return Status::OK();
  const std::vector<PartialShape>& shapes = it->second.list().shape;
  if (shapes.empty()) return Status::OK();
  if (static_cast<int>(shapes.size()) != c->num_outputs()) {
    return errors::InvalidArgument("output_shapes has ", shapes.size(), " shapes for ",
                                   c->num_outputs(), " outputs");
  }
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, shapes[i]);
  return Status::OK();
}

Status ScalarShape(InferenceContext* c) {
  c->set_output(0, PartialShape(std::vector<int64_t>{}));
  return Status::OK();
}

OpDefBuilder IfOp(const char* name) {
  return std::move(OpDefBuilder(name)
                       .Input("cond: Tcond")
                       .Input("input: Tin")
                       .Output("output: Tout")
                       .Attr("Tcond: type")
                       .Attr("Tin: list(type) >= 0")
                       .Attr("Tout: list(type) >= 0")
                       .Attr("then_branch: func")
                       .Attr("else_branch: func")
                       .Attr("output_shapes: list(shape) = []")
                       .SetShapeFn(DeclaredOutputShapes));
}

OpDefBuilder CaseOp(const char* name) {
  return std::move(OpDefBuilder(name)
                       .Input("branch_index: int32")
                       .Input("input: Tin")
                       .Output("output: Tout")
                       .Attr("Tin: list(type) >= 0")
                       .Attr("Tout: list(type) >= 0")
                       .Attr("branches: list(func) >= 1")
                       .Attr("output_shapes: list(shape) = []")
                       .SetShapeFn(DeclaredOutputShapes));
}

OpDefBuilder WhileOp(const char* name) {
  return std::move(OpDefBuilder(name)
                       .Input("input: T")
                       .Output("output: T")
                       .Attr("T: list(type) >= 0")
                       .Attr("cond: func")
                       .Attr("body: func")
                       .Attr("output_shapes: list(shape) = []")
                       .Attr("parallel_iterations: int = 10")
                       .SetShapeFn(DeclaredOutputShapes));
}

}  // namespace

void RegisterFunctionalOps(OpRegistry* registry) {
  registry->Register(IfOp("If").SetIsStateful().Doc(
      "then_branch(input) if cond is true, else else_branch(input). A cond that is not a bool "
      "scalar is true when it is a nonzero scalar or a non-empty tensor. The branches may have "
      "side effects."));
  registry->Register(IfOp("StatelessIf").Doc(
      "then_branch(input) if cond is true, else else_branch(input); as If, for branches without "
      "side effects."));
  registry->Register(CaseOp("Case").SetIsStateful().Doc(
      "branches[branch_index](input); an index outside [0, N) runs the last branch. The "
      "branches may have side effects."));
  registry->Register(CaseOp("StatelessCase").Doc(
      "branches[branch_index](input); an index outside [0, N) runs the last branch. As Case, "
      "for branches without side effects."));
  registry->Register(WhileOp("While").SetIsStateful().Doc(
      "Sets the loop variables to input, then to body(variables) while cond(variables) is true; "
      "outputs their last values. cond's result counts as ToBool's. At most "
      "parallel_iterations iterations run at once. The body may have side effects."));
  registry->Register(WhileOp("StatelessWhile").Doc(
      "As While, for a cond and body without side effects."));
  registry->Register(OpDefBuilder("ToBool")
                         .Input("input: T")
                         .Output("output: bool")
                         .Attr("T: type")
                         .SetShapeFn(ScalarShape)
                         .Doc("Whether input counts as true: a scalar when it is nonzero (a "
                              "string when non-empty), any other tensor when it has elements."));
}

}  // namespace weir
