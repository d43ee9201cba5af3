// Shape functions of the array ops that resize or describe a tensor: Tile, Pad,
// ExpandDims/Squeeze, Fill, BroadcastTo/BroadcastArgs, Reverse, ShapeN,
// Size, Rank, IdentityN; and the helpers every array shape function uses.
#include "weir/ops/array_shape_fns.h"

#include <algorithm>

#include "weir/framework/array_shape_rules.h"
#include "weir/framework/axes.h"
#include "weir/framework/broadcast_shape.h"
#include "weir/framework/int_tensor_values.h"
#include "weir/framework/node_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/framework/space_batch_shape.h"
#include "weir/framework/tensor.h"

namespace weir {
namespace {

std::string Ints(std::span<const int64_t> values) { return StrCat("[", StrJoin(values, ","), "]"); }

}  // namespace

StatusOr<int64_t> VectorInputLength(const InferenceContext* c, int i, std::string_view what) {
  const PartialShape& s = c->input(i);
  if (!s.known_rank()) return int64_t{PartialShape::kUnknown};
  if (s.rank() != 1) {
    return errors::InvalidArgument(what, " must be a vector but has shape ", s);
  }
  return s.dim(0);
}

StatusOr<int> RankFromInputOrVector(const InferenceContext* c, int i, std::string_view what) {
  WEIR_ASSIGN_OR_RETURN(int64_t length, VectorInputLength(c, i, what));
  const PartialShape& input = c->input(0);
  if (input.known_rank() && length >= 0 && length != input.rank()) {
    return errors::InvalidArgument(what, " has ", length, " values but the input has rank ",
                                   input.rank(), " (shape ", input, ")");
  }
  if (input.known_rank()) return input.rank();
  return InferenceContext::RankFromLength(length, what);
}

void SetUnknownDims(InferenceContext* c, int output, int rank) {
  c->set_output(output, rank < 0 ? PartialShape::UnknownRank() : PartialShape::UnknownDims(rank));
}

StatusOr<std::optional<std::vector<int64_t>>> ConstantInts(const InferenceContext* c, int i,
                                                           std::string_view what) {
  const Tensor* t = c->input_tensor(i);
  if (t == nullptr) return std::optional<std::vector<int64_t>>();
  WEIR_ASSIGN_OR_RETURN(std::vector<int64_t> values, IntTensorValues(*t, what));
  return std::optional<std::vector<int64_t>>(std::move(values));
}

// ---- Tile and Pad

Status TileShape(InferenceContext* c) {
  WEIR_ASSIGN_OR_RETURN(int rank, RankFromInputOrVector(c, 1, "multiples"));
  WEIR_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> multiples,
                        ConstantInts(c, 1, "multiples"));
  if (!multiples || rank < 0) {
    SetUnknownDims(c, 0, rank);
    return Status::OK();
  }
  const PartialShape input =
      c->input(0).known_rank() ? c->input(0) : PartialShape::UnknownDims(rank);
  WEIR_ASSIGN_OR_RETURN(PartialShape out, TiledShape(input, *multiples));
  c->set_output(0, std::move(out));
  return Status::OK();
}

Status PadShape(InferenceContext* c) {
  const PartialShape& paddings_shape = c->input(1);
  int rank = c->input(0).rank();
  if (paddings_shape.known_rank()) {
    if (paddings_shape.rank() != 2 || (paddings_shape.dim(1) >= 0 && paddings_shape.dim(1) != 2)) {
      return errors::InvalidArgument("paddings must be a matrix with 2 columns but has shape ",
                                     paddings_shape);
    }
    if (rank >= 0 && paddings_shape.dim(0) >= 0 && paddings_shape.dim(0) != rank) {
      return errors::InvalidArgument("paddings has shape ", paddings_shape,
                                     " but the input has rank ", rank);
    }
    if (rank < 0) {
      WEIR_ASSIGN_OR_RETURN(rank,
                            InferenceContext::RankFromLength(paddings_shape.dim(0), "paddings"));
    }
  }
  if (c->num_inputs() == 3 && c->input(2).known_rank() && c->input(2).rank() != 0) {
    return errors::InvalidArgument("constant_values must be a scalar but has shape ", c->input(2));
  }
  std::string mode;
  if (c->node().attrs.count("mode")) WEIR_RETURN_IF_ERROR(c->GetAttr("mode", &mode));
  const Tensor* paddings = c->input_tensor(1);
  if (paddings == nullptr || rank < 0) {
    SetUnknownDims(c, 0, rank);
    return Status::OK();
  }
  WEIR_ASSIGN_OR_RETURN(std::vector<int64_t> values, IntTensorElements(*paddings, "paddings"));
  const PartialShape input =
      c->input(0).known_rank() ? c->input(0) : PartialShape::UnknownDims(rank);
  WEIR_ASSIGN_OR_RETURN(PartialShape out, PaddedShape(input, values, mode));
  c->set_output(0, std::move(out));
  return Status::OK();
}

// ---- ExpandDims and Squeeze

Status ExpandDimsShape(InferenceContext* c) {
  const PartialShape& dim_shape = c->input(1);
  if (dim_shape.num_elements() > 1) {
    return errors::InvalidArgument("dim must hold one value but has shape ", dim_shape);
  }
  WEIR_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> dim, ConstantInts(c, 1, "dim"));
  if (dim && dim->size() != 1) {
    return errors::InvalidArgument("dim must hold one value but has ", dim->size());
  }
  const PartialShape& input = c->input(0);
  if (!input.known_rank()) {
    c->set_output(0, PartialShape::UnknownRank());
  } else if (!dim) {
    c->set_output(0, PartialShape::UnknownDims(input.rank() + 1));
  } else {
    WEIR_ASSIGN_OR_RETURN(PartialShape out, ExpandedShape(input, (*dim)[0]));
    c->set_output(0, std::move(out));
  }
  return Status::OK();
}

Status SqueezeShape(InferenceContext* c) {
  std::vector<int64_t> squeeze_dims;
  WEIR_RETURN_IF_ERROR(c->GetAttr("squeeze_dims", &squeeze_dims));
  if (!c->input(0).known_rank()) {
    c->set_output(0, PartialShape::UnknownRank());
    return Status::OK();
  }
  WEIR_ASSIGN_OR_RETURN(PartialShape out, SqueezedShape(c->input(0), squeeze_dims));
  c->set_output(0, std::move(out));
  return Status::OK();
}

// ---- Fill, BroadcastTo, BroadcastArgs

namespace {

// The shape held by the vector input `i` (Fill's dims, BroadcastTo's
// shape): full when it is a constant, else of known rank when its length is.
StatusOr<PartialShape> ShapeFromVectorInput(const InferenceContext* c, int i,
                                            std::string_view what) {
  WEIR_ASSIGN_OR_RETURN(int64_t length, VectorInputLength(c, i, what));
  WEIR_ASSIGN_OR_RETURN(int rank, InferenceContext::RankFromLength(length, what));
  WEIR_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> dims, ConstantInts(c, i, what));
  if (!dims) return rank < 0 ? PartialShape::UnknownRank() : PartialShape::UnknownDims(rank);
  for (int64_t d : *dims) {
    if (d < 0) {
      return errors::InvalidArgument(what, " ", Ints(*dims), " has a negative dimension");
    }
  }
  const std::string dims_string = Ints(*dims);
  StatusOr<PartialShape> out = PartialShape::FromDims(std::move(*dims));
  if (!out.ok()) return out.status().WithContext(StrCat(what, " ", dims_string));
  return out;
}

}  // namespace

Status FillShape(InferenceContext* c) {
  if (c->input(1).known_rank() && c->input(1).rank() != 0) {
    return errors::InvalidArgument("value must be a scalar but has shape ", c->input(1));
  }
  WEIR_ASSIGN_OR_RETURN(PartialShape out, ShapeFromVectorInput(c, 0, "dims"));
  c->set_output(0, std::move(out));
  return Status::OK();
}

Status BroadcastToShape(InferenceContext* c) {
  WEIR_ASSIGN_OR_RETURN(PartialShape target, ShapeFromVectorInput(c, 1, "shape"));
  if (target.known_rank() && c->input(0).known_rank()) {
    WEIR_ASSIGN_OR_RETURN(target, BroadcastToTarget(c->input(0), target.dim_sizes()));
  }
  c->set_output(0, std::move(target));
  return Status::OK();
}

Status BroadcastArgsShape(InferenceContext* c) {
  WEIR_ASSIGN_OR_RETURN(int64_t a, VectorInputLength(c, 0, "s0"));
  WEIR_ASSIGN_OR_RETURN(int64_t b, VectorInputLength(c, 1, "s1"));
  WEIR_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> s0, ConstantInts(c, 0, "s0"));
  WEIR_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> s1, ConstantInts(c, 1, "s1"));
  if (s0 && s1) {
    WEIR_ASSIGN_OR_RETURN(PartialShape out, BroadcastShapes(PartialShape(*s0), PartialShape(*s1)));
    c->set_output(0, PartialShape({out.rank()}));
  } else {
    c->set_output(0, PartialShape({a < 0 || b < 0 ? PartialShape::kUnknown : std::max(a, b)}));
  }
  return Status::OK();
}

// ---- Reverse

Status ReverseV2Shape(InferenceContext* c) {
  const PartialShape& input = c->input(0);
  WEIR_RETURN_IF_ERROR(VectorInputLength(c, 1, "axis").status());
  WEIR_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axes, ConstantInts(c, 1, "axis"));
  if (axes && input.known_rank()) {
    std::vector<bool> seen(input.rank(), false);
    for (int64_t axis : *axes) {
      WEIR_ASSIGN_OR_RETURN(int a, NormalizeAxis(axis, input.rank(), "axis", input));
      if (seen[a]) {
        return errors::InvalidArgument("axis ", Ints(*axes), " names dim ", a,
                                       " twice (input shape ", input, ")");
      }
      seen[a] = true;
    }
  }
  c->set_output(0, input);
  return Status::OK();
}

Status ReverseShape(InferenceContext* c) {
  WEIR_RETURN_IF_ERROR(RankFromInputOrVector(c, 1, "dims").status());
  c->set_output(0, c->input(0));
  return Status::OK();
}

// The input with batch_dim merged with seq_lengths' length.
Status ReverseSequenceShape(InferenceContext* c) {
  int64_t seq_dim = 0, batch_dim = 0;
  WEIR_RETURN_IF_ERROR(c->GetAttr("seq_dim", &seq_dim));
  WEIR_RETURN_IF_ERROR(c->GetAttr("batch_dim", &batch_dim));
  WEIR_ASSIGN_OR_RETURN(int64_t batch, VectorInputLength(c, 1, "seq_lengths"));
  const PartialShape& input = c->input(0);
  if (seq_dim == batch_dim) {
    return errors::InvalidArgument("seq_dim and batch_dim are both ", seq_dim);
  }
  if (seq_dim < 0 || batch_dim < 0) {
    return errors::InvalidArgument("seq_dim ", seq_dim, " and batch_dim ", batch_dim,
                                   " must be >= 0");
  }
  if (!input.known_rank()) {
    c->set_output(0, input);
    return Status::OK();
  }
  if (seq_dim >= input.rank() || batch_dim >= input.rank()) {
    return errors::InvalidArgument("seq_dim ", seq_dim, " and batch_dim ", batch_dim,
                                   " must be dims of the input, shape ", input);
  }
  std::vector<int64_t> dims = input.dim_sizes();
  Status merged = InferenceContext::MergeDim(dims[batch_dim], batch, &dims[batch_dim]);
  if (!merged.ok()) {
    return errors::InvalidArgument("seq_lengths has ", batch, " entries but the input's batch_dim ",
                                   batch_dim, " is ", input.dim(batch_dim), " (input shape ", input,
                                   ")");
  }
  c->set_output(0, PartialShape(std::move(dims)));
  return Status::OK();
}

namespace {

// SpaceToBatchND and BatchToSpaceND: the input's rank, and its dims moved by
// `rule` once block_shape and paddings/crops are known constants.
template <typename Rule>
Status SpaceBatchShape(InferenceContext* c, const char* what, Rule rule) {
  WEIR_ASSIGN_OR_RETURN(int64_t m, VectorInputLength(c, 1, "block_shape"));
  PartialShape pads;
  WEIR_RETURN_IF_ERROR(c->WithRank(2, 2, &pads));
  if (pads.dim(1) >= 0 && pads.dim(1) != 2) {
    return errors::InvalidArgument(what, " must have shape [M, 2] but has shape ", pads);
  }
  const PartialShape& input = c->input(0);
  if (input.known_rank() && m >= 0 && input.rank() < 1 + m) {
    return errors::InvalidArgument("the input must have rank >= 1 + M = ", 1 + m, " but has shape ",
                                   input);
  }
  WEIR_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> block,
                        ConstantInts(c, 1, "block_shape"));
  std::optional<std::vector<int64_t>> values;
  if (const Tensor* table = c->input_tensor(2)) {
    WEIR_ASSIGN_OR_RETURN(values, IntTensorElements(*table, what));
  }
  if (!input.known_rank()) {
    c->set_output(0, PartialShape::UnknownRank());
    return Status::OK();
  }
  if (!block || !values) {
    SetUnknownDims(c, 0, input.rank());
    return Status::OK();
  }
  WEIR_ASSIGN_OR_RETURN(std::vector<int64_t> dims, rule(input.dim_sizes(), *block, *values));
  c->set_output(0, PartialShape(std::move(dims)));
  return Status::OK();
}

}  // namespace

Status SpaceToBatchNDShape(InferenceContext* c) {
  return SpaceBatchShape(c, "paddings", [](const auto& d, const auto& b, const auto& p) {
    return SpaceToBatchDims(d, b, p);
  });
}

Status BatchToSpaceNDShape(InferenceContext* c) {
  return SpaceBatchShape(c, "crops", [](const auto& d, const auto& b, const auto& p) {
    return BatchToSpaceDims(d, b, p);
  });
}

// ---- ShapeN, Size, Rank, IdentityN

Status ShapeNShape(InferenceContext* c) {
  for (int i = 0; i < c->num_inputs(); ++i) {
    const PartialShape& s = c->input(i);
    c->set_output(i, PartialShape({s.known_rank() ? s.rank() : PartialShape::kUnknown}));
  }
  return Status::OK();
}

Status ScalarShape(InferenceContext* c) {
  c->set_output(0, PartialShape(std::vector<int64_t>{}));
  return Status::OK();
}

Status IdentityNShape(InferenceContext* c) {
  for (int i = 0; i < c->num_inputs(); ++i) c->set_output(i, c->input(i));
  return Status::OK();
}

}  // namespace weir
