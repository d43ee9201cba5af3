"""Parsing (tf.io / TF1's tf.parse_example ...): tf.train.Example features,
raw bytes, CSV, numbers and serialized tensors.

parse_example / parse_single_example take a dict of feature configs:
FixedLenFeature (a dense tensor of a fixed shape; required unless it has a
default), FixedLenSequenceFeature (dense, variable length along a new first
dimension, padded to the longest example of the batch) and VarLenFeature (a
SparseTensor); they return a dict of Tensors and SparseTensors, keyed as the
features. SparseTensor here is TF's (indices, values, dense_shape) triple;
Session.run of one gives a SparseTensorValue (the session calls its
`_as_fetches()` and `_fetch_result(values)` hooks).
"""
import collections

from weir.framework import dtypes as _dtypes
from weir.framework import ops
from weir.framework import tensor_shape
from weir.framework.op_def_library import apply_op
from weir.framework.sparse_tensor import SparseTensor, SparseTensorValue
from weir.ops.data_flow_ops import _as_op, _shape_attr

__all__ = [
    "FixedLenFeature", "FixedLenSequenceFeature", "VarLenFeature", "SparseFeature",
    "SparseTensor",
    "SparseTensorValue", "parse_example", "parse_single_example", "decode_raw", "decode_csv",
    "string_to_number", "serialize_tensor", "parse_tensor",
]


class FixedLenFeature(collections.namedtuple("FixedLenFeature",
                                             ["shape", "dtype", "default_value"])):
    """A dense feature of a fixed shape; required when default_value is None."""

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


class FixedLenSequenceFeature(collections.namedtuple(
        "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])):
    """A dense feature of elements of `shape`, any number per example, parsed
    to [batch, longest, *shape] padded with default_value (zeros / b"")."""

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A feature of any number of values, parsed to a SparseTensor."""


class SparseFeature(collections.namedtuple(
        "SparseFeature", ["index_key", "value_key", "dtype", "size", "already_sorted"])):
    """A SparseTensor of dense shape [size] (per example) from two features of
    an Example: the int64 indices at `index_key` and the values at
    `value_key` (TF's tf.io.SparseFeature, one index key)."""

    def __new__(cls, index_key, value_key, dtype, size, already_sorted=False):
        return super().__new__(cls, index_key, value_key, dtype, size, already_sorted)


def _split_sparse_features(features):
    """(features with each SparseFeature replaced by VarLenFeatures of its
    index and value keys, {key: SparseFeature})."""
    if not features:
        return features, {}
    plain, composite = {}, {}
    for key, feature in features.items():
        if not isinstance(feature, SparseFeature):
            plain[key] = feature
            continue
        index_key = feature.index_key
        if isinstance(index_key, (list, tuple)):
            if len(index_key) != 1:
                raise NotImplementedError("SparseFeature with %d index keys (feature %s) is not "
                                          "supported by weir" % (len(index_key), key))
            index_key = index_key[0]
        composite[key] = feature._replace(index_key=index_key)
        for part, dtype in ((index_key, _dtypes.int64), (feature.value_key, feature.dtype)):
            existing = features.get(part, plain.get(part))
            if existing is not None and not (isinstance(existing, VarLenFeature)
                                             and _dtypes.as_dtype(existing.dtype) ==
                                             _dtypes.as_dtype(dtype)):
                raise ValueError("SparseFeature %s: key %s is also a different feature" %
                                 (key, part))
            plain[part] = VarLenFeature(dtype)
    return plain, composite


def _merge_sparse_features(result, features, composite):
    """Adds each SparseFeature's SparseTensor, dropping parts not asked for."""
    from weir.ops import sparse_ops
    for key, feature in composite.items():
        result[key] = sparse_ops.sparse_merge(result[feature.index_key],
                                              result[feature.value_key], feature.size,
                                              already_sorted=feature.already_sorted)
    for key, feature in composite.items():
        for part in (feature.index_key, feature.value_key):
            if part not in features:
                result.pop(part, None)
    return result


def _features_params(features):
    """The op's dense/sparse lists from the feature dict, in sorted key order
    (TensorFlow's)."""
    if not features:
        raise ValueError("Missing: features was %s." % features)
    dense_keys, dense_types, dense_shapes, dense_defaults = [], [], [], []
    sparse_keys, sparse_types = [], []
    for key in sorted(features):
        feature = features[key]
        if isinstance(feature, VarLenFeature):
            sparse_keys.append(key)
            sparse_types.append(_dtypes.as_dtype(feature.dtype))
        elif isinstance(feature, FixedLenFeature):
            dtype = _dtypes.as_dtype(feature.dtype)
            shape = tensor_shape.as_shape(feature.shape)
            if not shape.is_fully_defined():
                raise ValueError("All dimensions of shape for feature %s need to be known but "
                                 "received %s." % (key, shape))
            dense_keys.append(key)
            dense_types.append(dtype)
            dense_shapes.append(shape)
            if feature.default_value is None:
                default = _empty(dtype)
            else:
                default = _reshaped_default(feature.default_value, dtype, shape, key)
            dense_defaults.append(default)
        elif isinstance(feature, FixedLenSequenceFeature):
            dtype = _dtypes.as_dtype(feature.dtype)
            shape = tensor_shape.as_shape(feature.shape)
            if not shape.is_fully_defined():
                raise ValueError("All dimensions of shape for feature %s need to be known but "
                                 "received %s." % (key, shape))
            if not feature.allow_missing:
                raise ValueError("Unsupported: FixedLenSequenceFeature requires allow_missing "
                                 "to be True (feature %s)." % key)
            dense_keys.append(key)
            dense_types.append(dtype)
            dense_shapes.append(tensor_shape.TensorShape([None]).concatenate(shape))
            if feature.default_value is None:
                default = ops.convert_to_tensor(dtype.as_numpy_dtype(0) if dtype !=
                                                _dtypes.string else b"", dtype=dtype,
                                                name="padding_%s" % _name_safe(key))
            else:
                default = ops.convert_to_tensor(feature.default_value, dtype=dtype,
                                                name="padding_%s" % _name_safe(key))
            dense_defaults.append(default)
        else:
            raise ValueError("Unsupported feature type for %s: %r (weir has FixedLenFeature, "
                             "FixedLenSequenceFeature and VarLenFeature)" % (key, feature))
    return (dense_keys, dense_types, dense_shapes, dense_defaults, sparse_keys, sparse_types)


def _reshaped_default(value, dtype, shape, key):
    """The default of a FixedLenFeature reshaped to its shape, as TF does (a
    value with the same number of elements)."""
    name = "key_%s" % _name_safe(key)
    if isinstance(value, ops.Tensor):
        return apply_op("Reshape", name, tensor=value,
                        shape=ops.convert_to_tensor(shape.as_list(), dtype=_dtypes.int64))
    import numpy as np
    if dtype == _dtypes.string:
        flat = np.asarray(value, dtype=object).reshape([-1])
        array = np.array([v.encode() if isinstance(v, str) else v for v in flat], dtype=object)
    else:
        array = np.asarray(value, dtype=dtype.as_numpy_dtype)
    if array.size != shape.num_elements():
        raise ValueError("Feature %s: the default value has %d elements, its shape %s needs %d"
                         % (key, array.size, shape, shape.num_elements()))
    return ops.convert_to_tensor(array.reshape(shape.as_list()), dtype=dtype, name=name)


def _name_safe(key):
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in key)


def _empty(dtype):
    """An empty default: the feature is required."""
    import numpy as np
    if dtype == _dtypes.string:
        value = np.zeros([0], dtype=object)
    else:
        value = np.zeros([0], dtype=dtype.as_numpy_dtype)
    return ops.convert_to_tensor(value, dtype=dtype)


def _string_vector(values, name):
    import numpy as np
    return ops.convert_to_tensor(np.array([v.encode() if isinstance(v, str) else v
                                           for v in values], dtype=object).reshape([len(values)]),
                                 dtype=_dtypes.string, name=name)


def _results(op, dense_keys, dense_shapes, sparse_keys, batched):
    outputs = list(op.outputs)
    n = len(sparse_keys)
    indices, values, shapes = outputs[:n], outputs[n:2 * n], outputs[2 * n:3 * n]
    dense = outputs[3 * n:3 * n + len(dense_keys)]
    result = {}
    for key, i, v, s in zip(sparse_keys, indices, values, shapes):
        result[key] = SparseTensor(i, v, s)
    for key, tensor, shape in zip(dense_keys, dense, dense_shapes):
        static = shape if not batched else tensor_shape.TensorShape([None]).concatenate(shape)
        tensor.set_shape(static)
        result[key] = tensor
    return result


def parse_example(serialized, features, name=None, example_names=None):
    """Parses a vector of serialized tf.train.Example protos into a dict of
    dense Tensors ([batch, *shape]) and SparseTensors ([batch, longest];
    [batch, size] for a SparseFeature)."""
    requested = features
    features, composite = _split_sparse_features(features)
    if composite:
        result = parse_example(serialized, features, name, example_names)
        return _merge_sparse_features(result, requested, composite)
    (dense_keys, dense_types, dense_shapes, dense_defaults, sparse_keys,
     sparse_types) = _features_params(features)
    serialized = ops.convert_to_tensor(serialized, dtype=_dtypes.string, name="serialized")
    if example_names is None:
        names = _string_vector([], "names")
    else:
        names = ops.convert_to_tensor(example_names, dtype=_dtypes.string, name="names")
    result = apply_op(
        "ParseExampleV2", name or "ParseExample", serialized=serialized, names=names,
        sparse_keys=_string_vector(sparse_keys, "sparse_keys"),
        dense_keys=_string_vector(dense_keys, "dense_keys"),
        ragged_keys=_string_vector([], "ragged_keys"), dense_defaults=dense_defaults,
        num_sparse=len(sparse_keys), sparse_types=sparse_types, ragged_value_types=[],
        ragged_split_types=[], dense_shapes=[_shape_attr(s) for s in dense_shapes],
        Tdense=dense_types)
    return _results(_as_op(result), dense_keys, dense_shapes, sparse_keys, batched=True)


def parse_single_example(serialized, features, name=None, example_names=None):
    """Parses one serialized tf.train.Example (a scalar string) into a dict of
    dense Tensors (of the features' shapes) and SparseTensors (rank 1)."""
    requested = features
    features, composite = _split_sparse_features(features)
    if composite:
        result = parse_single_example(serialized, features, name, example_names)
        return _merge_sparse_features(result, requested, composite)
    (dense_keys, dense_types, dense_shapes, dense_defaults, sparse_keys,
     sparse_types) = _features_params(features)
    serialized = ops.convert_to_tensor(serialized, dtype=_dtypes.string, name="serialized")
    result = apply_op(
        "ParseSingleExample", name or "ParseSingleExample", serialized=serialized,
        dense_defaults=dense_defaults, num_sparse=len(sparse_keys), sparse_keys=sparse_keys,
        dense_keys=dense_keys, sparse_types=sparse_types, Tdense=dense_types,
        dense_shapes=[_shape_attr(s) for s in dense_shapes])
    return _results(_as_op(result), dense_keys, dense_shapes, sparse_keys, batched=False)


def decode_raw(input_bytes=None, out_type=None, little_endian=True, name=None, bytes=None):
    """Reinterprets the bytes of each string as a vector of out_type (all
    strings of one length): shape input.shape + [len / size]."""
    if input_bytes is None:
        input_bytes = bytes
    return apply_op("DecodeRaw", name, bytes=input_bytes, out_type=_dtypes.as_dtype(out_type),
                    little_endian=bool(little_endian))


def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None,
               na_value="", select_cols=None):
    """Parses CSV lines into one tensor per column; record_defaults gives each
    column's dtype and default (an empty default: the column is required)."""
    defaults = []
    for i, default in enumerate(record_defaults):
        if isinstance(default, ops.Tensor):
            defaults.append(default)
            continue
        import numpy as np
        value = default
        if isinstance(value, (list, tuple)) and len(value) == 0:
            raise ValueError("decode_csv: record_defaults[%d] is empty: give a dtype-typed empty "
                             "tensor (e.g. wr.constant([], wr.float32)) for a required column"
                             % i)
        array = np.asarray(value)
        if array.dtype == object or array.dtype.kind in "SU":
            dtype = _dtypes.string
        elif array.dtype.kind == "f":
            dtype = _dtypes.float32
        elif array.dtype.kind in "iu":
            dtype = _dtypes.int32
        else:
            dtype = None
        defaults.append(ops.convert_to_tensor(value, dtype=dtype, name="record_default_%d" % i))
    result = apply_op("DecodeCSV", name, records=records, record_defaults=defaults,
                      OUT_TYPE=[d.dtype for d in defaults], field_delim=field_delim,
                      use_quote_delim=bool(use_quote_delim), na_value=na_value,
                      select_cols=list(select_cols or []))
    return list(_as_op(result).outputs)


def string_to_number(string_tensor, out_type=_dtypes.float32, name=None):
    """Parses each string as a number of out_type (InvalidArgumentError
    naming the string when it is not one)."""
    return apply_op("StringToNumber", name, string_tensor=string_tensor,
                    out_type=_dtypes.as_dtype(out_type))


def serialize_tensor(tensor, name=None):
    """A scalar string: the TensorProto of `tensor`."""
    return apply_op("SerializeTensor", name, tensor=tensor)


def parse_tensor(serialized, out_type, name=None):
    """The tensor of a serialized TensorProto (its dtype must be out_type)."""
    return apply_op("ParseTensor", name, serialized=serialized,
                    out_type=_dtypes.as_dtype(out_type))
