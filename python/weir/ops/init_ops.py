"""Variable initializers (tf.compat.v1's init_ops).

An initializer is a callable `init(shape, dtype=None, partition_info=None)`
that builds the graph nodes of a tensor of dims `shape` (dtype defaults to
the one given to the constructor), as `get_variable(initializer=...)` and
the layers call it. Random ones use random_ops, so TF1's graph/op seed rules
apply. `get_config()` / `from_config()` round-trip the constructor arguments.

The variance-scaling family (glorot_*, he_*, lecun_*) computes fan_in and
fan_out as TF1: a vector's fans are its length, a matrix [in, out], a conv
filter [..., in, out] times its receptive field (the product of the leading
dims).

Weir's difference: `orthogonal_initializer` computes its matrix with numpy's
QR when the graph is built (weir has no Qr op), so its value is a constant of
the graph, the same on every run; its seed still follows the graph/op rules.
"""
import math

import numpy as np

from weir.framework import constant_op
from weir.framework import dtypes
from weir.framework import ops
from weir.framework import tensor_shape
from weir.framework.op_def_library import apply_op
from weir.ops import random_ops

# The top-level names of tf.compat.v1; the classes and he_*/lecun_* live in
# weir.initializers (as tf.compat.v1.initializers).
__all__ = [
    "zeros_initializer", "ones_initializer", "constant_initializer", "random_normal_initializer",
    "truncated_normal_initializer", "random_uniform_initializer", "variance_scaling_initializer",
    "glorot_uniform_initializer", "glorot_normal_initializer", "orthogonal_initializer",
    "uniform_unit_scaling_initializer",
]


def _as_dims(shape):
    """`shape` as a list of Python ints; an unknown dim is a ValueError (TF's)."""
    dims = tensor_shape.as_shape(shape).as_list()
    if dims is None or any(d is None for d in dims):
        raise ValueError("an initializer needs a fully defined shape, not %s" %
                         (tensor_shape.as_shape(shape),))
    return dims


def _dims_tensor(dims):
    big = any(d > 2**31 - 1 for d in dims)
    return ops.convert_to_tensor(np.array(dims, dtype=np.int64 if big else np.int32))


def _fill(dims, value, dtype):
    """A tensor of dims `dims` holding `value`, as one Fill node (no large Const)."""
    scalar = constant_op.constant(value, dtype=dtype)
    return apply_op("Fill", None, dims=_dims_tensor(dims), value=scalar)


def _float_dtype(dtype, who):
    dtype = dtypes.as_dtype(dtype).base_dtype
    if not dtype.is_floating:
        raise ValueError("Expected floating point type for %s, got %s." % (who, dtype.name))
    return dtype


class Initializer(object):
    """The base class: subclasses implement __call__ and get_config."""

    def __call__(self, shape, dtype=None, partition_info=None):
        raise NotImplementedError

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class Zeros(Initializer):
    """Tensors of zeros (any dtype; empty strings for string)."""

    def __init__(self, dtype=dtypes.float32):
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = dtypes.as_dtype(dtype or self.dtype)
        zero = b"" if dtype == dtypes.string else (False if dtype.is_bool else 0)
        return _fill(_as_dims(shape), zero, dtype)

    def get_config(self):
        return {"dtype": self.dtype.name}


class Ones(Initializer):
    """Tensors of ones (any numeric dtype)."""

    def __init__(self, dtype=dtypes.float32):
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = dtypes.as_dtype(dtype or self.dtype)
        return _fill(_as_dims(shape), 1 if not dtype.is_bool else True, dtype)

    def get_config(self):
        return {"dtype": self.dtype.name}


class Constant(Initializer):
    """Tensors of `value`: a scalar fills the shape; a list/array must have its
    element count (TF1: a shorter list is extended with its last value unless
    verify_shape, which demands the exact shape)."""

    def __init__(self, value=0, dtype=dtypes.float32, verify_shape=False):
        if not (np.isscalar(value) or isinstance(value, (list, tuple, np.ndarray))):
            raise TypeError("Invalid type for initial value: %s (expected Python scalar, list or "
                            "tuple of values, or numpy.ndarray)." % type(value))
        self.value = value
        self.dtype = dtypes.as_dtype(dtype)
        self._verify_shape = verify_shape

    def __call__(self, shape, dtype=None, partition_info=None, verify_shape=None):
        dtype = dtypes.as_dtype(dtype or self.dtype)
        dims = _as_dims(shape)
        if verify_shape is None:
            verify_shape = self._verify_shape
        values = np.asarray(self.value, dtype=dtype.as_numpy_dtype)
        if values.ndim == 0:
            return _fill(dims, values, dtype)
        count = int(np.prod(dims))
        if verify_shape and list(values.shape) != dims:
            raise TypeError("Expected Tensor's shape: %s, got %s." %
                            (tuple(dims), tuple(values.shape)))
        flat = values.reshape(-1)
        if flat.size > count:
            raise ValueError("Too many elements provided. Needed at most %d, but received %d" %
                             (count, flat.size))
        if flat.size < count:
            # TF1 pads a short list with its last value.
            flat = np.concatenate([flat, np.full(count - flat.size, flat[-1], flat.dtype)])
        return constant_op.constant(flat.reshape(dims), dtype=dtype)

    def get_config(self):
        return {"value": self.value, "dtype": self.dtype.name, "verify_shape": self._verify_shape}


class RandomNormal(Initializer):
    """Draws from N(mean, stddev^2)."""

    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=dtypes.float32):
        self.mean, self.stddev, self.seed = mean, stddev, seed
        self.dtype = _float_dtype(dtype, "random_normal_initializer")

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = _float_dtype(dtype or self.dtype, "random_normal_initializer")
        return random_ops.random_normal(_as_dims(shape), self.mean, self.stddev, dtype,
                                       seed=self.seed)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed,
                "dtype": self.dtype.name}


class TruncatedNormal(Initializer):
    """Draws from N(mean, stddev^2), redrawing values more than 2 stddev away."""

    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=dtypes.float32):
        self.mean, self.stddev, self.seed = mean, stddev, seed
        self.dtype = _float_dtype(dtype, "truncated_normal_initializer")

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = _float_dtype(dtype or self.dtype, "truncated_normal_initializer")
        return random_ops.truncated_normal(_as_dims(shape), self.mean, self.stddev, dtype,
                                           seed=self.seed)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed,
                "dtype": self.dtype.name}


class RandomUniform(Initializer):
    """Draws uniformly from [minval, maxval) (maxval defaults to 1 for floats)."""

    def __init__(self, minval=0, maxval=None, seed=None, dtype=dtypes.float32):
        self.minval, self.maxval, self.seed = minval, maxval, seed
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = dtypes.as_dtype(dtype or self.dtype)
        return random_ops.random_uniform(_as_dims(shape), self.minval, self.maxval, dtype,
                                         seed=self.seed)

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed,
                "dtype": self.dtype.name}


def _compute_fans(dims):
    if len(dims) == 0:
        return 1, 1
    if len(dims) == 1:
        return dims[0], dims[0]
    receptive_field = int(np.prod(dims[:-2])) if len(dims) > 2 else 1
    return dims[-2] * receptive_field, dims[-1] * receptive_field


class VarianceScaling(Initializer):
    """Draws with variance scale / n, n = fan_in, fan_out or their mean (`mode`).

    distribution: "truncated_normal" (stddev corrected for the truncation),
    "untruncated_normal", "uniform" (limit sqrt(3 scale / n)); TF1's
    deprecated "normal" means "truncated_normal".
    """

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None,
                 dtype=dtypes.float32):
        if scale <= 0.0:
            raise ValueError("`scale` must be positive float.")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError("Invalid `mode` argument:", mode)
        distribution = distribution.lower()
        if distribution not in ("normal", "uniform", "truncated_normal", "untruncated_normal"):
            raise ValueError("Invalid `distribution` argument:", distribution)
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed
        self.dtype = _float_dtype(dtype, "variance_scaling_initializer")

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = _float_dtype(dtype or self.dtype, "variance_scaling_initializer")
        dims = _as_dims(shape)
        fan_in, fan_out = _compute_fans(dims)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        scale = self.scale / max(1.0, n)
        if self.distribution in ("normal", "truncated_normal"):
            # The standard deviation of N(0, 1) truncated to [-2, 2].
            stddev = math.sqrt(scale) / 0.87962566103423978
            return random_ops.truncated_normal(dims, 0.0, stddev, dtype, seed=self.seed)
        if self.distribution == "untruncated_normal":
            return random_ops.random_normal(dims, 0.0, math.sqrt(scale), dtype, seed=self.seed)
        limit = math.sqrt(3.0 * scale)
        return random_ops.random_uniform(dims, -limit, limit, dtype, seed=self.seed)

    def get_config(self):
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution,
                "seed": self.seed, "dtype": self.dtype.name}


class GlorotUniform(VarianceScaling):
    """Uniform in [-l, l], l = sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio)."""

    def __init__(self, seed=None, dtype=dtypes.float32):
        super().__init__(1.0, "fan_avg", "uniform", seed, dtype)

    def get_config(self):
        return {"seed": self.seed, "dtype": self.dtype.name}


class GlorotNormal(VarianceScaling):
    """Truncated normal with stddev sqrt(2 / (fan_in + fan_out))."""

    def __init__(self, seed=None, dtype=dtypes.float32):
        super().__init__(1.0, "fan_avg", "truncated_normal", seed, dtype)

    def get_config(self):
        return {"seed": self.seed, "dtype": self.dtype.name}


class UniformUnitScaling(Initializer):
    """TF1's uniform_unit_scaling_initializer: uniform in +-factor*sqrt(3/fan_in)."""

    def __init__(self, factor=1.0, seed=None, dtype=dtypes.float32):
        self.factor, self.seed = factor, seed
        self.dtype = _float_dtype(dtype, "uniform_unit_scaling_initializer")

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = _float_dtype(dtype or self.dtype, "uniform_unit_scaling_initializer")
        dims = _as_dims(shape)
        input_size = int(np.prod(dims[:-1])) if dims else 1.0
        limit = math.sqrt(3 / max(input_size, 1.0)) * self.factor
        return random_ops.random_uniform(dims, -limit, limit, dtype, seed=self.seed)

    def get_config(self):
        return {"factor": self.factor, "seed": self.seed, "dtype": self.dtype.name}


class Orthogonal(Initializer):
    """An orthogonal matrix (rows or columns orthonormal) times `gain`; a shape of
    rank > 2 is flattened to [prod(shape[:-1]), shape[-1]]. See the module doc:
    computed when the graph is built."""

    def __init__(self, gain=1.0, seed=None, dtype=dtypes.float32):
        self.gain, self.seed = gain, seed
        self.dtype = _float_dtype(dtype, "orthogonal_initializer")

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = _float_dtype(dtype or self.dtype, "orthogonal_initializer")
        dims = _as_dims(shape)
        if len(dims) < 2:
            raise ValueError("The tensor to initialize must be at least two-dimensional")
        rows, cols = int(np.prod(dims[:-1])), dims[-1]
        seed1, seed2 = random_ops.get_seed(self.seed)
        rng = np.random.default_rng(None if seed1 is None else [seed1, seed2])
        a = rng.standard_normal((max(rows, cols), min(rows, cols)))
        q, r = np.linalg.qr(a)
        q *= np.sign(np.diag(r))  # a uniform (Haar) draw, not QR's sign convention
        if rows < cols:
            q = q.T
        return constant_op.constant((self.gain * q).reshape(dims), dtype=dtype)

    def get_config(self):
        return {"gain": self.gain, "seed": self.seed, "dtype": self.dtype.name}


class Identity(Initializer):
    """`gain` times the identity matrix (2-D shapes only)."""

    def __init__(self, gain=1.0, dtype=dtypes.float32):
        self.gain = gain
        self.dtype = _float_dtype(dtype, "identity_initializer")

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = _float_dtype(dtype or self.dtype, "identity_initializer")
        dims = _as_dims(shape)
        if len(dims) != 2:
            raise ValueError("Identity matrix initializer can only be used for 2D matrices.")
        return constant_op.constant(self.gain * np.eye(dims[0], dims[1]), dtype=dtype)

    def get_config(self):
        return {"gain": self.gain, "dtype": self.dtype.name}


# TF1's lower-case names are the classes themselves.
zeros_initializer = Zeros
ones_initializer = Ones
constant_initializer = Constant
random_normal_initializer = RandomNormal
truncated_normal_initializer = TruncatedNormal
random_uniform_initializer = RandomUniform
variance_scaling_initializer = VarianceScaling
glorot_uniform_initializer = GlorotUniform
glorot_normal_initializer = GlorotNormal
orthogonal_initializer = Orthogonal
identity_initializer = Identity
uniform_unit_scaling_initializer = UniformUnitScaling


def he_normal(seed=None):
    """Truncated normal, stddev sqrt(2 / fan_in) (He et al.)."""
    return VarianceScaling(2.0, "fan_in", "truncated_normal", seed)


def he_uniform(seed=None):
    """Uniform in +-sqrt(6 / fan_in)."""
    return VarianceScaling(2.0, "fan_in", "uniform", seed)


def lecun_normal(seed=None):
    """Truncated normal, stddev sqrt(1 / fan_in)."""
    return VarianceScaling(1.0, "fan_in", "truncated_normal", seed)


def lecun_uniform(seed=None):
    """Uniform in +-sqrt(3 / fan_in)."""
    return VarianceScaling(1.0, "fan_in", "uniform", seed)
