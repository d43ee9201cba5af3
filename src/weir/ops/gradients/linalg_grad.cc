// Gradients of the linear-algebra family, as TensorFlow defines them
// (linalg_grad.py's formulas, written from their math): the diagonal ops
// move the gradient back through the matching diagonal op; the
// decompositions differentiate their defining identities, e.g.
// d(A^-1) = -A^-1 dA A^-1, d log|det A| = tr(A^-1 dA). Real dtypes only:
// a complex input is Unimplemented (as for BatchMatMulV2's gradient).
#include "weir/ops/gradients/gradient_registry.h"
#include "weir/ops/gradients/gradient_util.h"
#include "weir/ops/standard_ops.h"

namespace weir {

void RegisterLinalgGradients(GradientRegistry* registry);

namespace {

using Grads = std::vector<Output>;

Output Op(const Scope& scope, std::string_view type, std::vector<OpArg> args, AttrMap attrs = {}) {
  return AddOp(scope, type, std::move(args), std::move(attrs)).output(0);
}

// A scalar of x's dtype.
Output ScalarLike(const Scope& scope, double value, const Output& x) {
  return ops::Cast(scope, ops::Const(scope, value), x.dtype());
}

// op(a) op(b) for batched matrices, op = adjoint when the flag says.
Output MatMul(const Scope& scope, const Output& a, const Output& b, bool adj_a = false,
              bool adj_b = false) {
  return ops::BatchMatMulV2(scope, a, b, {{"adj_x", adj_a}, {"adj_y", adj_b}});
}

// x with its two innermost dims swapped.
Output Adjoint(const Scope& scope, const Output& x) {
  if (x.shape().known_rank()) {
    std::vector<int64_t> perm;
    const int rank = x.shape().rank();
    for (int i = 0; i < rank - 2; ++i) perm.push_back(i);
    perm.push_back(rank - 1);
    perm.push_back(rank - 2);
    return ops::Transpose(scope, x, IntVector(scope, perm));
  }
  Output rank = ops::Rank(scope, x);
  Output two = ops::Const(scope, 2);
  Output lead =
      ops::Range(scope, ops::Const(scope, 0), ops::Sub(scope, rank, two), ops::Const(scope, 1));
  Output last = ops::Sub(scope, rank, IntVector(scope, {1, 2}));
  return ops::Transpose(scope, x,
                        ops::ConcatV2(scope, InputList{lead, last}, ops::Const(scope, 0)));
}

Output Band(const Scope& scope, const Output& x, int64_t lower, int64_t upper) {
  return Op(scope, "MatrixBandPart", {x, ops::Const(scope, lower), ops::Const(scope, upper)});
}

Output SetDiag(const Scope& scope, const Output& x, const Output& diag) {
  return Op(scope, "MatrixSetDiag", {x, diag});
}

Output DiagPart(const Scope& scope, const Output& x) { return Op(scope, "MatrixDiagPart", {x}); }

Output GradOrZeros(const Scope& scope, const Output& g, const Output& output) {
  return g.valid() ? g : ops::ZerosLike(scope, output);
}

// x / (x^2 + eps): 1/x away from 0, 0 at it (TensorFlow's safe reciprocal).
Output SafeReciprocal(const Scope& scope, const Output& x) {
  return ops::RealDiv(scope, x,
                      ops::AddV2(scope, ops::Mul(scope, x, x), ScalarLike(scope, 1e-20, x)));
}

Status RealOnly(const Operation& op) {
  if (IsComplexDType(op.output(0).dtype())) {
    return errors::Unimplemented("the gradient of ", op.node()->type_string(), " for ",
                                 op.output(0).dtype(), " (node '", op.name(), "')");
  }
  return Status::OK();
}

bool BoolAttr(const Operation& op, const char* name, bool fallback) {
  bool value = fallback;
  (void)GetAttr(op.node()->def().attrs, name, &value);
  return value;
}

// ---- the diagonal family ----

// The version suffix of a MatrixDiag*-family op ("", "V2", "V3").
std::string Version(const Operation& op) {
  const std::string& type = op.node()->type_string();
  if (type.ends_with("V2")) return "V2";
  if (type.ends_with("V3")) return "V3";
  return "";
}

AttrMap AlignAttr(const Operation& op) { return ForwardAttrs(op, {"align"}); }

Status MatrixDiagGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  const std::string v = Version(op);
  if (v.empty()) {
    *grads = {DiagPart(scope, g[0])};
  } else {
    Output zero = ScalarLike(scope, 0, g[0]);
    *grads = {Op(scope, "MatrixDiagPart" + v, {g[0], ForwardInput(op, 1), zero}, AlignAttr(op)),
              Output(), Output(), Output(), Output()};
  }
  return scope.status();
}

Status MatrixDiagPartGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  const std::string v = Version(op);
  Output zeros = ops::ZerosLike(scope, ForwardInput(op, 0));
  if (v.empty()) {
    *grads = {SetDiag(scope, zeros, g[0])};
  } else {
    *grads = {Op(scope, "MatrixSetDiag" + v, {zeros, g[0], ForwardInput(op, 1)}, AlignAttr(op)),
              Output(), Output()};
  }
  return scope.status();
}

Status MatrixSetDiagGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  const std::string v = Version(op);
  Output zeros = ops::ZerosLike(scope, ForwardInput(op, 1));
  if (v.empty()) {
    *grads = {SetDiag(scope, g[0], zeros), DiagPart(scope, g[0])};
  } else {
    Output k = ForwardInput(op, 2);
    *grads = {Op(scope, "MatrixSetDiag" + v, {g[0], zeros, k}, AlignAttr(op)),
              Op(scope, "MatrixDiagPart" + v, {g[0], k, ScalarLike(scope, 0, g[0])}, AlignAttr(op)),
              Output()};
  }
  return scope.status();
}

Status DiagGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  *grads = {Op(scope, "DiagPart", {g[0]})};
  return scope.status();
}

Status DiagPartGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  *grads = {Op(scope, "Diag", {g[0]})};
  return scope.status();
}

// ---- decompositions and solvers ----

// d(A^-1) = -A^-1 dA A^-1 (with the adjoints when `adjoint`).
Status MatrixInverseGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  WEIR_RETURN_IF_ERROR(RealOnly(op));
  const bool adjoint = BoolAttr(op, "adjoint", false);
  Output inv = op.output(0);
  Output inner = MatMul(scope, g[0], inv, adjoint, !adjoint);
  *grads = {ops::Neg(scope, MatMul(scope, inv, inner, !adjoint, false))};
  return scope.status();
}

// The batch-shaped `scale` as [..., 1, 1], times A^-H.
Output ScaleInverseAdjoint(const Scope& scope, const Output& a, const Output& scale) {
  Output inv_adj = Op(scope, "MatrixInverse", {a}, {{"adjoint", true}});
  Output expanded = ops::ExpandDims(scope, ops::ExpandDims(scope, scale, -1), -1);
  return ops::Mul(scope, expanded, inv_adj);
}

// d det A = det A tr(A^-1 dA).
Status MatrixDeterminantGrad(const Scope& scope, const Operation& op, const Grads& g,
                             Grads* grads) {
  WEIR_RETURN_IF_ERROR(RealOnly(op));
  *grads = {ScaleInverseAdjoint(scope, ForwardInput(op, 0), ops::Mul(scope, g[0], op.output(0)))};
  return scope.status();
}

// d log|det A| = tr(A^-1 dA); the sign is piecewise constant.
Status LogMatrixDeterminantGrad(const Scope& scope, const Operation& op, const Grads& g,
                                Grads* grads) {
  WEIR_RETURN_IF_ERROR(RealOnly(op));
  if (!g[1].valid()) {
    *grads = {Output()};
    return Status::OK();
  }
  *grads = {ScaleInverseAdjoint(scope, ForwardInput(op, 0), g[1])};
  return scope.status();
}

// A = L L^T: with P = Φ(L^T dL) (the lower triangle, half diagonal),
// dA = L^-T P L^-1, symmetrized.
Status CholeskyGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  WEIR_RETURN_IF_ERROR(RealOnly(op));
  Output l = op.output(0);
  // L^-1 = solve(L, I), I broadcast over L's batch dims.
  Output eye = SetDiag(scope, ops::ZerosLike(scope, l), ops::OnesLike(scope, DiagPart(scope, l)));
  Output l_inv =
      Op(scope, "MatrixTriangularSolve", {l, eye}, {{"lower", true}, {"adjoint", false}});
  Output middle = MatMul(scope, l, g[0], true, false);
  middle =
      SetDiag(scope, middle, ops::Mul(scope, ScalarLike(scope, 0.5, l), DiagPart(scope, middle)));
  middle = Band(scope, middle, -1, 0);
  Output grad_a = MatMul(scope, MatMul(scope, l_inv, middle, true, false), l_inv);
  grad_a = ops::AddV2(scope, grad_a, Adjoint(scope, grad_a));
  *grads = {ops::Mul(scope, grad_a, ScalarLike(scope, 0.5, l))};
  return scope.status();
}

// X = A^-1 B: dB = A^-H G, dA = -dB X^H (the adjoint case mirrored).
Status MatrixSolveGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  WEIR_RETURN_IF_ERROR(RealOnly(op));
  const bool adjoint = BoolAttr(op, "adjoint", false);
  Output c = op.output(0);
  Output grad_b = Op(scope, "MatrixSolve", {ForwardInput(op, 0), g[0]}, {{"adjoint", !adjoint}});
  Output grad_a =
      adjoint ? MatMul(scope, c, grad_b, false, true) : MatMul(scope, grad_b, c, false, true);
  *grads = {ops::Neg(scope, grad_a), grad_b};
  return scope.status();
}

// As MatrixSolve, keeping the triangle A's solve read, and summing over the
// batch dims that broadcasting stretched.
Status MatrixTriangularSolveGrad(const Scope& scope, const Operation& op, const Grads& g,
                                 Grads* grads) {
  WEIR_RETURN_IF_ERROR(RealOnly(op));
  const bool adjoint = BoolAttr(op, "adjoint", false), lower = BoolAttr(op, "lower", true);
  Output a = ForwardInput(op, 0), b = ForwardInput(op, 1), c = op.output(0);
  Output grad_b =
      Op(scope, "MatrixTriangularSolve", {a, g[0]}, {{"lower", lower}, {"adjoint", !adjoint}});
  Output grad_a =
      adjoint ? MatMul(scope, c, grad_b, false, true) : MatMul(scope, grad_b, c, false, true);
  grad_a = Band(scope, ops::Neg(scope, grad_a), lower ? -1 : 0, lower ? 0 : -1);
  *grads = {SumToShapeOf(scope, grad_a, a), SumToShapeOf(scope, grad_b, b)};
  return scope.status();
}

// A = V diag(e) V^T: dA = V (diag(de) + F ∘ (V^T dV)) V^T, F_ij = 1 / (e_j - e_i)
// off the diagonal; then the lower triangle of the symmetrized result, as
// the kernel reads only that.
Status SelfAdjointEigV2Grad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  WEIR_RETURN_IF_ERROR(RealOnly(op));
  const bool compute_v = BoolAttr(op, "compute_v", true);
  Output e = op.output(0);
  Output grad_e = GradOrZeros(scope, g[0], e);
  Output grad_a;
  if (compute_v) {
    Output v = op.output(1);
    Output grad_v = GradOrZeros(scope, g[1], v);
    Output diff = ops::Sub(scope, ops::ExpandDims(scope, e, -2), ops::ExpandDims(scope, e, -1));
    Output f = SetDiag(scope, SafeReciprocal(scope, diff), ops::ZerosLike(scope, e));
    Output inner = ops::AddV2(scope, Op(scope, "MatrixDiag", {grad_e}),
                              ops::Mul(scope, f, MatMul(scope, v, grad_v, true, false)));
    grad_a = MatMul(scope, v, MatMul(scope, inner, v, false, true));
  } else {
    Operation eig = AddOp(scope, "SelfAdjointEigV2", {ForwardInput(op, 0)}, {{"compute_v", true}});
    Output v = eig.output(1);
    grad_a = MatMul(scope, v, MatMul(scope, Op(scope, "MatrixDiag", {grad_e}), v, false, true));
  }
  grad_a = Band(scope, ops::AddV2(scope, grad_a, Adjoint(scope, grad_a)), -1, 0);
  grad_a =
      SetDiag(scope, grad_a, ops::Mul(scope, ScalarLike(scope, 0.5, e), DiagPart(scope, grad_a)));
  *grads = {grad_a};
  return scope.status();
}

// Columns [begin, end) of `t`'s innermost matrices (t of rank `rank`).
Output Columns(const Scope& scope, const Output& t, int rank, int64_t begin, int64_t end) {
  std::vector<int64_t> b(rank, 0), e(rank, 0), stride(rank, 1);
  b[rank - 1] = begin;
  e[rank - 1] = end;
  // Every dim but the last taken whole (begin/end masks).
  const int64_t mask = (int64_t{1} << (rank - 1)) - 1;
  return ops::StridedSlice(scope, t, IntVector(scope, b), IntVector(scope, e),
                           IntVector(scope, stride), {{"begin_mask", mask}, {"end_mask", mask}});
}

// x R^-T for upper-triangular R, by a triangular solve: (R^-1 x^T)^T.
Output RightSolveUpper(const Scope& scope, const Output& x, const Output& r) {
  return Adjoint(scope, Op(scope, "MatrixTriangularSolve", {r, Adjoint(scope, x)},
                           {{"lower", false}, {"adjoint", false}}));
}

// A = QR with A m x n, m >= n (reduced) or square.
Output QrGradDeep(const Scope& scope, const Output& q, const Output& r, const Output& dq,
                  const Output& dr) {
  Output qdq = MatMul(scope, q, dq, true, false);
  Output qdq_skew = ops::Sub(scope, qdq, Adjoint(scope, qdq));
  Output rdr = MatMul(scope, r, dr, false, true);
  Output rdr_skew = ops::Sub(scope, rdr, Adjoint(scope, rdr));
  Output tril = Band(scope, ops::AddV2(scope, qdq_skew, rdr_skew), -1, 0);
  Output grad_a = MatMul(scope, q, ops::AddV2(scope, dr, RightSolveUpper(scope, tril, r)));
  Output grad_b = RightSolveUpper(scope, ops::Sub(scope, dq, MatMul(scope, q, qdq)), r);
  return ops::AddV2(scope, grad_a, grad_b);
}

// TensorFlow's condition: reduced QR (or square input) when m >= n; for
// m < n (wide) the square part and the rest, which needs static m, n.
Status QrGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  WEIR_RETURN_IF_ERROR(RealOnly(op));
  Output a = ForwardInput(op, 0), q = op.output(0), r = op.output(1);
  Output dq = GradOrZeros(scope, g[0], q), dr = GradOrZeros(scope, g[1], r);
  const PartialShape& shape = a.shape();
  if (!shape.known_rank() || shape.dim(shape.rank() - 2) < 0 || shape.dim(shape.rank() - 1) < 0) {
    return errors::Unimplemented(
        "the gradient of Qr needs the matrix dims known statically (node '", op.name(), "')");
  }
  const int64_t m = shape.dim(shape.rank() - 2), n = shape.dim(shape.rank() - 1);
  const bool full = BoolAttr(op, "full_matrices", false);
  if (full && m > n) {
    return errors::Unimplemented(
        "the gradient of Qr with full_matrices and more rows than columns "
        "(node '",
        op.name(), "'), as in TensorFlow");
  }
  if (m >= n) {
    *grads = {QrGradDeep(scope, q, r, dq, dr)};
    return scope.status();
  }
  // Wide: A = [X | Y], R = [U | V] with U m x m; Y = Q V.
  const int rank = shape.rank();
  auto columns = [&](const Output& t, int64_t begin, int64_t end) {
    return Columns(scope, t, rank, begin, end);
  };
  Output y = columns(a, m, n);
  Output u = columns(r, 0, m);
  Output dv = columns(dr, m, n);
  Output du = columns(dr, 0, m);
  Output dy = MatMul(scope, q, dv);
  Output dx = QrGradDeep(scope, q, u, ops::AddV2(scope, dq, MatMul(scope, y, dv, false, true)), du);
  *grads = {ops::ConcatV2(scope, InputList{dx, dy}, ops::Const(scope, -1))};
  return scope.status();
}

// TensorFlow's Svd gradient (Giles; Townsend for the reduced case): static
// m, n; with full_matrices only for |m - n| <= 1. A tall input is handled
// as its adjoint (u and v swap).
Status SvdGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  WEIR_RETURN_IF_ERROR(RealOnly(op));
  Output a = ForwardInput(op, 0), s = op.output(0);
  Output grad_s = GradOrZeros(scope, g[0], s);
  Output grad_s_mat = Op(scope, "MatrixDiag", {grad_s});
  if (!BoolAttr(op, "compute_uv", true)) {
    Operation svd = AddOp(scope, "Svd", {a}, {{"compute_uv", true}, {"full_matrices", false}});
    *grads = {MatMul(scope, svd.output(1), MatMul(scope, grad_s_mat, svd.output(2), false, true))};
    return scope.status();
  }
  const PartialShape& shape = a.shape();
  if (!shape.known_rank() || shape.dim(shape.rank() - 2) < 0 || shape.dim(shape.rank() - 1) < 0) {
    return errors::Unimplemented(
        "the gradient of Svd needs the matrix dims known statically (node '", op.name(), "')");
  }
  const int rank = shape.rank();
  int64_t m = shape.dim(rank - 2), n = shape.dim(rank - 1);
  const bool full = BoolAttr(op, "full_matrices", false);
  Output u = op.output(1), v = op.output(2);
  Output grad_u = GradOrZeros(scope, g[1], u), grad_v = GradOrZeros(scope, g[2], v);
  const bool use_adjoint = m > n;
  if (use_adjoint) {
    std::swap(m, n);
    std::swap(u, v);
    std::swap(grad_u, grad_v);
  }
  if (full && n - m > 1) {
    return errors::Unimplemented("the gradient of Svd with full_matrices and |m - n| > 1 (node '",
                                 op.name(), "'), as in TensorFlow");
  }
  Output s_mat = Op(scope, "MatrixDiag", {s});
  Output s2 = ops::Mul(scope, s, s);
  Output f = SetDiag(scope,
                     SafeReciprocal(scope, ops::Sub(scope, ops::ExpandDims(scope, s2, -2),
                                                    ops::ExpandDims(scope, s2, -1))),
                     ops::ZerosLike(scope, s));
  Output s_inv_mat = Op(scope, "MatrixDiag", {SafeReciprocal(scope, s)});
  Output v1 = full ? Columns(scope, v, rank, 0, m) : v;
  Output grad_v1 = full ? Columns(scope, grad_v, rank, 0, m) : grad_v;
  Output f_u = ops::Mul(scope, f, MatMul(scope, u, grad_u, true, false));
  Output f_v = ops::Mul(scope, f, MatMul(scope, v1, grad_v1, true, false));
  Output inner =
      ops::AddV2(scope,
                 ops::AddV2(scope, grad_s_mat,
                            MatMul(scope, ops::AddV2(scope, f_u, Adjoint(scope, f_u)), s_mat)),
                 MatMul(scope, s_mat, ops::AddV2(scope, f_v, Adjoint(scope, f_v))));
  Output grad_a = MatMul(scope, u, MatMul(scope, inner, v1, false, true));
  if (m != n) {
    Output gv1t = Adjoint(scope, grad_v1);
    Output rest = ops::Sub(scope, gv1t, MatMul(scope, MatMul(scope, gv1t, v1), v1, false, true));
    if (full) {
      Output v2 = Columns(scope, v, rank, m, n), grad_v2 = Columns(scope, grad_v, rank, m, n);
      rest = ops::Sub(scope, rest,
                      MatMul(scope, MatMul(scope, v1, grad_v2, true, false), v2, false, true));
    }
    grad_a = ops::AddV2(scope, grad_a, MatMul(scope, MatMul(scope, u, s_inv_mat), rest));
  }
  *grads = {use_adjoint ? Adjoint(scope, grad_a) : grad_a};
  return scope.status();
}

// P A = L U (L unit lower, U upper, packed in `lu`; row i of P A is row
// p[i] of A). With G the gradient of lu and M = tril(L^T G, -1) +
// triu(G U^T): dA = P^T L^-T M U^-T. TensorFlow registers none; this one
// is checked by finite differences.
Status LuGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  WEIR_RETURN_IF_ERROR(RealOnly(op));
  Output lu = op.output(0), p = op.output(1);
  if (!g[0].valid()) {
    *grads = {Output()};
    return Status::OK();
  }
  Output l = SetDiag(scope, Band(scope, lu, -1, 0), ops::OnesLike(scope, DiagPart(scope, lu)));
  Output u = Band(scope, lu, 0, -1);
  Output lower = Band(scope, MatMul(scope, l, g[0], true, false), -1, 0);
  lower = SetDiag(scope, lower, ops::ZerosLike(scope, DiagPart(scope, lu)));
  Output middle = ops::AddV2(scope, lower, Band(scope, MatMul(scope, g[0], u, false, true), 0, -1));
  Output left =
      Op(scope, "MatrixTriangularSolve", {l, middle}, {{"lower", true}, {"adjoint", true}});
  Output grad_perm = Adjoint(scope, Op(scope, "MatrixTriangularSolve", {u, Adjoint(scope, left)},
                                       {{"lower", false}, {"adjoint", false}}));
  // P[i, j] = (p[i] == j); dA = P^T grad_perm.
  Output n = ops::StridedSlice(scope, ops::Shape(scope, lu), IntVector(scope, {-1}),
                               IntVector(scope, {0}), IntVector(scope, {1}),
                               {{"end_mask", int64_t{1}}, {"shrink_axis_mask", int64_t{1}}});
  Output perm = Op(scope, "OneHot", {p, n, ScalarLike(scope, 1, lu), ScalarLike(scope, 0, lu)});
  *grads = {MatMul(scope, perm, grad_perm, true, false)};
  return scope.status();
}

// cross(a, b): d/da = b x g, d/db = g x a.
Status CrossGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  Output a = ForwardInput(op, 0), b = ForwardInput(op, 1);
  *grads = {Op(scope, "Cross", {b, g[0]}), Op(scope, "Cross", {g[0], a})};
  return scope.status();
}

Status NotYet(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  return errors::Unimplemented("Weir has no gradient for ", op.node()->type_string(),
                               " yet (node '", op.name(), "')");
}

}  // namespace

void RegisterLinalgGradients(GradientRegistry* registry) {
  registry->Register("Diag", DiagGrad);
  registry->Register("DiagPart", DiagPartGrad);
  for (const char* v : {"", "V2", "V3"}) {
    registry->Register(std::string("MatrixDiag") + v, MatrixDiagGrad);
    registry->Register(std::string("MatrixDiagPart") + v, MatrixDiagPartGrad);
    registry->Register(std::string("MatrixSetDiag") + v, MatrixSetDiagGrad);
  }
  registry->Register("MatrixInverse", MatrixInverseGrad);
  registry->Register("MatrixDeterminant", MatrixDeterminantGrad);
  registry->Register("LogMatrixDeterminant", LogMatrixDeterminantGrad);
  registry->Register("Cholesky", CholeskyGrad);
  registry->Register("MatrixSolve", MatrixSolveGrad);
  registry->Register("MatrixTriangularSolve", MatrixTriangularSolveGrad);
  registry->Register("SelfAdjointEigV2", SelfAdjointEigV2Grad);
  registry->Register("Qr", QrGrad);
  registry->Register("Svd", SvdGrad);
  registry->Register("Cross", CrossGrad);
  registry->Register("Lu", LuGrad);
  registry->Register("MatrixSolveLs", NotYet);
}

}  // namespace weir
