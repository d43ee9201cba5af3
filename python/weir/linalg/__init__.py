"""weir.linalg: tf.linalg (TF1's names too, re-exported)."""
from weir.ops.array_ops import eye  # noqa: F401
from weir.ops.array_ops import matrix_transpose as transpose  # noqa: F401
from weir.ops.math_ops import matmul, tensordot, trace, l2_normalize  # noqa: F401
from weir.ops.math_ops import einsum  # noqa: F401
from weir.ops.array_ops import matrix_band_part as band_part  # noqa: F401
from weir.ops.linalg_ops import (  # noqa: F401
    matrix_diag as diag, matrix_diag_part as diag_part, matrix_set_diag as set_diag,
    diag as tensor_diag, diag_part as tensor_diag_part,
    matrix_inverse as inv, matrix_determinant as det, log_matrix_determinant as slogdet, logdet,
    cholesky, matrix_solve as solve, matrix_triangular_solve as triangular_solve, cholesky_solve,
    qr, svd, self_adjoint_eig as eigh, self_adjoint_eigvals as eigvalsh, lu,
    matrix_solve_ls as lstsq, cross, adjoint, norm)

matrix_transpose = transpose

__all__ = ["eye", "diag", "diag_part", "transpose", "matrix_transpose", "matmul", "tensordot",
           "trace", "l2_normalize", "norm"]
__all__ += ["einsum", "band_part"]
__all__ += ["set_diag", "tensor_diag", "tensor_diag_part", "inv", "det", "slogdet", "logdet",
            "cholesky", "solve", "triangular_solve", "cholesky_solve", "qr", "svd", "eigh",
            "eigvalsh", "lu", "lstsq", "cross", "adjoint"]
