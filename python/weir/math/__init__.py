"""weir.math: TF1's tf.math names (re-exported from weir.ops.math_ops and friends)."""
from weir.ops.array_ops import invert_permutation  # noqa: F401
from weir.ops.nn_ops import top_k  # noqa: F401
from weir.ops.template_ops import confusion_matrix  # noqa: F401
from weir.ops.math_ops import (  # noqa: F401
    abs, accumulate_n, add, add_n, argmax, argmin, ceil, cos, count_nonzero, cumsum, divide, equal,
    erf, erfc, exp, expm1, floor, floordiv, floormod, greater, greater_equal, is_finite, is_inf, is_nan,
    l2_normalize, less, less_equal, log, log1p, log_sigmoid, logical_and, logical_not, logical_or,
    logical_xor, maximum, minimum, mod, multiply, negative, not_equal, pow, reciprocal,
    reduce_all, reduce_any, reduce_euclidean_norm, reduce_logsumexp, reduce_max, reduce_mean,
    reduce_min, reduce_prod, reduce_std, reduce_sum, reduce_variance, rint, round, rsqrt,
    scalar_mul, sigmoid, sign, sin, softplus, sqrt, square, squared_difference, subtract, tanh,
    truediv, truncatediv, realdiv, div_no_nan)
from weir.ops.math_ops import atan2, digamma, lgamma, polygamma  # noqa: F401
from weir.ops.math_ops import acos, acosh, asin, asinh, atan, atanh, cosh, sinh, tan  # noqa: F401
from weir.ops.math_ops import (  # noqa: F401
    cumprod, segment_sum, unsorted_segment_max, unsorted_segment_min, unsorted_segment_prod,
    unsorted_segment_sum)
from weir.ops.special_math_ops import (  # noqa: F401
    angle, bessel_i0e, bessel_i1e, betainc, conj, erfinv, igamma, igammac, imag, ndtri, nextafter,
    real, xdivy, xlog1py, xlogy, zeta)
from weir.ops.array_extra_ops import bincount  # noqa: F401

floor_div = floordiv

__all__ = [n for n in dir() if not n.startswith("_")]


from weir.ops.tf1_modules import (  # noqa: F401,E402
    multiply_no_nan, reciprocal_no_nan, polyval, zero_fraction, segment_max, segment_min,
    segment_mean, segment_prod, unsorted_segment_mean, unsorted_segment_sqrt_n)
from weir.ops.tf1_extras import is_non_decreasing, is_strictly_increasing, lbeta  # noqa: F401,E402
from weir.ops.math_ops import div_no_nan as divide_no_nan  # noqa: F401,E402
from weir.ops.tf1_modules import cumulative_logsumexp  # noqa: F401,E402
from weir.nn import log_softmax, softmax, softsign, in_top_k  # noqa: F401,E402
__all__ = [n for n in dir() if not n.startswith("_")]
