"""tf.random.stateless_*: values from a [2] seed alone, TensorFlow's exact
streams (the seed becomes a Philox key and counter through
StatelessRandomGetKeyCounter, then a V2 sampler draws from them).

stateless_uniform(shape, seed, minval=0, maxval=None, dtype=float32): floats
in [minval, maxval) (maxval defaults to 1), integers in [minval, maxval), or
with minval and maxval both None the integer dtype's full range.
stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype=float32).
Only alg "auto_select"/"philox" (1)."""
from weir.framework import dtypes
from weir.framework import ops
from weir.framework.op_def_library import apply_op
from weir.ops.random_ops import _float_dtype, _shape_tensor

__all__ = ["stateless_uniform", "stateless_normal"]

_INTS = (dtypes.int32, dtypes.int64, dtypes.uint32, dtypes.uint64)


def _key_counter(seed, alg):
    if alg not in (None, 1, "philox", "auto_select"):
        raise ValueError("stateless random: only the Philox algorithm is supported, not %r" %
                         (alg,))
    seed = ops.convert_to_tensor(seed, name="seed")
    if seed.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError("stateless random: seed must be int32 or int64, not %s" %
                        seed.dtype.name)
    if seed.shape.ndims is not None and seed.shape.as_list() != [2]:
        raise ValueError("stateless random: seed must have shape [2], not %s" % seed.shape)
    key, counter = apply_op("StatelessRandomGetKeyCounter", None, seed=seed)
    alg_tensor = ops.convert_to_tensor(1, dtype=dtypes.int32, name="alg")
    return key, counter, alg_tensor


def _constant(value, dtype, name):
    # bfloat16 has no NumPy type: its Python constants are made in float32.
    if dtype == dtypes.bfloat16 and not isinstance(value, ops.Tensor):
        value = ops.convert_to_tensor(value, dtype=dtypes.float32, name=name)
        return apply_op("Cast", None, x=value, DstT=dtype)
    return ops.convert_to_tensor(value, dtype=dtype, name=name)


def stateless_uniform(shape, seed, minval=0, maxval=None, dtype=dtypes.float32, name=None,
                      alg="auto_select"):
    """Uniform values from `seed` alone (see the module doc)."""
    dtype = dtypes.as_dtype(dtype).base_dtype
    with ops.name_scope(name, "stateless_random_uniform", [shape, seed, minval, maxval]) as scope:
        shape = _shape_tensor(shape)
        key, counter, alg_tensor = _key_counter(seed, alg)
        if dtype in _INTS:
            if minval is None and maxval is None:
                return apply_op("StatelessRandomUniformFullIntV2", scope, shape=shape, key=key,
                                counter=counter, alg=alg_tensor, dtype=dtype)
            if minval is None or maxval is None:
                raise ValueError("stateless_uniform: integer dtypes need both minval and maxval "
                                 "(or neither, for the full range)")
            return apply_op("StatelessRandomUniformIntV2", scope, shape=shape, key=key,
                            counter=counter, alg=alg_tensor,
                            minval=ops.convert_to_tensor(minval, dtype=dtype, name="min"),
                            maxval=ops.convert_to_tensor(maxval, dtype=dtype, name="max"))
        dtype = _float_dtype(dtype, "stateless_uniform")
        raw = apply_op("StatelessRandomUniformV2", None, shape=shape, key=key, counter=counter,
                       alg=alg_tensor, dtype=dtype)
        if maxval is None:
            maxval = 1
        lo, hi = _constant(minval, dtype, "min"), _constant(maxval, dtype, "max")
        span = apply_op("Sub", None, x=hi, y=lo)
        return apply_op("AddV2", scope, x=apply_op("Mul", None, x=raw, y=span), y=lo)


def stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None,
                     alg="auto_select"):
    """Normal values from `seed` alone (see the module doc)."""
    dtype = _float_dtype(dtype, "stateless_normal")
    with ops.name_scope(name, "stateless_random_normal", [shape, seed, mean, stddev]) as scope:
        shape = _shape_tensor(shape)
        key, counter, alg_tensor = _key_counter(seed, alg)
        raw = apply_op("StatelessRandomNormalV2", None, shape=shape, key=key, counter=counter,
                       alg=alg_tensor, dtype=dtype)
        scale, shift = _constant(stddev, dtype, "stddev"), _constant(mean, dtype, "mean")
        return apply_op("AddV2", scope, x=apply_op("Mul", None, x=raw, y=scale), y=shift)
