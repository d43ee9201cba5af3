// The linear-algebra family: the diagonal ops (Diag, DiagPart, MatrixDiag*,
// MatrixSetDiag*), the decompositions and solvers (MatrixInverse,
// MatrixDeterminant, LogMatrixDeterminant, Cholesky, MatrixSolve,
// MatrixTriangularSolve, Qr, Svd, SelfAdjointEigV2, Lu, MatrixSolveLs) and
// Cross, with TensorFlow 2.21's OpDefs. Every matrix op works on the two
// innermost dims, batched over the others.
#include <algorithm>
#include <optional>
#include <vector>

#include "weir/framework/broadcast_shape.h"
#include "weir/framework/int_tensor_values.h"
#include "weir/framework/matrix_diag_shape.h"
#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"

namespace weir {
namespace {

constexpr int64_t kUnknown = PartialShape::kUnknown;

// The known values of int input i (nullopt when only known at run time).
StatusOr<std::optional<std::vector<int64_t>>> KnownInts(InferenceContext* c, int i,
                                                        std::string_view what) {
  const Tensor* t = c->input_tensor(i);
  if (t == nullptr) return std::optional<std::vector<int64_t>>();
  StatusOr<std::vector<int64_t>> values = IntTensorValues(*t, what);
  WEIR_RETURN_IF_ERROR(values.status());
  return std::optional<std::vector<int64_t>>(std::move(*values));
}

bool AllKnown(const std::vector<int64_t>& dims) {
  return std::none_of(dims.begin(), dims.end(), [](int64_t d) { return d == kUnknown; });
}

// A and B of one dim: the known one, or their agreed size.
Status MergeDims(int64_t a, int64_t b, int64_t* out, InferenceContext* c, std::string_view what) {
  Status s = InferenceContext::MergeDim(a, b, out);
  if (!s.ok()) {
    return errors::InvalidArgument(what, ": dims ", a, " and ", b, " must be equal; input shapes ",
                                   c->InputShapesString());
  }
  return Status::OK();
}

Status SetOutputDims(InferenceContext* c, int i, std::vector<int64_t> dims) {
  StatusOr<PartialShape> shape = PartialShape::FromDims(std::move(dims));
  WEIR_RETURN_IF_ERROR(shape.status());
  c->set_output(i, *shape);
  return Status::OK();
}

// ---- the diagonal family ----

Status DiagShape(InferenceContext* c) {
  PartialShape in;
  WEIR_RETURN_IF_ERROR(c->WithRankAtLeast(0, 1, &in));
  if (!in.known_rank()) return (c->set_output(0, PartialShape()), Status::OK());
  std::vector<int64_t> dims = in.dim_sizes();
  dims.insert(dims.end(), in.dim_sizes().begin(), in.dim_sizes().end());
  return SetOutputDims(c, 0, std::move(dims));
}

Status DiagPartShape(InferenceContext* c) {
  PartialShape in;
  WEIR_RETURN_IF_ERROR(c->WithRankAtLeast(0, 2, &in));
  if (!in.known_rank()) return (c->set_output(0, PartialShape()), Status::OK());
  if (in.rank() % 2 != 0) {
    return errors::InvalidArgument("DiagPart: input must have an even rank but has shape ",
                                   in.DebugString());
  }
  const int half = in.rank() / 2;
  std::vector<int64_t> dims(half);
  for (int i = 0; i < half; ++i) {
    WEIR_RETURN_IF_ERROR(MergeDims(in.dim(i), in.dim(i + half), &dims[i], c, "DiagPart"));
  }
  return SetOutputDims(c, 0, std::move(dims));
}

Status MatrixDiagV1Shape(InferenceContext* c) {
  PartialShape in;
  WEIR_RETURN_IF_ERROR(c->WithRankAtLeast(0, 1, &in));
  if (!in.known_rank()) return (c->set_output(0, PartialShape()), Status::OK());
  std::vector<int64_t> dims = in.dim_sizes();
  dims.push_back(dims.back());
  return SetOutputDims(c, 0, std::move(dims));
}

Status MatrixDiagPartV1Shape(InferenceContext* c) {
  PartialShape in;
  WEIR_RETURN_IF_ERROR(c->WithRankAtLeast(0, 2, &in));
  if (!in.known_rank()) return (c->set_output(0, PartialShape()), Status::OK());
  std::vector<int64_t> dims(in.dim_sizes().begin(), in.dim_sizes().end() - 2);
  const int64_t rows = in.dim(in.rank() - 2), cols = in.dim(in.rank() - 1);
  dims.push_back(rows == kUnknown || cols == kUnknown ? kUnknown : std::min(rows, cols));
  return SetOutputDims(c, 0, std::move(dims));
}

// MatrixSetDiag (every version): the input's shape.
Status MatrixSetDiagShape(InferenceContext* c) {
  PartialShape in, diag;
  WEIR_RETURN_IF_ERROR(c->WithRankAtLeast(0, 2, &in));
  WEIR_RETURN_IF_ERROR(c->WithRankAtLeast(1, 1, &diag));
  if (c->num_inputs() > 2 && c->input(2).known_rank() && c->input(2).rank() > 1) {
    return errors::InvalidArgument("MatrixSetDiag: k must be a scalar or vector but has shape ",
                                   c->input(2).DebugString());
  }
  c->set_output(0, in);
  return Status::OK();
}

StatusOr<std::optional<DiagBand>> KnownBand(InferenceContext* c, int i, std::string_view op) {
  if (c->input(i).known_rank() && c->input(i).rank() > 1) {
    return errors::InvalidArgument(op, ": k must be a scalar or vector but has shape ",
                                   c->input(i).DebugString());
  }
  StatusOr<std::optional<std::vector<int64_t>>> k = KnownInts(c, i, "k");
  WEIR_RETURN_IF_ERROR(k.status());
  if (!k->has_value()) return std::optional<DiagBand>();
  StatusOr<DiagBand> band = DiagBandFromValues(**k, op);
  WEIR_RETURN_IF_ERROR(band.status());
  return std::optional<DiagBand>(*band);
}

// MatrixDiagV2/V3: diagonal, k, num_rows, num_cols, padding_value.
Status MatrixDiagShape(InferenceContext* c) {
  PartialShape diag, scalar;
  WEIR_RETURN_IF_ERROR(c->WithRankAtLeast(0, 1, &diag));
  for (int i : {2, 3, 4}) WEIR_RETURN_IF_ERROR(c->WithRank(i, 0, &scalar));
  StatusOr<std::optional<DiagBand>> band = KnownBand(c, 1, "MatrixDiag");
  WEIR_RETURN_IF_ERROR(band.status());
  StatusOr<std::optional<std::vector<int64_t>>> rows = KnownInts(c, 2, "num_rows");
  WEIR_RETURN_IF_ERROR(rows.status());
  StatusOr<std::optional<std::vector<int64_t>>> cols = KnownInts(c, 3, "num_cols");
  WEIR_RETURN_IF_ERROR(cols.status());
  if (!band->has_value() || !diag.known_rank()) {
    c->set_output(0, PartialShape());
    return Status::OK();
  }
  const bool single = (*band)->lower == (*band)->upper;
  if (!AllKnown(diag.dim_sizes()) || !rows->has_value() || !cols->has_value()) {
    const int rank = diag.rank() + (single ? 1 : 0);
    c->set_output(0, rank >= 2 ? PartialShape::UnknownDims(rank) : PartialShape());
    return Status::OK();
  }
  StatusOr<std::vector<int64_t>> dims =
      MatrixDiagOutputDims(diag.dim_sizes(), **band, (**rows)[0], (**cols)[0], "MatrixDiag");
  WEIR_RETURN_IF_ERROR(dims.status());
  return SetOutputDims(c, 0, std::move(*dims));
}

// MatrixDiagPartV2/V3: input, k, padding_value.
Status MatrixDiagPartShape(InferenceContext* c) {
  PartialShape in, scalar;
  WEIR_RETURN_IF_ERROR(c->WithRankAtLeast(0, 2, &in));
  WEIR_RETURN_IF_ERROR(c->WithRank(2, 0, &scalar));
  StatusOr<std::optional<DiagBand>> band = KnownBand(c, 1, "MatrixDiagPart");
  WEIR_RETURN_IF_ERROR(band.status());
  if (!band->has_value() || !in.known_rank()) {
    c->set_output(0, PartialShape());
    return Status::OK();
  }
  if (!AllKnown(in.dim_sizes())) {
    const bool single = (*band)->lower == (*band)->upper;
    c->set_output(0, PartialShape::UnknownDims(in.rank() - (single ? 1 : 0)));
    return Status::OK();
  }
  StatusOr<std::vector<int64_t>> dims =
      MatrixDiagPartOutputDims(in.dim_sizes(), **band, "MatrixDiagPart");
  WEIR_RETURN_IF_ERROR(dims.status());
  return SetOutputDims(c, 0, std::move(*dims));
}

// ---- decompositions and solvers ----

// Input `i`'s dims (rank >= 2, square when `square`); false when its rank is unknown.
StatusOr<bool> MatrixDims(InferenceContext* c, int i, bool square, std::string_view op,
                          std::vector<int64_t>* dims) {
  PartialShape in;
  WEIR_RETURN_IF_ERROR(c->WithRankAtLeast(i, 2, &in));
  if (!in.known_rank()) return false;
  *dims = in.dim_sizes();
  const size_t r = dims->size();
  if (square) {
    int64_t n = 0;
    WEIR_RETURN_IF_ERROR(MergeDims((*dims)[r - 2], (*dims)[r - 1], &n, c,
                                   StrCat(op, ": input must be square matrices")));
    (*dims)[r - 2] = (*dims)[r - 1] = n;
  }
  return true;
}

// The input's shape, checked to be square matrices.
Status SquareMatrixShape(InferenceContext* c, std::string_view op) {
  std::vector<int64_t> dims;
  StatusOr<bool> known = MatrixDims(c, 0, true, op, &dims);
  WEIR_RETURN_IF_ERROR(known.status());
  if (!*known) return (c->set_output(0, PartialShape()), Status::OK());
  return SetOutputDims(c, 0, std::move(dims));
}

// Determinants: the batch dims, for every output.
Status DeterminantShape(InferenceContext* c) {
  std::vector<int64_t> dims;
  StatusOr<bool> known = MatrixDims(c, 0, true, "MatrixDeterminant", &dims);
  WEIR_RETURN_IF_ERROR(known.status());
  for (int o = 0; o < c->num_outputs(); ++o) {
    if (!*known) {
      c->set_output(o, PartialShape());
    } else {
      WEIR_RETURN_IF_ERROR(SetOutputDims(c, o, std::vector<int64_t>(dims.begin(), dims.end() - 2)));
    }
  }
  return Status::OK();
}

Status MatrixSolveShape(InferenceContext* c) {
  std::vector<int64_t> a, b;
  StatusOr<bool> ka = MatrixDims(c, 0, true, "MatrixSolve", &a);
  WEIR_RETURN_IF_ERROR(ka.status());
  StatusOr<bool> kb = MatrixDims(c, 1, false, "MatrixSolve", &b);
  WEIR_RETURN_IF_ERROR(kb.status());
  if (!*ka || !*kb) return (c->set_output(0, PartialShape()), Status::OK());
  if (a.size() != b.size()) {
    return errors::InvalidArgument(
        "MatrixSolve: matrix and rhs must have the same rank; input shapes ",
        c->InputShapesString());
  }
  std::vector<int64_t> out(a.size());
  for (size_t i = 0; i + 1 < a.size(); ++i)
    WEIR_RETURN_IF_ERROR(MergeDims(a[i], b[i], &out[i], c, "MatrixSolve"));
  out.back() = b.back();
  return SetOutputDims(c, 0, std::move(out));
}

Status MatrixTriangularSolveShape(InferenceContext* c) {
  std::vector<int64_t> a, b;
  StatusOr<bool> ka = MatrixDims(c, 0, true, "MatrixTriangularSolve", &a);
  WEIR_RETURN_IF_ERROR(ka.status());
  StatusOr<bool> kb = MatrixDims(c, 1, false, "MatrixTriangularSolve", &b);
  WEIR_RETURN_IF_ERROR(kb.status());
  if (!*ka || !*kb) return (c->set_output(0, PartialShape()), Status::OK());
  int64_t m = 0;
  WEIR_RETURN_IF_ERROR(MergeDims(a[a.size() - 1], b[b.size() - 2], &m, c, "MatrixTriangularSolve"));
  StatusOr<PartialShape> batch =
      BroadcastShapes(PartialShape(std::vector<int64_t>(a.begin(), a.end() - 2)),
                      PartialShape(std::vector<int64_t>(b.begin(), b.end() - 2)));
  if (!batch.ok()) {
    return errors::InvalidArgument(
        "MatrixTriangularSolve: batch dims do not broadcast; input shapes ",
        c->InputShapesString());
  }
  std::vector<int64_t> out = batch->dim_sizes();
  out.push_back(m);
  out.push_back(b.back());
  return SetOutputDims(c, 0, std::move(out));
}

int64_t MinDim(int64_t a, int64_t b) {
  return a == kUnknown || b == kUnknown ? kUnknown : std::min(a, b);
}

std::vector<int64_t> WithMatrix(const std::vector<int64_t>& batch,
                                std::initializer_list<int64_t> tail) {
  std::vector<int64_t> dims = batch;
  dims.insert(dims.end(), tail.begin(), tail.end());
  return dims;
}

Status QrShape(InferenceContext* c) {
  std::vector<int64_t> in;
  StatusOr<bool> known = MatrixDims(c, 0, false, "Qr", &in);
  WEIR_RETURN_IF_ERROR(known.status());
  if (!*known) {
    c->set_output(0, PartialShape());
    c->set_output(1, PartialShape());
    return Status::OK();
  }
  bool full = false;
  WEIR_RETURN_IF_ERROR(c->GetAttr("full_matrices", &full));
  const int64_t m = in[in.size() - 2], n = in.back(), p = MinDim(m, n);
  std::vector<int64_t> batch(in.begin(), in.end() - 2);
  WEIR_RETURN_IF_ERROR(SetOutputDims(c, 0, WithMatrix(batch, {m, full ? m : p})));
  return SetOutputDims(c, 1, WithMatrix(batch, {full ? m : p, n}));
}

Status SvdShape(InferenceContext* c) {
  std::vector<int64_t> in;
  StatusOr<bool> known = MatrixDims(c, 0, false, "Svd", &in);
  WEIR_RETURN_IF_ERROR(known.status());
  bool compute_uv = true, full = false;
  WEIR_RETURN_IF_ERROR(c->GetAttr("compute_uv", &compute_uv));
  WEIR_RETURN_IF_ERROR(c->GetAttr("full_matrices", &full));
  if (!*known) {
    for (int o = 0; o < 3; ++o)
      c->set_output(o, o > 0 && !compute_uv ? PartialShape({0}) : PartialShape());
    return Status::OK();
  }
  const int64_t m = in[in.size() - 2], n = in.back(), p = MinDim(m, n);
  std::vector<int64_t> batch(in.begin(), in.end() - 2);
  WEIR_RETURN_IF_ERROR(SetOutputDims(c, 0, WithMatrix(batch, {p})));
  if (!compute_uv) {
    c->set_output(1, PartialShape({0}));
    c->set_output(2, PartialShape({0}));
    return Status::OK();
  }
  WEIR_RETURN_IF_ERROR(SetOutputDims(c, 1, WithMatrix(batch, {m, full ? m : p})));
  return SetOutputDims(c, 2, WithMatrix(batch, {n, full ? n : p}));
}

Status SelfAdjointEigShape(InferenceContext* c) {
  std::vector<int64_t> in;
  StatusOr<bool> known = MatrixDims(c, 0, true, "SelfAdjointEigV2", &in);
  WEIR_RETURN_IF_ERROR(known.status());
  bool compute_v = true;
  WEIR_RETURN_IF_ERROR(c->GetAttr("compute_v", &compute_v));
  if (!*known) {
    c->set_output(0, PartialShape());
    c->set_output(1, compute_v ? PartialShape() : PartialShape({0}));
    return Status::OK();
  }
  WEIR_RETURN_IF_ERROR(SetOutputDims(c, 0, std::vector<int64_t>(in.begin(), in.end() - 1)));
  if (!compute_v) return (c->set_output(1, PartialShape({0})), Status::OK());
  return SetOutputDims(c, 1, std::move(in));
}

Status LuShape(InferenceContext* c) {
  std::vector<int64_t> in;
  StatusOr<bool> known = MatrixDims(c, 0, true, "Lu", &in);
  WEIR_RETURN_IF_ERROR(known.status());
  if (!*known) {
    c->set_output(0, PartialShape());
    c->set_output(1, PartialShape());
    return Status::OK();
  }
  WEIR_RETURN_IF_ERROR(SetOutputDims(c, 1, std::vector<int64_t>(in.begin(), in.end() - 1)));
  return SetOutputDims(c, 0, std::move(in));
}

Status MatrixSolveLsShape(InferenceContext* c) {
  std::vector<int64_t> a, b;
  StatusOr<bool> ka = MatrixDims(c, 0, false, "MatrixSolveLs", &a);
  WEIR_RETURN_IF_ERROR(ka.status());
  StatusOr<bool> kb = MatrixDims(c, 1, false, "MatrixSolveLs", &b);
  WEIR_RETURN_IF_ERROR(kb.status());
  PartialShape scalar;
  WEIR_RETURN_IF_ERROR(c->WithRank(2, 0, &scalar));
  if (!*ka || !*kb) return (c->set_output(0, PartialShape()), Status::OK());
  if (a.size() != b.size()) {
    return errors::InvalidArgument(
        "MatrixSolveLs: matrix and rhs must have the same rank; input shapes ",
        c->InputShapesString());
  }
  std::vector<int64_t> out(a.size());
  for (size_t i = 0; i + 1 < a.size(); ++i)
    WEIR_RETURN_IF_ERROR(MergeDims(a[i], b[i], &out[i], c, "MatrixSolveLs"));
  out[out.size() - 2] = a.back();
  out.back() = b.back();
  return SetOutputDims(c, 0, std::move(out));
}

Status CrossShape(InferenceContext* c) {
  PartialShape a, b;
  WEIR_RETURN_IF_ERROR(c->WithRankAtLeast(0, 1, &a));
  WEIR_RETURN_IF_ERROR(c->WithRankAtLeast(1, 1, &b));
  StatusOr<PartialShape> merged = a.Merge(b);
  if (!merged.ok()) {
    return errors::InvalidArgument("Cross: a and b must have the same shape; input shapes ",
                                   c->InputShapesString());
  }
  if (merged->known_rank() && merged->dim(merged->rank() - 1) != kUnknown &&
      merged->dim(merged->rank() - 1) != 3) {
    return errors::InvalidArgument("Cross: the innermost dim must be 3; input shapes ",
                                   c->InputShapesString());
  }
  c->set_output(0, *merged);
  return Status::OK();
}

constexpr const char* kDiagTypes =
    "T: {bfloat16, half, float, double, int32, int64, complex64, complex128}";
constexpr const char* kLinalgTypes = "T: {double, float, half, complex64, complex128}";
constexpr const char* kAlign =
    "align: {'LEFT_RIGHT', 'RIGHT_LEFT', 'LEFT_LEFT', 'RIGHT_RIGHT'} = 'RIGHT_LEFT'";

}  // namespace

void RegisterLinalgOps(OpRegistry* registry) {
  registry->Register(OpDefBuilder("Diag")
                         .Input("diagonal: T")
                         .Output("output: T")
                         .Attr(kDiagTypes)
                         .SetShapeFn(DiagShape)
                         .Doc("A tensor of shape diagonal.shape + diagonal.shape, zero except "
                              "output[i..., i...] = diagonal[i...]."));
  registry->Register(OpDefBuilder("DiagPart")
                         .Input("input: T")
                         .Output("diagonal: T")
                         .Attr(kDiagTypes)
                         .SetShapeFn(DiagPartShape)
                         .Doc("Diag's inverse: diagonal[i...] = input[i..., i...] for an input of "
                              "shape s + s."));
  registry->Register(OpDefBuilder("MatrixDiag")
                         .Input("diagonal: T")
                         .Output("output: T")
                         .Attr("T: type")
                         .SetShapeFn(MatrixDiagV1Shape)
                         .Doc("[..., n] -> [..., n, n] with `diagonal` on the main diagonal."));
  registry->Register(
      OpDefBuilder("MatrixDiagPart")
          .Input("input: T")
          .Output("diagonal: T")
          .Attr("T: type")
          .SetShapeFn(MatrixDiagPartV1Shape)
          .Doc("The main diagonal of each innermost matrix: [..., m, n] -> [..., min(m, n)]."));
  registry->Register(OpDefBuilder("MatrixSetDiag")
                         .Input("input: T")
                         .Input("diagonal: T")
                         .Output("output: T")
                         .Attr("T: type")
                         .SetShapeFn(MatrixSetDiagShape)
                         .Doc("`input` with the main diagonal of each innermost matrix replaced."));
  for (bool v3 : {false, true}) {
    OpDefBuilder diag(v3 ? "MatrixDiagV3" : "MatrixDiagV2");
    diag.Input("diagonal: T")
        .Input("k: int32")
        .Input("num_rows: int32")
        .Input("num_cols: int32")
        .Input("padding_value: T")
        .Output("output: T")
        .Attr("T: type");
    if (v3) diag.Attr(kAlign);
    registry->Register(diag.SetShapeFn(MatrixDiagShape)
                           .Doc("Matrices of num_rows x num_cols (-1: the smallest that fits) with "
                                "the diagonals k[0]..k[1] taken from `diagonal` (row i = "
                                "diagonal k[1] - i) and padding_value elsewhere."));
    OpDefBuilder part(v3 ? "MatrixDiagPartV3" : "MatrixDiagPartV2");
    part.Input("input: T")
        .Input("k: int32")
        .Input("padding_value: T")
        .Output("diagonal: T")
        .Attr("T: type");
    if (v3) part.Attr(kAlign);
    registry->Register(part.SetShapeFn(MatrixDiagPartShape)
                           .Doc("The diagonals k[0]..k[1] of each innermost matrix, the shorter "
                                "ones padded with padding_value as `align` says."));
    OpDefBuilder set(v3 ? "MatrixSetDiagV3" : "MatrixSetDiagV2");
    set.Input("input: T")
        .Input("diagonal: T")
        .Input("k: int32")
        .Output("output: T")
        .Attr("T: type");
    if (v3) set.Attr(kAlign);
    registry->Register(set.SetShapeFn(MatrixSetDiagShape)
                           .Doc("`input` with the diagonals k[0]..k[1] replaced by `diagonal`."));
  }

  registry->Register(
      OpDefBuilder("MatrixInverse")
          .Input("input: T")
          .Output("output: T")
          .Attr("adjoint: bool = false")
          .Attr(kLinalgTypes)
          .SetShapeFn([](InferenceContext* c) { return SquareMatrixShape(c, "MatrixInverse"); })
          .Doc("The inverse of each innermost square matrix (of its adjoint when "
               "`adjoint`); a singular matrix is an InvalidArgument error."));
  registry->Register(OpDefBuilder("MatrixDeterminant")
                         .Input("input: T")
                         .Output("output: T")
                         .Attr("T: {half, float, double, complex64, complex128}")
                         .SetShapeFn(DeterminantShape)
                         .Doc("The determinant of each innermost square matrix."));
  registry->Register(OpDefBuilder("LogMatrixDeterminant")
                         .Input("input: T")
                         .Output("sign: T")
                         .Output("log_abs_determinant: T")
                         .Attr("T: {half, float, double, complex64, complex128}")
                         .SetShapeFn(DeterminantShape)
                         .Doc("The sign and the log of the absolute value of each innermost "
                              "square matrix's determinant (0 and -inf when singular)."));
  registry->Register(
      OpDefBuilder("Cholesky")
          .Input("input: T")
          .Output("output: T")
          .Attr(kLinalgTypes)
          .SetShapeFn([](InferenceContext* c) { return SquareMatrixShape(c, "Cholesky"); })
          .Doc("The lower Cholesky factor L (A = L L^H) of each innermost matrix, "
               "read from its lower triangle; not positive definite is an error."));
  registry->Register(OpDefBuilder("MatrixSolve")
                         .Input("matrix: T")
                         .Input("rhs: T")
                         .Output("output: T")
                         .Attr("adjoint: bool = false")
                         .Attr(kLinalgTypes)
                         .SetShapeFn(MatrixSolveShape)
                         .Doc("X with matrix X = rhs (matrix^H X = rhs when `adjoint`), batched."));
  registry->Register(OpDefBuilder("MatrixTriangularSolve")
                         .Input("matrix: T")
                         .Input("rhs: T")
                         .Output("output: T")
                         .Attr("lower: bool = true")
                         .Attr("adjoint: bool = false")
                         .Attr("T: {bfloat16, double, float, half, complex64, complex128}")
                         .SetShapeFn(MatrixTriangularSolveShape)
                         .Doc("X with T X = rhs for T the lower (or upper) triangle of `matrix` "
                              "(its adjoint when `adjoint`); batch dims broadcast."));
  registry->Register(OpDefBuilder("Qr")
                         .Input("input: T")
                         .Output("q: T")
                         .Output("r: T")
                         .Attr("full_matrices: bool = false")
                         .Attr(kLinalgTypes)
                         .SetShapeFn(QrShape)
                         .Doc("The QR decomposition of each innermost matrix (Householder)."));
  registry->Register(OpDefBuilder("Svd")
                         .Input("input: T")
                         .Output("s: T")
                         .Output("u: T")
                         .Output("v: T")
                         .Attr("compute_uv: bool = true")
                         .Attr("full_matrices: bool = false")
                         .Attr(kLinalgTypes)
                         .SetShapeFn(SvdShape)
                         .Doc("The singular values (descending) and, when compute_uv, vectors "
                              "of each innermost matrix: input = u diag(s) v^H."));
  registry->Register(OpDefBuilder("SelfAdjointEigV2")
                         .Input("input: T")
                         .Output("e: T")
                         .Output("v: T")
                         .Attr("compute_v: bool = true")
                         .Attr(kLinalgTypes)
                         .SetShapeFn(SelfAdjointEigShape)
                         .Doc("The eigenvalues (ascending) and eigenvectors (columns) of each "
                              "innermost self-adjoint matrix, read from its lower triangle."));
  registry->Register(OpDefBuilder("Lu")
                         .Input("input: T")
                         .Output("lu: T")
                         .Output("p: output_idx_type")
                         .Attr(kLinalgTypes)
                         .Attr("output_idx_type: {int32, int64} = int32")
                         .SetShapeFn(LuShape)
                         .Doc("The LU decomposition with partial pivoting: L (unit diagonal, "
                              "below) and U packed in `lu`, and the row permutation p with "
                              "input[p] = L U."));
  registry->Register(
      OpDefBuilder("MatrixSolveLs")
          .Input("matrix: T")
          .Input("rhs: T")
          .Input("l2_regularizer: double")
          .Output("output: T")
          .Attr(kLinalgTypes)
          .Attr("fast: bool = true")
          .SetShapeFn(MatrixSolveLsShape)
          .Doc("The (Tikhonov-regularized) least-squares solution X of matrix X = rhs."));
  registry->Register(OpDefBuilder("Cross")
                         .Input("a: T")
                         .Input("b: T")
                         .Output("product: T")
                         .Attr("T: realnumbertype")
                         .SetShapeFn(CrossShape)
                         .Doc("The cross product of the 3-vectors in the innermost dim."));
}

}  // namespace weir
