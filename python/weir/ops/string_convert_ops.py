"""Strings from values and other strings (TF's tf.strings / tf.io / TF1 names):
as_string, to_hash_bucket_fast (FarmHash Fingerprint64, so bucket ids are
TensorFlow's), strip, lower, upper, reduce_join, encode_base64 / decode_base64
(web-safe). Kernels: src/weir/kernels/string_convert_kernels.cc."""
from weir.framework import dtypes
from weir.framework import ops
from weir.framework.op_def_library import apply_op

__all__ = ["as_string", "string_to_hash_bucket_fast", "string_strip", "reduce_join",
           "encode_base64", "decode_base64"]


def _strings(value, name="input"):
    return ops.convert_to_tensor(value, dtype=dtypes.string, name=name)


def as_string(input, precision=-1, scientific=False, shortest=False, width=-1,  # noqa: A002
              fill="", name=None):
    """Each element as text (printf's %f / %e / %g for floats, decimal integers,
    true/false), padded to `width` with `fill`."""
    return apply_op("AsString", name, input=input, precision=precision, scientific=scientific,
                    shortest=shortest, width=width, fill=fill)


def string_to_hash_bucket_fast(input, num_buckets, name=None):  # noqa: A002
    """Each string's bucket in [0, num_buckets): TensorFlow's FarmHash Fingerprint64."""
    return apply_op("StringToHashBucketFast", name, input=_strings(input),
                    num_buckets=num_buckets)


def string_strip(input, name=None):  # noqa: A002
    return apply_op("StringStrip", name, input=_strings(input))


def lower(input, encoding="", name=None):  # noqa: A002
    return apply_op("StringLower", name, input=_strings(input), encoding=encoding)


def upper(input, encoding="", name=None):  # noqa: A002
    return apply_op("StringUpper", name, input=_strings(input), encoding=encoding)


def reduce_join(inputs, axis=None, keep_dims=False, separator="", name=None,
                reduction_indices=None, keepdims=None):
    """The strings joined along `axis` (all axes when None), the first axis
    listed varying fastest, as TF's tf.strings.reduce_join / TF1's tf.reduce_join."""
    if axis is None:
        axis = reduction_indices
    if keepdims is not None:
        keep_dims = keepdims
    with ops.name_scope(name, "ReduceJoin", [inputs]) as scope:
        inputs = _strings(inputs, "inputs")
        if axis is None:
            rank = inputs.shape.ndims
            if rank is None:
                from weir.ops import array_ops, math_ops
                axis = math_ops.range(array_ops.rank(inputs) - 1, -1, -1)
            else:
                axis = list(range(rank - 1, -1, -1))
        elif isinstance(axis, int):
            axis = [axis]
        axis = ops.convert_to_tensor(axis, dtype=dtypes.int32, name="reduction_indices")
        return apply_op("ReduceJoin", scope[:-1], inputs=inputs, reduction_indices=axis,
                        keep_dims=bool(keep_dims), separator=separator)


def encode_base64(input, pad=False, name=None):  # noqa: A002
    """Web-safe base64 ('-' and '_'), '='-padded with `pad`."""
    return apply_op("EncodeBase64", name, input=_strings(input), pad=pad)


def decode_base64(input, name=None):  # noqa: A002
    return apply_op("DecodeBase64", name, input=_strings(input))
