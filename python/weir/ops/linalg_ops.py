"""Linear algebra (tf.linalg and TF1's tf.matrix_* names) on the linalg ops:
decompositions, solvers, determinants and the diagonal family.

Every function works on the innermost two dims, batched over the others, as
TensorFlow's. `diag`/`diag_part`/`set_diag` build MatrixDiagV3 & co. (the
band `k`, `num_rows`/`num_cols`, `padding_value`, `align`), as TF 2.21's
tf.linalg.diag exports; TF1's tf.diag / tf.diag_part are the tensor forms
(Diag, DiagPart: tf.linalg.tensor_diag*)."""
import collections

from weir.framework import dtypes
from weir.framework import ops
from weir.framework.op_def_library import apply_op

__all__ = ["matrix_inverse", "matrix_determinant", "cholesky", "matrix_solve",
           "matrix_triangular_solve", "qr", "svd", "self_adjoint_eig", "self_adjoint_eigvals",
           "diag", "diag_part", "matrix_diag", "matrix_diag_part", "matrix_set_diag", "cross",
           "cholesky_solve", "matrix_solve_ls", "log_matrix_determinant"]

Qr = collections.namedtuple("Qr", ["q", "r"])
Lu = collections.namedtuple("Lu", ["lu", "p"])
Slogdet = collections.namedtuple("LogMatrixDeterminant", ["sign", "log_abs_determinant"])
Eigh = collections.namedtuple("SelfAdjointEigV2", ["e", "v"])


def _k_arg(k):
    """k as TF passes it: an int32 scalar, or a pair (lower, upper)."""
    if isinstance(k, (list, tuple)):
        return ops.convert_to_tensor(list(k), dtype=dtypes.int32, name="k")
    return ops.convert_to_tensor(k, dtype=dtypes.int32, name="k")


# ---- the diagonal family ----

def matrix_diag(diagonal, name="diag", k=0, num_rows=-1, num_cols=-1, padding_value=0,
                align="RIGHT_LEFT"):
    """Batched matrices with `diagonal` on diagonals k (an int or a (lower,
    upper) band; row i of a band's diagonal tensor is diagonal k[1] - i),
    padding_value elsewhere; num_rows/num_cols -1 take the smallest that fits
    (tf.linalg.diag; op MatrixDiagV3)."""
    with ops.name_scope(name, "diag", [diagonal]) as scope:
        diagonal = ops.convert_to_tensor(diagonal, name="diagonal")
        padding_value = ops.convert_to_tensor(padding_value, dtype=diagonal.dtype, name="padding_value")
        return apply_op("MatrixDiagV3", scope, diagonal=diagonal, k=_k_arg(k),
                        num_rows=ops.convert_to_tensor(num_rows, dtype=dtypes.int32, name="num_rows"),
                        num_cols=ops.convert_to_tensor(num_cols, dtype=dtypes.int32, name="num_cols"),
                        padding_value=padding_value, align=align)


def matrix_diag_part(input, name="diag_part", k=0, padding_value=0, align="RIGHT_LEFT"):  # noqa: A002
    """The diagonals k of each innermost matrix, the shorter ones padded with
    padding_value as `align` says (tf.linalg.diag_part; op MatrixDiagPartV3)."""
    with ops.name_scope(name, "diag_part", [input]) as scope:
        input = ops.convert_to_tensor(input, name="input")
        padding_value = ops.convert_to_tensor(padding_value, dtype=input.dtype, name="padding_value")
        return apply_op("MatrixDiagPartV3", scope, input=input, k=_k_arg(k),
                        padding_value=padding_value, align=align)


def matrix_set_diag(input, diagonal, name="set_diag", k=0, align="RIGHT_LEFT"):  # noqa: A002
    """`input` with its diagonals k replaced by `diagonal` (tf.linalg.set_diag;
    op MatrixSetDiagV3)."""
    with ops.name_scope(name, "set_diag", [input, diagonal]) as scope:
        input = ops.convert_to_tensor(input, name="input")
        diagonal = ops.convert_to_tensor(diagonal, dtype=input.dtype, name="diagonal")
        return apply_op("MatrixSetDiagV3", scope, input=input, diagonal=diagonal, k=_k_arg(k),
                        align=align)


def diag(diagonal, name=None):
    """TF1's tf.diag (tf.linalg.tensor_diag): shape s -> s + s, zero except
    output[i..., i...] = diagonal[i...] (op Diag)."""
    return apply_op("Diag", name, diagonal=diagonal)


def diag_part(input, name=None):  # noqa: A002
    """TF1's tf.diag_part (tf.linalg.tensor_diag_part): Diag's inverse (op DiagPart)."""
    return apply_op("DiagPart", name, input=input)


# ---- decompositions and solvers ----

def matrix_inverse(input, adjoint=False, name=None):  # noqa: A002
    """The inverse of each innermost square matrix (of its adjoint when
    `adjoint`); a singular one is an InvalidArgumentError (tf.linalg.inv)."""
    return apply_op("MatrixInverse", name, input=input, adjoint=adjoint)


def matrix_determinant(input, name=None):  # noqa: A002
    """The determinant of each innermost square matrix (tf.linalg.det)."""
    return apply_op("MatrixDeterminant", name, input=input)


def log_matrix_determinant(input, name=None):  # noqa: A002
    """(sign, log|det|) of each innermost square matrix (tf.linalg.slogdet)."""
    sign, log_abs = apply_op("LogMatrixDeterminant", name, input=input)
    return Slogdet(sign, log_abs)


def logdet(matrix, name=None):
    """log det of each Hermitian positive-definite matrix, by Cholesky:
    2 * sum(log(diag(L))) (tf.linalg.logdet)."""
    from weir.ops import math_ops
    with ops.name_scope(name, "logdet", [matrix]):
        chol = cholesky(matrix)
        return 2.0 * math_ops.reduce_sum(math_ops.log(matrix_diag_part(chol)), axis=[-1])


def cholesky(input, name=None):  # noqa: A002
    """The lower Cholesky factor of each innermost positive-definite matrix,
    read from its lower triangle (tf.linalg.cholesky)."""
    return apply_op("Cholesky", name, input=input)


def matrix_solve(matrix, rhs, adjoint=False, name=None):
    """X with matrix X = rhs (matrix^H X = rhs when `adjoint`) (tf.linalg.solve)."""
    return apply_op("MatrixSolve", name, matrix=matrix, rhs=rhs, adjoint=adjoint)


def matrix_triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    """X with T X = rhs, T the lower (upper) triangle of `matrix`; batch dims
    broadcast (tf.linalg.triangular_solve)."""
    return apply_op("MatrixTriangularSolve", name, matrix=matrix, rhs=rhs, lower=lower,
                    adjoint=adjoint)


def cholesky_solve(chol, rhs, name=None):
    """X with A X = rhs given A's Cholesky factor `chol`: two triangular
    solves (tf.linalg.cholesky_solve)."""
    with ops.name_scope(name, "cholesky_solve", [chol, rhs]):
        y = matrix_triangular_solve(chol, rhs, lower=True, adjoint=False)
        return matrix_triangular_solve(chol, y, lower=True, adjoint=True)


def qr(input, full_matrices=False, name=None):  # noqa: A002
    """(q, r) of each innermost matrix (tf.linalg.qr)."""
    q, r = apply_op("Qr", name, input=input, full_matrices=full_matrices)
    return Qr(q, r)


def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """s (descending), and u, v when compute_uv, with tensor = u diag(s) v^H
    (tf.linalg.svd: returns s alone without compute_uv)."""
    s, u, v = apply_op("Svd", name, input=tensor, compute_uv=compute_uv,
                       full_matrices=full_matrices)
    return (s, u, v) if compute_uv else s


def self_adjoint_eig(tensor, name=None):
    """(e ascending, v with eigenvectors in columns) of each self-adjoint
    matrix, read from its lower triangle (tf.linalg.eigh)."""
    e, v = apply_op("SelfAdjointEigV2", name, input=tensor, compute_v=True)
    return Eigh(e, v)


def self_adjoint_eigvals(tensor, name=None):
    """The eigenvalues alone (tf.linalg.eigvalsh)."""
    e, _ = apply_op("SelfAdjointEigV2", name, input=tensor, compute_v=False)
    return e


def lu(input, output_idx_type=dtypes.int32, name=None):  # noqa: A002
    """(lu, p): L (unit diagonal, below) and U packed, and the row
    permutation with input[p] = L U (tf.linalg.lu)."""
    packed, p = apply_op("Lu", name, input=input, output_idx_type=output_idx_type)
    return Lu(packed, p)


def matrix_solve_ls(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """The least-squares solution of matrix X = rhs, Tikhonov-regularized by
    l2_regularizer (tf.linalg.lstsq)."""
    with ops.name_scope(name, "matrix_solve_ls", [matrix, rhs]) as scope:
        l2 = ops.convert_to_tensor(l2_regularizer, dtype=dtypes.float64, name="l2_regularizer")
        return apply_op("MatrixSolveLs", scope, matrix=matrix, rhs=rhs, l2_regularizer=l2, fast=fast)


def cross(a, b, name=None):
    """The cross product of the 3-vectors in the innermost dim (tf.linalg.cross)."""
    return apply_op("Cross", name, a=a, b=b)


def adjoint(matrix, name=None):
    """The conjugate transpose of the innermost matrices (tf.linalg.adjoint)."""
    from weir.ops import array_ops
    with ops.name_scope(name, "adjoint", [matrix]):
        matrix = ops.convert_to_tensor(matrix, name="matrix")
        swapped = array_ops.matrix_transpose(matrix)
        return apply_op("Conj", None, input=swapped) if matrix.dtype.is_complex else swapped


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None, keep_dims=None):  # noqa: A002
    """tf.linalg.norm: math_ops.norm's vector norms and Frobenius norm, plus
    the matrix norms TensorFlow has over a pair of axes: ord 1 (largest
    column sum), np.inf (largest row sum) and 2 (largest singular value)."""
    import numpy as np

    from weir.ops import array_ops, math_ops
    pair = isinstance(axis, (list, tuple)) and len(axis) == 2
    if not pair or ord in ("fro", "euclidean"):
        return math_ops.norm(tensor, ord=ord, axis=axis, keepdims=keepdims, name=name,
                             keep_dims=keep_dims)
    keep = bool(keepdims or keep_dims)
    with ops.name_scope(name, "norm", [tensor]) as scope:
        x = ops.convert_to_tensor(tensor, name="tensor")
        rank = x.shape.ndims
        if rank is None:
            raise ValueError("norm: a matrix norm needs a tensor of known rank")
        rows, cols = (int(a) % rank for a in axis)
        if rows == cols:
            raise ValueError("norm: the two axes must differ, got %s" % (axis,))
        if ord in (1, 1.0):
            result = math_ops.reduce_max(math_ops.reduce_sum(math_ops.abs(x), rows, keepdims=True),
                                         cols, keepdims=True)
        elif ord == np.inf:
            result = math_ops.reduce_max(math_ops.reduce_sum(math_ops.abs(x), cols, keepdims=True),
                                         rows, keepdims=True)
        elif ord in (2, 2.0):
            others = [i for i in range(rank) if i not in (rows, cols)]
            moved = array_ops.transpose(x, others + [rows, cols])
            s = svd(moved, compute_uv=False)
            result = math_ops.reduce_max(s, -1)
            for a in sorted((rows, cols)):
                result = array_ops.expand_dims(result, a)
        else:
            raise ValueError("norm: matrix ord must be 'fro', 'euclidean', 1, 2 or np.inf, got %r"
                             % (ord,))
        if not keep:
            result = array_ops.squeeze(result, [rows, cols])
        return array_ops.identity(result, name=scope)
