"""Assertions: TF1's tf.assert_* on top of the Assert op.

Each returns the Assert Operation (run it, or make it a control dependency of
what it guards); when it fails, the step raises InvalidArgumentError whose
message holds `message`, the condition and the first `summarize` entries of
the tensors. Rank and dtype checks that are decidable at graph-building time
raise ValueError/TypeError then, as in TF.
"""
from weir.framework import dtypes
from weir.framework import ops
from weir.ops import array_ops
from weir.ops import control_flow_ops
from weir.ops import math_ops

__all__ = [
    "assert_equal", "assert_none_equal", "assert_less", "assert_less_equal", "assert_greater",
    "assert_greater_equal", "assert_positive", "assert_negative", "assert_non_negative",
    "assert_non_positive", "assert_rank", "assert_rank_at_least", "assert_type", "assert_integer",
    "assert_scalar", "is_numeric_tensor",
]


def _binary_assert(compare, symbol, default_name):
    def fn(x, y, data=None, summarize=None, message=None, name=None):
        with ops.name_scope(name, default_name, [x, y, data]) as scope:
            x = ops.convert_to_tensor(x, name="x")
            y = ops.convert_to_tensor(y, dtype=x.dtype.base_dtype, name="y")
            if data is None:
                data = [
                    message or "",
                    "Condition x %s y did not hold element-wise:" % symbol,
                    "x (%s) = " % x.name, x,
                    "y (%s) = " % y.name, y,
                ]
            elif message is not None:
                data = [message] + list(data)
            condition = math_ops.reduce_all(compare(x, y))
            return control_flow_ops.Assert(condition, data, summarize=summarize, name=scope)
    fn.__name__ = default_name
    fn.__doc__ = "An Assert op that fails unless x %s y holds for every element (broadcasting)." % symbol
    return fn


assert_equal = _binary_assert(math_ops.equal, "==", "assert_equal")
assert_none_equal = _binary_assert(math_ops.not_equal, "!=", "assert_none_equal")
assert_less = _binary_assert(math_ops.less, "<", "assert_less")
assert_less_equal = _binary_assert(math_ops.less_equal, "<=", "assert_less_equal")
assert_greater = _binary_assert(math_ops.greater, ">", "assert_greater")
assert_greater_equal = _binary_assert(math_ops.greater_equal, ">=", "assert_greater_equal")


def _sign_assert(compare, what, default_name):
    def fn(x, data=None, summarize=None, message=None, name=None):
        with ops.name_scope(name, default_name, [x, data]) as scope:
            x = ops.convert_to_tensor(x, name="x")
            if data is None:
                data = [message or "", "Condition x %s did not hold element-wise:" % what,
                        "x (%s) = " % x.name, x]
            elif message is not None:
                data = [message] + list(data)
            zero = array_ops.zeros([], dtype=x.dtype)
            condition = math_ops.reduce_all(compare(x, zero))
            return control_flow_ops.Assert(condition, data, summarize=summarize, name=scope)
    fn.__name__ = default_name
    fn.__doc__ = "An Assert op that fails unless every element of x is %s." % what.split()[-1]
    return fn


assert_positive = _sign_assert(math_ops.greater, "> 0", "assert_positive")
assert_negative = _sign_assert(math_ops.less, "< 0", "assert_negative")
assert_non_negative = _sign_assert(math_ops.greater_equal, ">= 0", "assert_non_negative")
assert_non_positive = _sign_assert(math_ops.less_equal, "<= 0", "assert_non_positive")


def _rank_assert(x, rank, at_least, message, data, summarize, name, default_name):
    with ops.name_scope(name, default_name, [x]) as scope:
        x = ops.convert_to_tensor(x, name="x")
        static_rank = rank if isinstance(rank, int) else None
        if static_rank is not None and x.shape.ndims is not None:
            ok = x.shape.ndims >= static_rank if at_least else x.shape.ndims == static_rank
            if not ok:
                raise ValueError("%sTensor %s must have rank %s%d.  Received rank %d, shape %s" % (
                    (message + "  ") if message else "", x.name, "at least " if at_least else "",
                    static_rank, x.shape.ndims, x.shape))
            return control_flow_ops.no_op(name=scope)
        rank_t = ops.convert_to_tensor(rank, dtype=dtypes.int32, name="rank")
        actual = array_ops.rank(x)
        condition = (math_ops.greater_equal if at_least else math_ops.equal)(actual, rank_t)
        if data is None:
            data = [message or "", "Tensor %s must have rank%s" % (x.name, " at least" if at_least else ""),
                    rank_t, "Received shape: ", array_ops.shape(x)]
        return control_flow_ops.Assert(condition, data, summarize=summarize, name=scope)


def assert_rank(x, rank, data=None, summarize=None, message=None, name=None):
    """ValueError now if x's static rank is known and differs; else an Assert op."""
    return _rank_assert(x, rank, False, message, data, summarize, name, "assert_rank")


def assert_rank_at_least(x, rank, data=None, summarize=None, message=None, name=None):
    return _rank_assert(x, rank, True, message, data, summarize, name, "assert_rank_at_least")


def assert_type(tensor, tf_type, message=None, name=None):
    """TypeError now unless tensor has dtype tf_type; returns a no_op."""
    tensor = ops.convert_to_tensor(tensor, name="tensor")
    if tensor.dtype.base_dtype != dtypes.as_dtype(tf_type).base_dtype:
        raise TypeError("%s%s must be of type %s; got %s" % (
            (message + " ") if message else "", tensor.name, dtypes.as_dtype(tf_type).name,
            tensor.dtype.name))
    with ops.name_scope(name, "assert_type", [tensor]) as scope:
        return control_flow_ops.no_op(name=scope)


def assert_integer(x, message=None, name=None):
    x = ops.convert_to_tensor(x, name="x")
    if not x.dtype.is_integer:
        raise TypeError("%sExpected integer type for %s, got %s" % (
            (message + " ") if message else "", x.name, x.dtype.name))
    with ops.name_scope(name, "assert_integer", [x]) as scope:
        return control_flow_ops.no_op(name=scope)


def assert_scalar(tensor, name=None, message=None):
    """The tensor itself when its static rank is 0; ValueError otherwise."""
    tensor = ops.convert_to_tensor(tensor, name=name)
    if tensor.shape.ndims != 0:
        raise ValueError("%sExpected scalar shape for %s, saw shape: %s." % (
            (message + " ") if message else "", tensor.name, tensor.shape))
    return tensor


def is_numeric_tensor(tensor):
    return isinstance(tensor, ops.Tensor) and (
        tensor.dtype.is_floating or tensor.dtype.is_integer or tensor.dtype.is_complex)
