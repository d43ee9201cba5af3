// The math family's reductions: reductions over a set of axes (Sum is
// declared with the arithmetic in math_ops.cc) and index reductions along
// one axis. Type sets follow TensorFlow's declarations so imported graphs
// validate; which of those types have CPU kernels is up to kernels/.
#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/framework/tensor.h"
#include "weir/ops/all_ops.h"
#include "weir/ops/shape_fns.h"

namespace weir {
namespace {

// Input 0 with the axis named by scalar input 1 removed.
Status ArgReductionShape(InferenceContext* c) {
  const PartialShape& input = c->input(0);
  const PartialShape& dimension = c->input(1);
  if (dimension.known_rank() && dimension.rank() != 0) {
    return errors::InvalidArgument("dimension must be a scalar but has shape ", dimension);
  }
  PartialShape checked;
  WEIR_RETURN_IF_ERROR(c->WithRankAtLeast(0, 1, &checked));
  if (!input.known_rank()) {
    c->set_output(0, PartialShape::UnknownRank());
    return Status::OK();
  }
  const Tensor* dimension_tensor = c->input_tensor(1);
  if (dimension_tensor == nullptr) {
    c->set_output(0, PartialShape::UnknownDims(input.rank() - 1));
    return Status::OK();
  }
  WEIR_ASSIGN_OR_RETURN(std::vector<int64_t> axis, IntTensorValues(*dimension_tensor,
                                                                   "dimension"));
  WEIR_ASSIGN_OR_RETURN(std::vector<int> normalized,
                        NormalizeReductionAxes(axis, input.rank(), input));
  std::vector<int64_t> dims = input.dim_sizes();
  dims.erase(dims.begin() + normalized.at(0));
  c->set_output(0, PartialShape(std::move(dims)));
  return Status::OK();
}

void RegisterReduction(OpRegistry* registry, const char* name, const char* type_spec,
                       const char* doc) {
  registry->Register(OpDefBuilder(name)
                         .Input("input: T")
                         .Input("reduction_indices: Tidx")
                         .Output("output: T")
                         .Attr("keep_dims: bool = false")
                         .Attr(type_spec)
                         .Attr("Tidx: {int32, int64} = int32")
                         .SetShapeFn(ReductionShape)
                         .Doc(doc));
}

void RegisterBoolReduction(OpRegistry* registry, const char* name, const char* doc) {
  registry->Register(OpDefBuilder(name)
                         .Input("input: bool")
                         .Input("reduction_indices: Tidx")
                         .Output("output: bool")
                         .Attr("keep_dims: bool = false")
                         .Attr("Tidx: {int32, int64} = int32")
                         .SetShapeFn(ReductionShape)
                         .Doc(doc));
}

void RegisterArgReduction(OpRegistry* registry, const char* name, const char* doc) {
  registry->Register(OpDefBuilder(name)
                         .Input("input: T")
                         .Input("dimension: Tidx")
                         .Output("output: output_type")
                         .Attr("T: {numbertype, bool}")
                         .Attr("Tidx: {int16, int32, int64} = int32")
                         .Attr("output_type: {int16, uint16, int32, int64} = int64")
                         .SetShapeFn(ArgReductionShape)
                         .Doc(doc));
}

}  // namespace

void RegisterReductionOps(OpRegistry* registry) {
  RegisterReduction(registry, "Mean", "T: numbertype",
                    "Mean of `input` over the axes in `reduction_indices` (integers divide "
                    "toward zero); the mean of nothing is NaN (0 for integers).");
  RegisterReduction(registry, "Prod", "T: numbertype",
                    "Product of `input` over the axes in `reduction_indices` (integers wrap); "
                    "the product of nothing is 1.");
  RegisterReduction(registry, "Max", "T: realnumbertype",
                    "Maximum of `input` over the axes in `reduction_indices`; NaN wins, and "
                    "the maximum of nothing is -inf (the lowest value for integers).");
  RegisterReduction(registry, "Min", "T: realnumbertype",
                    "Minimum of `input` over the axes in `reduction_indices`; NaN wins, and "
                    "the minimum of nothing is +inf (the highest value for integers).");
  RegisterBoolReduction(registry, "All",
                        "Logical and of `input` over the axes in `reduction_indices`; true "
                        "over nothing.");
  RegisterBoolReduction(registry, "Any",
                        "Logical or of `input` over the axes in `reduction_indices`; false "
                        "over nothing.");
  RegisterArgReduction(registry, "ArgMax",
                       "Index of the largest value along axis `dimension`; ties give the "
                       "first index and a NaN counts as larger than any number (the first "
                       "NaN wins). The axis must not be empty.");
  RegisterArgReduction(registry, "ArgMin",
                       "Index of the smallest value along axis `dimension`; ties give the "
                       "first index and a NaN counts as smaller than any number (the first "
                       "NaN wins). The axis must not be empty.");
}

}  // namespace weir
