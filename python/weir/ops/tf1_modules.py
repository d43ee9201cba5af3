"""tf1api: the TF1 names of tf.math, tf.nn, tf.losses, tf.train,
tf.debugging and tf.test that compose of ops weir has. Each
module's __init__ imports its names from here (one line each). Semantics
follow TF 2.21's documentation; python/tests/test_tf1_api_extras.py checks
them against TensorFlow."""
import math as _math

import numpy as _np

from weir.framework import dtypes
from weir.framework import ops


def _wr():
    import weir
    return weir


# --- tf.math -------------------------------------------------------------
def multiply_no_nan(x, y, name=None):
    """x * y, but 0 where y is 0 even when x is NaN or inf."""
    wr = _wr()
    with ops.name_scope(name, "multiply_no_nan"):
        x = ops.convert_to_tensor(x, name="x")
        y = ops.convert_to_tensor(y, name="y", dtype=x.dtype)
        if x.dtype.base_dtype != y.dtype.base_dtype:
            raise TypeError("x and y must have the same dtype, got %s != %s"
                            % (x.dtype.name, y.dtype.name))
        prod = x * y
        return wr.where(wr.equal(wr.broadcast_to(y, wr.shape(prod)), 0),
                        wr.zeros_like(prod), prod)


def reciprocal_no_nan(x, name=None):
    """1 / x, and 0 where x is 0."""
    wr = _wr()
    with ops.name_scope(name, "reciprocal_no_nan"):
        x = ops.convert_to_tensor(x, name="x")
        return wr.div_no_nan(wr.ones_like(x), x)


def polyval(coeffs, x, name=None):
    """coeffs[0] * x**(n-1) + ... + coeffs[n-1] (Horner's rule); 0 for no
    coefficients."""
    wr = _wr()
    if not isinstance(coeffs, (list, tuple)):
        raise ValueError("Argument coeffs must be list type found %s." % type(coeffs))
    with ops.name_scope(name, "polyval"):
        x = ops.convert_to_tensor(x, name="x")
        if not coeffs:
            return wr.zeros_like(x)
        coeffs = [ops.convert_to_tensor(c, dtype=x.dtype) for c in coeffs]
        p = coeffs[0]
        for c in coeffs[1:]:
            p = c + p * x
        return p


def zero_fraction(value, name=None):
    """The fraction of zeros in `value` (float32)."""
    wr = _wr()
    with ops.name_scope(name, "zero_fraction"):
        value = ops.convert_to_tensor(value, name="value")
        return wr.reduce_mean(wr.cast(wr.equal(value, wr.zeros_like(value)), dtypes.float32))


def _segment_parts(data, segment_ids, what):
    wr = _wr()
    data = ops.convert_to_tensor(data, name="data")
    segment_ids = ops.convert_to_tensor(segment_ids, name="segment_ids")
    if segment_ids.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError("%s: segment_ids must be int32 or int64, got %s"
                        % (what, segment_ids.dtype.name))
    if segment_ids.shape.ndims is not None and segment_ids.shape.ndims != 1:
        raise ValueError("%s: segment_ids should be a vector, got shape %s"
                         % (what, segment_ids.shape))
    if data.shape.ndims == 0:
        raise ValueError("%s: data must have rank >= 1, got a scalar" % what)
    if (data.shape.ndims is not None and segment_ids.shape.ndims is not None
            and not data.shape[:1].is_compatible_with(segment_ids.shape)):
        raise ValueError("%s: segment_ids should be the same size as dimension 0 of data: "
                         "segment_ids %s, data %s" % (what, segment_ids.shape, data.shape))
    checks = [
        wr.debugging.assert_non_negative(segment_ids,
                                         message="%s: segment ids must be >= 0" % what),
        wr.debugging.Assert(_monotone_ids(segment_ids),
                            ["%s: segment ids are not increasing" % what]),
        wr.debugging.assert_equal(wr.size(segment_ids), wr.shape(data)[0],
                                  message="%s: segment_ids should be the same size as "
                                  "dimension 0 of data" % what),
    ]
    with ops.control_dependencies(checks):
        segment_ids = wr.identity(segment_ids)
    # The ids are sorted: the last (the largest) + 1 segments; none when empty.
    num = wr.reduce_max(wr.concat([segment_ids, wr.constant([-1], segment_ids.dtype)], 0)) + 1
    return data, segment_ids, wr.cast(num, segment_ids.dtype)


def _monotone_ids(ids):
    wr = _wr()
    return wr.reduce_all(wr.less_equal(ids[:-1], ids[1:]))


def _segment_counts(data, segment_ids, num_segments):
    """The count of each segment, shaped to broadcast against the result."""
    wr = _wr()
    ones = wr.ones(wr.shape(segment_ids), data.dtype)
    counts = wr.unsorted_segment_sum(ones, segment_ids, num_segments)
    rank = wr.rank(data)
    shape = wr.concat([wr.reshape(num_segments, [1]),
                       wr.ones(wr.reshape(rank - 1, [1]), dtypes.int32)], 0)
    return wr.reshape(counts, wr.cast(shape, dtypes.int32))


def _sorted_segment(kind):
    def fn(data, segment_ids, name=None):
        wr = _wr()
        with ops.name_scope(name, "Segment" + kind.capitalize()):
            data, ids, num = _segment_parts(data, segment_ids, "segment_" + kind)
            if kind == "max":
                out = wr.unsorted_segment_max(data, ids, num)
            elif kind == "min":
                out = wr.unsorted_segment_min(data, ids, num)
            elif kind == "prod":
                return wr.unsorted_segment_prod(data, ids, num)
            else:
                total = wr.unsorted_segment_sum(data, ids, num)
                return total / wr.maximum(_segment_counts(data, ids, num), 1)
            counts = _segment_counts(data, ids, num)
            return wr.where(wr.broadcast_to(wr.greater(counts, 0), wr.shape(out)), out,
                            wr.zeros_like(out))
    fn.__name__ = "segment_" + kind
    fn.__doc__ = ("The %s of each segment of data along axis 0 (segment_ids sorted, "
                  ">= 0); an empty segment gives %s." % (kind, 1 if kind == "prod" else 0))
    return fn


segment_max = _sorted_segment("max")
segment_min = _sorted_segment("min")
segment_mean = _sorted_segment("mean")
segment_prod = _sorted_segment("prod")


def _unsorted_scaled(data, segment_ids, num_segments, name, default, sqrt):
    wr = _wr()
    with ops.name_scope(name, default):
        data = ops.convert_to_tensor(data, name="data")
        if not (data.dtype.is_floating or data.dtype.is_complex):
            raise TypeError("%s: data must be floating point, got %s"
                            % (default, data.dtype.name))
        segment_ids = ops.convert_to_tensor(segment_ids, name="segment_ids")
        total = wr.unsorted_segment_sum(data, segment_ids, num_segments)
        ids_flat = wr.reshape(segment_ids, [-1])
        ones = wr.ones(wr.shape(ids_flat), data.dtype)
        counts = wr.unsorted_segment_sum(ones, ids_flat, num_segments)
        extra = wr.rank(total) - 1
        counts = wr.reshape(counts, wr.concat(
            [wr.shape(counts), wr.ones(wr.reshape(extra, [1]), dtypes.int32)], 0))
        counts = wr.maximum(counts, 1)
        return total / (wr.sqrt(counts) if sqrt else counts)


def unsorted_segment_mean(data, segment_ids, num_segments, name=None):
    """The mean of each segment (0 for an empty one)."""
    return _unsorted_scaled(data, segment_ids, num_segments, name, "UnsortedSegmentMean", False)


def unsorted_segment_sqrt_n(data, segment_ids, num_segments, name=None):
    """The sum of each segment divided by sqrt(its size) (0 for an empty one)."""
    return _unsorted_scaled(data, segment_ids, num_segments, name, "UnsortedSegmentSqrtN", True)


# --- tf.nn ---------------------------------------------------------------
def log_poisson_loss(targets, log_input, compute_full_loss=False, name=None):
    """exp(log_input) - log_input * targets, plus Stirling's approximation
    of log(targets!) for targets > 1 when compute_full_loss."""
    wr = _wr()
    with ops.name_scope(name, "log_poisson_loss"):
        log_input = ops.convert_to_tensor(log_input, name="log_input")
        targets = ops.convert_to_tensor(targets, name="targets", dtype=log_input.dtype)
        if not log_input.shape.is_compatible_with(targets.shape):
            raise ValueError("log_input and targets must have the same shape (%s vs %s)"
                             % (log_input.shape, targets.shape))
        result = wr.exp(log_input) - log_input * targets
        if compute_full_loss:
            point_five = wr.constant(0.5, dtype=targets.dtype)
            two_pi = wr.constant(2 * _math.pi, dtype=targets.dtype)
            stirling = (targets * wr.log(targets) - targets
                        + point_five * wr.log(two_pi * targets))
            zeros = wr.zeros_like(targets)
            small = wr.logical_and(wr.greater_equal(targets, zeros),
                                   wr.less_equal(targets, wr.ones_like(targets)))
            result += wr.where(small, zeros, stirling)
        return result


def sufficient_statistics(x, axes, shift=None, keep_dims=None, name=None, keepdims=None):
    """(count, sum(x - shift), sum((x - shift)^2), shift) over `axes`."""
    wr = _wr()
    if keepdims is None:
        keepdims = bool(keep_dims)
    with ops.name_scope(name, "sufficient_statistics"):
        x = ops.convert_to_tensor(x, name="x")
        axes = list(axes)
        ndims = x.shape.ndims
        if ndims is not None:
            for a in axes:
                if not -ndims <= a < ndims:
                    raise ValueError("sufficient_statistics: axis %d out of range for rank %d"
                                     % (a, ndims))
        if x.shape.is_fully_defined():
            count = 1
            for a in axes:
                count *= x.shape.as_list()[a]
            counts = wr.constant(count, dtype=x.dtype, name="count")
        else:
            counts = wr.cast(wr.reduce_prod(wr.gather(wr.shape(x), axes)), x.dtype,
                             name="count")
        if shift is not None:
            shift = ops.convert_to_tensor(shift, name="shift", dtype=x.dtype)
            m_ss = x - shift
            v_ss = wr.squared_difference(x, shift)
        else:
            m_ss = x
            v_ss = wr.square(x)
        m_ss = wr.reduce_sum(m_ss, axes, keepdims=keepdims, name="mean_ss")
        v_ss = wr.reduce_sum(v_ss, axes, keepdims=keepdims, name="var_ss")
        return counts, m_ss, v_ss, shift


def batch_norm_with_global_normalization(t=None, m=None, v=None, beta=None, gamma=None,
                                         variance_epsilon=None, scale_after_normalization=None,
                                         name=None, input=None, mean=None,  # noqa: A002
                                         variance=None):
    """TF1's deprecated batch norm: batch_normalization(t, m, v, beta,
    gamma if scale_after_normalization else None, variance_epsilon)."""
    wr = _wr()
    t = input if t is None else t
    m = mean if m is None else m
    v = variance if v is None else v
    if variance_epsilon is None or scale_after_normalization is None:
        raise ValueError("batch_norm_with_global_normalization: variance_epsilon and "
                         "scale_after_normalization are required")
    return wr.nn.batch_normalization(t, m, v, beta, gamma if scale_after_normalization else None,
                                     variance_epsilon, name=name)


def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None):
    """sum(per_example_loss * sample_weight) / global_batch_size (the batch
    size when None; one replica)."""
    wr = _wr()
    per_example_loss = ops.convert_to_tensor(per_example_loss)
    if not per_example_loss.dtype.is_floating:
        raise TypeError("compute_average_loss: per_example_loss must be floating point, got %s"
                        % per_example_loss.dtype.name)
    with ops.name_scope(None, "average_loss"):
        if sample_weight is not None:
            per_example_loss = per_example_loss * ops.convert_to_tensor(
                sample_weight, dtype=per_example_loss.dtype)
        if global_batch_size is None:
            if per_example_loss.shape.ndims == 0:
                raise ValueError("Invalid value passed for `per_example_loss`. Expected a tensor "
                                 "with at least rank 1.")
            global_batch_size = wr.shape(per_example_loss)[0]
        elif isinstance(global_batch_size, int) and global_batch_size <= 0:
            raise ValueError("global_batch_size must be positive. Got: %d" % global_batch_size)
        batch = wr.cast(global_batch_size, per_example_loss.dtype)
        return wr.div_no_nan(wr.reduce_sum(per_example_loss), batch)


def scale_regularization_loss(regularization_loss):
    """The regularization loss summed (a list is added up) and divided by the
    number of replicas (one in weir)."""
    wr = _wr()
    if isinstance(regularization_loss, (list, tuple)):
        regularization_loss = wr.add_n(list(regularization_loss))
    return wr.reduce_sum(regularization_loss)


def _spatial_rank(filters_or_input, extra):
    shape = filters_or_input.shape
    if shape.ndims is None:
        raise ValueError("the rank of %s must be known" % filters_or_input.name)
    return shape.ndims - extra


def convolution(input, filter=None, padding=None, strides=None,  # noqa: A002
                dilation_rate=None, name=None, data_format=None, filters=None, dilations=None):
    """N-D convolution for N = 1, 2 or 3 (conv1d / conv2d / conv3d)."""
    wr = _wr()
    filters = filter if filters is None else filters
    dilations = dilation_rate if dilations is None else dilations
    input = ops.convert_to_tensor(input, name="input")
    filters = ops.convert_to_tensor(filters, name="filters")
    n = _spatial_rank(filters, 2)
    if padding not in ("SAME", "VALID"):
        raise ValueError("padding must be 'SAME' or 'VALID', got %r" % (padding,))

    def full(v, default):
        if v is None:
            return [1] * n
        v = [v] * n if isinstance(v, int) else list(v)
        if len(v) != n:
            raise ValueError("%s must have %d elements, got %r" % (default, n, v))
        return v

    strides_n = full(strides, "strides")
    dil_n = full(dilations, "dilation_rate")
    if n == 2:
        fmt = data_format or "NHWC"
        s4 = [1] + strides_n + [1] if fmt == "NHWC" else [1, 1] + strides_n
        d4 = [1] + dil_n + [1] if fmt == "NHWC" else [1, 1] + dil_n
        return wr.nn.conv2d(input, filters, strides=s4, padding=padding, data_format=fmt,
                            dilations=d4, name=name)
    if n == 1:
        if dil_n != [1]:
            fmt = data_format or "NWC"
            x4 = wr.expand_dims(input, 1 if fmt == "NWC" else 2)
            out = convolution(x4, wr.expand_dims(filters, 0), padding, [1] + strides_n,
                              [1] + dil_n, name, "NHWC" if fmt == "NWC" else "NCHW")
            return wr.squeeze(out, [1 if fmt == "NWC" else 2])
        return wr.nn.conv1d(input, filters, stride=strides_n[0], padding=padding,
                            data_format=data_format or "NWC", name=name)
    if n == 3:
        from weir.ops import nn3d_ops
        return nn3d_ops.conv3d(input, filters, strides=strides_n, padding=padding,
                               data_format=data_format or "NDHWC", dilations=dil_n, name=name)
    raise ValueError("convolution: filters must have rank 3, 4 or 5, got shape %s"
                     % filters.shape)


def conv_transpose(input, filters, output_shape, strides, padding="SAME",  # noqa: A002
                   data_format=None, dilations=None, name=None):
    """The transpose of convolution for N = 2 or 3 (conv2d_transpose / conv3d_transpose)."""
    wr = _wr()
    filters = ops.convert_to_tensor(filters, name="filters")
    n = _spatial_rank(filters, 2)
    if n == 2:
        fmt = data_format or "NHWC"
        s = [strides] * 2 if isinstance(strides, int) else list(strides)
        if len(s) == 2:
            s = [1] + s + [1] if fmt == "NHWC" else [1, 1] + s
        d = dilations
        if isinstance(d, int):
            d = [1, d, d, 1] if fmt == "NHWC" else [1, 1, d, d]
        return wr.nn.conv2d_transpose(input, filters, output_shape, s, padding=padding,
                                      data_format=fmt, dilations=d, name=name)
    if n == 3:
        from weir.ops import nn3d_ops
        return nn3d_ops.conv3d_transpose(input, filters, output_shape, strides, padding=padding,
                                         data_format=data_format or "NDHWC",
                                         dilations=dilations, name=name)
    raise NotImplementedError("conv_transpose: 1-D is not supported by weir (filters shape %s)"
                              % filters.shape)


def _pool2(kind, input, ksize, strides, padding, data_format, name):  # noqa: A002
    wr = _wr()
    input = ops.convert_to_tensor(input, name="input")
    n = _spatial_rank(input, 2)

    def full(v, what):
        v = [v] * n if isinstance(v, int) else list(v)
        if len(v) == 1:
            v = v * n
        if len(v) == n:
            return v
        if len(v) == n + 2:
            return None if v is None else v
        raise ValueError("%s should be of length 1, %d or %d, got %r" % (what, n, n + 2, v))

    if n not in (1, 2, 3):
        raise ValueError("%s_pool: input must have rank 3, 4 or 5, got shape %s"
                         % (kind, input.shape))
    k = full(ksize, "ksize")
    s = full(strides, "strides")
    if n == 3:
        from weir.ops import nn3d_ops
        fn = nn3d_ops.max_pool3d if kind == "max" else nn3d_ops.avg_pool3d
        return fn(input, k, s, padding, data_format=data_format or "NDHWC", name=name)
    if n == 2:
        fmt = data_format or "NHWC"
        k4 = k if len(k) == 4 else ([1] + k + [1] if fmt == "NHWC" else [1, 1] + k)
        s4 = s if len(s) == 4 else ([1] + s + [1] if fmt == "NHWC" else [1, 1] + s)
        fn = wr.nn.max_pool if kind == "max" else wr.nn.avg_pool
        return fn(input, k4, s4, padding, data_format=fmt, name=name)
    fmt = data_format or "NWC"
    fn = wr.nn.max_pool1d if kind == "max" else wr.nn.avg_pool1d
    return fn(input, k[-2] if len(k) == 3 else k[0], s[-2] if len(s) == 3 else s[0], padding,
              data_format=fmt, name=name)


def max_pool_v2(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """Max pooling over 1 or 2 spatial dims (by the input's rank)."""
    return _pool2("max", input, ksize, strides, padding, data_format, name)


def avg_pool_v2(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """Average pooling over 1 or 2 spatial dims (by the input's rank)."""
    return _pool2("avg", input, ksize, strides, padding, data_format, name)


def pool(input, window_shape, pooling_type, padding, dilation_rate=None,  # noqa: A002
         strides=None, name=None, data_format=None, dilations=None):
    """tf.nn.pool for 1 or 2 spatial dims without dilation ("MAX"/"AVG")."""
    dil = dilations if dilation_rate is None else dilation_rate
    if dil is not None and any(d != 1 for d in ([dil] if isinstance(dil, int) else dil)):
        raise NotImplementedError("pool: dilation_rate other than 1 is not supported by weir")
    if pooling_type not in ("MAX", "AVG"):
        raise ValueError("Invalid pooling_type: %r" % (pooling_type,))
    window_shape = list(window_shape)
    strides = window_shape and ([1] * len(window_shape) if strides is None else list(strides))
    return _pool2("max" if pooling_type == "MAX" else "avg", input, window_shape, strides,
                  padding, data_format, name)


# --- tf.losses -----------------------------------------------------------
def cosine_distance(labels, predictions, axis=None, weights=1.0, scope=None,
                    loss_collection=ops.GraphKeys.LOSSES,
                    reduction="weighted_sum_by_nonzero_weights", dim=None):
    """1 - sum(labels * predictions, axis) (both unit-normalized), weighted
    and reduced as compute_weighted_loss does."""
    wr = _wr()
    if dim is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'dim'")
        axis = dim
    if axis is None:
        raise ValueError("You must specify 'axis'.")
    if labels is None:
        raise ValueError("Argument `labels` must not be None.")
    if predictions is None:
        raise ValueError("Argument `predictions` must not be None.")
    with ops.name_scope(scope, "cosine_distance_loss"):
        predictions = wr.cast(ops.convert_to_tensor(predictions), dtypes.float32)
        labels = wr.cast(ops.convert_to_tensor(labels), dtypes.float32)
        if not predictions.shape.is_compatible_with(labels.shape):
            raise ValueError("Shapes %s and %s are incompatible" % (predictions.shape,
                                                                     labels.shape))
        radial = wr.multiply(predictions, labels)
        losses = 1 - wr.reduce_sum(radial, axis=(axis,), keepdims=True)
        return wr.losses.compute_weighted_loss(losses, weights, scope, loss_collection,
                                               reduction=reduction)


def mean_pairwise_squared_error(labels, predictions, weights=1.0, scope=None,
                                loss_collection=ops.GraphKeys.LOSSES):
    """The weighted mean over the batch of the mean squared difference of
    all pairs of (prediction - label) differences within each example."""
    wr = _wr()
    if labels is None:
        raise ValueError("Argument `labels` must not be None.")
    if predictions is None:
        raise ValueError("Argument `predictions` must not be None.")
    with ops.name_scope(scope, "mean_pairwise_squared_error"):
        predictions = wr.cast(ops.convert_to_tensor(predictions), dtypes.float32)
        labels = wr.cast(ops.convert_to_tensor(labels), dtypes.float32)
        if not predictions.shape.is_compatible_with(labels.shape):
            raise ValueError("Shapes %s and %s are incompatible" % (predictions.shape,
                                                                     labels.shape))
        weights = wr.cast(ops.convert_to_tensor(weights), dtypes.float32)
        diffs = predictions - labels
        ndims = diffs.shape.ndims
        if ndims is None or ndims < 1:
            raise ValueError("mean_pairwise_squared_error: predictions need a known rank >= 1")
        axes = list(range(1, ndims))
        present = wr.where(wr.equal(weights, 0.0), wr.zeros_like(weights),
                           wr.ones_like(weights))
        present = present * wr.ones_like(diffs)
        num_present = wr.reduce_sum(present, axis=axes, keepdims=True) if axes else present
        sum_sq = wr.reduce_sum(wr.square(diffs), axis=axes, keepdims=True) if axes \
            else wr.square(diffs)
        term1 = 2.0 * wr.div_no_nan(sum_sq, num_present - 1)
        sum_diff = wr.reduce_sum(diffs, axis=axes, keepdims=True) if axes else diffs
        term2 = 2.0 * wr.div_no_nan(wr.square(sum_diff),
                                    wr.multiply(num_present, num_present - 1))
        weighted = wr.multiply(term1 - term2, weights)
        loss = wr.reduce_sum(weighted)
        mean_loss = wr.where(wr.reduce_sum(num_present) > 0, loss, wr.zeros_like(loss),
                             name="value")
        wr.losses.add_loss(mean_loss, loss_collection)
        return mean_loss


# --- tf.train ------------------------------------------------------------
def _decay_inputs(learning_rate, global_step):
    wr = _wr()
    if global_step is None:
        raise ValueError("global_step is required for the decay functions")
    lr = ops.convert_to_tensor(learning_rate, name="learning_rate")
    step = wr.cast(global_step, lr.dtype)
    return wr, lr, step


def cosine_decay_restarts(learning_rate, global_step, first_decay_steps, t_mul=2.0, m_mul=1.0,
                          alpha=0.0, name=None):
    """Cosine decay with warm restarts (SGDR): period i lasts
    first_decay_steps * t_mul**i and starts at m_mul**i of the rate."""
    with ops.name_scope(name, "SGDRDecay"):
        wr, lr, step = _decay_inputs(learning_rate, global_step)
        dtype = lr.dtype
        first = wr.cast(first_decay_steps, dtype)
        alpha = wr.cast(alpha, dtype)
        t_mul_t = wr.cast(t_mul, dtype)
        m_mul_t = wr.cast(m_mul, dtype)
        frac = step / first
        if t_mul == 1.0:
            i_restart = wr.floor(frac)
            frac = frac - i_restart
        else:
            i_restart = wr.floor(wr.log(1.0 - frac * (1.0 - t_mul_t)) / wr.log(t_mul_t))
            sum_r = (1.0 - wr.pow(t_mul_t, i_restart)) / (1.0 - t_mul_t)
            frac = (frac - sum_r) / wr.pow(t_mul_t, i_restart)
        m_fac = wr.pow(m_mul_t, i_restart)
        cosine = 0.5 * m_fac * (1.0 + wr.cos(_math.pi * frac))
        return wr.multiply(lr, (1 - alpha) * cosine + alpha)


def linear_cosine_decay(learning_rate, global_step, decay_steps, num_periods=0.5, alpha=0.0,
                        beta=0.001, name=None):
    """lr * ((alpha + linear) * cosine + beta) with linear = (decay_steps -
    step) / decay_steps and cosine = 0.5 (1 + cos(2 pi num_periods step /
    decay_steps)), step capped at decay_steps."""
    with ops.name_scope(name, "LinearCosineDecay"):
        wr, lr, step = _decay_inputs(learning_rate, global_step)
        dtype = lr.dtype
        decay_steps = wr.cast(decay_steps, dtype)
        step = wr.minimum(step, decay_steps)
        linear = (decay_steps - step) / decay_steps
        fraction = 2.0 * wr.cast(num_periods, dtype) * step / decay_steps
        cosine = 0.5 * (1.0 + wr.cos(_math.pi * fraction))
        return wr.multiply(lr, (wr.cast(alpha, dtype) + linear) * cosine
                           + wr.cast(beta, dtype))


def noisy_linear_cosine_decay(learning_rate, global_step, decay_steps, initial_variance=1.0,
                              variance_decay=0.55, num_periods=0.5, alpha=0.0, beta=0.001,
                              name=None):
    """linear_cosine_decay with Gaussian noise of variance initial_variance /
    (1 + step)**variance_decay added to the linear term."""
    with ops.name_scope(name, "NoisyLinearCosineDecay"):
        wr, lr, step = _decay_inputs(learning_rate, global_step)
        dtype = lr.dtype
        decay_steps = wr.cast(decay_steps, dtype)
        step = wr.minimum(step, decay_steps)
        linear = (decay_steps - step) / decay_steps
        variance = wr.cast(initial_variance, dtype) / wr.pow(
            1.0 + step, wr.cast(variance_decay, dtype))
        std = wr.sqrt(variance)
        noisy = wr.cast(alpha, dtype) + linear + wr.random_normal([], stddev=std, dtype=dtype)
        fraction = 2.0 * wr.cast(num_periods, dtype) * step / decay_steps
        cosine = 0.5 * (1.0 + wr.cos(_math.pi * fraction))
        return wr.multiply(lr, noisy * cosine + wr.cast(beta, dtype))


def piecewise_constant_decay(x, boundaries, values, name=None):
    """tf.train.piecewise_constant_decay: the alias of piecewise_constant."""
    return _wr().train.piecewise_constant(x, boundaries, values, name=name)


# --- tf.debugging ----------------------------------------------------------
def assert_near(x, y, rtol=None, atol=None, data=None, summarize=None, message=None, name=None):
    """An Assert that |x - y| <= atol + rtol * |y| everywhere (default
    tolerances 10 * eps of the dtype)."""
    wr = _wr()
    with ops.name_scope(name, "assert_near"):
        x = ops.convert_to_tensor(x, name="x")
        y = ops.convert_to_tensor(y, name="y", dtype=x.dtype)
        if not (x.dtype.is_floating or x.dtype.is_complex):
            raise TypeError("assert_near: x must be floating point, got %s" % x.dtype.name)
        eps = _np.finfo(x.dtype.as_numpy_dtype).eps
        rtol = ops.convert_to_tensor(10 * eps if rtol is None else rtol, dtype=x.dtype)
        atol = ops.convert_to_tensor(10 * eps if atol is None else atol, dtype=x.dtype)
        tol = atol + rtol * wr.abs(y)
        diff = wr.abs(x - y)
        condition = wr.reduce_all(wr.less_equal(diff, tol))
        if data is None:
            data = [message or "", "x and y not equal to tolerance rtol = ", rtol, ", atol = ",
                    atol, "x (%s) = " % x.name, x, "y (%s) = " % y.name, y]
        return wr.debugging.Assert(condition, data, summarize=summarize)


def assert_rank_in(x, ranks, data=None, summarize=None, message=None, name=None):
    """A static ValueError, or an Assert at run time, unless rank(x) is one of
    `ranks`."""
    wr = _wr()
    with ops.name_scope(name, "assert_rank_in"):
        x = ops.convert_to_tensor(x, name="x")
        ranks = [int(r) for r in ranks]
        if x.shape.ndims is not None:
            if x.shape.ndims not in ranks:
                raise ValueError("%sTensor %s must have rank in %s. Received rank %d, shape %s"
                                 % ((message + " ") if message else "", x.name, ranks,
                                    x.shape.ndims, x.shape))
            return wr.no_op()
        condition = wr.reduce_any(wr.equal(wr.rank(x), ranks))
        if data is None:
            data = [message or "", "Tensor %s must have rank in" % x.name, ranks,
                    "Received shape: ", wr.shape(x)]
        return wr.debugging.Assert(condition, data, summarize=summarize)


def assert_same_float_dtype(tensors=None, dtype=None):
    """The common floating dtype of `tensors` (and `dtype`); ValueError when
    they differ or are not floating point. float32 when nothing is given."""
    if tensors:
        for t in tensors:
            if t is None:
                continue
            t_dtype = t.dtype.base_dtype
            if dtype is None:
                dtype = t_dtype
            elif dtypes.as_dtype(dtype).base_dtype != t_dtype:
                raise ValueError("%s, type=%s: expected type %s." % (t.name, t_dtype.name,
                                                                    dtypes.as_dtype(dtype).name))
    if dtype is None:
        return dtypes.float32
    dtype = dtypes.as_dtype(dtype).base_dtype
    if not dtype.is_floating:
        raise ValueError("Expected floating point type, got %s." % dtype.name)
    return dtype


def assert_proper_iterable(values):
    """TypeError unless `values` is an iterable that is not a Tensor, ndarray
    or string."""
    unintentional = (ops.Tensor, _np.ndarray, bytes, str)
    if isinstance(values, unintentional):
        raise TypeError("Expected argument 'values' to be a \"proper\" iterable.  Found: %s"
                        % type(values))
    if not hasattr(values, "__iter__"):
        raise TypeError("Expected argument 'values' to be iterable.  Found: %s" % type(values))


# --- tf.test ---------------------------------------------------------------
def _jacobians(x, x_shape, y, y_shape, x_data, delta, feed, sess):
    wr = _wr()
    x_size = int(_np.prod(x_shape))
    y_size = int(_np.prod(y_shape))
    dy = wr.placeholder(y.dtype, y_shape)
    grad = wr.gradients(y, x, grad_ys=dy)[0]
    theoretical = _np.zeros((x_size, y_size), dtype=_np.float64)
    if grad is not None:
        for j in range(y_size):
            seed = _np.zeros(y_size, dtype=y.dtype.as_numpy_dtype)
            seed[j] = 1
            fd = dict(feed)
            fd[x] = x_data
            fd[dy] = seed.reshape(y_shape)
            theoretical[:, j] = _np.asarray(sess.run(grad, fd)).reshape(-1)
    numerical = _np.zeros((x_size, y_size), dtype=_np.float64)
    flat = x_data.reshape(-1)
    for i in range(x_size):
        saved = flat[i]
        flat[i] = saved + delta
        fd = dict(feed)
        fd[x] = flat.reshape(x_shape)
        y_pos = _np.asarray(sess.run(y, fd), dtype=_np.float64).reshape(-1)
        flat[i] = saved - delta
        fd[x] = flat.reshape(x_shape)
        y_neg = _np.asarray(sess.run(y, fd), dtype=_np.float64).reshape(-1)
        flat[i] = saved
        numerical[i, :] = (y_pos - y_neg) / (2 * delta)
    return theoretical, numerical


def compute_gradient(x, x_shape, y, y_shape, x_init_value=None, delta=1e-3, init_targets=None,
                     extra_feed_dict=None):
    """TF1's gradient checker: (theoretical, numerical) Jacobians of y with
    respect to x, each [x_size, y_size] (a list of pairs for a list of xs),
    evaluated in the default session."""
    sess = ops.get_default_session()
    if sess is None:
        raise ValueError("compute_gradient needs a default session (use `with wr.Session():`)")
    if init_targets is not None:
        sess.run(init_targets)
    feed = dict(extra_feed_dict or {})
    if isinstance(x, (list, tuple)):
        inits = x_init_value or [None] * len(x)
        return [compute_gradient(xi, si, y, y_shape, vi, delta, None, extra_feed_dict)
                for xi, si, vi in zip(x, x_shape, inits)]
    x = ops.convert_to_tensor(x)
    if x_init_value is not None:
        x_data = _np.array(x_init_value, dtype=x.dtype.as_numpy_dtype)
        if tuple(x_data.shape) != tuple(x_shape):
            raise ValueError("x_init_value has shape %s, x_shape is %s"
                             % (x_data.shape, tuple(x_shape)))
    else:
        x_data = _np.random.random_sample(x_shape).astype(x.dtype.as_numpy_dtype)
    return _jacobians(x, x_shape, y, y_shape, x_data.copy(), delta, feed, sess)


def compute_gradient_error(x, x_shape, y, y_shape, x_init_value=None, delta=1e-3,
                           init_targets=None, extra_feed_dict=None):
    """The largest |theoretical - numerical| Jacobian entry."""
    grads = compute_gradient(x, x_shape, y, y_shape, x_init_value, delta, init_targets,
                             extra_feed_dict)
    if isinstance(grads, tuple):
        grads = [grads]
    error = 0.0
    for t, n in grads:
        if t.size or n.size:
            error = max(error, float(_np.fabs(t - n).max()))
    return error


def assert_equal_graph_def(actual, expected, checkpoint_v2=False, hash_table_shared_name=False):
    """AssertionError unless the two GraphDefs have the same nodes (compared
    by name, in any order)."""
    del checkpoint_v2, hash_table_shared_name
    for what, g in (("actual", actual), ("expected", expected)):
        if not hasattr(g, "node"):
            raise TypeError("Expected %s to be a GraphDef proto, but got %s" % (what, type(g)))
    def nodes(g):
        out = {}
        for n in g.node:
            n = type(n).FromString(n.SerializeToString())
            if "_source_location" in n.attr:  # weir's record of the building line
                del n.attr["_source_location"]
            out[n.name] = n
        return out
    a = nodes(actual)
    e = nodes(expected)
    missing = sorted(set(e) - set(a))
    extra = sorted(set(a) - set(e))
    if missing or extra:
        raise AssertionError("GraphDefs differ: nodes only in expected %s, only in actual %s"
                             % (missing, extra))
    for key in sorted(a):
        if a[key] != e[key]:
            raise AssertionError("GraphDefs differ at node %r:\n%s\nvs expected\n%s"
                                 % (key, a[key], e[key]))


# --- tf.train: loops, file patterns, conditional batching --------------------
def basic_train_loop(supervisor, train_step_fn, args=None, kwargs=None, master=""):
    """Runs train_step_fn(session, *args, **kwargs) in supervisor.managed_session
    until the supervisor says stop."""
    if args is None:
        args = []
    if kwargs is None:
        kwargs = {}
    with supervisor.managed_session(master) as sess:
        while not supervisor.should_stop():
            train_step_fn(sess, *args, **kwargs)


def checkpoints_iterator(checkpoint_dir, min_interval_secs=0, timeout=None, timeout_fn=None):
    """Yields each new checkpoint path of checkpoint_dir as it appears
    (waiting at most `timeout` seconds for the next one; then timeout_fn()
    decides: True ends the iteration, else waiting goes on)."""
    import time
    from weir.train import checkpoint_management
    last = None
    while True:
        start = time.time()
        path = None
        while True:
            state = checkpoint_management.get_checkpoint_state(checkpoint_dir)
            path = state.model_checkpoint_path if state is not None else None
            if path is not None and path != last:
                break
            if timeout is not None and time.time() - start + 1 > timeout:
                path = None
                break
            time.sleep(1)
        if path is None:
            if not timeout_fn or timeout_fn():
                return
            continue
        begin = time.time()
        last = path
        yield path
        remaining = min_interval_secs - (time.time() - begin)
        if remaining > 0:
            time.sleep(remaining)


def match_filenames_once(pattern, name=None):
    """A local variable (LOCAL_VARIABLES, initialized by
    local_variables_initializer) holding the file names matching `pattern`
    (a glob or a list of globs), computed once when it is initialized."""
    wr = _wr()
    with ops.name_scope(name, "matching_filenames") as scope:
        pattern = ops.convert_to_tensor(pattern, dtype=dtypes.string, name="pattern")
        from weir.ops.io_ops import matching_files
        matched = matching_files(pattern)
        return wr.Variable(matched, trainable=False, validate_shape=False,
                           collections=[ops.GraphKeys.LOCAL_VARIABLES], name=scope)


def maybe_batch_join(tensors_list, keep_input, batch_size, capacity=32, enqueue_many=False,
                     shapes=None, dynamic_pad=False, allow_smaller_final_batch=False,
                     shared_name=None, name=None):
    """batch_join of only the examples whose keep_input is true."""
    from weir.train import input as _input
    return _input._batch(list(tensors_list), tensors_list[0], batch_size, capacity,
                         enqueue_many, shapes, dynamic_pad, allow_smaller_final_batch,
                         shared_name, name, 1, keep_input=keep_input)


def maybe_shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, keep_input,
                             seed=None, enqueue_many=False, shapes=None,
                             allow_smaller_final_batch=False, shared_name=None, name=None):
    """shuffle_batch_join of only the examples whose keep_input is true."""
    from weir.train import input as _input
    return _input._batch(list(tensors_list), tensors_list[0], batch_size, capacity,
                         enqueue_many, shapes, False, allow_smaller_final_batch, shared_name,
                         name, 1, shuffle=True, min_after_dequeue=min_after_dequeue, seed=seed,
                         default_name="shuffle_batch_join", keep_input=keep_input)


# --- tf.test.create_local_cluster ------------------------------------------
def _free_ports(n):
    import socket
    sockets = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def create_local_cluster(num_workers, num_ps, protocol="grpc", worker_config=None,
                         ps_config=None):
    """(workers, ps_servers): num_workers "worker" and num_ps "ps" servers of
    one cluster, started in this process on free loopback ports."""
    from weir.distribute import Server
    if num_workers < 1:
        raise ValueError("create_local_cluster: num_workers must be >= 1, got %d" % num_workers)
    if num_ps < 0:
        raise ValueError("create_local_cluster: num_ps must be >= 0, got %d" % num_ps)
    ports = _free_ports(num_workers + num_ps)
    cluster = {"worker": ["localhost:%d" % p for p in ports[:num_workers]]}
    if num_ps > 0:
        cluster["ps"] = ["localhost:%d" % p for p in ports[num_workers:]]
    workers = [Server(cluster, job_name="worker", protocol=protocol, task_index=i,
                      config=worker_config, start=True) for i in range(num_workers)]
    ps_servers = [Server(cluster, job_name="ps", protocol=protocol, task_index=i,
                         config=ps_config, start=True) for i in range(num_ps)]
    return workers, ps_servers


# --- more of tf.nn / tf.math ---------------------------------------------------
def depthwise_conv2d_native_backprop_filter(input, filter_sizes, out_backprop, strides,  # noqa: A002
                                            padding, data_format="NHWC",
                                            dilations=(1, 1, 1, 1), name=None):
    """The gradient of depthwise_conv2d_native with respect to the filter."""
    from weir.framework.op_def_library import apply_op
    return apply_op("DepthwiseConv2dNativeBackpropFilter", name, input=input,
                    filter_sizes=filter_sizes, out_backprop=out_backprop, strides=list(strides),
                    padding=padding, data_format=data_format, dilations=list(dilations))


def depthwise_conv2d_native_backprop_input(input_sizes, filter, out_backprop, strides,  # noqa: A002
                                           padding, data_format="NHWC",
                                           dilations=(1, 1, 1, 1), name=None):
    """The gradient of depthwise_conv2d_native with respect to the input."""
    from weir.framework.op_def_library import apply_op
    return apply_op("DepthwiseConv2dNativeBackpropInput", name, input_sizes=input_sizes,
                    filter=filter, out_backprop=out_backprop, strides=list(strides),
                    padding=padding, data_format=data_format, dilations=list(dilations))


def conv1d_transpose(input, filters, output_shape, strides, padding="SAME",  # noqa: A002
                     data_format="NWC", dilations=None, name=None):
    """The transpose of conv1d, through conv2d_transpose on a height-1
    image. filters: [width, out_channels, in_channels]."""
    wr = _wr()
    if data_format not in ("NWC", "NCW"):
        raise ValueError("data_format must be \"NWC\" or \"NCW\", got %r" % (data_format,))
    with ops.name_scope(name, "conv1d_transpose"):
        input = ops.convert_to_tensor(input, name="input")
        filters = ops.convert_to_tensor(filters, name="filters")
        s = strides if isinstance(strides, int) else list(strides)
        if not isinstance(s, int):
            if len(s) == 3:
                s = s[1] if data_format == "NWC" else s[2]
            elif len(s) == 1:
                s = s[0]
            else:
                raise ValueError("strides must be an int or have 1 or 3 elements, got %r"
                                 % (strides,))
        d = 1 if dilations is None else dilations
        if not isinstance(d, int):
            d = list(d)
            d = d[0] if len(d) == 1 else (d[1] if data_format == "NWC" else d[2])
        out_shape = ops.convert_to_tensor(output_shape, dtype=dtypes.int32, name="output_shape")
        if data_format == "NWC":
            x4 = wr.expand_dims(input, 1)
            shape4 = wr.concat([out_shape[:1], [1], out_shape[1:]], 0)
            s4, d4, fmt, axis = [1, 1, s, 1], [1, 1, d, 1], "NHWC", 1
        else:
            x4 = wr.expand_dims(input, 2)
            shape4 = wr.concat([out_shape[:2], [1], out_shape[2:]], 0)
            s4, d4, fmt, axis = [1, 1, 1, s], [1, 1, 1, d], "NCHW", 2
        y = wr.nn.conv2d_transpose(x4, wr.expand_dims(filters, 0), shape4, s4, padding=padding,
                                   data_format=fmt, dilations=d4)
        return wr.squeeze(y, [axis])


def cumulative_logsumexp(x, axis=0, exclusive=False, reverse=False, name=None):
    """log(cumsum(exp(x))) along axis, computed stably: a scan of
    log(exp(a) + exp(b)) = m + log(exp(a - m) + exp(b - m)), m = max(a, b)."""
    wr = _wr()
    with ops.name_scope(name, "CumulativeLogsumexp"):
        x = ops.convert_to_tensor(x, name="x")
        if not x.dtype.is_floating:
            raise TypeError("cumulative_logsumexp: x must be floating point, got %s"
                            % x.dtype.name)
        ndims = x.shape.ndims
        if ndims is None or ndims == 0:
            raise ValueError("cumulative_logsumexp: x must have a known rank >= 1, got %s"
                             % x.shape)
        if not isinstance(axis, int) or not -ndims <= axis < ndims:
            raise ValueError("cumulative_logsumexp: axis %r out of range for rank %d"
                             % (axis, ndims))
        axis = axis % ndims
        perm = [axis] + [i for i in range(ndims) if i != axis]
        inverse = [perm.index(i) for i in range(ndims)]
        t = wr.transpose(x, perm)
        if reverse:
            t = wr.reverse(t, [0])

        def logaddexp(a, b):
            m = wr.maximum(a, b)
            m_safe = wr.where(wr.is_finite(m), m, wr.zeros_like(m))
            return m_safe + wr.log(wr.exp(a - m_safe) + wr.exp(b - m_safe))

        out = wr.scan(logaddexp, t)
        if exclusive:
            neg_inf = wr.fill(wr.shape(t[:1]), wr.constant(-_np.inf, x.dtype))
            out = wr.concat([neg_inf, out[:-1]], 0)
        if reverse:
            out = wr.reverse(out, [0])
        return wr.transpose(out, inverse)


# --- more of tf.debugging / tf.test ----------------------------------------------
_traceback_filtering = [True]


def enable_traceback_filtering():
    """Records the choice (weir's errors show the user's frames either way)."""
    _traceback_filtering[0] = True


def disable_traceback_filtering():
    _traceback_filtering[0] = False


def is_traceback_filtering_enabled():
    return _traceback_filtering[0]


def assert_shapes(shapes, data=None, summarize=None, message=None, name=None):
    """TF1's assert_shapes: `shapes` pairs (or a dict) tensor -> spec, a spec
    a list of dims: an int (that size), a string (a symbol: the same size
    everywhere it appears), None (any size); a leading "*" allows any number
    of leading dims, and a spec of [] or "." means a scalar. Known dims are
    checked now (ValueError); unknown ones at run time (InvalidArgumentError).
    Returns the op that runs the run-time checks."""
    wr = _wr()
    items = list(shapes.items()) if isinstance(shapes, dict) else list(shapes)
    prefix = (message + " ") if message else ""
    symbols = {}  # symbol -> (static size or None, a scalar tensor)
    checks = []
    with ops.name_scope(name, "assert_shapes"):
        for tensor, spec in items:
            x = ops.convert_to_tensor(tensor)
            if isinstance(spec, str):
                spec = [] if spec == "." else [spec]
            spec = list(spec)
            any_prefix = bool(spec) and spec[0] == "*"
            if any_prefix:
                spec = spec[1:]
            if any(d == "*" for d in spec):
                raise ValueError("assert_shapes: '*' may only be the first dim of a spec")
            rank = x.shape.ndims
            if rank is not None:
                if (rank < len(spec)) if any_prefix else (rank != len(spec)):
                    raise ValueError("%sSpecified by tensor %s dimension %d. Tensor %s must have "
                                     "rank %s%d. Received rank %d, shape %s"
                                     % (prefix, x.name, 0, x.name, ">= " if any_prefix else "",
                                        len(spec), rank, x.shape))
            else:
                rank_check = wr.greater_equal if any_prefix else wr.equal
                checks.append(wr.debugging.Assert(rank_check(wr.rank(x), len(spec)),
                                                  [prefix + "%s has the wrong rank" % x.name,
                                                   wr.shape(x)], summarize=summarize))
            dyn_shape = wr.shape(x)
            for k, want in enumerate(spec):
                index = k - len(spec)  # from the end, since "*" may lead
                static = None
                if rank is not None:
                    static = x.shape.as_list()[rank + index]
                if want is None:
                    continue
                if isinstance(want, str):
                    if want in symbols:
                        prev_static, prev_t = symbols[want]
                        if static is not None and prev_static is not None:
                            if static != prev_static:
                                raise ValueError(
                                    "%sDimension %d of tensor %s is %d, but dimension '%s' was "
                                    "%d elsewhere" % (prefix, k, x.name, static, want, prev_static))
                            continue
                        checks.append(wr.debugging.assert_equal(
                            dyn_shape[index] if rank is None else dyn_shape[rank + index],
                            prev_t, message="%sdimension '%s' differs for %s"
                            % (prefix, want, x.name)))
                    else:
                        symbols[want] = (static, dyn_shape[index] if rank is None
                                         else dyn_shape[rank + index])
                    continue
                want = int(want)
                if static is not None:
                    if static != want:
                        raise ValueError("%sDimension %d of tensor %s must be %d, got %d "
                                         "(shape %s)" % (prefix, k, x.name, want, static,
                                                         x.shape))
                    continue
                checks.append(wr.debugging.assert_equal(
                    dyn_shape[index] if rank is None else dyn_shape[rank + index], want,
                    message="%sdimension %d of %s must be %d" % (prefix, k, x.name, want)))
        if not checks:
            return wr.no_op()
        return wr.group(*checks)


def disable_with_predicate(pred, skip_message):
    """A test-method decorator: the test is skipped when pred() is true."""
    import functools
    import unittest

    def decorator(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            if pred():
                raise unittest.SkipTest(skip_message)
            return func(*args, **kwargs)
        return wrapper
    return decorator


def with_eager_op_as_function(cls=None, only_as_function=False):
    """A no-op class decorator (weir runs graphs only)."""
    del only_as_function
    if cls is None:
        return lambda c: c
    return cls


def is_built_with_rocm():
    return False


def is_built_with_xla():
    return False


class Benchmark:
    """tf.test.Benchmark: report_benchmark prints one entry;
    run_op_benchmark times sess.run of an op (wall time per iteration,
    median of min_iters runs after burn_iters) and reports it."""

    def report_benchmark(self, iters=None, cpu_time=None, wall_time=None, throughput=None,
                         extras=None, name=None, metrics=None):
        name = name or type(self).__name__
        print("entry { name: %r iters: %s wall_time: %s cpu_time: %s throughput: %s "
              "extras: %s metrics: %s }" % (name, iters, wall_time, cpu_time, throughput,
                                           extras, metrics))

    def run_op_benchmark(self, sess, op_or_tensor, feed_dict=None, burn_iters=2, min_iters=10,
                         store_trace=False, store_memory_usage=True, name=None, extras=None,
                         mbs=0):
        import time
        del store_trace, store_memory_usage
        for _ in range(burn_iters):
            sess.run(op_or_tensor, feed_dict=feed_dict)
        times = []
        for _ in range(max(1, min_iters)):
            start = time.time()
            sess.run(op_or_tensor, feed_dict=feed_dict)
            times.append(time.time() - start)
        wall = float(_np.median(times))
        extras = dict(extras or {})
        if mbs:
            extras["throughput_mb_per_sec"] = float(mbs) / wall if wall > 0 else float("inf")
        self.report_benchmark(iters=len(times), wall_time=wall, extras=extras, name=name)
        return {"iters": len(times), "wall_time": wall, "extras": extras, "name": name}

    def evaluate(self, tensors):
        from weir.framework import ops as _ops
        sess = _ops.get_default_session()
        if sess is None:
            raise ValueError("Benchmark.evaluate needs a default session")
        return sess.run(tensors)


# --- tf.train.warm_start -----------------------------------------------------
import collections as _collections  # noqa: E402

VocabInfo = _collections.namedtuple(
    "VocabInfo", ["new_vocab", "new_vocab_size", "num_oov_buckets", "old_vocab",
                  "old_vocab_size", "backup_initializer", "axis"])
VocabInfo.__new__.__defaults__ = (-1, None, 0)


def warm_start(ckpt_to_initialize_from, vars_to_warm_start=".*", var_name_to_vocab_info=None,
               var_name_to_prev_var_name=None):
    """Makes the initializers of the chosen variables load their values from
    a checkpoint (tf.train.warm_start): vars_to_warm_start is a regex over
    the trainable variables, a list of regexes over all global variables, or
    a list of Variables; var_name_to_prev_var_name renames. Vocabulary
    remapping (var_name_to_vocab_info) is not supported by weir."""
    import re
    from weir.train import checkpoint_utils
    if var_name_to_vocab_info:
        raise NotImplementedError("warm_start: var_name_to_vocab_info (vocabulary remapping) "
                                  "is not supported by weir")
    renames = dict(var_name_to_prev_var_name or {})
    if vars_to_warm_start is None:
        chosen = []
    elif isinstance(vars_to_warm_start, str):
        chosen = [v for v in ops.get_collection(ops.GraphKeys.TRAINABLE_VARIABLES)
                  if re.match(vars_to_warm_start, v.op.name)]
    elif isinstance(vars_to_warm_start, (list, tuple)) and all(
            isinstance(x, str) for x in vars_to_warm_start):
        chosen = [v for v in ops.get_collection(ops.GraphKeys.GLOBAL_VARIABLES)
                  if any(re.match(p, v.op.name) for p in vars_to_warm_start)]
    elif isinstance(vars_to_warm_start, (list, tuple)):
        chosen = list(vars_to_warm_start)
    else:
        raise ValueError("vars_to_warm_start must be a regex string, a list of regexes or a list "
                         "of Variables, got %r" % (vars_to_warm_start,))
    used = set()
    assignment = {}
    for v in chosen:
        name = v.op.name
        prev = renames.get(name, name)
        if name in renames:
            used.add(name)
        assignment[prev] = v
    unused = sorted(set(renames) - used)
    if unused:
        raise ValueError("You provided the following variables in var_name_to_prev_var_name that "
                         "were not used: %s.  Perhaps you misspelled them?  Here is the list of "
                         "viable variable names: %s" % (unused, sorted(v.op.name for v in chosen)))
    if assignment:
        checkpoint_utils.init_from_checkpoint(ckpt_to_initialize_from, assignment)
