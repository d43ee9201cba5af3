"""numpy <-> TensorProto, and TF's rules for turning Python values into
arrays (tf.make_tensor_proto, tf.make_ndarray).

Python values without a dtype: bools -> bool, ints -> int32 (int64 when a
value does not fit; int64 values stay exact), floats -> float32, complex ->
complex128, str/bytes -> string (bytes, UTF-8 for str). With a dtype, Python
values must fit it (1.5 for int32 is a TypeError, as in TF); numpy arrays are
cast. A `shape` with more elements than the value repeats the last element
(TF1's constant semantics); fewer is a ValueError.
"""
import math
import numbers

import numpy as np

from weir.framework import dtypes
from weir.framework import tensor_shape

__all__ = ["make_tensor_proto", "make_ndarray", "MakeNdarray", "constant_value"]

# A constant lives in a serialized GraphDef, which protobuf caps at 2 GB (TF's
# limit too): a larger one is a ValueError here, never a MemoryError.
_MAX_CONSTANT_BYTES = (1 << 31) - 1


def _checked_num_elements(shape, itemsize, what):
    """The element count of a fully defined `shape` (exact Python ints, so a
    product past int64 never wraps); ValueError past the constant limit."""
    if any(d < 0 for d in shape):
        raise ValueError(f"{what} shape {shape} has a negative dimension")
    num = math.prod(shape)
    if num * max(itemsize, 1) > _MAX_CONSTANT_BYTES:
        raise ValueError(f"{what} of shape {shape} would hold {num} elements "
                         f"({num * max(itemsize, 1)} bytes): more than the 2 GB a "
                         f"constant may hold")
    return num


def _flatten_nested(values, out):
    """Flattens a nested list/tuple and returns its dense shape (ValueError
    for a ragged one, with TF's wording)."""
    if isinstance(values, (list, tuple)):
        if not values:
            return [0]
        shapes = []
        for v in values:
            shapes.append(_flatten_nested(v, out))
        first = shapes[0]
        for s in shapes[1:]:
            if s != first:
                raise ValueError(f"Argument must be a dense tensor: {values!r} - got shape "
                                 f"{[len(values)] + s}, but wanted {[len(values)] + first}.")
        return [len(values)] + first
    if isinstance(values, np.ndarray):
        out.extend(values.reshape(-1).tolist() if values.dtype != object else list(values.flat))
        return list(values.shape)
    out.append(values)
    return []


def _is_string(v):
    return isinstance(v, (str, bytes, np.str_, np.bytes_))


def _to_bytes(v):
    if isinstance(v, (bytes, np.bytes_)):
        return bytes(v)
    if isinstance(v, (str, np.str_)):
        return str(v).encode("utf-8")
    raise TypeError(f"Expected string, got {v!r} of type '{type(v).__name__}' instead.")


def _infer_dtype(flat):
    if not flat:
        return dtypes.float32
    if all(_is_string(v) for v in flat):
        return dtypes.string
    if any(_is_string(v) for v in flat):
        bad = next(v for v in flat if not _is_string(v))
        raise TypeError(f"Expected string, got {bad!r} of type '{type(bad).__name__}' instead.")
    if all(isinstance(v, (bool, np.bool_)) for v in flat):
        return dtypes.bool
    for v in flat:
        if v is None:
            raise ValueError("None values not supported.")
        if not isinstance(v, (numbers.Number, np.number, np.bool_)):
            raise TypeError(f"Failed to convert elements of {flat!r} to Tensor. Consider casting "
                            f"elements to a supported type. (got {type(v).__name__})")
    if any(isinstance(v, (complex, np.complexfloating)) for v in flat):
        return dtypes.complex128
    if any(isinstance(v, (float, np.floating)) for v in flat):
        return dtypes.float32
    if all(_INT32_MIN <= int(v) <= _INT32_MAX for v in flat):
        return dtypes.int32
    for v in flat:
        if not _INT64_MIN <= int(v) <= _INT64_MAX:
            raise ValueError(f"Can't convert Python int {int(v)} to int64: out of range")
    return dtypes.int64


_INT32_MIN, _INT32_MAX = -2**31, 2**31 - 1
_INT64_MIN, _INT64_MAX = -2**63, 2**63 - 1


def _check_compatible(flat, dtype):
    """TF's _AssertCompatible: Python values must fit the requested type."""
    if dtype == dtypes.string:
        for v in flat:
            if not _is_string(v):
                raise TypeError(f"Expected string, got {v!r} of type '{type(v).__name__}' "
                                "instead.")
        return
    for v in flat:
        if v is None:
            raise ValueError("None values not supported.")
        if _is_string(v):
            raise TypeError(f"Expected {dtype.name}, got {v!r} of type '{type(v).__name__}' "
                            "instead.")
        if dtype.is_bool:
            ok = isinstance(v, (bool, np.bool_))
        elif dtype.is_integer:
            ok = isinstance(v, (numbers.Integral, np.integer, np.bool_))
        elif dtype.is_floating:
            ok = isinstance(v, (numbers.Real, np.integer, np.floating, np.bool_))
        elif dtype.is_complex:
            ok = isinstance(v, (numbers.Number, np.number))
        else:
            ok = False
        if not ok:
            raise TypeError(f"Expected {dtype.name}, got {v!r} of type '{type(v).__name__}' "
                            "instead.")
    if dtype.is_integer:
        info = np.iinfo(dtype.as_numpy_dtype)
        for v in flat:
            iv = int(v)
            if not info.min <= iv <= info.max:
                raise ValueError(f"Can't convert Python int {iv} to {dtype.name}: out of range "
                                 f"[{info.min}, {info.max}]")


def to_numpy(values, dtype=None, shape=None, verify_shape=False, strict=False):
    """The array a constant of `values` holds, as TF1's tf.constant builds it.

    strict: a numpy value whose dtype is not `dtype` is a TypeError instead
    of a cast (convert_to_tensor's trial of a preferred dtype)."""
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype).base_dtype
        if dtype.as_numpy_dtype is None:
            raise TypeError(f"Cannot make a constant of type {dtype.name}")
    if isinstance(values, (np.ndarray, np.generic)):
        arr = np.asarray(values)
        own = dtypes.string if arr.dtype.kind in "OSU" else dtypes.as_dtype(arr.dtype)
        if dtype is None or dtype == own:
            dtype = own
        elif strict:
            raise TypeError(f"Expected {dtype.name}, got a numpy array of {own.name}")
        elif (dtype == dtypes.string) != (own == dtypes.string):
            raise TypeError(f"Expected {dtype.name}, got a numpy array of {own.name}")
        if dtype == dtypes.string:
            arr = np.array([_to_bytes(v) for v in arr.reshape(-1)] or [], dtype=object) \
                .reshape(arr.shape) if arr.size else np.empty(arr.shape, dtype=object)
        else:
            arr = arr.astype(dtype.as_numpy_dtype, copy=False)
    elif shape is None and type(values) in (float, int, bool):  # fast path: one scalar
        flat = [values]
        if dtype is None:
            dtype = _infer_dtype(flat)
        else:
            _check_compatible(flat, dtype)
        return np.array(values, dtype=dtype.as_numpy_dtype)
    else:
        if values is None:
            raise ValueError("None values not supported.")
        flat = []
        dense_shape = _flatten_nested(values, flat)
        if dtype is None:
            dtype = _infer_dtype(flat)
        else:
            _check_compatible(flat, dtype)
        if dtype == dtypes.string:
            arr = np.empty(len(flat), dtype=object)
            for i, v in enumerate(flat):
                arr[i] = _to_bytes(v)
            arr = arr.reshape(dense_shape)
        else:
            np_type = dtype.as_numpy_dtype
            if dtype.is_integer:  # exact: no trip through float
                arr = np.array([int(v) for v in flat], dtype=np_type).reshape(dense_shape)
            else:
                arr = np.array(flat, dtype=np_type).reshape(dense_shape)
    if shape is None:
        return arr
    shape = [int(d) for d in tensor_shape.as_shape(shape).as_list()]
    if any(d < 0 for d in shape):
        raise ValueError(f"Constant shape {shape} must be fully defined")
    size = _checked_num_elements(shape, arr.dtype.itemsize, "Constant")
    if verify_shape and list(arr.shape) != shape:
        raise TypeError(f"Expected Tensor's shape: {tuple(shape)}, got {tuple(arr.shape)}.")
    if arr.size == size:
        return arr.reshape(shape)
    if arr.size > size:
        raise ValueError(f"Too many elements provided. Needed at most {size}, but received "
                         f"{arr.size}")
    flat_arr = arr.reshape(-1)
    out = np.empty(size, dtype=arr.dtype)
    if flat_arr.size == 0:
        out[...] = b"" if arr.dtype == object else 0
    else:
        out[:flat_arr.size] = flat_arr
        out[flat_arr.size:] = flat_arr[-1]  # TF1: the last value repeats
    return out.reshape(shape)


def make_tensor_proto(values, dtype=None, shape=None, verify_shape=False, allow_broadcast=False):
    """A weir.core.protos.TensorProto of `values` (TF's rules, see module doc)."""
    del allow_broadcast
    from weir.core import protos
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
    arr = to_numpy(values, dtype, shape, verify_shape)
    dt = dtypes.string if arr.dtype == object else dtypes.as_dtype(arr.dtype)
    if dtype is not None:
        dt = dtype.base_dtype
    proto = protos.TensorProto(dtype=dt.as_datatype_enum,
                               tensor_shape=tensor_shape.TensorShape(arr.shape).as_proto())
    if dt == dtypes.string:
        proto.string_val.extend(_to_bytes(v) for v in arr.reshape(-1))
    else:
        proto.tensor_content = np.ascontiguousarray(arr).astype(
            arr.dtype.newbyteorder("<"), copy=False).tobytes()
    return proto


def make_ndarray(tensor):
    """The numpy array of a TensorProto (weir's or TensorFlow's message)."""
    dt = dtypes.as_dtype(int(tensor.dtype))
    shape = [d.size for d in tensor.tensor_shape.dim]
    num = _checked_num_elements(shape, 1, "TensorProto")
    if dt == dtypes.string:
        vals = list(tensor.string_val)
        out = np.empty(num, dtype=object)
        if vals:
            out[:len(vals)] = vals
            out[len(vals):] = vals[-1]
        else:
            out[:] = b""
        return out.reshape(shape)
    np_type = dt.as_numpy_dtype
    if np_type is None:
        raise TypeError(f"Unsupported tensor type: {dt.name}")
    if tensor.tensor_content:
        return np.frombuffer(tensor.tensor_content,
                             dtype=np.dtype(np_type).newbyteorder("<")).astype(np_type) \
            .reshape(shape)
    if dt in (dtypes.float16, dtypes.bfloat16):
        vals = np.array(list(tensor.half_val), dtype=np.uint16).view(np_type)
    elif dt == dtypes.float32:
        vals = np.array(list(tensor.float_val), dtype=np_type)
    elif dt == dtypes.float64:
        vals = np.array(list(tensor.double_val), dtype=np_type)
    elif dt in (dtypes.int32, dtypes.int16, dtypes.int8, dtypes.uint8, dtypes.uint16):
        vals = np.array(list(tensor.int_val), dtype=np_type)
    elif dt == dtypes.int64:
        vals = np.array(list(tensor.int64_val), dtype=np_type)
    elif dt == dtypes.uint32:
        vals = np.array(list(tensor.uint32_val), dtype=np_type)
    elif dt == dtypes.uint64:
        vals = np.array(list(tensor.uint64_val), dtype=np_type)
    elif dt == dtypes.bool:
        vals = np.array(list(tensor.bool_val), dtype=np_type)
    elif dt == dtypes.complex64:
        parts = np.array(list(tensor.scomplex_val), dtype=np.float32)
        vals = parts[0::2] + 1j * parts[1::2]
        vals = vals.astype(np.complex64)
    elif dt == dtypes.complex128:
        parts = np.array(list(tensor.dcomplex_val), dtype=np.float64)
        vals = parts[0::2] + 1j * parts[1::2]
    else:
        raise TypeError(f"Unsupported tensor type: {dt.name}")
    if vals.size == num:
        return vals.reshape(shape)
    out = np.zeros(num, dtype=np_type)
    if vals.size:
        out[:vals.size] = vals[:num]
        out[vals.size:] = vals[-1]
    return out.reshape(shape)


MakeNdarray = make_ndarray


def constant_value(tensor):
    """The value of `tensor` when it is known while building the graph (a
    Const, the Shape/Size/Rank of a fully defined shape, simple Identity /
    Pack / Cast of those), as a numpy array; None otherwise."""
    from weir.framework import ops
    if not isinstance(tensor, ops.Tensor):
        return None
    op = tensor.op
    if op.type == "Const":
        value = op._get_attr_python("value")
        return np.asarray(value)
    if op.type == "Shape":
        shape = op.inputs[0].shape
        if shape.is_fully_defined():
            return np.array(shape.as_list(), dtype=tensor.dtype.as_numpy_dtype)
        return None
    if op.type == "Size":
        shape = op.inputs[0].shape
        if shape.is_fully_defined():
            return np.array(shape.num_elements(), dtype=tensor.dtype.as_numpy_dtype)
        return None
    if op.type == "Rank":
        shape = op.inputs[0].shape
        if shape.ndims is not None:
            return np.array(shape.ndims, dtype=np.int32)
        return None
    if op.type in ("Identity", "StopGradient"):
        return constant_value(op.inputs[0])
    if op.type == "Cast":
        value = constant_value(op.inputs[0])
        return None if value is None else value.astype(tensor.dtype.as_numpy_dtype)
    if op.type == "Pack":
        values = [constant_value(t) for t in op.inputs]
        if any(v is None for v in values):
            return None
        return np.stack(values, axis=op._get_attr_python("axis"))
    return None


def constant_value_as_shape(tensor):
    """A TensorShape from a shape-valued int tensor: known entries where the
    value is known (Const, Shape, Pack of scalars), else unknown."""
    from weir.framework import ops
    shape = tensor.shape.with_rank(1)
    if shape == [0]:
        return tensor_shape.scalar()
    value = constant_value(tensor)
    if value is not None:
        return tensor_shape.TensorShape([d if d >= 0 else None for d in value.tolist()])
    if isinstance(tensor, ops.Tensor) and tensor.op.type == "Shape":
        return tensor.op.inputs[0].shape
    if isinstance(tensor, ops.Tensor) and tensor.op.type == "Pack":
        dims = []
        for t in tensor.op.inputs:
            v = constant_value(t)
            dims.append(None if v is None or int(v) < 0 else int(v))
        return tensor_shape.TensorShape(dims)
    return tensor_shape.unknown_shape(shape[0].value)
