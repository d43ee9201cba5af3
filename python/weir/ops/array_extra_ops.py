"""Array ops beyond the core family, as TensorFlow's: roll,
tensor_scatter_nd_{update,add,sub,min,max}, bitcast, unique_with_counts and
bincount (tf.math.bincount with TF1's signature, plus TF2's axis=-1 and
binary_output)."""
from weir.framework import dtypes
from weir.framework import ops
from weir.framework.op_def_library import apply_op
from weir.ops import array_ops
from weir.ops import math_ops

__all__ = [
    "roll", "tensor_scatter_nd_update", "tensor_scatter_nd_add", "tensor_scatter_nd_sub",
    "tensor_scatter_nd_min", "tensor_scatter_nd_max", "tensor_scatter_update",
    "tensor_scatter_add", "tensor_scatter_sub", "tensor_scatter_min", "tensor_scatter_max",
    "bitcast", "unique_with_counts", "bincount",
]


def roll(input, shift, axis, name=None):  # noqa: A002  (TF's argument name)
    """np.roll: elements shifted by `shift` along each `axis`, wrapping."""
    return apply_op("Roll", name, input=input, shift=shift, axis=axis)


def _tensor_scatter(op_type, fn_name):
    def fn(tensor, indices, updates, name=None):
        with ops.name_scope(name, op_type, [tensor, indices, updates]) as scope:
            tensor = ops.convert_to_tensor(tensor, name="tensor")
            updates = ops.convert_to_tensor(updates, dtype=tensor.dtype.base_dtype,
                                            name="updates")
            return apply_op(op_type, scope, tensor=tensor, indices=indices, updates=updates)
    fn.__name__ = fn_name
    fn.__doc__ = ("A copy of `tensor` with `updates` combined into the slices `indices` names "
                  "(op %s); an index out of range is an error." % op_type)
    return fn


tensor_scatter_nd_update = _tensor_scatter("TensorScatterUpdate", "tensor_scatter_nd_update")
tensor_scatter_nd_add = _tensor_scatter("TensorScatterAdd", "tensor_scatter_nd_add")
tensor_scatter_nd_sub = _tensor_scatter("TensorScatterSub", "tensor_scatter_nd_sub")
tensor_scatter_nd_min = _tensor_scatter("TensorScatterMin", "tensor_scatter_nd_min")
tensor_scatter_nd_max = _tensor_scatter("TensorScatterMax", "tensor_scatter_nd_max")
tensor_scatter_update = tensor_scatter_nd_update
tensor_scatter_add = tensor_scatter_nd_add
tensor_scatter_sub = tensor_scatter_nd_sub
tensor_scatter_min = tensor_scatter_nd_min
tensor_scatter_max = tensor_scatter_nd_max


def bitcast(input, type, name=None):  # noqa: A002
    """The bytes of `input` read as `type` (no copy of values, only of bytes)."""
    return apply_op("Bitcast", name, input=input, type=dtypes.as_dtype(type))


def unique_with_counts(x, out_idx=dtypes.int32, name=None):
    """(y, idx, count): the distinct values of vector x in order of first
    occurrence, each element's position in y, and each value's count."""
    return apply_op("UniqueWithCounts", name, x=x, out_idx=dtypes.as_dtype(out_idx))


def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=dtypes.int32, name=None,
             axis=None, binary_output=False):
    """Counts (or summed weights) of each value of the non-negative int32
    `arr` in [0, max(arr) + 1), at least `minlength` and at most `maxlength`
    bins. axis=-1 counts each row of a matrix separately (DenseBincount)."""
    with ops.name_scope(name, "bincount", [arr, weights, minlength, maxlength]) as scope:
        arr = ops.convert_to_tensor(arr, name="arr")
        if axis not in (None, 0, -1):
            raise ValueError("bincount: axis must be None, 0 or -1, got %r" % (axis,))
        if axis == 0:
            axis = None
        if axis is None and arr.dtype.base_dtype != dtypes.int32:
            arr = math_ops.cast(arr, dtypes.int32)
        idx_dtype = arr.dtype.base_dtype
        flat_max = math_ops.reduce_max(arr)
        nonempty = math_ops.greater(array_ops.size(arr, out_type=idx_dtype), 0)
        size = array_ops.where_v2(nonempty, math_ops.add(flat_max, 1),
                                  array_ops.zeros([], dtype=idx_dtype))
        size = math_ops.maximum(size, array_ops.zeros([], dtype=idx_dtype))
        for bound, what in ((minlength, "minlength"), (maxlength, "maxlength")):
            if isinstance(bound, int) and not -2 ** 31 <= bound < 2 ** 31:
                raise ValueError("bincount: %s %d is out of the int32 range of bin counts" %
                                 (what, bound))
        if minlength is not None:
            size = math_ops.maximum(size, math_ops.cast(minlength, idx_dtype))
        if maxlength is not None:
            size = math_ops.minimum(size, math_ops.cast(maxlength, idx_dtype))
        if weights is not None:
            weights = ops.convert_to_tensor(weights, name="weights")
            out_dtype = weights.dtype.base_dtype
        else:
            out_dtype = dtypes.as_dtype(dtype)
            weights = array_ops.zeros([0], dtype=out_dtype)
        if axis is None and not binary_output:
            return apply_op("Bincount", scope, arr=arr, size=size, weights=weights)
        return apply_op("DenseBincount", scope, input=arr, size=size, weights=weights,
                        binary_output=bool(binary_output))
