"""weir.linalg: TF1's tf.linalg names Weir can compute (re-exported)."""
from weir.ops.array_ops import eye, matrix_diag as diag, matrix_diag_part as diag_part  # noqa: F401
from weir.ops.array_ops import matrix_transpose as transpose  # noqa: F401
from weir.ops.math_ops import matmul, tensordot, trace, l2_normalize, norm  # noqa: F401
from weir.ops.math_ops import einsum  # noqa: F401
from weir.ops.array_ops import matrix_band_part as band_part  # noqa: F401

matrix_transpose = transpose


__all__ = ["eye", "diag", "diag_part", "transpose", "matrix_transpose", "matmul", "tensordot",
           "trace", "l2_normalize", "norm"]
__all__ += ["einsum", "band_part"]
