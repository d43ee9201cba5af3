#include "weir/ops/shape_fns.h"

#include <algorithm>
#include <limits>

#include "weir/framework/array_shape_rules.h"
#include "weir/framework/axes.h"
#include "weir/framework/broadcast_shape.h"
#include "weir/framework/int_tensor_values.h"
#include "weir/framework/shape_inference.h"
#include "weir/framework/tensor.h"

namespace weir {

Status ScalarInputs(InferenceContext* c, std::initializer_list<int> inputs) {
  for (int input : inputs) {
    PartialShape unused;
    WEIR_RETURN_IF_ERROR(c->WithRank(input, 0, &unused));
  }
  return Status::OK();
}

Status UnchangedShape(InferenceContext* c) {
  c->set_output(0, c->input(0));
  if (const HandleData* data = c->input_handle_data(0)) c->set_output_handle_data(0, *data);
  return Status::OK();
}

Status BroadcastBinaryOpShape(InferenceContext* c) {
  StatusOr<PartialShape> out = BroadcastShapes(c->input(0), c->input(1));
  if (!out.ok()) {
    bool incompatible_shape_error = true;
    if (c->attrs().count("incompatible_shape_error") != 0) {
      WEIR_RETURN_IF_ERROR(c->GetAttr("incompatible_shape_error", &incompatible_shape_error));
    }
    if (incompatible_shape_error) return out.status();
    c->set_output(0, PartialShape::UnknownRank());
    return Status::OK();
  }
  c->set_output(0, std::move(out).value());
  return Status::OK();
}

Status BroadcastAllInputsShape(InferenceContext* c) {
  PartialShape out = c->input(0);
  for (int i = 1; i < c->num_inputs(); ++i) {
    WEIR_ASSIGN_OR_RETURN(out, BroadcastShapes(out, c->input(i)));
  }
  c->set_output(0, std::move(out));
  return Status::OK();
}

Status MergeAllInputsShape(InferenceContext* c) {
  PartialShape out = c->input(0);
  for (int i = 1; i < c->num_inputs(); ++i) {
    StatusOr<PartialShape> merged = out.Merge(c->input(i));
    if (!merged.ok()) {
      return errors::InvalidArgument("all inputs must have the same shape, but input ", i,
                                     " has shape ", c->input(i), " and the inputs before it ", out);
    }
    out = std::move(merged).value();
  }
  c->set_output(0, std::move(out));
  return Status::OK();
}

Status SelectShape(InferenceContext* c) {
  const PartialShape& condition = c->input(0);
  StatusOr<PartialShape> data = c->input(1).Merge(c->input(2));
  if (!data.ok()) {
    return errors::InvalidArgument("t and e must have the same shape, not ", c->input(1), " and ",
                                   c->input(2));
  }
  PartialShape out = std::move(data).value();
  if (condition.rank() == 0 || !condition.known_rank()) {
    // A scalar condition picks a whole input; an unknown one might.
  } else if (condition.rank() == 1 && (!out.known_rank() || out.rank() > 1)) {
    // A vector over the first dim (or, for an unknown rank, maybe the shape).
    if (out.known_rank()) {
      std::vector<int64_t> dims = out.dim_sizes();
      Status merged = InferenceContext::MergeDim(condition.dim(0), dims[0], &dims[0]);
      if (!merged.ok()) {
        return errors::InvalidArgument("condition ", condition,
                                       " must have one element per row of t and e ", out);
      }
      out = PartialShape(std::move(dims));
    }
  } else {
    StatusOr<PartialShape> merged = out.Merge(condition);
    if (!merged.ok()) {
      return errors::InvalidArgument("condition ", condition,
                                     " must be a scalar, a vector over the first dim of t and "
                                     "e, or their shape ",
                                     out);
    }
    out = std::move(merged).value();
  }
  c->set_output(0, std::move(out));
  return Status::OK();
}

Status MatMulShape(InferenceContext* c) {
  bool transpose_a = false, transpose_b = false;
  WEIR_RETURN_IF_ERROR(c->GetAttr("transpose_a", &transpose_a));
  WEIR_RETURN_IF_ERROR(c->GetAttr("transpose_b", &transpose_b));
  PartialShape a, b;
  WEIR_RETURN_IF_ERROR(c->WithRank(0, 2, &a));
  WEIR_RETURN_IF_ERROR(c->WithRank(1, 2, &b));
  const int64_t m = a.dim(transpose_a ? 1 : 0);
  const int64_t k_a = a.dim(transpose_a ? 0 : 1);
  const int64_t k_b = b.dim(transpose_b ? 1 : 0);
  const int64_t n = b.dim(transpose_b ? 0 : 1);
  if (k_a >= 0 && k_b >= 0 && k_a != k_b) {
    return errors::InvalidArgument("Matrix size-incompatible: a ", c->input(0),
                                   " (transpose_a=", transpose_a ? "true" : "false", ") and b ",
                                   c->input(1), " (transpose_b=", transpose_b ? "true" : "false",
                                   ") have inner dimensions ", k_a, " and ", k_b);
  }
  c->set_output(0, PartialShape({m, n}));
  return Status::OK();
}

Status ReductionShape(InferenceContext* c) {
  bool keep_dims = false;
  WEIR_RETURN_IF_ERROR(c->GetAttr("keep_dims", &keep_dims));
  const PartialShape& input = c->input(0);
  const PartialShape& axes_shape = c->input(1);
  if (axes_shape.known_rank() && axes_shape.rank() > 1) {
    return errors::InvalidArgument("reduction axes must be a scalar or a vector but have shape ",
                                   axes_shape);
  }
  const Tensor* axes_tensor = c->input_tensor(1);
  if (axes_tensor == nullptr) {
    // The axes are not known: only the rank may be.
    if (!input.known_rank()) {
      c->set_output(0, PartialShape::UnknownRank());
    } else if (axes_shape.num_elements() == 0) {
      c->set_output(0, input);
    } else if (keep_dims) {
      c->set_output(0, PartialShape::UnknownDims(input.rank()));
    } else if (axes_shape.IsFullyDefined()) {
      // Axes are distinct, so exactly that many dims go away.
      const int64_t removed = axes_shape.num_elements();
      if (removed > input.rank()) {
        return errors::InvalidArgument("cannot reduce ", removed,
                                       " distinct axes of an input of shape ", input);
      }
      c->set_output(0, PartialShape::UnknownDims(input.rank() - static_cast<int>(removed)));
    } else {
      c->set_output(0, PartialShape::UnknownRank());
    }
    return Status::OK();
  }
  WEIR_ASSIGN_OR_RETURN(std::vector<int64_t> axes, IntTensorValues(*axes_tensor, "reduction axes"));
  if (!input.known_rank()) {
    c->set_output(0, PartialShape::UnknownRank());
    return Status::OK();
  }
  WEIR_ASSIGN_OR_RETURN(std::vector<int> reduced,
                        NormalizeReductionAxes(axes, input.rank(), input));
  std::vector<int64_t> dims;
  for (int i = 0; i < input.rank(); ++i) {
    const bool is_reduced = std::binary_search(reduced.begin(), reduced.end(), i);
    if (!is_reduced) {
      dims.push_back(input.dim(i));
    } else if (keep_dims) {
      dims.push_back(1);
    }
  }
  c->set_output(0, PartialShape(std::move(dims)));
  return Status::OK();
}

StatusOr<std::optional<std::vector<int64_t>>> ShapeVectorInput(InferenceContext* c, int input) {
  const PartialShape& shape_shape = c->input(input);
  if (shape_shape.known_rank() && shape_shape.rank() != 1) {
    return errors::InvalidArgument("the shape input must be a vector but has shape ", shape_shape);
  }
  // Bounded before any value is read: a shape of more than kMaxRank dims
  // is an error however it is given.
  WEIR_ASSIGN_OR_RETURN(int rank,
                        InferenceContext::RankFromLength(
                            shape_shape.known_rank() ? shape_shape.dim(0) : PartialShape::kUnknown,
                            "the shape input"));
  const Tensor* shape_tensor = c->input_tensor(input);
  if (shape_tensor == nullptr) {
    c->set_output(0, rank < 0 ? PartialShape::UnknownRank() : PartialShape::UnknownDims(rank));
    return std::optional<std::vector<int64_t>>();
  }
  WEIR_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntTensorValues(*shape_tensor, "shape input"));
  return std::optional<std::vector<int64_t>>(std::move(dims));
}

Status ReshapeShape(InferenceContext* c) {
  WEIR_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> dims, ShapeVectorInput(c, 1));
  if (!dims) return Status::OK();
  WEIR_ASSIGN_OR_RETURN(PartialShape out, ReshapeTarget(c->input(0), *dims));
  c->set_output(0, std::move(out));
  return Status::OK();
}

}  // namespace weir
