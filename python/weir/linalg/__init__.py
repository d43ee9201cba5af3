"""weir.linalg: TF1's tf.linalg names Weir can compute (re-exported)."""
from weir.ops.array_ops import eye, matrix_diag as diag, matrix_diag_part as diag_part  # noqa: F401
from weir.ops.array_ops import matrix_transpose as transpose  # noqa: F401
from weir.ops.math_ops import matmul, tensordot, trace, l2_normalize, norm  # noqa: F401
from weir.ops.math_ops import einsum  # noqa: F401

matrix_transpose = transpose


def band_part(input, num_lower, num_upper, name=None):  # noqa: A002  (TF's name)
    """The band of each inner matrix of `input`: entries (m, n) with
    (num_lower < 0 or m - n <= num_lower) and (num_upper < 0 or n - m <=
    num_upper) kept, the rest zero (tf.linalg.band_part, composed of ops)."""
    import weir as wr
    from weir.framework import ops
    with ops.name_scope(name, "band_part", [input]):
        input = ops.convert_to_tensor(input, name="input")
        shape = wr.shape(input)
        rows = wr.expand_dims(wr.range(shape[-2]), 1)
        cols = wr.expand_dims(wr.range(shape[-1]), 0)
        lower = wr.cast(num_lower, wr.int32)
        upper = wr.cast(num_upper, wr.int32)
        keep = wr.logical_and(wr.logical_or(lower < 0, rows - cols <= lower),
                              wr.logical_or(upper < 0, cols - rows <= upper))
        return wr.where(wr.broadcast_to(keep, shape), input, wr.zeros_like(input))

__all__ = ["eye", "diag", "diag_part", "transpose", "matrix_transpose", "matmul", "tensordot",
           "trace", "l2_normalize", "norm", "band_part"]
__all__ += ["einsum"]
