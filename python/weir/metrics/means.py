"""Means and counts: the metrics that are a running sum over a running count
(mean, accuracy, errors) or a running count of a condition (true_positives
...), and precision / recall as ratios of those counts."""
from weir.framework import dtypes
from weir.framework import ops
from weir.ops import array_ops
from weir.ops import math_ops
from weir.ops import variable_scope
from weir.metrics.base import (
    _broadcast_weights, _finish, _remove_squeezable_dimensions, metric_variable)

__all__ = [
    "mean", "mean_tensor", "accuracy", "mean_squared_error", "mean_absolute_error",
    "mean_relative_error", "root_mean_squared_error", "mean_cosine_distance",
    "percentage_below", "true_positives", "false_positives", "false_negatives",
    "true_negatives", "precision", "recall",
]


# --- means -----------------------------------------------------------------

def _weighted(values, weights):
    """(values * weights, weights), weights squeezed and broadcast to values."""
    values, _, weights = _remove_squeezable_dimensions(values, None, weights)
    weights = _broadcast_weights(weights, values)
    return math_ops.multiply(values, weights), weights


def _running_mean(total, count, total_delta, values, num_values, metrics_collections,
                  updates_collections):
    """The metric total / count: adds total_delta to total and (after
    `values`) num_values to count."""
    update_total = total.assign_add(total_delta)
    with ops.control_dependencies([values]):
        update_count = count.assign_add(num_values)
    value = math_ops.div_no_nan(total.value(), math_ops.maximum(count.value(), 0.0), name="value")
    update_op = math_ops.div_no_nan(update_total, math_ops.maximum(update_count, 0.0),
                                    name="update_op")
    return _finish(value, update_op, metrics_collections, updates_collections)


def mean(values, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """The (weighted) mean of every element seen: total / count."""
    with variable_scope.variable_scope(name, "mean", (values, weights)):
        values = math_ops.cast(values, dtypes.float32)
        total = metric_variable([], dtypes.float32, name="total")
        count = metric_variable([], dtypes.float32, name="count")
        if weights is None:
            num_values = math_ops.cast(array_ops.size(values), dtypes.float32)
        else:
            values, weights = _weighted(values, weights)
            num_values = math_ops.reduce_sum(weights)
        return _running_mean(total, count, math_ops.reduce_sum(values), values, num_values,
                             metrics_collections, updates_collections)


def mean_tensor(values, weights=None, metrics_collections=None, updates_collections=None,
                name=None):
    """The element-wise (weighted) mean of `values` over the batches seen."""
    with variable_scope.variable_scope(name, "mean", (values, weights)):
        values = math_ops.cast(values, dtypes.float32)
        if not values.shape.is_fully_defined():
            raise ValueError("mean_tensor needs values of a fully defined static shape, got %s"
                             % values.shape)
        shape = values.shape.as_list()
        total = metric_variable(shape, dtypes.float32, name="total_tensor")
        count = metric_variable(shape, dtypes.float32, name="count_tensor")
        num_values = array_ops.ones_like(values)
        if weights is not None:
            values, weights = _weighted(values, weights)
            num_values = math_ops.multiply(num_values, weights)
        return _running_mean(total, count, values, values, num_values, metrics_collections,
                             updates_collections)


def accuracy(labels, predictions, weights=None, metrics_collections=None,
             updates_collections=None, name=None):
    """The fraction of predictions equal to labels (predictions are cast to
    the labels' dtype)."""
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    if labels.dtype != predictions.dtype:
        predictions = math_ops.cast(predictions, labels.dtype)
    is_correct = math_ops.cast(math_ops.equal(predictions, labels), dtypes.float32)
    return mean(is_correct, weights, metrics_collections, updates_collections,
                name or "accuracy")


def mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                       updates_collections=None, name=None):
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    squared = math_ops.squared_difference(labels, predictions)
    return mean(squared, weights, metrics_collections, updates_collections,
                name or "mean_squared_error")


def mean_absolute_error(labels, predictions, weights=None, metrics_collections=None,
                        updates_collections=None, name=None):
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    errors = math_ops.abs(math_ops.subtract(predictions, labels))
    return mean(errors, weights, metrics_collections, updates_collections,
                name or "mean_absolute_error")


def mean_relative_error(labels, predictions, normalizer, weights=None, metrics_collections=None,
                        updates_collections=None, name=None):
    """mean(|predictions - labels| / normalizer), 0 where normalizer is 0."""
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    predictions, normalizer, _ = _remove_squeezable_dimensions(predictions, normalizer, None)
    relative = array_ops.where(
        math_ops.equal(normalizer, 0.0), array_ops.zeros_like(labels),
        math_ops.div(math_ops.abs(math_ops.subtract(labels, predictions)), normalizer))
    return mean(relative, weights, metrics_collections, updates_collections,
                name or "mean_relative_error")


def root_mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                            updates_collections=None, name=None):
    mse, update_mse = mean_squared_error(labels, predictions, weights, None, None,
                                         name or "root_mean_squared_error")
    value = math_ops.sqrt(mse)
    update_op = math_ops.sqrt(update_mse)
    return _finish(value, update_op, metrics_collections, updates_collections)


def mean_cosine_distance(labels, predictions, dim, weights=None, metrics_collections=None,
                         updates_collections=None, name=None):
    """1 - mean over the batches of sum(labels * predictions, dim) (inputs
    expected unit-normalized along `dim`)."""
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    radial = math_ops.multiply(predictions, labels)
    radial = math_ops.reduce_sum(radial, axis=[dim], keepdims=True)
    value, update_op = mean(radial, weights, None, None, name or "mean_cosine_distance")
    value = math_ops.subtract(1.0, value)
    update_op = math_ops.subtract(1.0, update_op)
    return _finish(value, update_op, metrics_collections, updates_collections)


def percentage_below(values, threshold, weights=None, metrics_collections=None,
                     updates_collections=None, name=None):
    is_below = math_ops.cast(math_ops.less(values, threshold), dtypes.float32)
    return mean(is_below, weights, metrics_collections, updates_collections,
                name or "percentage_below_threshold")


# --- counts of a condition -------------------------------------------------

def _count_condition(values, weights, metrics_collections, updates_collections):
    count = metric_variable([], dtypes.float32, name="count")
    values = math_ops.cast(values, dtypes.float32)
    if weights is not None:
        weights = _broadcast_weights(weights, values)
        values = math_ops.multiply(values, weights)
    value = array_ops.identity(count.value())
    update_op = count.assign_add(math_ops.reduce_sum(values))
    return _finish(value, update_op, metrics_collections, updates_collections)


def _bool_inputs(labels, predictions, weights):
    """(predictions, labels, weights), the first two cast to bool, all squeezed."""
    return _remove_squeezable_dimensions(
        math_ops.cast(predictions, dtypes.bool), math_ops.cast(labels, dtypes.bool), weights)


def _condition_metric(default_name, label_is, prediction_is):
    def metric(labels, predictions, weights=None, metrics_collections=None,
               updates_collections=None, name=None):
        with variable_scope.variable_scope(name, default_name, (predictions, labels, weights)):
            predictions, labels, weights = _bool_inputs(labels, predictions, weights)
            condition = math_ops.logical_and(math_ops.equal(labels, label_is),
                                             math_ops.equal(predictions, prediction_is))
            return _count_condition(condition, weights, metrics_collections,
                                    updates_collections)
    metric.__name__ = default_name
    metric.__doc__ = ("The (weighted) number of elements whose label is %s and whose "
                      "prediction is %s (both cast to bool)." % (label_is, prediction_is))
    return metric


true_positives = _condition_metric("true_positives", True, True)
false_positives = _condition_metric("false_positives", False, True)
false_negatives = _condition_metric("false_negatives", True, False)
true_negatives = _condition_metric("true_negatives", False, False)


def _ratio(numerator, other, name):
    """numerator / (numerator + other), 0 where that sum is 0."""
    denominator = math_ops.add(numerator, other)
    return array_ops.where(math_ops.greater(denominator, 0.0),
                           math_ops.div(numerator, denominator),
                           array_ops.zeros_like(denominator), name=name)


def _ratio_metric(default_name, other_metric):
    def metric(labels, predictions, weights=None, metrics_collections=None,
               updates_collections=None, name=None):
        with variable_scope.variable_scope(name, default_name, (predictions, labels, weights)):
            predictions, labels, weights = _bool_inputs(labels, predictions, weights)
            tp, tp_update = true_positives(labels, predictions, weights)
            other, other_update = other_metric(labels, predictions, weights)
            value = _ratio(tp, other, "value")
            update_op = _ratio(tp_update, other_update, "update_op")
            return _finish(value, update_op, metrics_collections, updates_collections)
    metric.__name__ = default_name
    return metric


precision = _ratio_metric("precision", false_positives)
precision.__doc__ = "true_positives / (true_positives + false_positives), 0 when both are 0."
recall = _ratio_metric("recall", false_negatives)
recall.__doc__ = "true_positives / (true_positives + false_negatives), 0 when both are 0."
