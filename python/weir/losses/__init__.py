"""weir.losses: TF1's tf.losses (tf.compat.v1.losses) on the nn and math ops.

Contract (tf.compat.v1.losses): each loss computes a per-element loss,
multiplies it by `weights` (broadcast to the loss's shape), reduces it by
`reduction` (default SUM_BY_NONZERO_WEIGHTS: the weighted sum divided by the
number of non-zero weights, 0 when there are none), and adds the result to
`loss_collection` (GraphKeys.LOSSES). get_total_loss() sums the collected
losses and, by default, the REGULARIZATION_LOSSES collection.
"""
from weir.framework import dtypes
from weir.framework import ops
from weir.ops import array_ops
from weir.ops import math_ops
from weir.ops import nn_ops

__all__ = [
    "Reduction", "compute_weighted_loss", "absolute_difference", "mean_squared_error",
    "huber_loss", "hinge_loss", "log_loss", "sigmoid_cross_entropy", "softmax_cross_entropy",
    "sparse_softmax_cross_entropy", "add_loss", "get_losses", "get_regularization_losses",
    "get_regularization_loss", "get_total_loss",
]


class Reduction:
    """How a weighted loss is reduced (TF1's tf.losses.Reduction)."""
    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls):
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE,
                cls.SUM_OVER_NONZERO_WEIGHTS, cls.SUM_BY_NONZERO_WEIGHTS)

    @classmethod
    def validate(cls, key):
        if key not in cls.all():
            raise ValueError(f"Invalid Reduction Key {key}.")


def compute_weighted_loss(losses, weights=1.0, scope=None, loss_collection=ops.GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """`losses * weights` reduced by `reduction`, in the dtype of `losses`."""
    Reduction.validate(reduction)
    with ops.name_scope(scope, "weighted_loss", (losses, weights)):
        losses = ops.convert_to_tensor(losses)
        input_dtype = losses.dtype
        losses = math_ops.cast(losses, dtypes.float32)
        weights = math_ops.cast(ops.convert_to_tensor(weights), dtypes.float32)
        weighted = math_ops.multiply(losses, weights)
        if reduction == Reduction.NONE:
            loss = weighted
        else:
            loss = math_ops.reduce_sum(weighted)
            if reduction == Reduction.MEAN:
                loss = math_ops.div_no_nan(
                    loss, math_ops.reduce_sum(array_ops.ones_like(losses) * weights),
                    name="value")
            elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
                loss = math_ops.div_no_nan(
                    loss, math_ops.cast(array_ops.size(losses), dtypes.float32), name="value")
            elif reduction == Reduction.SUM_BY_NONZERO_WEIGHTS:
                broadcast = array_ops.ones_like(losses) * weights
                present = math_ops.reduce_sum(math_ops.cast(
                    math_ops.not_equal(broadcast, 0.0), dtypes.float32))
                loss = math_ops.div_no_nan(loss, present, name="value")
        loss = math_ops.cast(loss, input_dtype)
        if loss_collection:
            ops.add_to_collection(loss_collection, loss)
        return loss


def _check_args(labels, predictions, what):
    if labels is None:
        raise ValueError("labels must not be None.")
    if predictions is None:
        raise ValueError(f"{what} must not be None.")


def _float_pair(labels, predictions):
    predictions = math_ops.cast(ops.convert_to_tensor(predictions), dtypes.float32)
    labels = math_ops.cast(ops.convert_to_tensor(labels), dtypes.float32)
    if not predictions.shape.is_compatible_with(labels.shape):
        raise ValueError(f"Shapes {predictions.shape} and {labels.shape} are incompatible")
    return labels, predictions


def absolute_difference(labels, predictions, weights=1.0, scope=None,
                        loss_collection=ops.GraphKeys.LOSSES,
                        reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    _check_args(labels, predictions, "predictions")
    with ops.name_scope(scope, "absolute_difference", (predictions, labels, weights)) as scope:
        labels, predictions = _float_pair(labels, predictions)
        losses = math_ops.abs(math_ops.subtract(predictions, labels))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def mean_squared_error(labels, predictions, weights=1.0, scope=None,
                       loss_collection=ops.GraphKeys.LOSSES,
                       reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    _check_args(labels, predictions, "predictions")
    with ops.name_scope(scope, "mean_squared_error", (predictions, labels, weights)) as scope:
        labels, predictions = _float_pair(labels, predictions)
        losses = math_ops.squared_difference(predictions, labels)
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def huber_loss(labels, predictions, weights=1.0, delta=1.0, scope=None,
               loss_collection=ops.GraphKeys.LOSSES,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """0.5 x^2 for |x| <= delta, else 0.5 delta^2 + delta (|x| - delta)."""
    _check_args(labels, predictions, "predictions")
    with ops.name_scope(scope, "huber_loss", (predictions, labels, weights)) as scope:
        labels, predictions = _float_pair(labels, predictions)
        error = math_ops.abs(math_ops.subtract(predictions, labels))
        quadratic = math_ops.minimum(error, delta)
        linear = math_ops.subtract(error, quadratic)
        losses = 0.5 * quadratic * quadratic + delta * linear
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def hinge_loss(labels, logits, weights=1.0, scope=None, loss_collection=ops.GraphKeys.LOSSES,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """max(0, 1 - (2 labels - 1) logits), labels in {0, 1}."""
    _check_args(labels, logits, "logits")
    with ops.name_scope(scope, "hinge_loss", (logits, labels, weights)) as scope:
        labels, logits = _float_pair(labels, logits)
        signs = 2.0 * labels - 1.0
        losses = nn_ops.relu(1.0 - signs * logits)
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def log_loss(labels, predictions, weights=1.0, epsilon=1e-7, scope=None,
             loss_collection=ops.GraphKeys.LOSSES,
             reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    _check_args(labels, predictions, "predictions")
    with ops.name_scope(scope, "log_loss", (predictions, labels, weights)) as scope:
        labels, predictions = _float_pair(labels, predictions)
        losses = -(labels * math_ops.log(predictions + epsilon)) - \
            (1.0 - labels) * math_ops.log(1.0 - predictions + epsilon)
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def sigmoid_cross_entropy(multi_class_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=ops.GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    _check_args(multi_class_labels, logits, "logits")
    with ops.name_scope(scope, "sigmoid_cross_entropy_loss",
                        (logits, multi_class_labels, weights)) as scope:
        logits = ops.convert_to_tensor(logits, name="logits")
        labels = math_ops.cast(multi_class_labels, logits.dtype)
        if not logits.shape.is_compatible_with(labels.shape):
            raise ValueError(f"Shapes {logits.shape} and {labels.shape} are incompatible")
        if label_smoothing > 0:
            labels = labels * (1.0 - label_smoothing) + 0.5 * label_smoothing
        losses = nn_ops.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits,
                                                          name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def softmax_cross_entropy(onehot_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=ops.GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Cross-entropy of softmax(logits) against `onehot_labels` [batch, classes];
    label_smoothing moves labels towards 1/classes. `weights` is per example."""
    _check_args(onehot_labels, logits, "logits")
    with ops.name_scope(scope, "softmax_cross_entropy_loss",
                        (logits, onehot_labels, weights)) as scope:
        logits = ops.convert_to_tensor(logits, name="logits")
        labels = math_ops.cast(onehot_labels, logits.dtype)
        if not logits.shape.is_compatible_with(labels.shape):
            raise ValueError(f"Shapes {logits.shape} and {labels.shape} are incompatible")
        if label_smoothing > 0:
            classes = math_ops.cast(array_ops.shape(labels)[-1], logits.dtype)
            labels = labels * (1.0 - label_smoothing) + label_smoothing / classes
        losses = nn_ops.softmax_cross_entropy_with_logits_v2(
            labels=array_ops.stop_gradient(labels), logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def sparse_softmax_cross_entropy(labels, logits, weights=1.0, scope=None,
                                 loss_collection=ops.GraphKeys.LOSSES,
                                 reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Cross-entropy of softmax(logits) against class indices `labels`."""
    _check_args(labels, logits, "logits")
    with ops.name_scope(scope, "sparse_softmax_cross_entropy_loss",
                        (logits, labels, weights)) as scope:
        losses = nn_ops.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits,
                                                                 name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def add_loss(loss, loss_collection=ops.GraphKeys.LOSSES):
    if loss_collection:
        ops.add_to_collection(loss_collection, loss)


def get_losses(scope=None, loss_collection=ops.GraphKeys.LOSSES):
    return ops.get_collection(loss_collection, scope)


def get_regularization_losses(scope=None):
    return ops.get_collection(ops.GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope=None, name="total_regularization_loss"):
    losses = get_regularization_losses(scope)
    if losses:
        return math_ops.add_n(losses, name=name)
    return ops.convert_to_tensor(0.0, name=name)


def get_total_loss(add_regularization_losses=True, name="total_loss", scope=None):
    """The sum of get_losses(scope) and (by default) the regularization losses;
    ValueError when there are none (as TF)."""
    losses = get_losses(scope=scope)
    if add_regularization_losses:
        losses = losses + get_regularization_losses(scope=scope)
    if not losses:
        raise ValueError("No losses found: none in the LOSSES or REGULARIZATION_LOSSES "
                         "collections.")
    return math_ops.add_n(losses, name=name)


from weir.ops.tf1_modules import cosine_distance, mean_pairwise_squared_error  # noqa: F401,E402,E501  (tf1api)
__all__ = __all__ + ["cosine_distance", "mean_pairwise_squared_error"]
