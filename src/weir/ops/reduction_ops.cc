// The math family's reductions: reductions over a set of axes (Sum is
// declared with the arithmetic in math_ops.cc), index reductions along one
// axis, and the batched matrix product, whose inner dimension is reduced.
// Type sets follow TensorFlow's declarations so imported graphs validate;
// which of those types have CPU kernels is up to kernels/.
#include <algorithm>
#include <string>

#include "weir/base/str_util.h"
#include "weir/framework/axes.h"
#include "weir/framework/broadcast_shape.h"
#include "weir/framework/einsum_spec.h"
#include "weir/framework/int_tensor_values.h"
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
  WEIR_ASSIGN_OR_RETURN(std::vector<int64_t> axis, IntTensorValues(*dimension_tensor, "dimension"));
  WEIR_ASSIGN_OR_RETURN(std::vector<int> normalized,
                        NormalizeReductionAxes(axis, input.rank(), input));
  std::vector<int64_t> dims = input.dim_sizes();
  dims.erase(dims.begin() + normalized.at(0));
  c->set_output(0, PartialShape(std::move(dims)));
  return Status::OK();
}

// x [..., m, k] times y [..., k, n] (adj_x / adj_y swap the last two dims of
// an operand) is [..., m, n], the batch dims broadcast NumPy-style.
Status BatchMatMulV2Shape(InferenceContext* c) {
  bool adj_x = false, adj_y = false;
  WEIR_RETURN_IF_ERROR(c->GetAttr("adj_x", &adj_x));
  WEIR_RETURN_IF_ERROR(c->GetAttr("adj_y", &adj_y));
  PartialShape x, y;
  WEIR_RETURN_IF_ERROR(c->WithRankAtLeast(0, 2, &x));
  WEIR_RETURN_IF_ERROR(c->WithRankAtLeast(1, 2, &y));
  if (!x.known_rank() || !y.known_rank()) {
    c->set_output(0, PartialShape::UnknownRank());
    return Status::OK();
  }
  const int rx = x.rank(), ry = y.rank();
  const int64_t m = x.dim(adj_x ? rx - 1 : rx - 2);
  const int64_t k_x = x.dim(adj_x ? rx - 2 : rx - 1);
  const int64_t k_y = y.dim(adj_y ? ry - 1 : ry - 2);
  const int64_t n = y.dim(adj_y ? ry - 2 : ry - 1);
  if (k_x >= 0 && k_y >= 0 && k_x != k_y) {
    return errors::InvalidArgument(
        "Matrix size-incompatible: x ", x, " (adj_x=", adj_x ? "true" : "false", ") and y ", y,
        " (adj_y=", adj_y ? "true" : "false", ") have inner dimensions ", k_x, " and ", k_y);
  }
  const std::vector<int64_t>& xd = x.dim_sizes();
  const std::vector<int64_t>& yd = y.dim_sizes();
  WEIR_ASSIGN_OR_RETURN(
      PartialShape batch,
      BroadcastShapes(PartialShape(std::vector<int64_t>(xd.begin(), xd.end() - 2)),
                      PartialShape(std::vector<int64_t>(yd.begin(), yd.end() - 2))));
  std::vector<int64_t> dims = batch.dim_sizes();
  dims.push_back(m);
  dims.push_back(n);
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

// TensorFlow's index types differ: ArgMax takes int16 axes and gives int16
// or uint16 indices too, ArgMin does not.
void RegisterArgReduction(OpRegistry* registry, const char* name, const char* index_types,
                          const char* output_types, const char* doc) {
  registry->Register(OpDefBuilder(name)
                         .Input("input: T")
                         .Input("dimension: Tidx")
                         .Output("output: output_type")
                         .Attr("T: {realnumbertype, bool}")
                         .Attr(StrCat("Tidx: ", index_types, " = int32"))
                         .Attr(StrCat("output_type: ", output_types, " = int64"))
                         .SetShapeFn(ArgReductionShape)
                         .Doc(doc));
}

// The output of an Einsum equation on the operands' shapes; unknown rank
// when a "..." covers an operand of unknown rank.
Status EinsumShape(InferenceContext* c) {
  std::string text;
  WEIR_RETURN_IF_ERROR(c->GetAttr("equation", &text));
  WEIR_ASSIGN_OR_RETURN(EinsumEquation equation, ParseEinsumEquation(text, c->num_inputs()));
  std::vector<PartialShape> shapes;
  for (int i = 0; i < c->num_inputs(); ++i) {
    const std::vector<int>& term = equation.inputs[i];
    if (c->input(i).known_rank()) {
      shapes.push_back(c->input(i));
    } else if (std::count(term.begin(), term.end(), EinsumEquation::kEllipsisLabel) == 0) {
      shapes.push_back(PartialShape::UnknownDims(static_cast<int>(term.size())));
    } else {
      c->set_output(0, PartialShape::UnknownRank());
      return Status::OK();
    }
  }
  WEIR_ASSIGN_OR_RETURN(EinsumDims dims, ResolveEinsum(equation, text, shapes));
  std::vector<int64_t> out;
  for (int label : dims.output) out.push_back(dims.label_size[label]);
  WEIR_ASSIGN_OR_RETURN(PartialShape output, PartialShape::FromDims(std::move(out)));
  c->set_output(0, std::move(output));
  return Status::OK();
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
  RegisterArgReduction(registry, "ArgMax", "{int16, int32, int64}",
                       "{int16, uint16, int32, int64}",
                       "Index of the largest value along axis `dimension`; ties give the "
                       "first index and a NaN counts as larger than any number (the first "
                       "NaN wins). The axis must not be empty.");
  RegisterArgReduction(registry, "ArgMin", "{int32, int64}", "{int32, int64}",
                       "Index of the smallest value along axis `dimension`; ties give the "
                       "first index and a NaN counts as smaller than any number (the first "
                       "NaN wins). The axis must not be empty.");
  registry->Register(OpDefBuilder("BatchMatMulV2")
                         .Input("x: T")
                         .Input("y: T")
                         .Output("output: T")
                         .Attr("T: {bfloat16, half, float, double, int16, int32, int64, uint8, "
                               "uint16, uint32, uint64, complex64, complex128}")
                         .Attr("adj_x: bool = false")
                         .Attr("adj_y: bool = false")
                         // Gradient-fusion hints TensorFlow writes; no effect.
                         .Attr("grad_x: bool = false")
                         .Attr("grad_y: bool = false")
                         .SetShapeFn(BatchMatMulV2Shape)
                         .Doc("Matrix products of the last two dims of x and y (adj_x / adj_y "
                              "take the adjoint of an operand), over batch dims that broadcast "
                              "NumPy-style: [..., m, k] x [..., k, n] -> [..., m, n]."));
  registry->Register(OpDefBuilder("Einsum")
                         .Input("inputs: N * T")
                         .Output("output: T")
                         .Attr("equation: string")
                         .Attr("N: int >= 1")
                         .Attr("T: type")
                         .SetShapeFn(EinsumShape)
                         .Doc("Einstein summation over one or two operands, as the equation "
                              "says: 'ij,jk->ik' is a matrix product, 'ii->i' a diagonal, "
                              "'...ij->...ji' a batched transpose; labels missing from the "
                              "output are summed."));
}

}  // namespace weir
