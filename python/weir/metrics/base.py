"""What every streaming metric of weir.metrics is made of: its state
variables (metric_variable), the alignment of predictions, labels and
weights, and the registration of (value, update_op) in collections."""
from weir.framework import dtypes
from weir.framework import ops
from weir.ops import array_ops
from weir.ops import math_ops
from weir.ops import variables

__all__ = ["metric_variable"]


def metric_variable(shape, dtype, validate_shape=True, name=None):
    """A zero-initialized, non-trainable variable in LOCAL_VARIABLES and
    METRIC_VARIABLES (the state of a streaming metric)."""
    shape = list(shape)
    dtype = dtypes.as_dtype(dtype)
    return variables.Variable(
        lambda: array_ops.zeros(shape, dtype), trainable=False, dtype=dtype,
        collections=[ops.GraphKeys.LOCAL_VARIABLES, ops.GraphKeys.METRIC_VARIABLES],
        validate_shape=validate_shape, name=name)


def _add_to(collections, value):
    for key in collections or ():
        ops.add_to_collection(key, value)


def _static_rank(t):
    return t.shape.ndims


def _remove_squeezable_dimensions(predictions, labels, weights):
    """Drops a trailing size-1 dimension of labels or predictions when their
    ranks differ by one, and squeezes or expands `weights` by one trailing
    dimension to the predictions' rank (static ranks only, as TF's static
    path; unknown ranks are left as they are)."""
    predictions = ops.convert_to_tensor(predictions)
    if labels is not None:
        labels = ops.convert_to_tensor(labels)
        p_rank, l_rank = _static_rank(predictions), _static_rank(labels)
        if p_rank is not None and l_rank is not None:
            if p_rank - l_rank == 1 and predictions.shape.dims[-1].is_compatible_with(1):
                predictions = array_ops.squeeze(predictions, [-1])
            elif l_rank - p_rank == 1 and labels.shape.dims[-1].is_compatible_with(1):
                labels = array_ops.squeeze(labels, [-1])
        if not predictions.shape.is_compatible_with(labels.shape):
            raise ValueError("Shapes %s and %s are incompatible (predictions and labels)"
                             % (predictions.shape, labels.shape))
    if weights is None:
        return predictions, labels, None
    weights = ops.convert_to_tensor(weights)
    w_rank, p_rank = _static_rank(weights), _static_rank(predictions)
    if w_rank == 0 or w_rank is None or p_rank is None:
        return predictions, labels, weights
    if w_rank - p_rank == 1:
        weights = array_ops.squeeze(weights, [-1])
    elif p_rank - w_rank == 1:
        weights = array_ops.expand_dims(weights, -1)
    return predictions, labels, weights


def _broadcast_weights(weights, values):
    """`weights` (float32) broadcast to the shape of `values`; a ValueError
    when their static shapes cannot broadcast (TF requires weights of rank 0
    or of the values' rank, each dimension 1 or equal)."""
    weights = math_ops.cast(weights, dtypes.float32)
    w_shape, v_shape = weights.shape, values.shape
    if w_shape.is_fully_defined() and v_shape.is_fully_defined():
        if w_shape.as_list() == v_shape.as_list():
            return weights
        if w_shape.ndims != 0:
            ok = w_shape.ndims == v_shape.ndims and all(
                w in (1, v) for w, v in zip(w_shape.as_list(), v_shape.as_list()))
            if not ok:
                raise ValueError("weights can not be broadcast to values. values.rank=%d. "
                                 "weights.rank=%d. values.shape=%s. weights.shape=%s."
                                 % (v_shape.ndims, w_shape.ndims, v_shape, w_shape))
    return math_ops.multiply(weights, array_ops.ones_like(values))


def _finish(value, update_op, metrics_collections, updates_collections):
    _add_to(metrics_collections, value)
    _add_to(updates_collections, update_op)
    return value, update_op
