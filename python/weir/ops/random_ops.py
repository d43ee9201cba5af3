"""Random tensors (tf.compat.v1's random_ops and random_seed).

Every function builds one stateful random op (RandomUniform,
RandomStandardNormal, TruncatedNormal, RandomUniformInt, RandomShuffle,
Multinomial) plus the arithmetic that scales it. Seeds follow TF1:

- `set_random_seed(s)` sets the default graph's seed; an op with no seed of
  its own then gets (s, id of the newest node in the graph), so the same
  program builds the same graph and draws the same numbers in every session;
- an op seed with no graph seed uses the graph seed 87654321;
- neither: (0, 0), which the kernels read as "seed from the OS".

A node's sequence continues across runs of one session (the second run gives
the next numbers), and restarts in a new session.
"""
import numbers

import numpy as np

from weir.framework import dtypes
from weir.framework import ops
from weir.framework import tensor_shape
from weir.framework.op_def_library import apply_op

__all__ = [
    "set_random_seed", "get_seed", "random_normal", "truncated_normal", "random_uniform",
    "random_shuffle", "multinomial", "random_crop",
]

DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2**31 - 1


def _truncate_seed(seed):
    return int(seed) % _MAXINT32  # the kernels take any int64; TF keeps seeds in 31 bits


def set_random_seed(seed):
    """Sets the graph-level seed of the default graph (None clears it)."""
    ops.get_default_graph().seed = seed


def get_seed(op_seed):
    """The (seed, seed2) pair an op with `op_seed` gets (TF1's rule, see the module doc).

    Returns (None, None) when neither a graph seed nor an op seed is set.
    """
    graph = ops.get_default_graph()
    graph_seed = getattr(graph, "seed", None)
    if graph_seed is not None:
        if op_seed is None:
            # The newest node id: deterministic for a deterministic program and
            # different for each op built after the seed was set.
            op_seed = graph._c_graph.num_node_ids()
        seeds = (_truncate_seed(graph_seed), _truncate_seed(op_seed))
    elif op_seed is not None:
        seeds = (DEFAULT_GRAPH_SEED, _truncate_seed(op_seed))
    else:
        return None, None
    if seeds == (0, 0):
        # (0, 0) would mean "nondeterministic" to the kernels.
        return 0, _MAXINT32
    return seeds


def _seed_attrs(seed):
    seed1, seed2 = get_seed(seed)
    return {"seed": seed1 or 0, "seed2": seed2 or 0}


def _shape_tensor(shape):
    """`shape` (list, tuple, TensorShape, numpy array or int Tensor) as an int32/int64 tensor."""
    if isinstance(shape, tensor_shape.TensorShape):
        if not shape.is_fully_defined():
            raise ValueError("the shape %s of a random tensor must be fully defined" % (shape,))
        shape = shape.as_list()
    if isinstance(shape, (list, tuple)) and not any(isinstance(d, ops.Tensor) for d in shape):
        dims = [d.value if isinstance(d, tensor_shape.Dimension) else d for d in shape]
        if any(d is None for d in dims):
            raise ValueError("the shape %s of a random tensor has an unknown dimension" % (shape,))
        big = any(int(d) > _MAXINT32 for d in dims)
        return ops.convert_to_tensor(np.array(dims, dtype=np.int64 if big else np.int32))
    if isinstance(shape, numbers.Integral):
        return ops.convert_to_tensor(np.array([shape], dtype=np.int32))
    tensor = ops.convert_to_tensor(shape)
    if tensor.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError("a random tensor's shape must be int32 or int64, not %s" %
                        tensor.dtype.name)
    return tensor


def _float_dtype(dtype, what):
    dtype = dtypes.as_dtype(dtype).base_dtype
    if not dtype.is_floating:
        raise ValueError("Invalid dtype %s for %s: a floating point type is needed" %
                         (dtype.name, what))
    return dtype


def _scaled(raw, scale, shift, dtype, name):
    """raw * scale + shift, the last op named `name` (TF's layout of these functions)."""
    scale = ops.convert_to_tensor(scale, dtype=dtype, name="stddev")
    shift = ops.convert_to_tensor(shift, dtype=dtype, name="mean")
    product = apply_op("Mul", None, x=raw, y=scale)
    return apply_op("AddV2", name, x=product, y=shift)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Values from the normal distribution N(mean, stddev^2), of dims `shape`."""
    dtype = _float_dtype(dtype, "random_normal")
    with ops.name_scope(name, "random_normal", [shape, mean, stddev]) as name:
        shape_tensor = _shape_tensor(shape)
        raw = apply_op("RandomStandardNormal", None, shape=shape_tensor, dtype=dtype,
                       **_seed_attrs(seed))
        return _scaled(raw, stddev, mean, dtype, name)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Values from N(mean, stddev^2) with any more than 2 stddev from the mean redrawn."""
    dtype = _float_dtype(dtype, "truncated_normal")
    with ops.name_scope(name, "truncated_normal", [shape, mean, stddev]) as name:
        shape_tensor = _shape_tensor(shape)
        raw = apply_op("TruncatedNormal", None, shape=shape_tensor, dtype=dtype,
                       **_seed_attrs(seed))
        return _scaled(raw, stddev, mean, dtype, name)


def random_uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    """Values drawn uniformly from [minval, maxval).

    Floats: maxval defaults to 1. Integers (int32, int64): maxval is required
    and the draw is exactly uniform over the integers in the range.
    """
    dtype = dtypes.as_dtype(dtype).base_dtype
    if dtype.is_integer:
        if maxval is None:
            raise ValueError("Must specify maxval for integer dtype %r" % dtype)
        if dtype not in (dtypes.int32, dtypes.int64):
            raise ValueError("Invalid dtype %s for random_uniform: int32 or int64 are allowed"
                             % dtype.name)
    elif not dtype.is_floating:
        raise ValueError("Invalid dtype %s for random_uniform" % dtype.name)
    elif maxval is None:
        maxval = 1
    with ops.name_scope(name, "random_uniform", [shape, minval, maxval]) as name:
        shape_tensor = _shape_tensor(shape)
        low = ops.convert_to_tensor(minval, dtype=dtype, name="min")
        high = ops.convert_to_tensor(maxval, dtype=dtype, name="max")
        if dtype.is_integer:
            return apply_op("RandomUniformInt", name, shape=shape_tensor, minval=low, maxval=high,
                            **_seed_attrs(seed))
        raw = apply_op("RandomUniform", None, shape=shape_tensor, dtype=dtype, **_seed_attrs(seed))
        span = apply_op("Sub", None, x=high, y=low)
        product = apply_op("Mul", None, x=raw, y=span)
        return apply_op("AddV2", name, x=product, y=low)


def random_shuffle(value, seed=None, name=None):
    """`value` with its slices along dimension 0 in a uniformly random order."""
    return apply_op("RandomShuffle", name, value=value, **_seed_attrs(seed))


def multinomial(logits, num_samples, seed=None, name=None, output_dtype=None):
    """For each row of `logits` [batch, classes], `num_samples` drawn class indices."""
    with ops.name_scope(name, "multinomial", [logits]):
        logits = ops.convert_to_tensor(logits, name="logits")
        attrs = _seed_attrs(seed)
        if output_dtype is not None:
            attrs["output_dtype"] = dtypes.as_dtype(output_dtype)
        return apply_op("Multinomial", None, logits=logits,
                        num_samples=ops.convert_to_tensor(num_samples, dtype=dtypes.int32),
                        **attrs)


def categorical(logits, num_samples, dtype=None, seed=None, name=None):
    """tf.random.categorical: multinomial with the output dtype called `dtype`."""
    return multinomial(logits, num_samples, seed=seed, name=name or "categorical",
                       output_dtype=dtype)


def random_crop(value, size, seed=None, name=None):
    """A random slice of `value` of dims `size` (each offset uniform in its range)."""
    with ops.name_scope(name, "random_crop", [value, size]) as name:
        value = ops.convert_to_tensor(value, name="value")
        size = ops.convert_to_tensor(size, dtype=dtypes.int32, name="size")
        shape = apply_op("Shape", None, input=value, out_type=dtypes.int32)
        room = apply_op("Sub", None, x=shape, y=size)
        limit = apply_op("AddV2", None, x=room, y=np.int32(1))
        # An offset in [0, limit) per dim: floor(u * limit) of a float uniform u,
        # one draw per dim of the vector `limit`.
        u = random_uniform(apply_op("Shape", None, input=limit, out_type=dtypes.int32),
                           dtype=dtypes.float32, seed=seed)
        scaled = apply_op("Mul", None, x=u, y=apply_op("Cast", None, x=limit, DstT=dtypes.float32))
        offset = apply_op("Cast", None, x=apply_op("Floor", None, x=scaled), DstT=dtypes.int32)
        return apply_op("Slice", name, input=value, begin=offset, size=size)


def random_gamma(shape, alpha, beta=None, dtype=dtypes.float32, seed=None, name=None):
    """Gamma(alpha, beta) samples (beta is the rate, default 1): `shape`
    samples for each element of alpha (broadcast with beta), output dims
    shape + alpha's dims; at least the dtype's smallest normal number, as TF.
    Differentiable in alpha and beta (implicit reparameterization)."""
    dtype = _float_dtype(dtype, "random_gamma")
    with ops.name_scope(name, "random_gamma", [shape, alpha, beta]) as scope:
        shape = _shape_tensor(shape)
        alpha = ops.convert_to_tensor(alpha, dtype=dtype, name="alpha")
        beta = ops.convert_to_tensor(1 if beta is None else beta, dtype=dtype, name="beta")
        if beta.shape.ndims != 0:
            alpha = apply_op("BroadcastTo", None, input=alpha, shape=apply_op(
                "BroadcastArgs", None, s0=apply_op("Shape", None, input=alpha),
                s1=apply_op("Shape", None, input=beta)))
        sample = apply_op("RandomGamma", None, shape=shape, alpha=alpha, **_seed_attrs(seed))
        tiny = ops.convert_to_tensor(np.finfo(dtype.as_numpy_dtype).tiny, dtype=dtype)
        return apply_op("Maximum", scope, x=tiny, y=apply_op("RealDiv", None, x=sample, y=beta))


def random_poisson(lam, shape, dtype=dtypes.float32, seed=None, name=None):
    """Poisson(lam) samples (TF1's argument order: lam first): `shape`
    samples for each element of lam, output dims shape + lam's dims."""
    dtype = dtypes.as_dtype(dtype).base_dtype
    with ops.name_scope(name, "random_poisson", [lam, shape]) as scope:
        shape = _shape_tensor(shape)
        lam = ops.convert_to_tensor(lam, name="lam")
        if not (lam.dtype.is_floating or lam.dtype.is_integer):
            raise TypeError("random_poisson: lam must be a number, not %s" % lam.dtype.name)
        return apply_op("RandomPoissonV2", scope, shape=shape, rate=lam, dtype=dtype,
                        **_seed_attrs(seed))


__all__ += ["random_gamma", "random_poisson"]
