"""tf.constant (TF1 semantics): a Const node holding a numpy array made by
tensor_util's rules (bool, strings, int64 exact; a shorter value repeats its
last element to fill `shape`, a longer one is a ValueError)."""
from weir.framework import dtypes
from weir.framework import ops
from weir.framework import tensor_util

__all__ = ["constant"]


def _make_const(value_array, dtype, name):
    g = ops.get_default_graph()
    if name and name[-1] == "/":
        node_name = name[:-1]
    else:
        node_name = g.unique_name(name or "Const")
    op = g._create_op_internal("Const", [], {"value": value_array,
                                             "dtype": dtype.as_datatype_enum}, node_name)
    return op.outputs[0]


def constant(value, dtype=None, shape=None, name="Const", verify_shape=False):
    """A constant tensor of `value` (a Python value or numpy array), of
    `dtype` when given (else inferred: float -> float32, int -> int32 or
    int64), broadcast or filled to `shape` when given."""
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype).base_dtype
    arr = tensor_util.to_numpy(value, dtype, shape, verify_shape)
    if dtype is None:
        dtype = dtypes.string if arr.dtype == object else dtypes.as_dtype(arr.dtype)
    return _make_const(arr, dtype, name)


def _constant_for_conversion(value, dtype, name, strict=False):
    """convert_to_tensor's fallback: strict refuses to cast numpy values
    (the trial of a preferred dtype)."""
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype).base_dtype
    arr = tensor_util.to_numpy(value, dtype, None, False, strict=strict)
    if dtype is None:
        dtype = dtypes.string if arr.dtype == object else dtypes.as_dtype(arr.dtype)
    return _make_const(arr, dtype, name or "Const")
