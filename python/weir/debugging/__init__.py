"""weir.debugging: tf.debugging — check_numerics and assert_all_finite
(weir.ops.numerics) and the assert_* checks of weir.ops.check_ops, plus
Assert, is_nan/is_inf/is_finite; the same functions weir exports at the
top level, not copies."""
from weir.ops.check_ops import (  # noqa: F401
    assert_equal, assert_greater, assert_greater_equal, assert_integer, assert_less,
    assert_less_equal, assert_negative, assert_non_negative, assert_non_positive,
    assert_none_equal, assert_positive, assert_rank, assert_rank_at_least, assert_scalar,
    assert_type, is_numeric_tensor)
from weir.ops.control_flow_ops import Assert  # noqa: F401
from weir.ops.math_ops import is_finite, is_inf, is_nan  # noqa: F401
from weir.ops.numerics import check_numerics, verify_tensor_all_finite  # noqa: F401


def assert_all_finite(x, message, name=None):
    """`x`, checked for NaN and Inf (tf.debugging.assert_all_finite): running
    it fails the step with InvalidArgumentError holding `message`."""
    return verify_tensor_all_finite(x=x, message=message, name=name)


__all__ = [n for n in dir() if not n.startswith("_") and n != "verify_tensor_all_finite"]


from weir.ops.tf1_modules import (  # noqa: F401,E402  (tf1api)
    assert_near, assert_rank_in, assert_same_float_dtype, assert_proper_iterable)
from weir.ops.tf1_extras import is_non_decreasing, is_strictly_increasing  # noqa: F401,E402
__all__ = __all__ + ["assert_near", "assert_rank_in", "assert_same_float_dtype",
                     "assert_proper_iterable", "is_non_decreasing", "is_strictly_increasing"]
from weir.ops.tf1_modules import (  # noqa: F401,E402  (tf1api)
    assert_shapes, enable_traceback_filtering, disable_traceback_filtering,
    is_traceback_filtering_enabled)
__all__ = __all__ + ["assert_shapes", "enable_traceback_filtering",
                     "disable_traceback_filtering", "is_traceback_filtering_enabled"]
