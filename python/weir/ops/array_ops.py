"""Array ops: TF1's tf.* names for making, shaping, slicing and gathering
tensors, built on the generated op functions (through apply_op) and, where
Weir has no single op, a few of them composed.

Contract: names, signatures (deprecated TF1 aliases such as `dim`,
`squeeze_dims` and `axis` included) and results follow tf.compat.v1. A
function whose sizes are Python values known at graph-building time folds
them into constants as TF does (`shape` of a fully defined tensor is a
Const). `Tensor.__getitem__` is `_slice_helper`: NumPy/TF basic indexing
(ints, slices with any step, Ellipsis, newaxis/None, scalar Tensors)
lowered to one StridedSlice.
"""
import builtins
import numbers

import numpy as np

from weir.framework import dtypes
from weir.framework import ops
from weir.framework import tensor_shape
from weir.framework.constant_op import constant
from weir.framework.op_def_library import apply_op

__all__ = [
    "placeholder", "placeholder_with_default", "zeros", "ones", "zeros_like", "ones_like", "fill", "reshape", "transpose",
    "concat", "stack", "pack", "unstack", "unpack", "split", "squeeze", "expand_dims", "shape",
    "shape_n", "size", "rank", "slice", "strided_slice", "gather", "gather_nd", "scatter_nd",
    "tile", "pad", "one_hot", "where", "where_v2", "boolean_mask", "identity", "identity_n",
    "stop_gradient", "cast", "to_float", "to_double", "to_int32", "to_int64", "to_bfloat16",
    "saturate_cast", "reverse", "reverse_v2", "sequence_mask", "eye", "matrix_diag",
    "matrix_diag_part", "matrix_transpose", "meshgrid", "unique", "broadcast_to",
    "broadcast_dynamic_shape", "broadcast_static_shape", "invert_permutation", "dynamic_partition",
    "dynamic_stitch", "newaxis", "prevent_gradient", "space_to_batch_nd", "batch_to_space_nd",
    "space_to_depth", "depth_to_space", "matrix_band_part", "ensure_shape",
]

newaxis = None
_builtin_slice = builtins.slice  # `slice` below is TF's op function


def _op(op_type, name, **kw):
    return apply_op(op_type, name, **kw)


def _static_ints(value):
    """`value` as a list of Python ints when it is a Python/numpy sequence of
    ints (no Tensors), else None."""
    if isinstance(value, ops.Tensor):
        return None
    if isinstance(value, tensor_shape.TensorShape):
        return value.as_list() if value.is_fully_defined() else None
    if isinstance(value, (numbers.Integral, np.integer)):
        return None
    try:
        arr = np.asarray(value)
    except Exception:  # noqa: BLE001  (ragged or containing Tensors)
        return None
    if arr.dtype == object or arr.ndim != 1 or not (arr.size == 0 or np.issubdtype(arr.dtype, np.integer)):
        return None
    return [int(v) for v in arr]


def _index_dtype(values):
    """int32 unless a value needs int64 (TF's rule for shape-like inputs)."""
    for v in values:
        if isinstance(v, ops.Tensor):
            if v.dtype.base_dtype == dtypes.int64:
                return dtypes.int64
        elif isinstance(v, (numbers.Integral, np.integer)) and not -2**31 <= int(v) < 2**31:
            return dtypes.int64
    return dtypes.int32


def _pack_indices(values, name, dtype=None):
    """A 1-D index tensor (of `dtype`, else int32 unless a value needs int64)
    from a list of Python ints and scalar Tensors."""
    if dtype is None:
        dtype = _index_dtype(values)
    if not any(isinstance(v, ops.Tensor) for v in values):
        return constant([int(v) for v in values], dtype=dtype.as_numpy_dtype, name=name)
    parts = []
    for v in values:
        if isinstance(v, ops.Tensor):
            parts.append(v if v.dtype.base_dtype == dtype else cast(v, dtype))
        else:
            parts.append(constant(int(v), dtype=dtype))
    return _op("Pack", name, values=parts, axis=0)


def _shape_arg(value, name="shape"):
    """A shape argument (list of ints/Tensors, TensorShape, or a Tensor) as a
    1-D int tensor, ints packed as a Const."""
    if isinstance(value, ops.Tensor):
        return value
    if isinstance(value, tensor_shape.TensorShape):
        value = value.as_list()
    if isinstance(value, (list, tuple)) and any(isinstance(v, ops.Tensor) for v in value):
        return _pack_indices(list(value), name)
    ints = _static_ints(value)
    if ints is not None:
        dtype = _index_dtype(ints)
        return constant(ints, dtype=dtype.as_numpy_dtype, name=name)
    return ops.convert_to_tensor(value, name=name)


def _get_axis(axis, legacy, legacy_name, default=None):
    if legacy is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and '%s'" % legacy_name)
        return legacy
    return default if axis is None else axis


def _rank(t):
    return t.shape.ndims


# ---- making tensors ----

def placeholder(dtype, shape=None, name=None):
    """A value fed at run time; shape None is any shape, a list may hold None."""
    dtype = dtypes.as_dtype(dtype)
    if shape is not None:
        shape = tensor_shape.as_shape(shape)
        shape = None if shape.ndims is None else [d for d in shape.as_list()]
    return _op("Placeholder", name, dtype=dtype, shape=shape)


def placeholder_with_default(input, shape, name=None):  # noqa: A002 (TF's name)
    """`input` unless a value is fed; a fed value may have any shape
    compatible with `shape` (None entries free)."""
    input = ops.convert_to_tensor(input)  # noqa: A001
    shape = tensor_shape.as_shape(shape)
    shape = None if shape.ndims is None else shape.as_list()
    return _op("PlaceholderWithDefault", name, input=input, dtype=input.dtype, shape=shape)


def fill(dims, value, name=None):
    return _op("Fill", name, dims=_shape_arg(dims, "dims"), value=value)


def _filled(shape, dtype, fill_value, name, default_name):
    dtype = dtypes.as_dtype(dtype).base_dtype
    with ops.name_scope(name, default_name, []) as scope:
        if isinstance(shape, tensor_shape.TensorShape):
            if not shape.is_fully_defined():
                raise ValueError("Cannot create a tensor of partially known shape %s" % shape)
            shape = shape.as_list()
        if isinstance(shape, (numbers.Integral, np.integer)):
            shape = [int(shape)]
        ints = _static_ints(shape)
        value = np.array(fill_value, dtype=dtype.as_numpy_dtype) if dtype != dtypes.string else b""
        if ints is not None and int(np.prod(ints, dtype=object)) <= 1000:  # exact, no wrap
            # Small static shapes are one Const, as TF builds them.
            return constant(np.full(ints, value), dtype=dtype, name=scope)
        return _op("Fill", scope, dims=_shape_arg(shape, "shape_as_tensor"),
                   value=constant(value, dtype=dtype, name="Const"))


def zeros(shape, dtype=dtypes.float32, name=None):
    """A tensor of `shape` (list, TensorShape or 1-D int Tensor) filled with 0."""
    return _filled(shape, dtype, 0, name, "zeros")


def ones(shape, dtype=dtypes.float32, name=None):
    """A tensor of `shape` filled with 1."""
    return _filled(shape, dtype, 1, name, "ones")


def zeros_like(tensor, dtype=None, name=None, optimize=True):
    with ops.name_scope(name, "zeros_like", [tensor]) as scope:
        tensor = ops.convert_to_tensor(tensor, name="tensor")
        if dtype is not None and dtypes.as_dtype(dtype) != tensor.dtype:
            if optimize and tensor.shape.is_fully_defined():
                return zeros(tensor.shape.as_list(), dtype, name=scope)
            return zeros(shape(tensor), dtype, name=scope)
        return _op("ZerosLike", scope, x=tensor)


def ones_like(tensor, dtype=None, name=None, optimize=True):
    with ops.name_scope(name, "ones_like", [tensor]) as scope:
        tensor = ops.convert_to_tensor(tensor, name="tensor")
        dtype = tensor.dtype if dtype is None else dtypes.as_dtype(dtype)
        if optimize and tensor.shape.is_fully_defined():
            return ones(tensor.shape.as_list(), dtype, name=scope)
        return ones(shape(tensor), dtype, name=scope)


def eye(num_rows, num_columns=None, batch_shape=None, dtype=dtypes.float32, name=None):
    """An identity matrix [num_rows, num_columns] (batched by batch_shape)."""
    dtype = dtypes.as_dtype(dtype)
    with ops.name_scope(name, "eye", [num_rows, num_columns]) as scope:
        static = all(isinstance(v, (numbers.Integral, np.integer)) or v is None
                     for v in (num_rows, num_columns))
        if static and (batch_shape is None or _static_ints(batch_shape) is not None):
            cols = num_rows if num_columns is None else num_columns
            m = np.eye(int(num_rows), int(cols), dtype=dtype.as_numpy_dtype)
            if batch_shape is not None:
                m = np.broadcast_to(m, list(_static_ints(batch_shape)) + list(m.shape)).copy()
            return constant(m, dtype=dtype, name=scope)
        rows = _op("Range", None, start=0, limit=num_rows, delta=1)
        cols = rows if num_columns is None else _op("Range", None, start=0, limit=num_columns, delta=1)
        m = cast(_op("Equal", None, x=expand_dims(rows, 1), y=expand_dims(cols, 0)), dtype)
        if batch_shape is not None:
            m = broadcast_to(m, concat([_shape_arg(batch_shape), shape(m)], 0))
        return identity(m, name=scope)


# ---- shapes ----

def shape(input, name=None, out_type=dtypes.int32):  # noqa: A002  (TF's name)
    """The shape of `input` as a 1-D tensor (a Const when statically known)."""
    with ops.name_scope(name, "Shape", [input]) as scope:
        input = ops.convert_to_tensor(input)
        out_type = dtypes.as_dtype(out_type)
        if input.shape.is_fully_defined():
            return constant(input.shape.as_list(), dtype=out_type, name=scope)
        return _op("Shape", scope, input=input, out_type=out_type)


def shape_n(input, out_type=dtypes.int32, name=None):  # noqa: A002
    return _op("ShapeN", name, input=list(input), out_type=dtypes.as_dtype(out_type))


def size(input, name=None, out_type=dtypes.int32):  # noqa: A002
    with ops.name_scope(name, "Size", [input]) as scope:
        input = ops.convert_to_tensor(input)
        out_type = dtypes.as_dtype(out_type)
        if input.shape.is_fully_defined():
            return constant(input.shape.num_elements(), dtype=out_type, name=scope)
        return _op("Size", scope, input=input, out_type=out_type)


def rank(input, name=None):  # noqa: A002
    with ops.name_scope(name, "Rank", [input]) as scope:
        input = ops.convert_to_tensor(input)
        if input.shape.ndims is not None:
            return constant(input.shape.ndims, dtype=dtypes.int32, name=scope)
        return _op("Rank", scope, input=input)


def reshape(tensor, shape, name=None):  # noqa: F811  (TF's parameter name)
    return _op("Reshape", name, tensor=tensor, shape=_shape_arg(shape))


def expand_dims(input, axis=None, name=None, dim=None):  # noqa: A002
    axis = _get_axis(axis, dim, "dim")
    if axis is None:
        raise ValueError("Must specify an axis argument to tf.expand_dims()")
    return _op("ExpandDims", name, input=input, dim=axis)


def squeeze(input, axis=None, name=None, squeeze_dims=None):  # noqa: A002
    axis = _get_axis(axis, squeeze_dims, "squeeze_dims")
    if isinstance(axis, (numbers.Integral, np.integer)):
        axis = [int(axis)]
    return _op("Squeeze", name, input=input, squeeze_dims=list(axis or []))


def transpose(a, perm=None, name="transpose", conjugate=False):
    """Permutes dims; perm None reverses them (n-1 ... 0)."""
    with ops.name_scope(name, "transpose", [a]) as scope:
        a = ops.convert_to_tensor(a, name="a")
        if perm is None:
            r = _rank(a)
            if r is not None:
                perm = constant(list(range(r - 1, -1, -1)), dtype=dtypes.int32, name="perm")
            else:
                rk = rank(a)
                perm = _op("Range", None, start=_op("Sub", None, x=rk, y=1), limit=-1, delta=-1)
        elif not isinstance(perm, ops.Tensor):
            perm = _shape_arg(perm, "perm")
        return _op("Transpose", scope, x=a, perm=perm)


def matrix_transpose(a, name="matrix_transpose", conjugate=False):
    """Swaps the last two dims."""
    with ops.name_scope(name, "matrix_transpose", [a]) as scope:
        a = ops.convert_to_tensor(a, name="a")
        r = _rank(a)
        if r is None:
            raise ValueError("matrix_transpose needs a tensor of known rank, got shape %s" % a.shape)
        if r < 2:
            raise ValueError("matrix_transpose needs rank >= 2, got shape %s" % a.shape)
        return transpose(a, list(range(r - 2)) + [r - 1, r - 2], name=scope)


def broadcast_to(input, shape, name=None):  # noqa: A002,F811
    return _op("BroadcastTo", name, input=input, shape=_shape_arg(shape))


def broadcast_dynamic_shape(shape_x, shape_y):
    return _op("BroadcastArgs", None, s0=shape_x, s1=shape_y)


def broadcast_static_shape(shape_x, shape_y):
    """The NumPy-broadcast TensorShape of two TensorShapes (ValueError if they do not broadcast)."""
    x, y = tensor_shape.as_shape(shape_x), tensor_shape.as_shape(shape_y)
    if x.ndims is None or y.ndims is None:
        return tensor_shape.unknown_shape()
    xd, yd = x.as_list(), y.as_list()
    n = max(len(xd), len(yd))
    xd = [1] * (n - len(xd)) + xd
    yd = [1] * (n - len(yd)) + yd
    out = []
    for a, b in zip(xd, yd):
        if a == 1:
            out.append(b)
        elif b == 1:
            out.append(a)
        elif a is None or b is None:
            out.append(a if b is None else b)
        elif a == b:
            out.append(a)
        else:
            raise ValueError("Incompatible shapes for broadcasting: %s and %s" % (x, y))
    return tensor_shape.TensorShape(out)


# ---- joining and splitting ----

def concat(values, axis, name="concat"):
    if not isinstance(values, (list, tuple)):
        values = [values]
    if len(values) == 1:
        with ops.name_scope(name) as scope:
            return identity(values[0], name=scope)
    return _op("ConcatV2", name, values=list(values), axis=axis)


def stack(values, axis=0, name="stack"):
    """Packs a list of rank-R tensors into one rank-(R+1) tensor along `axis`."""
    return _op("Pack", name, values=list(values), axis=int(axis))


pack = stack


def unstack(value, num=None, axis=0, name="unstack"):
    value = ops.convert_to_tensor(value)
    if num is None:
        dims = value.shape.as_list() if value.shape.ndims is not None else None
        if dims is None or not -len(dims) <= axis < len(dims) or dims[axis] is None:
            raise ValueError("Cannot infer num from shape %s" % value.shape)
        num = dims[axis]
    out = _op("Unpack", name, value=value, num=int(num), axis=int(axis))
    return list(out) if not isinstance(out, ops.Tensor) else [out]


unpack = unstack


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """An int splits into that many equal parts (Split); a list or 1-D tensor
    gives the sizes (SplitV, one -1 allowed)."""
    if isinstance(num_or_size_splits, (numbers.Integral, np.integer)):
        out = _op("Split", name, split_dim=axis, value=value, num_split=int(num_or_size_splits))
        return list(out) if not isinstance(out, ops.Tensor) else [out]
    sizes = num_or_size_splits
    if num is None:
        ints = _static_ints(sizes)
        if ints is not None:
            num = len(ints)
        elif isinstance(sizes, ops.Tensor) and sizes.shape.ndims == 1 and sizes.shape.as_list()[0] is not None:
            num = sizes.shape.as_list()[0]
        else:
            raise ValueError("Cannot infer num from shape %s" % getattr(sizes, "shape", sizes))
    if not isinstance(sizes, ops.Tensor):
        sizes = constant(_static_ints(sizes), dtype=dtypes.int64 if any(
            abs(v) >= 2**31 for v in _static_ints(sizes)) else dtypes.int32)
    out = _op("SplitV", name, value=value, size_splits=sizes, split_dim=axis, num_split=int(num))
    return list(out) if not isinstance(out, ops.Tensor) else [out]


def tile(input, multiples, name=None):  # noqa: A002
    return _op("Tile", name, input=input, multiples=_shape_arg(multiples, "multiples"))


def pad(tensor, paddings, mode="CONSTANT", name=None, constant_values=0):
    """Pads with `constant_values` (CONSTANT) or mirrored values (REFLECT, SYMMETRIC)."""
    mode = mode.upper()
    if not isinstance(paddings, ops.Tensor):
        paddings = ops.convert_to_tensor(np.asarray(paddings, dtype=np.int32)
                                         if np.all(np.abs(np.asarray(paddings)) < 2**31)
                                         else np.asarray(paddings, dtype=np.int64), name="paddings")
    if mode == "CONSTANT":
        if not isinstance(constant_values, ops.Tensor) and np.all(np.asarray(constant_values) == 0):
            return _op("Pad", name, input=tensor, paddings=paddings)
        return _op("PadV2", name, input=tensor, paddings=paddings, constant_values=constant_values)
    if mode in ("REFLECT", "SYMMETRIC"):
        return _op("MirrorPad", name, input=tensor, paddings=paddings, mode=mode)
    raise ValueError("Unknown padding mode: %s" % mode)


def reverse_v2(tensor, axis, name=None):
    if isinstance(axis, (numbers.Integral, np.integer)):
        axis = [int(axis)]
    return _op("ReverseV2", name, tensor=tensor, axis=_shape_arg(axis, "axis"))


reverse = reverse_v2


# ---- slicing and gathering ----

def slice(input_, begin, size, name=None):  # noqa: A001,F811  (TF's names)
    """input_[begin[i] : begin[i] + size[i]] in every dim; size -1 is "to the end"."""
    return _op("Slice", name, input=input_, begin=_shape_arg(begin, "begin"),
               size=_shape_arg(size, "size"))


def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0,
                  new_axis_mask=0, shrink_axis_mask=0, var=None, name=None):
    begin = _shape_arg(begin, "begin")
    end = _shape_arg(end, "end")
    if strides is None:
        strides = ones_like(begin)
    else:
        strides = _shape_arg(strides, "strides")
    dt = dtypes.int64 if dtypes.int64 in (begin.dtype, end.dtype, strides.dtype) else dtypes.int32
    begin, end, strides = (cast(t, dt) for t in (begin, end, strides))
    return _op("StridedSlice", name, input=input_, begin=begin, end=end, strides=strides,
               begin_mask=begin_mask, end_mask=end_mask, ellipsis_mask=ellipsis_mask,
               new_axis_mask=new_axis_mask, shrink_axis_mask=shrink_axis_mask)


def _is_index_scalar(x):
    if isinstance(x, ops.Tensor):
        return x.dtype.base_dtype in (dtypes.int32, dtypes.int64) and x.shape.ndims in (0, None)
    return isinstance(x, (numbers.Integral, np.integer)) and not isinstance(x, (bool, np.bool_))


def _slice_helper(tensor, slice_spec, var=None):
    """tensor[slice_spec] with NumPy basic-indexing semantics, as one StridedSlice.

    Each entry of slice_spec is an int or scalar int Tensor (picks one index and
    drops the dim), a slice (start/stop/step, each an int, Tensor or None; a
    None start/stop sets the begin/end mask bit), Ellipsis (all remaining dims)
    or None/newaxis (a new dim of size 1)."""
    if not isinstance(slice_spec, (list, tuple)):
        slice_spec = [slice_spec]
    begin, end, strides = [], [], []
    begin_mask = end_mask = ellipsis_mask = new_axis_mask = shrink_axis_mask = 0
    index = 0
    for s in slice_spec:
        bit = 1 << index
        if isinstance(s, _builtin_slice):
            for part in (s.start, s.stop, s.step):
                if part is not None and not _is_index_scalar(part):
                    raise TypeError(
                        "Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and "
                        "scalar tf.int32/tf.int64 tensors are valid indices, got %r" % (part,))
            step = 1 if s.step is None else s.step
            if isinstance(step, (numbers.Integral, np.integer)) and int(step) == 0:
                raise ValueError("slice step cannot be zero")
            begin.append(0 if s.start is None else s.start)
            end.append(0 if s.stop is None else s.stop)
            strides.append(step)
            if s.start is None:
                begin_mask |= bit
            if s.stop is None:
                end_mask |= bit
        elif s is Ellipsis:
            begin.append(0)
            end.append(0)
            strides.append(1)
            ellipsis_mask |= bit
        elif s is None:
            begin.append(0)
            end.append(0)
            strides.append(1)
            new_axis_mask |= bit
        elif _is_index_scalar(s):
            begin.append(s)
            if isinstance(s, ops.Tensor):
                end.append(_op("AddV2", None, x=s, y=constant(1, dtype=s.dtype)))
            else:
                # s + 1 would be 0 for s = -1, which the mask-free end cannot say;
                # shrink_axis ignores end anyway, but keep it one past begin.
                end.append(int(s) + 1)
            strides.append(1)
            shrink_axis_mask |= bit
        else:
            raise TypeError(
                "Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar "
                "tf.int32/tf.int64 tensors are valid indices, got %r" % (s,))
        index += 1
    if not begin:
        # tensor[()] : the whole tensor.
        begin, end, strides = [0], [0], [1]
        ellipsis_mask = 1
    with ops.name_scope(None, "strided_slice", [tensor]) as scope:
        # begin, end and strides share one index dtype (int64 if any part needs it).
        dtype = _index_dtype(begin + end + strides)
        packed = [_pack_indices(v, n, dtype)
                  for v, n in ((begin, "stack"), (end, "stack_1"), (strides, "stack_2"))]
        return _op("StridedSlice", scope, input=tensor, begin=packed[0], end=packed[1],
                   strides=packed[2], begin_mask=begin_mask, end_mask=end_mask,
                   ellipsis_mask=ellipsis_mask, new_axis_mask=new_axis_mask,
                   shrink_axis_mask=shrink_axis_mask)



def gather(params, indices, validate_indices=None, name=None, axis=None, batch_dims=0):
    """params' slices at `indices` along `axis` (default 0). A Variable's
    rows (axis 0) are read with ResourceGather, as TF's sparse_read, so its
    gradient is an IndexedSlices."""
    if axis is None:
        axis = batch_dims
    if (axis == 0 and batch_dims == 0 and hasattr(params, "sparse_read")
            and getattr(params, "_dtype", None) is not None):
        return params.sparse_read(indices, name=name)
    return _op("GatherV2", name, params=params, indices=indices, axis=axis, batch_dims=batch_dims)


def gather_nd(params, indices, name=None, batch_dims=0):
    if batch_dims != 0:
        raise NotImplementedError("gather_nd with batch_dims != 0 is not supported")
    return _op("GatherNd", name, params=params, indices=indices)


def scatter_nd(indices, updates, shape, name=None):  # noqa: F811
    indices = ops.convert_to_tensor(indices, name="indices")
    shp = _shape_arg(shape)
    if shp.dtype != indices.dtype:
        shp = cast(shp, indices.dtype)
    return _op("ScatterNd", name, indices=indices, updates=updates, shape=shp)


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """A one-hot tensor: on_value (1) where the new `axis` (default last) equals
    the index, off_value (0) elsewhere; indices out of [0, depth) give all off."""
    with ops.name_scope(name, "one_hot", [indices, depth, on_value, off_value]) as scope:
        # As TF: without `dtype`, the values' own dtypes decide (Python 5 is int32).
        if on_value is not None and not isinstance(on_value, ops.Tensor):
            on_value = ops.convert_to_tensor(on_value, dtype=dtype, name="on_value")
        if off_value is not None and not isinstance(off_value, ops.Tensor):
            off_value = ops.convert_to_tensor(off_value, dtype=dtype, name="off_value")
        on_dtype = on_value.dtype.base_dtype if on_value is not None else None
        off_dtype = off_value.dtype.base_dtype if off_value is not None else None
        if dtype is not None:
            dtype = dtypes.as_dtype(dtype)
        elif on_dtype is not None:
            dtype = on_dtype
        elif off_dtype is not None:
            dtype = off_dtype
        else:
            dtype = dtypes.float32
        on = ops.convert_to_tensor(1 if on_value is None else on_value, dtype=dtype, name="on_value")
        off = ops.convert_to_tensor(0 if off_value is None else off_value, dtype=dtype, name="off_value")
        return _op("OneHot", scope, indices=indices, depth=depth, on_value=on, off_value=off,
                   axis=-1 if axis is None else int(axis))


def where(condition, x=None, y=None, name=None):
    """One argument: the int64 coordinates [num_true, rank] of the true
    elements. Three: elementwise condition ? x : y, TF1's rule (condition of
    x's shape, a scalar, or a vector over x's first dim)."""
    if x is None and y is None:
        return _op("Where", name, input=condition)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    return _op("Select", name, condition=condition, t=x, e=y)


def where_v2(condition, x=None, y=None, name=None):
    """As `where`, but the three-argument form broadcasts all three (SelectV2)."""
    if x is None and y is None:
        return _op("Where", name, input=condition)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    return _op("SelectV2", name, condition=condition, t=x, e=y)


def boolean_mask(tensor, mask, name="boolean_mask", axis=None):
    """The elements (slices) of `tensor` where the k-D `mask` is true, over
    dims axis .. axis+k-1 flattened into one."""
    with ops.name_scope(name, "boolean_mask", [tensor, mask]) as scope:
        tensor = ops.convert_to_tensor(tensor, name="tensor")
        mask = ops.convert_to_tensor(mask, name="mask")
        k = mask.shape.ndims
        if k is None:
            raise ValueError("Number of mask dimensions must be specified, even if some "
                             "dimensions are None.  E.g. shape=[None] is ok, but shape=None is not.")
        if k == 0:
            raise ValueError("mask cannot be scalar.")
        axis = 0 if axis is None else int(axis)
        r = tensor.shape.ndims
        if r is not None:
            if axis < 0:
                axis += r
            tensor.shape[axis:axis + k].assert_is_compatible_with(mask.shape)
        tshape = shape(tensor)
        leading = _op("Prod", None, input=tshape[axis:axis + k], reduction_indices=[0], keep_dims=True)
        flat = reshape(tensor, concat([tshape[:axis], leading, tshape[axis + k:]], 0))
        indices = squeeze(_op("Where", None, input=reshape(mask, [-1])), axis=[1])
        result = gather(flat, indices, axis=axis, name=scope)
        if r is not None:
            # The C++ shape functions cannot see through the computed shape; the
            # kept dims are known here.
            dims = tensor.shape.as_list()
            result.set_shape(dims[:axis] + [None] + dims[axis + k:])
        return result


def sequence_mask(lengths, maxlen=None, dtype=dtypes.bool, name=None):
    """mask[i, j] = j < lengths[i] (any rank of lengths), columns 0 .. maxlen-1
    (maxlen defaults to max(lengths))."""
    with ops.name_scope(name, "SequenceMask", [lengths, maxlen]) as scope:
        lengths = ops.convert_to_tensor(lengths, name="lengths")
        if maxlen is None:
            r = lengths.shape.ndims
            axes = list(range(r)) if r is not None else _op(
                "Range", None, start=0, limit=rank(lengths), delta=1)
            maxlen = _op("Max", None, input=lengths, reduction_indices=axes, keep_dims=False)
            maxlen = _op("Maximum", None, x=constant(0, dtype=lengths.dtype), y=maxlen)
        else:
            maxlen = ops.convert_to_tensor(maxlen, name="maxlen")
        if maxlen.dtype != lengths.dtype:
            maxlen = cast(maxlen, lengths.dtype)
        row = _op("Range", None, start=constant(0, dtype=lengths.dtype), limit=maxlen,
                  delta=constant(1, dtype=lengths.dtype))
        result = _op("Less", None, x=row, y=expand_dims(lengths, -1))
        dtype = dtypes.as_dtype(dtype)
        if dtype == dtypes.bool:
            return identity(result, name=scope)
        return cast(result, dtype, name=scope)


def matrix_diag(diagonal, name="diag"):
    """[..., n] -> [..., n, n] with `diagonal` on the diagonal, zeros elsewhere."""
    with ops.name_scope(name, "diag", [diagonal]) as scope:
        diagonal = ops.convert_to_tensor(diagonal, name="diagonal")
        dims = diagonal.shape.as_list() if diagonal.shape.ndims is not None else None
        n = dims[-1] if dims and dims[-1] is not None else shape(diagonal)[-1]
        return _op("Mul", scope, x=expand_dims(diagonal, -1), y=eye(n, dtype=diagonal.dtype))


def matrix_diag_part(input, name="diag_part"):  # noqa: A002
    """The main diagonal of the innermost matrices (square or not)."""
    with ops.name_scope(name, "diag_part", [input]) as scope:
        input = ops.convert_to_tensor(input, name="input")
        dims = input.shape.as_list() if input.shape.ndims is not None else None
        if dims is None or dims[-1] is None or dims[-2] is None:
            raise ValueError("matrix_diag_part needs static matrix dims, got %s" % input.shape)
        k = min(dims[-1], dims[-2])
        sliced = input[..., :k, :k]
        masked = _op("Mul", None, x=sliced, y=eye(k, dtype=input.dtype))
        return _op("Sum", scope, input=masked, reduction_indices=[-1], keep_dims=False)


def meshgrid(*args, **kwargs):
    """N-D coordinate grids from N 1-D tensors; indexing "xy" (default, the
    first two outputs' dims swapped as in NumPy) or "ij"."""
    indexing = kwargs.pop("indexing", "xy")
    name = kwargs.pop("name", "meshgrid")
    if kwargs:
        raise TypeError("'%s' is an invalid keyword argument for this function" % next(iter(kwargs)))
    if indexing not in ("xy", "ij"):
        raise ValueError("indexing parameter must be either 'xy' or 'ij'")
    with ops.name_scope(name, "meshgrid", list(args)):
        n = len(args)
        outs = []
        for i, x in enumerate(args):
            x = ops.convert_to_tensor(x)
            target = [1] * n
            target[i] = -1
            outs.append(reshape(x, target))
        if indexing == "xy" and n > 1:
            outs[0] = reshape(outs[0], [1, -1] + [1] * (n - 2))
            outs[1] = reshape(outs[1], [-1, 1] + [1] * (n - 2))
        shapes = [size(x) for x in args]
        if indexing == "xy" and n > 1:
            shapes[0], shapes[1] = shapes[1], shapes[0]
        full = stack(shapes)
        return [broadcast_to(o, full) for o in outs]


def unique(x, out_idx=dtypes.int32, name=None):
    """(y, idx): the distinct values of 1-D x in first-seen order, and each
    element's index into y."""
    return _op("Unique", name, x=x, out_idx=dtypes.as_dtype(out_idx))


def invert_permutation(x, name=None):
    """y with y[x[i]] = i, for an int32/int64 vector x holding each of 0..n-1 once."""
    return _op("InvertPermutation", name, x=x)


def dynamic_partition(data, partitions, num_partitions, name=None):
    out = _op("DynamicPartition", name, data=data, partitions=partitions,
              num_partitions=int(num_partitions))
    return list(out) if not isinstance(out, ops.Tensor) else [out]


def dynamic_stitch(indices, data, name=None):
    return _op("DynamicStitch", name, indices=list(indices), data=list(data))


# ---- identity, gradients, dtypes ----

def identity(input, name=None):  # noqa: A002
    return _op("Identity", name, input=input)


def identity_n(input, name=None):  # noqa: A002
    return _op("IdentityN", name, input=list(input))


def stop_gradient(input, name=None):  # noqa: A002
    return _op("StopGradient", name, input=input)


def prevent_gradient(input, message="", name=None):  # noqa: A002
    return _op("PreventGradient", name, input=input, message=message)


def cast(x, dtype, name=None):
    """x converted to `dtype`; x itself when it already has that dtype.
    Floats to integers round toward zero; to bool is x != 0."""
    base = dtypes.as_dtype(dtype).base_dtype
    if isinstance(x, ops.Tensor) and x.dtype.base_dtype == base:
        return x
    with ops.name_scope(name, "Cast", [x]) as scope:
        if not isinstance(x, ops.Tensor):
            x = ops.convert_to_tensor(x, name="x")
        if x.dtype.base_dtype == base:
            return x
        return _op("Cast", scope, x=x, DstT=base)


def saturate_cast(value, dtype, name=None):
    """cast, clamping to dtype's range first so out-of-range values saturate."""
    dtype = dtypes.as_dtype(dtype)
    with ops.name_scope(name, "saturate_cast", [value]) as scope:
        value = ops.convert_to_tensor(value, name="value")
        if value.dtype.is_floating or value.dtype.is_integer:
            if dtype.min > value.dtype.min:
                value = _op("Maximum", None, x=value, y=constant(dtype.min, dtype=value.dtype))
            if dtype.max < value.dtype.max:
                value = _op("Minimum", None, x=value, y=constant(dtype.max, dtype=value.dtype))
        return cast(value, dtype, name=scope)


def to_float(x, name="ToFloat"):
    return cast(x, dtypes.float32, name=name)


def to_double(x, name="ToDouble"):
    return cast(x, dtypes.float64, name=name)


def to_int32(x, name="ToInt32"):
    return cast(x, dtypes.int32, name=name)


def to_int64(x, name="ToInt64"):
    return cast(x, dtypes.int64, name=name)


def to_bfloat16(x, name="ToBFloat16"):
    return cast(x, dtypes.bfloat16, name=name)


ops.Tensor._override_operator("__getitem__", _slice_helper)


def space_to_batch_nd(input, block_shape, paddings, name=None):  # noqa: A002
    """Zero-pads the M spatial dims after the batch dim by `paddings` ([M, 2])
    and moves each block_shape block's offsets into the batch dim (outermost):
    [batch, p1, ..., pM, rest] -> [batch * prod(block_shape), p1 / b1, ...,
    pM / bM, rest] (op SpaceToBatchND, what dilated convolutions run on)."""
    with ops.name_scope(name, "SpaceToBatchND", [input, block_shape, paddings]) as scope:
        return apply_op("SpaceToBatchND", scope, input=input,
                        block_shape=ops.convert_to_tensor(block_shape, name="block_shape"),
                        paddings=ops.convert_to_tensor(paddings, name="paddings"))


def batch_to_space_nd(input, block_shape, crops, name=None):  # noqa: A002
    """space_to_batch_nd's inverse: moves blocks of the batch dim back into the
    M spatial dims, then crops them by `crops` ([M, 2]) (op BatchToSpaceND)."""
    with ops.name_scope(name, "BatchToSpaceND", [input, block_shape, crops]) as scope:
        return apply_op("BatchToSpaceND", scope, input=input,
                        block_shape=ops.convert_to_tensor(block_shape, name="block_shape"),
                        crops=ops.convert_to_tensor(crops, name="crops"))


def space_to_depth(input, block_size, name=None, data_format="NHWC"):  # noqa: A002
    """Each block_size x block_size block of rows and cols moved into the
    channels: NHWC [n, h, w, c] -> [n, h / b, w / b, c * b * b] (op SpaceToDepth)."""
    return apply_op("SpaceToDepth", name, input=input, block_size=int(block_size),
                    data_format=data_format)


def depth_to_space(input, block_size, name=None, data_format="NHWC"):  # noqa: A002
    """space_to_depth's inverse: NHWC [n, h, w, c] -> [n, h * b, w * b,
    c / (b * b)] (op DepthToSpace)."""
    return apply_op("DepthToSpace", name, input=input, block_size=int(block_size),
                    data_format=data_format)


def matrix_band_part(input, num_lower, num_upper, name=None):  # noqa: A002
    """Each innermost matrix with the entries outside its band zeroed: kept
    where i - j <= num_lower and j - i <= num_upper, a negative bound keeping
    that whole triangle (tf.linalg.band_part; op MatrixBandPart)."""
    with ops.name_scope(name, "MatrixBandPart", [input, num_lower, num_upper]) as scope:
        num_lower = ops.convert_to_tensor(num_lower, dtype_hint=dtypes.int64, name="num_lower")
        num_upper = ops.convert_to_tensor(num_upper, dtype_hint=num_lower.dtype, name="num_upper")
        if num_upper.dtype != num_lower.dtype:
            num_upper = apply_op("Cast", None, x=num_upper, DstT=num_lower.dtype)
        return apply_op("MatrixBandPart", scope, input=input, num_lower=num_lower,
                        num_upper=num_upper)



def ensure_shape(x, shape, name=None):
    """`x`, checked when it runs to have a shape compatible with `shape` (None
    entries match any size): InvalidArgumentError otherwise (op EnsureShape).
    The static shape becomes the merge of both."""
    shape = tensor_shape.as_shape(shape)
    with ops.name_scope(name, "EnsureShape", [x]) as scope:
        x = ops.convert_to_tensor(x, name="x")
        return apply_op("EnsureShape", scope, input=x, shape=shape)
