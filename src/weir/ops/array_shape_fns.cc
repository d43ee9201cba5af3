// Shape rules of the array ops that resize or describe a tensor: Tile, Pad,
// ExpandDims/Squeeze, Fill, BroadcastTo/BroadcastArgs, Reverse, ShapeN,
// Size, Rank, IdentityN; and the helpers every array shape function uses.
#include <algorithm>

#include "weir/framework/node_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/framework/tensor.h"
#include "weir/ops/array_shape_fns.h"
#include "weir/ops/shape_fns.h"

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

StatusOr<std::vector<int64_t>> IntTensorElements(const Tensor& t, std::string_view what) {
  Tensor flat;
  CHECK(flat.CopyFrom(t, TensorShape({t.NumElements()})));
  return IntTensorValues(flat, what);
}

StatusOr<std::optional<std::vector<int64_t>>> ConstantInts(const InferenceContext* c, int i,
                                                            std::string_view what) {
  const Tensor* t = c->input_tensor(i);
  if (t == nullptr) return std::optional<std::vector<int64_t>>();
  WEIR_ASSIGN_OR_RETURN(std::vector<int64_t> values, IntTensorValues(*t, what));
  return std::optional<std::vector<int64_t>>(std::move(values));
}

StatusOr<int> NormalizeAxis(int64_t axis, int rank, std::string_view what,
                            const PartialShape& shape) {
  if (axis < -rank || axis >= rank) {
    return errors::InvalidArgument(what, " ", axis, " is out of range [", -rank, ", ", rank,
                                   ") for shape ", shape);
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

// ---- Tile and Pad

StatusOr<PartialShape> TiledShape(const PartialShape& input, std::span<const int64_t> multiples) {
  if (static_cast<int>(multiples.size()) != input.rank()) {
    return errors::InvalidArgument("multiples ", Ints(multiples),
                                   " must have one entry per dim of the input shape ", input);
  }
  std::vector<int64_t> dims(input.rank());
  const std::string what = StrCat("Tile of shape ", input, " by multiples ", Ints(multiples));
  for (int i = 0; i < input.rank(); ++i) {
    if (multiples[i] < 0) {
      return errors::InvalidArgument("multiples ", Ints(multiples), " has negative entry ",
                                     multiples[i], " (input shape ", input, ")");
    }
    WEIR_RETURN_IF_ERROR(InferenceContext::MultiplyDims(
        input.dim(i), multiples[i], StrCat(what, ", dim ", i), &dims[i]));
  }
  // Each dim fits, but the element count may not: a kernel sized by a
  // wrapped count would write past its output.
  StatusOr<PartialShape> out = PartialShape::FromDims(std::move(dims));
  if (!out.ok()) return out.status().WithContext(what);
  return out;
}

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

StatusOr<PartialShape> PaddedShape(const PartialShape& input, std::span<const int64_t> paddings,
                                   std::string_view mirror_mode) {
  const int rank = input.rank();
  if (static_cast<int>(paddings.size()) != 2 * rank) {
    return errors::InvalidArgument("paddings must be [", rank, ", 2] for input shape ", input,
                                   " but has ", paddings.size(), " values");
  }
  std::vector<int64_t> dims(rank);
  for (int i = 0; i < rank; ++i) {
    const int64_t before = paddings[2 * i], after = paddings[2 * i + 1];
    const int64_t dim = input.dim(i);
    if (before < 0 || after < 0) {
      return errors::InvalidArgument("paddings for dim ", i, " are [", before, ", ", after,
                                     "] but must not be negative (input shape ", input, ")");
    }
    if (!mirror_mode.empty() && dim >= 0) {
      const int64_t limit = mirror_mode == "REFLECT" ? dim - 1 : dim;
      if (before > limit || after > limit) {
        return errors::InvalidArgument("paddings for dim ", i, " are [", before, ", ", after,
                                       "] but ", mirror_mode, " mode allows at most ", limit,
                                       " (input shape ", input, ")");
      }
    }
    const std::string what =
        StrCat("padding dim ", i, " of shape ", input, " by [", before, ", ", after, "]");
    WEIR_RETURN_IF_ERROR(InferenceContext::AddDims(dim, before, what, &dims[i]));
    WEIR_RETURN_IF_ERROR(InferenceContext::AddDims(dims[i], after, what, &dims[i]));
  }
  StatusOr<PartialShape> out = PartialShape::FromDims(std::move(dims));
  if (!out.ok()) {
    return out.status().WithContext(StrCat("padding shape ", input, " by ", Ints(paddings)));
  }
  return out;
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
      WEIR_ASSIGN_OR_RETURN(rank, InferenceContext::RankFromLength(paddings_shape.dim(0),
                                                                   "paddings"));
    }
  }
  if (c->num_inputs() == 3 && c->input(2).known_rank() && c->input(2).rank() != 0) {
    return errors::InvalidArgument("constant_values must be a scalar but has shape ",
                                   c->input(2));
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

StatusOr<PartialShape> ExpandedShape(const PartialShape& input, int64_t dim) {
  const int rank = input.rank();
  if (dim < -rank - 1 || dim > rank) {
    return errors::InvalidArgument("dim ", dim, " is out of range [", -rank - 1, ", ", rank,
                                   "] for input shape ", input);
  }
  std::vector<int64_t> dims = input.dim_sizes();
  dims.insert(dims.begin() + (dim < 0 ? dim + rank + 1 : dim), 1);
  return PartialShape(std::move(dims));
}

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

StatusOr<PartialShape> SqueezedShape(const PartialShape& input,
                                     std::span<const int64_t> squeeze_dims) {
  const int rank = input.rank();
  std::vector<bool> remove(rank, false);
  for (int64_t d : squeeze_dims) {
    WEIR_ASSIGN_OR_RETURN(int axis, NormalizeAxis(d, rank, "squeeze dim", input));
    if (input.dim(axis) >= 0 && input.dim(axis) != 1) {
      return errors::InvalidArgument("cannot squeeze dim ", d, ": it has size ",
                                     input.dim(axis), " in input shape ", input);
    }
    remove[axis] = true;
  }
  std::vector<int64_t> dims;
  for (int i = 0; i < rank; ++i) {
    if (squeeze_dims.empty()) {
      if (input.dim(i) < 0) return PartialShape::UnknownRank();  // might be 1
      if (input.dim(i) == 1) continue;
    } else if (remove[i]) {
      continue;
    }
    dims.push_back(input.dim(i));
  }
  return PartialShape(std::move(dims));
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

StatusOr<PartialShape> BroadcastToTarget(const PartialShape& input,
                                         std::span<const int64_t> target) {
  const int rank = static_cast<int>(target.size());
  if (input.rank() > rank) {
    return errors::InvalidArgument("cannot broadcast a tensor of shape ", input, " to shape ",
                                   Ints(target), ": the target has lower rank");
  }
  for (int i = 0; i < input.rank(); ++i) {
    const int64_t have = input.dim(i);
    const int64_t want = target[rank - input.rank() + i];
    if (have >= 0 && want >= 0 && have != want && have != 1) {
      return errors::InvalidArgument("cannot broadcast a tensor of shape ", input, " to shape ",
                                     Ints(target), ": dim ", i, " is ", have);
    }
  }
  StatusOr<PartialShape> out =
      PartialShape::FromDims(std::vector<int64_t>(target.begin(), target.end()));
  if (!out.ok()) return out.status().WithContext(StrCat("broadcast target ", Ints(target)));
  return out;
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
    WEIR_ASSIGN_OR_RETURN(PartialShape out,
                          BroadcastShapes(PartialShape(*s0), PartialShape(*s1)));
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
