"""Neural-network functions (tf.compat.v1.nn): activations, convolution and
pooling, dropout, losses, normalization, embeddings.

Each function follows TF1's name, signature (deprecated aliases included:
`dim` for `axis`, `keep_dims`, `keep_prob`, `filter`/`filters`,
`value`/`input`) and defaults. Where weir has the op (Relu, Conv2D,
SoftmaxCrossEntropyWithLogits, FusedBatchNormV3, ...) the function is that
op; otherwise it is composed of weir's ops under the function's name scope
(leaky_relu, softsign, sigmoid_cross_entropy_with_logits, moments, ...), so
gradients come from the ops it is made of. The functions are exported through
`weir.nn`, not the top-level namespace (TF1 has no `tf.relu`).
"""
import collections
import numbers

import numpy as np

from weir.framework import dtypes
from weir.framework import ops
from weir.framework.op_def_library import apply_op
from weir.ops import random_ops

__all__ = []


# --- small graph helpers (op def argument names) ---

def _t(value, dtype=None, name=None):
    return ops.convert_to_tensor(value, dtype=dtype, name=name)


def _const(value, dtype):
    return ops.convert_to_tensor(np.asarray(value, dtype=dtypes.as_dtype(dtype).as_numpy_dtype))


def _binary(op_type, x, y, name=None):
    return apply_op(op_type, name, x=x, y=y)


def _unary(op_type, x, name=None):
    return apply_op(op_type, name, x=x)


def _reduce(op_type, x, axes, keep_dims, name=None):
    return apply_op(op_type, name, input=x, reduction_indices=_const(axes, dtypes.int32),
                    keep_dims=keep_dims)


def _shape(x):
    return apply_op("Shape", None, input=x, out_type=dtypes.int32)


def _rank(x):
    rank = x.shape.ndims
    if rank is None:
        raise ValueError("%s needs a tensor of known rank; %s has an unknown rank" %
                         ("this function", x.name))
    return rank


def _swap_last(rank, axis):
    perm = list(range(rank))
    perm[axis], perm[rank - 1] = perm[rank - 1], perm[axis]
    return _const(perm, dtypes.int32)


def _move_to_last(rank, axis):
    # The other axes keep their order, so a reduction over the last axis
    # leaves them as they were.
    return _const([a for a in range(rank) if a != axis] + [axis], dtypes.int32)


def _canonical_axis(axis, rank):
    if not -rank <= axis < rank:
        raise ValueError("axis %d is out of range for a tensor of rank %d" % (axis, rank))
    return axis % rank


# --- activations ---

def relu(features, name=None):
    """max(features, 0)."""
    return apply_op("Relu", name, features=features)


def relu6(features, name=None):
    """min(max(features, 0), 6)."""
    return apply_op("Relu6", name, features=features)


def elu(features, name=None):
    """features where >= 0, else exp(features) - 1."""
    return apply_op("Elu", name, features=features)


def selu(features, name=None):
    """scale * elu with alpha ~1.6733, scale ~1.0507."""
    return apply_op("Selu", name, features=features)


def softplus(features, name=None):
    """log(exp(features) + 1)."""
    return apply_op("Softplus", name, features=features)


def leaky_relu(features, alpha=0.2, name=None):
    """features where > 0, else alpha * features (op LeakyRelu)."""
    with ops.name_scope(name, "LeakyRelu", [features, alpha]) as name:
        features = _t(features, name="features")
        if features.dtype.is_integer:
            features = apply_op("Cast", None, x=features, DstT=dtypes.float32)
        return apply_op("LeakyRelu", name, features=features, alpha=float(alpha))


def softsign(features, name=None):
    """features / (|features| + 1) (op Softsign; its gradient is SoftsignGrad)."""
    return apply_op("Softsign", name, features=features)


def swish(features, name=None):
    """features * sigmoid(features) (also called silu)."""
    with ops.name_scope(name, "swish", [features]) as name:
        features = _t(features, name="features")
        return _binary("Mul", features, _unary("Sigmoid", features), name=name)


silu = swish


def crelu(features, name=None, axis=-1):
    """concat([relu(features), relu(-features)], axis)."""
    with ops.name_scope(name, "CRelu", [features]) as name:
        features = _t(features, name="features")
        both = [apply_op("Relu", None, features=features),
                apply_op("Relu", None, features=_unary("Neg", features))]
        return apply_op("ConcatV2", name, values=both, axis=_const(axis, dtypes.int32))


def gelu(features, approximate=False, name=None):
    """x * P(X <= x) for X ~ N(0, 1): 0.5 x (1 + erf(x / sqrt(2))), or the tanh
    approximation 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))."""
    with ops.name_scope(name, "Gelu", [features]) as name:
        features = _t(features, name="features")
        half = _binary("Mul", _const(0.5, features.dtype), features)
        if approximate:
            cube = _binary("Mul", _const(0.044715, features.dtype),
                           _binary("Mul", features, _unary("Square", features)))
            inner = _binary("Mul", _const(np.sqrt(2 / np.pi), features.dtype),
                            _binary("AddV2", features, cube))
            curve = _unary("Tanh", inner)
        else:
            curve = _unary("Erf", _binary("Mul", features, _const(1 / np.sqrt(2), features.dtype)))
        return _binary("Mul", half, _binary("AddV2", _const(1, features.dtype), curve), name=name)


def sigmoid(x, name=None):
    """1 / (1 + exp(-x))."""
    return _unary("Sigmoid", x, name=name)


def tanh(x, name=None):
    """The hyperbolic tangent."""
    return _unary("Tanh", x, name=name)


def _softmax(op_type, logits, axis, name, default_name):
    logits = _t(logits, name="logits")
    rank = logits.shape.ndims
    if axis is None or axis == -1 or (rank is not None and axis == rank - 1):
        return apply_op(op_type, name, logits=logits)
    rank = _rank(logits)
    axis = _canonical_axis(axis, rank)
    # The op works on the last axis: swap `axis` there and back.
    with ops.name_scope(name, default_name, [logits]) as scope:
        perm = _swap_last(rank, axis)
        moved = apply_op("Transpose", None, x=logits, perm=perm)
        result = apply_op(op_type, None, logits=moved)
        return apply_op("Transpose", scope, x=result, perm=perm)


def softmax(logits, axis=None, name=None, dim=None):
    """exp(logits) / sum(exp(logits)) along `axis` (default the last; `dim` is TF1's alias)."""
    return _softmax("Softmax", logits, dim if axis is None else axis, name, "softmax")


def log_softmax(logits, axis=None, name=None, dim=None):
    """logits - log(sum(exp(logits))) along `axis` (default the last)."""
    return _softmax("LogSoftmax", logits, dim if axis is None else axis, name, "log_softmax")


def bias_add(value, bias, data_format=None, name=None):
    """value + bias along the channel dim (last for NHWC / N..C, dim 1 for NCHW / NC..)."""
    attrs = {}
    if data_format is not None:
        if data_format.startswith("NC"):
            attrs["data_format"] = "NCHW"
        elif data_format.startswith("N") and data_format.endswith("C"):
            attrs["data_format"] = "NHWC"
        else:
            raise ValueError("data_format must be of the form `N...C` or `NC...`, got %r" %
                             (data_format,))
    with ops.name_scope(name, "BiasAdd", [value, bias]) as name:
        value = _t(value, name="input")
        bias = _t(bias, dtype=value.dtype, name="bias")
        return apply_op("BiasAdd", name, value=value, bias=bias, **attrs)


def xw_plus_b(x, weights, biases, name=None):
    """matmul(x, weights) + biases."""
    with ops.name_scope(name, "xw_plus_b", [x, weights, biases]) as name:
        product = apply_op("MatMul", None, a=_t(x, name="x"), b=_t(weights, name="weights"))
        return apply_op("BiasAdd", name, value=product, bias=_t(biases, name="biases"))


def relu_layer(x, weights, biases, name=None):
    """relu(matmul(x, weights) + biases)."""
    with ops.name_scope(name, "relu_layer", [x, weights, biases]) as name:
        product = apply_op("MatMul", None, a=_t(x, name="x"), b=_t(weights, name="weights"))
        summed = apply_op("BiasAdd", None, value=product, bias=_t(biases, name="biases"))
        return apply_op("Relu", name, features=summed)


# --- convolution and pooling ---

def _spatial_list(value, what, data_format, n=2):
    """An int, or a list of 1, n or n+2 ints, as the n+2 entries of the op's attr."""
    if value is None:
        raise ValueError("%s must be given" % what)
    if isinstance(value, numbers.Integral):
        value = [int(value)]
    value = [int(v) for v in value]
    if len(value) == n + 2:
        return value
    if len(value) == 1:
        value = value * n
    if len(value) != n:
        raise ValueError("%s should be of length 1, %d or %d, got %d" %
                         (what, n, n + 2, len(value)))
    return [1, 1] + value if data_format.startswith("NC") else [1] + value + [1]


def _padding_attrs(padding, data_format):
    if isinstance(padding, (list, tuple)):
        # Explicit padding: [[0, 0], [top, bottom], [left, right], [0, 0]] (NHWC).
        flat = [int(p) for pair in padding for p in pair]
        if len(flat) != 8:
            raise ValueError("explicit padding must have 4 [before, after] pairs, got %r" %
                             (padding,))
        return {"padding": "EXPLICIT", "explicit_paddings": flat}
    if not isinstance(padding, str):
        raise ValueError("padding must be 'SAME', 'VALID' or a list of pairs, got %r" % (padding,))
    return {"padding": padding.upper()}


def conv2d(input=None, filter=None, strides=None, padding=None, use_cudnn_on_gpu=True,  # noqa: A002
           data_format="NHWC", dilations=None, name=None, filters=None):
    """2-D cross-correlation of `input` [batch, h, w, in] with `filter` [fh, fw, in, out].

    strides / dilations: an int or 1, 2 or 4 ints; padding "SAME", "VALID" or
    explicit [before, after] pairs per dim.
    """
    filter = filters if filter is None else filter  # noqa: A001
    if input is None or filter is None:
        raise ValueError("conv2d needs `input` and `filter` (or `filters`)")
    attrs = {"strides": _spatial_list(strides, "strides", data_format),
             "data_format": data_format, "use_cudnn_on_gpu": use_cudnn_on_gpu}
    attrs.update(_padding_attrs(padding, data_format))
    if dilations is not None:
        attrs["dilations"] = _spatial_list(dilations, "dilations", data_format)
    return apply_op("Conv2D", name, input=input, filter=filter, **attrs)


def conv2d_backprop_input(input_sizes, filter=None, out_backprop=None, strides=None,  # noqa: A002
                          padding=None, use_cudnn_on_gpu=True, data_format="NHWC",
                          dilations=None, name=None, filters=None):
    """The gradient of conv2d with respect to its input, of dims `input_sizes`."""
    filter = filters if filter is None else filter  # noqa: A001
    attrs = {"strides": _spatial_list(strides, "strides", data_format),
             "data_format": data_format, "use_cudnn_on_gpu": use_cudnn_on_gpu}
    attrs.update(_padding_attrs(padding, data_format))
    if dilations is not None:
        attrs["dilations"] = _spatial_list(dilations, "dilations", data_format)
    return apply_op("Conv2DBackpropInput", name, input_sizes=_t(input_sizes, dtype=dtypes.int32),
                    filter=filter, out_backprop=out_backprop, **attrs)


def conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding,  # noqa: A002
                           use_cudnn_on_gpu=True, data_format="NHWC", dilations=None, name=None):
    """The gradient of conv2d with respect to its filter, of dims `filter_sizes`."""
    attrs = {"strides": _spatial_list(strides, "strides", data_format),
             "data_format": data_format, "use_cudnn_on_gpu": use_cudnn_on_gpu}
    attrs.update(_padding_attrs(padding, data_format))
    if dilations is not None:
        attrs["dilations"] = _spatial_list(dilations, "dilations", data_format)
    return apply_op("Conv2DBackpropFilter", name, input=input,
                    filter_sizes=_t(filter_sizes, dtype=dtypes.int32),
                    out_backprop=out_backprop, **attrs)


def conv2d_transpose(value=None, filter=None, output_shape=None, strides=None,  # noqa: A002
                     padding="SAME", data_format="NHWC", name=None, input=None,  # noqa: A002
                     filters=None, dilations=None):
    """The transpose of conv2d (its gradient with respect to the input): `value`
    [batch, h, w, out] and `filter` [fh, fw, in, out] give `output_shape`
    [batch, H, W, in]."""
    value = input if value is None else value
    filter = filters if filter is None else filter  # noqa: A001
    with ops.name_scope(name, "conv2d_transpose", [value, filter, output_shape]) as name:
        value = _t(value, name="value")
        filter = _t(filter, dtype=value.dtype, name="filter")  # noqa: A001
        return conv2d_backprop_input(output_shape, filter, value, strides=strides,
                                     padding=padding, data_format=data_format,
                                     dilations=dilations, name=name)


def depthwise_conv2d_native(input, filter, strides, padding, data_format="NHWC",  # noqa: A002
                            dilations=None, name=None):
    """The DepthwiseConv2dNative op: input channel k convolved with its own filters
    filter[:, :, k, :] ([fh, fw, in, multiplier]), giving output channel
    k * multiplier + q. strides / dilations: 4 ints (or 1 or 2 spatial ones);
    padding "SAME", "VALID" or explicit [before, after] pairs per dim."""
    data_format = data_format or "NHWC"
    attrs = {"strides": _spatial_list(strides, "strides", data_format),
             "data_format": data_format}
    attrs.update(_padding_attrs(padding, data_format))
    if dilations is not None:
        attrs["dilations"] = _spatial_list(dilations, "dilations", data_format)
    return apply_op("DepthwiseConv2dNative", name, input=input, filter=filter, **attrs)


def depthwise_conv2d(input, filter, strides, padding, rate=None, name=None,  # noqa: A002
                     data_format=None, dilations=None):
    """tf.compat.v1.nn.depthwise_conv2d: depthwise_conv2d_native with `rate`
    (or `dilations`: 2 spatial ints) as the op's dilations."""
    data_format = data_format or "NHWC"
    dilations = rate if dilations is None else dilations
    if dilations is not None:
        dilations = [int(d) for d in np.ravel(dilations)]
    with ops.name_scope(name, "depthwise", [input, filter]) as name:
        x = _t(input, name="input")
        w = _t(filter, dtype=x.dtype, name="filter")
        return depthwise_conv2d_native(x, w, strides, padding, data_format=data_format,
                                       dilations=dilations, name=name)


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding,  # noqa: A002
                     rate=None, name=None, data_format=None, dilations=None):
    """depthwise_conv2d followed by a 1x1 conv2d with pointwise_filter
    [1, 1, in * multiplier, out]."""
    with ops.name_scope(name, "separable_conv2d", [input, depthwise_filter,
                                                   pointwise_filter]) as name:
        depthwise = depthwise_conv2d(input, depthwise_filter, strides, padding, rate=rate,
                                     data_format=data_format, dilations=dilations)
        return conv2d(depthwise, _t(pointwise_filter, dtype=depthwise.dtype), 1, "VALID",
                      data_format=data_format or "NHWC", name=name)


def max_pool(value, ksize, strides, padding, data_format="NHWC", name=None,
             input=None):  # noqa: A002
    """The maximum of each ksize window (an int, or 1, 2 or 4 ints), stepping by strides."""
    value = input if value is None else value
    return apply_op("MaxPool", name, input=value,
                    ksize=_spatial_list(ksize, "ksize", data_format),
                    strides=_spatial_list(strides, "strides", data_format),
                    data_format=data_format, **_padding_attrs(padding, data_format))


def avg_pool(value, ksize, strides, padding, data_format="NHWC", name=None,
             input=None):  # noqa: A002
    """The mean of each ksize window over its elements inside the input."""
    value = input if value is None else value
    return apply_op("AvgPool", name, value=value,
                    ksize=_spatial_list(ksize, "ksize", data_format),
                    strides=_spatial_list(strides, "strides", data_format),
                    data_format=data_format, padding=padding.upper())


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    return max_pool(input, ksize, strides, padding, data_format, name)


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    return avg_pool(input, ksize, strides, padding, data_format, name)


def atrous_conv2d(value, filters, rate, padding, name=None):
    """conv2d with the filter dilated by `rate` (stride 1)."""
    return conv2d(value, filters, strides=1, padding=padding, dilations=rate, name=name)


def _expand_1d(x, data_format):
    # [batch, width, channels] -> [batch, 1, width, channels] (NWC; NCW: dim 2).
    return apply_op("ExpandDims", None, input=x,
                    dim=_const(2 if data_format == "NCW" else 1, dtypes.int32))


def _squeeze_1d(x, data_format, name):
    return apply_op("Squeeze", name, input=x, squeeze_dims=[2 if data_format == "NCW" else 1])


def _width_entry(value, what):
    """An int, or [w], or NWC's [1, w, 1], as the width entry w."""
    if value is None:
        return 1
    if isinstance(value, numbers.Integral):
        return int(value)
    value = [int(v) for v in value]
    if len(value) == 1:
        return value[0]
    if len(value) == 3:
        return value[1]
    raise ValueError("%s should be an int or a list of 1 or 3 ints, got %r" % (what, value))


def _check_1d_format(data_format):
    data_format = data_format or "NWC"
    if data_format not in ("NWC", "NHWC"):
        raise ValueError("data_format %r is not supported on weir's CPU kernels (NWC only)" %
                         (data_format,))
    return "NWC"


def conv1d(value=None, filters=None, stride=None, padding=None, use_cudnn_on_gpu=None,
           data_format=None, name=None, input=None, dilations=None):  # noqa: A002
    """1-D convolution of `value` [batch, width, in] with `filters` [fw, in, out],
    as conv2d over a height of 1."""
    value = input if value is None else value
    data_format = _check_1d_format(data_format)
    with ops.name_scope(name, "conv1d", [value, filters]) as name:
        value = _expand_1d(_t(value, name="value"), data_format)
        filters = apply_op("ExpandDims", None, input=_t(filters, name="filters"),
                           dim=_const(0, dtypes.int32))
        stride = _width_entry(stride, "stride")
        dil = _width_entry(dilations, "dilations")
        result = conv2d(value, filters, strides=[1, 1, stride, 1], padding=padding,
                        dilations=[1, 1, dil, 1])
        return _squeeze_1d(result, data_format, name)


def _pool1d(pool, default_name, input, ksize, strides, padding, data_format, name):  # noqa: A002
    """`pool` (max_pool / avg_pool) as a 2-D pool over a height of 1."""
    data_format = _check_1d_format(data_format)
    with ops.name_scope(name, default_name, [input]) as name:
        k = _width_entry(ksize, "ksize")
        s = _width_entry(strides, "strides")
        pooled = pool(_expand_1d(_t(input, name="input"), data_format), [1, 1, k, 1],
                      [1, 1, s, 1], padding)
        return _squeeze_1d(pooled, data_format, name)


def max_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    """max_pool over windows of `ksize` along the width of [batch, width, channels]."""
    return _pool1d(max_pool, "MaxPool1d", input, ksize, strides, padding, data_format, name)


def avg_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    """avg_pool over windows of `ksize` along the width of [batch, width, channels]."""
    return _pool1d(avg_pool, "AvgPool1D", input, ksize, strides, padding, data_format, name)


# --- dropout ---

def _cast_to(tensor, dtype):
    if tensor.dtype.base_dtype == dtype.base_dtype:
        return tensor
    return apply_op("Cast", None, x=tensor, DstT=dtype)


def _noise_shape(x, noise_shape):
    if noise_shape is None:
        if x.shape.is_fully_defined():
            return _const(x.shape.as_list(), dtypes.int32)  # static: shapes infer exactly
        return _shape(x)
    if isinstance(noise_shape, (list, tuple)) and any(d is None for d in noise_shape):
        # TF2's rule: a None entry takes x's (static) dim.
        dims = x.shape.as_list()
        if dims is None or len(dims) != len(noise_shape):
            raise ValueError("noise_shape %r does not match the rank of x %s" %
                             (noise_shape, x.shape))
        noise_shape = [d if d is not None else dims[i] for i, d in enumerate(noise_shape)]
        if any(d is None for d in noise_shape):
            raise ValueError("noise_shape %r has an entry for an unknown dim of x %s" %
                             (noise_shape, x.shape))
    return random_ops._shape_tensor(noise_shape)


def dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    """Each element of x kept with probability keep_prob (= 1 - rate) and scaled by
    1 / keep_prob, else 0; `noise_shape` broadcasts one keep/drop decision over
    dims of size 1. With keep_prob 1 (rate 0) as a Python number, x itself.
    """
    if keep_prob is not None and rate is not None:
        raise ValueError("You cannot specify both 'rate' and 'keep_prob'.")
    if keep_prob is None and rate is None:
        raise ValueError("dropout needs `keep_prob` or `rate`")
    if keep_prob is not None:
        if isinstance(keep_prob, numbers.Real) and not 0 < keep_prob <= 1:
            raise ValueError("keep_prob must be a scalar tensor or a float in the range (0, 1], "
                             "got %g" % keep_prob)
        if isinstance(keep_prob, numbers.Real):
            rate = 1 - keep_prob
        else:
            keep_prob = _t(keep_prob, name="keep_prob")
            rate = None
    elif isinstance(rate, numbers.Real) and not 0 <= rate < 1:
        raise ValueError("rate must be a scalar tensor or a float in the range [0, 1), got %g" %
                         rate)
    with ops.name_scope(name, "dropout", [x]) as name:
        x = _t(x, name="x")
        if not x.dtype.is_floating:
            raise ValueError("x has to be a floating point tensor since it's going to be scaled. "
                             "Got a %s tensor instead." % x.dtype.name)
        if isinstance(rate, numbers.Real) and rate == 0:
            return x
        if rate is None:
            keep = _cast_to(keep_prob, x.dtype)
            rate_tensor = _binary("Sub", _const(1, x.dtype), keep)
        elif isinstance(rate, numbers.Real):
            rate_tensor = _t(rate, dtype=x.dtype, name="rate")
            keep = _const(1 - rate, x.dtype)
        else:
            rate_tensor = _cast_to(_t(rate, name="rate"), x.dtype)
            keep = _binary("Sub", _const(1, x.dtype), rate_tensor)
        random = random_ops.random_uniform(_noise_shape(x, noise_shape), dtype=x.dtype, seed=seed)
        kept = apply_op("Cast", None, x=_binary("GreaterEqual", random, rate_tensor),
                        DstT=x.dtype)
        scaled = _binary("RealDiv", x, keep)
        result = _binary("Mul", scaled, kept, name=name)
        if noise_shape is None:
            result.set_shape(x.shape)
        return result


# --- losses ---

def l2_loss(t, name=None):
    """sum(t ** 2) / 2."""
    return apply_op("L2Loss", name, t=t)


def _flat_logits(logits, rank):
    """`logits` of rank `rank` as [rows, classes] (the op's layout)."""
    if rank == 2:
        return logits
    shape = _shape(logits)
    classes = apply_op("Slice", None, input=shape, begin=_const([rank - 1], dtypes.int32),
                       size=_const([1], dtypes.int32))
    new_shape = apply_op("ConcatV2", None, values=[_const([-1], dtypes.int32), classes],
                         axis=_const(0, dtypes.int32))
    return apply_op("Reshape", None, tensor=logits, shape=new_shape)


def _restore_batch_dims(loss, logits, rank, name):
    if rank == 2:
        return apply_op("Identity", name, input=loss)
    batch_shape = apply_op("Slice", None, input=_shape(logits), begin=_const([0], dtypes.int32),
                           size=_const([rank - 1], dtypes.int32))
    out = apply_op("Reshape", name, tensor=loss, shape=batch_shape)
    static = logits.shape.as_list()
    if static is not None:
        out.set_shape(static[:-1])
    return out


def _softmax_xent(labels, logits, axis, name, stop_labels_gradient):
    with ops.name_scope(name, "softmax_cross_entropy_with_logits", [logits, labels]) as name:
        logits = _t(logits, name="logits")
        labels = _t(labels, name="labels")
        if labels.dtype.base_dtype != logits.dtype.base_dtype:
            labels = apply_op("Cast", None, x=labels, DstT=logits.dtype)
        if stop_labels_gradient:
            labels = apply_op("StopGradient", None, input=labels)
        rank = logits.shape.ndims
        if rank is None:
            # Unknown statically: the labels' rank, else the op's own [batch, classes].
            rank = labels.shape.ndims if labels.shape.ndims is not None else 2
        if rank == 0:
            raise ValueError("logits must have rank >= 1, got a scalar")
        if labels.shape.ndims is not None and labels.shape.ndims != rank:
            raise ValueError("labels %s and logits %s must have the same rank" %
                             (labels.shape, logits.shape))
        axis = -1 if axis is None else axis
        axis = _canonical_axis(axis, rank)
        if axis != rank - 1:
            perm = _move_to_last(rank, axis)
            logits = apply_op("Transpose", None, x=logits, perm=perm)
            labels = apply_op("Transpose", None, x=labels, perm=perm)
        flat = _flat_logits(logits, rank)
        flat_labels = _flat_logits(labels, rank)
        loss = apply_op("SoftmaxCrossEntropyWithLogits", None, features=flat,
                        labels=flat_labels)[0]
        return _restore_batch_dims(loss, logits, rank, name)


def softmax_cross_entropy_with_logits_v2(labels, logits, axis=None, name=None, dim=None):
    """-sum(labels * log_softmax(logits), axis) per example; the gradient flows into
    both labels and logits (TF's v2)."""
    return _softmax_xent(labels, logits, dim if axis is None else axis, name, False)


def softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, dim=-1, name=None,
                                      axis=None):
    """TF1's version: as _v2 but no gradient into labels; keyword arguments only."""
    if _sentinel is not None:
        raise ValueError("Only call `softmax_cross_entropy_with_logits` with named arguments "
                         "(labels=..., logits=..., ...)")
    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided.")
    return _softmax_xent(labels, logits, dim if axis is None else axis, name, True)


def sparse_softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name=None):
    """-log_softmax(logits)[label] per example: labels [d0..dn-1] of int32/int64 class
    indices, logits [d0..dn-1, classes]; a label out of [0, classes) is an error when run."""
    if _sentinel is not None:
        raise ValueError("Only call `sparse_softmax_cross_entropy_with_logits` with named "
                         "arguments (labels=..., logits=..., ...)")
    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided.")
    with ops.name_scope(name, "SparseSoftmaxCrossEntropyWithLogits", [labels, logits]) as name:
        logits = _t(logits, name="logits")
        labels = _t(labels, name="labels")
        if labels.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
            raise ValueError("labels must be int32 or int64, got %s" % labels.dtype.name)
        logits_rank = logits.shape.ndims
        labels_rank = labels.shape.ndims
        if logits_rank is not None and logits_rank == 0:
            raise ValueError("Logits cannot be scalars - received shape %s." % logits.shape)
        if logits_rank is not None and labels_rank is not None and labels_rank != logits_rank - 1:
            raise ValueError("Rank mismatch: Rank of labels (received %s) should equal rank of "
                             "logits minus 1 (received %s)." % (labels_rank, logits_rank))
        if logits_rank is not None:
            rank = logits_rank
        else:
            # Unknown statically: one more than the labels', else the op's own 2.
            rank = labels_rank + 1 if labels_rank is not None else 2
        if rank == 2:
            return apply_op("SparseSoftmaxCrossEntropyWithLogits", name, features=logits,
                            labels=labels)[0]
        flat = _flat_logits(logits, rank)
        flat_labels = apply_op("Reshape", None, tensor=labels, shape=_const([-1], dtypes.int32))
        loss = apply_op("SparseSoftmaxCrossEntropyWithLogits", None, features=flat,
                        labels=flat_labels)[0]
        out = apply_op("Reshape", name, tensor=loss, shape=_shape(labels))
        if labels.shape.as_list() is not None:
            out.set_shape(labels.shape)
        return out


def _check_same_shape(labels, logits):
    if not labels.shape.is_compatible_with(logits.shape):
        raise ValueError("logits and labels must have the same shape (%s vs %s)" %
                         (logits.shape, labels.shape))


def sigmoid_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name=None):
    """Elementwise -z log(sigmoid(x)) - (1 - z) log(1 - sigmoid(x)), as
    max(x, 0) - x z + log(1 + exp(-|x|)) (no overflow)."""
    if _sentinel is not None:
        raise ValueError("Only call `sigmoid_cross_entropy_with_logits` with named arguments "
                         "(labels=..., logits=..., ...)")
    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided.")
    with ops.name_scope(name, "logistic_loss", [logits, labels]) as name:
        logits = _t(logits, name="logits")
        labels = _t(labels, dtype=logits.dtype, name="labels")
        _check_same_shape(labels, logits)
        zeros = apply_op("ZerosLike", None, x=logits)
        positive = _binary("GreaterEqual", logits, zeros)
        # Select, not Maximum/Abs, so the gradient at 0 is sigmoid(0) - z.
        relu_logits = apply_op("Select", None, condition=positive, t=logits, e=zeros)
        neg_abs = apply_op("Select", None, condition=positive, t=_unary("Neg", logits), e=logits)
        linear = _binary("Sub", relu_logits, _binary("Mul", logits, labels))
        return _binary("AddV2", linear, _unary("Log1p", _unary("Exp", neg_abs)), name=name)


def weighted_cross_entropy_with_logits(labels=None, logits=None, pos_weight=None, name=None,
                                       targets=None):
    """sigmoid cross entropy with the positive term weighted by pos_weight:
    (1 - z) x + (1 + (q - 1) z) (log(1 + exp(-|x|)) + max(-x, 0))."""
    labels = targets if labels is None else labels
    if labels is None or logits is None or pos_weight is None:
        raise ValueError("labels (or targets), logits and pos_weight must be provided.")
    with ops.name_scope(name, "logistic_loss", [logits, labels]) as name:
        logits = _t(logits, name="logits")
        labels = _t(labels, dtype=logits.dtype, name="labels")
        _check_same_shape(labels, logits)
        one = _const(1, logits.dtype)
        weight = _binary("Sub", _t(pos_weight, dtype=logits.dtype), one)
        log_weight = _binary("AddV2", one, _binary("Mul", weight, labels))
        softplus_neg_abs = _unary("Log1p", _unary("Exp", _unary("Neg", _unary("Abs", logits))))
        relu_neg = apply_op("Relu", None, features=_unary("Neg", logits))
        right = _binary("Mul", log_weight, _binary("AddV2", softplus_neg_abs, relu_neg))
        left = _binary("Mul", _binary("Sub", one, labels), logits)
        return _binary("AddV2", left, right, name=name)


# --- normalization and statistics ---

def _axes_list(axes, rank=None):
    if isinstance(axes, numbers.Integral):
        axes = [axes]
    axes = [int(a) for a in axes]
    if rank is not None:
        axes = [_canonical_axis(a, rank) for a in axes]
    return axes


def moments(x, axes, shift=None, name=None, keep_dims=None, keepdims=None):
    """(mean, variance) of x over `axes` (the biased variance, mean of squared
    deviations); the reduced dims kept as 1 with keepdims."""
    if keepdims is None:
        keepdims = bool(keep_dims)
    with ops.name_scope(name, "moments", [x, axes]):
        x = _t(x, name="x")
        axes = _axes_list(axes, x.shape.ndims)
        mean = _reduce("Mean", x, axes, True, name="mean")
        deviation = _binary("SquaredDifference", x, apply_op("StopGradient", None, input=mean))
        variance = _reduce("Mean", deviation, axes, True, name="variance")
        if keepdims:
            return mean, variance
        squeeze = {"squeeze_dims": axes}
        return (apply_op("Squeeze", None, input=mean, **squeeze),
                apply_op("Squeeze", None, input=variance, **squeeze))


def weighted_moments(x, axes, frequency_weights, name=None, keep_dims=None, keepdims=None):
    """(mean, variance) of x over `axes`, each element weighted by frequency_weights
    (broadcast against x): sum(w x) / sum(w) and sum(w (x - mean)^2) / sum(w)."""
    if keepdims is None:
        keepdims = bool(keep_dims)
    with ops.name_scope(name, "weighted_moments", [x, frequency_weights, axes]):
        x = _t(x, name="x")
        weights = _t(frequency_weights, dtype=x.dtype, name="frequency_weights")
        axes = _axes_list(axes, x.shape.ndims)
        weighted_sum = _reduce("Sum", _binary("Mul", weights, x), axes, True)
        broadcast = _binary("Mul", weights, apply_op("OnesLike", None, x=x))
        total = _reduce("Sum", broadcast, axes, True)
        mean = _div_no_nan(weighted_sum, total)
        deviation = _binary("SquaredDifference", x, mean)
        variance = _div_no_nan(_reduce("Sum", _binary("Mul", weights, deviation), axes, True),
                               total)
        if keepdims:
            return mean, variance
        return (apply_op("Squeeze", None, input=mean, squeeze_dims=axes),
                apply_op("Squeeze", None, input=variance, squeeze_dims=axes))


def _div_no_nan(x, y):
    # x / y, 0 where y is 0 (TF's div_no_nan; weir has no such op).
    zero = _const(0, y.dtype)
    is_zero = _binary("Equal", y, zero)
    safe = apply_op("SelectV2", None, condition=is_zero, t=_const(1, y.dtype), e=y)
    return apply_op("SelectV2", None, condition=is_zero, t=zero, e=_binary("RealDiv", x, safe))


def normalize_moments(counts, mean_ss, variance_ss, shift, name=None):
    """(mean, variance) from sufficient statistics: counts, sum(x - shift),
    sum((x - shift)^2)."""
    with ops.name_scope(name, "normalize", [counts, mean_ss, variance_ss, shift]):
        counts = _t(counts, name="counts")
        divisor = _unary("Reciprocal", counts)
        shifted_mean = _binary("Mul", _t(mean_ss, dtype=counts.dtype), divisor)
        mean = shifted_mean if shift is None else \
            _binary("AddV2", shifted_mean, _t(shift, dtype=counts.dtype))
        variance = _binary("Sub", _binary("Mul", _t(variance_ss, dtype=counts.dtype), divisor),
                           _unary("Square", shifted_mean))
        return mean, variance


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """(x - mean) / sqrt(variance + variance_epsilon) * scale + offset, broadcast;
    offset and scale may be None."""
    with ops.name_scope(name, "batchnorm", [x, mean, variance, scale, offset]) as name:
        x = _t(x, name="x")
        mean = _t(mean, dtype=x.dtype, name="mean")
        variance = _t(variance, dtype=x.dtype, name="variance")
        inv = _unary("Rsqrt", _binary("AddV2", variance, _const(variance_epsilon, x.dtype)))
        if scale is not None:
            inv = _binary("Mul", inv, _t(scale, dtype=x.dtype, name="scale"))
        shift = _unary("Neg", _binary("Mul", mean, inv))
        if offset is not None:
            shift = _binary("AddV2", _t(offset, dtype=x.dtype, name="offset"), shift)
        return _binary("AddV2", _binary("Mul", x, inv), shift, name=name)


def fused_batch_norm(x, scale, offset=None, mean=None, variance=None, epsilon=0.001,
                     data_format="NHWC", is_training=True, name=None, exponential_avg_factor=1.0):
    """FusedBatchNormV3: (y, batch_mean, batch_variance) in training (the variance
    unbiased, for the running averages), or y normalized by the given mean and
    variance in inference. x is 4-D (NHWC / NCHW) or 5-D."""
    with ops.name_scope(name, "FusedBatchNorm", [x, scale, offset]) as name:
        x = _t(x, name="input")
        scale = _t(scale, name="scale")
        param_dtype = scale.dtype
        offset = _t(offset, dtype=param_dtype) if offset is not None else \
            apply_op("ZerosLike", None, x=scale)
        if is_training and mean is None:
            mean = _const(np.zeros([0]), param_dtype)
            variance = _const(np.zeros([0]), param_dtype)
        elif mean is None or variance is None:
            raise ValueError("fused_batch_norm in inference needs mean and variance")
        else:
            mean = _t(mean, dtype=param_dtype, name="mean")
            variance = _t(variance, dtype=param_dtype, name="variance")
        # The smallest epsilon TF allows (cuDNN's bound); kept for equal results.
        epsilon = max(epsilon, 1.001e-5)
        outputs = apply_op("FusedBatchNormV3", name, x=x, scale=scale, offset=offset, mean=mean,
                           variance=variance, epsilon=epsilon, data_format=data_format,
                           is_training=is_training,
                           exponential_avg_factor=exponential_avg_factor)
        return outputs[0], outputs[1], outputs[2]


def local_response_normalization(input, depth_radius=5, bias=1, alpha=1, beta=0.5,  # noqa: A002
                                 name=None):
    """input / (bias + alpha * sqr_sum) ** beta, sqr_sum the sum of squares over the
    2 * depth_radius + 1 channels around each (4-D NHWC input, channels known).
    Weir has no LRN op: composed of Pad, Slice and Pow."""
    with ops.name_scope(name, "LRN", [input]) as name:
        x = _t(input, name="input")
        if x.shape.ndims != 4 or x.shape.as_list()[-1] is None:
            raise ValueError("local_response_normalization needs a 4-D input with a known "
                             "channel dim, got %s" % (x.shape,))
        channels = x.shape.as_list()[-1]
        r = int(depth_radius)
        padded = apply_op("Pad", None, input=_unary("Square", x),
                          paddings=_const([[0, 0], [0, 0], [0, 0], [r, r]], dtypes.int32))
        window = None
        for i in range(2 * r + 1):
            part = apply_op("Slice", None, input=padded, begin=_const([0, 0, 0, i], dtypes.int32),
                            size=_const([-1, -1, -1, channels], dtypes.int32))
            window = part if window is None else _binary("AddV2", window, part)
        base = _binary("AddV2", _const(bias, x.dtype),
                       _binary("Mul", _const(alpha, x.dtype), window))
        return _binary("RealDiv", x, _binary("Pow", base, _const(beta, x.dtype)), name=name)


lrn = local_response_normalization


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """x / sqrt(max(sum(x ** 2, axis), epsilon))."""
    axis = dim if axis is None else axis
    with ops.name_scope(name, "l2_normalize", [x]) as name:
        x = _t(x, name="x")
        rank = x.shape.ndims
        if axis is None:
            axes = list(range(_rank(x)))
        else:
            axes = _axes_list(axis, rank)
        square_sum = _reduce("Sum", _unary("Square", x), axes, True)
        inv_norm = _unary("Rsqrt", _binary("Maximum", square_sum, _const(epsilon, x.dtype)))
        return _binary("Mul", x, inv_norm, name=name)


def zero_fraction(value, name=None):
    """The fraction of zeros in `value`, as a float32 scalar."""
    with ops.name_scope(name, "zero_fraction", [value]) as name:
        value = _t(value, name="value")
        zeros = apply_op("Cast", None, x=_binary("Equal", value, _const(0, value.dtype)),
                         DstT=dtypes.float32)
        return _reduce("Mean", zeros, list(range(_rank(value))), False, name=name)


# --- embeddings and classification metrics ---

def embedding_lookup(params, ids, partition_strategy="mod", name=None, validate_indices=True,
                     max_norm=None):
    """The rows `ids` of `params`. A list of several tensors is a sharded table,
    row i held by shard i % n ("mod") or by contiguous blocks ("div")."""
    if isinstance(params, (list, tuple)):
        params = list(params)
        if not params:
            raise ValueError("Need at least one param")
    else:
        params = [params]
    with ops.name_scope(name, "embedding_lookup", params + [ids]) as name:
        ids = _t(ids, name="ids")
        if ids.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
            raise ValueError("ids must be int32 or int64, got %s" % ids.dtype.name)
        if len(params) == 1 and hasattr(params[0], "sparse_read"):
            # A Variable: ResourceGather (TF's sparse_read), whose gradient
            # is an IndexedSlices.
            result = params[0].sparse_read(ids, name=None if max_norm else name)
        elif len(params) == 1:
            result = apply_op("GatherV2", None if max_norm else name, params=params[0],
                              indices=ids, axis=_const(0, dtypes.int32))
        else:
            result = _sharded_lookup([p if hasattr(p, "sparse_read") else _t(p) for p in params],
                                     ids, partition_strategy,
                                     None if max_norm else name)
        if max_norm is None:
            return result
        return _clip_rows(result, ids, max_norm, name)


def _sharded_lookup(params, ids, strategy, name):
    n = len(params)
    flat_ids = apply_op("Reshape", None, tensor=ids, shape=_const([-1], dtypes.int32))
    idt = flat_ids.dtype
    if strategy == "mod":
        shard = _binary("FloorMod", flat_ids, _const(n, idt))
        local = _binary("FloorDiv", flat_ids, _const(n, idt))
    elif strategy == "div":
        # Rows split in blocks: the first (rows % n) shards hold one extra row.
        sizes = [p.shape.as_list()[0] if p.shape.ndims else None for p in params]
        if any(s is None for s in sizes):
            raise ValueError("the 'div' strategy needs each shard's first dim known")
        total = sum(sizes)
        per, extra = divmod(total, n)
        threshold = _const((per + 1) * extra, idt)
        big = _binary("FloorDiv", flat_ids, _const(per + 1, idt))
        small = _binary("AddV2", _binary("FloorDiv", _binary("Sub", flat_ids, threshold),
                                         _const(max(per, 1), idt)), _const(extra, idt))
        in_big = _binary("Less", flat_ids, threshold)
        shard = apply_op("Select", None, condition=in_big, t=big, e=small)
        start = apply_op("Select", None, condition=in_big,
                         t=_binary("Mul", shard, _const(per + 1, idt)),
                         e=_binary("AddV2", _binary("Mul", shard, _const(per, idt)),
                                   _const(extra, idt)))
        local = _binary("Sub", flat_ids, start)
    else:
        raise ValueError("Unrecognized partition strategy: " + strategy)
    shard = apply_op("Cast", None, x=shard, DstT=dtypes.int32)
    positions = apply_op("Range", None, start=_const(0, dtypes.int32),
                         limit=apply_op("Size", None, input=flat_ids, out_type=dtypes.int32),
                         delta=_const(1, dtypes.int32))
    local_parts = apply_op("DynamicPartition", None, data=local, partitions=shard,
                           num_partitions=n)
    position_parts = apply_op("DynamicPartition", None, data=positions, partitions=shard,
                              num_partitions=n)
    rows = [p.sparse_read(local_parts[i]) if hasattr(p, "sparse_read") else
            apply_op("GatherV2", None, params=p, indices=local_parts[i],
                     axis=_const(0, dtypes.int32)) for i, p in enumerate(params)]
    stitched = apply_op("DynamicStitch", None, indices=list(position_parts), data=rows)
    first = params[0].value() if hasattr(params[0], "sparse_read") else params[0]
    row_shape = apply_op("Slice", None, input=_shape(first), begin=_const([1], dtypes.int32),
                         size=_const([-1], dtypes.int32))
    out_shape = apply_op("ConcatV2", None, values=[_shape(ids), row_shape],
                         axis=_const(0, dtypes.int32))
    return apply_op("Reshape", name, tensor=stitched, shape=out_shape)


def _clip_rows(rows, ids, max_norm, name):
    # Each looked-up row scaled down to L2 norm max_norm where it is longer.
    rank = _rank(rows)
    ids_rank = _rank(ids)
    axes = list(range(ids_rank, rank))
    norm2 = _reduce("Sum", _unary("Square", rows), axes, True)
    limit = _const(float(max_norm) ** 2, rows.dtype)
    factor = _unary("Rsqrt", _binary("RealDiv", _binary("Maximum", norm2, limit), limit))
    return _binary("Mul", rows, factor, name=name)


def top_k(input, k=1, sorted=True, name=None):  # noqa: A002
    """(values, indices) of the k largest entries along the last axis, largest
    first, equal values in index order (k a Python int or an int32 scalar
    tensor); the values' gradient goes to the picked entries."""
    with ops.name_scope(name, "TopKV2", [input]) as name:
        x = _t(input, name="input")
        if not isinstance(k, ops.Tensor):
            k = ops.convert_to_tensor(k, dtype=dtypes.int32, name="k")
        values, indices = apply_op("TopKV2", name, input=x, k=k, sorted=bool(sorted))
        return TopKV2(values, indices)


# TF's result type: a namedtuple (values, indices).
TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])


def in_top_k(predictions, targets, k, name=None):
    """Per row of predictions [batch, classes]: whether targets[i] is among the k
    largest (ties count as in)."""
    with ops.name_scope(name, "in_top_k", [predictions, targets]) as name:
        targets = _t(targets, name="targets")
        return apply_op("InTopKV2", name, predictions=_t(predictions, dtype=dtypes.float32),
                        targets=targets, k=_t(k, dtype=targets.dtype, name="k"))
