"""The streaming metrics of weir.metrics, written from tf.compat.v1.metrics'
documented semantics: every metric is a few variables of running sums and a
formula over them (see weir/metrics/__init__.py for the contract)."""
from weir.framework import dtypes
from weir.framework import ops
from weir.ops import array_ops
from weir.ops import check_ops
from weir.ops import math_ops
from weir.ops import nn_ops
from weir.ops import variable_scope
from weir.ops import variables

__all__ = [
    "metric_variable", "mean", "accuracy", "mean_squared_error", "mean_absolute_error",
    "root_mean_squared_error", "true_positives", "false_positives", "false_negatives",
    "true_negatives", "precision", "recall", "true_positives_at_thresholds",
    "false_positives_at_thresholds", "false_negatives_at_thresholds",
    "true_negatives_at_thresholds", "precision_at_thresholds", "recall_at_thresholds", "auc",
    "mean_iou", "mean_per_class_accuracy", "mean_tensor", "percentage_below",
    "mean_cosine_distance", "mean_relative_error", "precision_at_k", "recall_at_k",
    "sensitivity_at_specificity", "specificity_at_sensitivity",
]


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


# --- means -----------------------------------------------------------------

def mean(values, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """The (weighted) mean of every element seen: total / count."""
    with variable_scope.variable_scope(name, "mean", (values, weights)):
        values = math_ops.cast(values, dtypes.float32)
        total = metric_variable([], dtypes.float32, name="total")
        count = metric_variable([], dtypes.float32, name="count")
        if weights is None:
            num_values = math_ops.cast(array_ops.size(values), dtypes.float32)
        else:
            values, _, weights = _remove_squeezable_dimensions(values, None, weights)
            weights = _broadcast_weights(weights, values)
            values = math_ops.multiply(values, weights)
            num_values = math_ops.reduce_sum(weights)
        update_total = total.assign_add(math_ops.reduce_sum(values))
        with ops.control_dependencies([values]):
            update_count = count.assign_add(num_values)
        value = math_ops.div_no_nan(total.value(), math_ops.maximum(count.value(), 0.0),
                                    name="value")
        update_op = math_ops.div_no_nan(update_total, math_ops.maximum(update_count, 0.0),
                                        name="update_op")
        return _finish(value, update_op, metrics_collections, updates_collections)


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
            values, _, weights = _remove_squeezable_dimensions(values, None, weights)
            weights = _broadcast_weights(weights, values)
            values = math_ops.multiply(values, weights)
            num_values = math_ops.multiply(num_values, weights)
        update_total = total.assign_add(values)
        with ops.control_dependencies([values]):
            update_count = count.assign_add(num_values)
        value = math_ops.div_no_nan(total.value(), math_ops.maximum(count.value(), 0.0),
                                    name="value")
        update_op = math_ops.div_no_nan(update_total, math_ops.maximum(update_count, 0.0),
                                        name="update_op")
        return _finish(value, update_op, metrics_collections, updates_collections)


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


def _condition_metric(default_name, label_is, prediction_is):
    def metric(labels, predictions, weights=None, metrics_collections=None,
               updates_collections=None, name=None):
        with variable_scope.variable_scope(name, default_name, (predictions, labels, weights)):
            predictions, labels, weights = _remove_squeezable_dimensions(
                math_ops.cast(predictions, dtypes.bool), math_ops.cast(labels, dtypes.bool),
                weights)
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
            predictions, labels, weights = _remove_squeezable_dimensions(
                math_ops.cast(predictions, dtypes.bool), math_ops.cast(labels, dtypes.bool),
                weights)
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


# --- counts at thresholds, precision/recall at thresholds, AUC -------------

_ALL_COUNTS = ("tp", "fn", "tn", "fp")
_COUNT_NAMES = {"tp": "true_positives", "fn": "false_negatives", "tn": "true_negatives",
                "fp": "false_positives"}


def _confusion_matrix_at_thresholds(labels, predictions, thresholds, weights=None,
                                    includes=None):
    """Per threshold t, the (weighted) counts of tp / fn / tn / fp where an
    element is predicted positive when prediction > t. Returns (values,
    update_ops), dicts keyed by "tp", "fn", "tn", "fp"; predictions must lie in
    [0, 1] (checked when run)."""
    includes = _ALL_COUNTS if includes is None else includes
    for key in includes:
        if key not in _ALL_COUNTS:
            raise ValueError("Invalid key: %s." % key)
    predictions = ops.convert_to_tensor(predictions)
    checks = [check_ops.assert_greater_equal(
                  predictions, math_ops.cast(0.0, predictions.dtype),
                  message="predictions must be in [0, 1]"),
              check_ops.assert_less_equal(
                  predictions, math_ops.cast(1.0, predictions.dtype),
                  message="predictions must be in [0, 1]")]
    with ops.control_dependencies(checks):
        predictions, labels, weights = _remove_squeezable_dimensions(
            math_ops.cast(predictions, dtypes.float32), math_ops.cast(labels, dtypes.bool),
            weights)
    num_thresholds = len(thresholds)
    predictions_row = array_ops.reshape(predictions, [1, -1])
    labels_row = array_ops.reshape(labels, [1, -1])
    thresholds_column = array_ops.reshape(
        ops.convert_to_tensor([float(t) for t in thresholds], dtypes.float32),
        [num_thresholds, 1])
    # [num_thresholds, num_predictions] by broadcasting.
    pred_is_pos = math_ops.greater(predictions_row, thresholds_column)
    pred_is_neg = math_ops.logical_not(pred_is_pos)
    label_is_pos = math_ops.logical_and(labels_row, array_ops.ones_like(pred_is_pos))
    label_is_neg = math_ops.logical_not(label_is_pos)
    weights_row = None
    if weights is not None:
        weights = _broadcast_weights(weights, predictions)
        weights_row = array_ops.reshape(weights, [1, -1])
    conditions = {"tp": (label_is_pos, pred_is_pos), "fn": (label_is_pos, pred_is_neg),
                  "tn": (label_is_neg, pred_is_neg), "fp": (label_is_neg, pred_is_pos)}
    values, update_ops = {}, {}
    for key in includes:
        var = metric_variable([num_thresholds], dtypes.float32, name=_COUNT_NAMES[key])
        hits = math_ops.cast(math_ops.logical_and(*conditions[key]), dtypes.float32)
        if weights_row is not None:
            hits = math_ops.multiply(hits, weights_row)
        update_ops[key] = var.assign_add(math_ops.reduce_sum(hits, 1))
        values[key] = var.value()
    return values, update_ops


def _count_at_thresholds(key, default_name):
    def metric(labels, predictions, thresholds, weights=None, metrics_collections=None,
               updates_collections=None, name=None):
        with variable_scope.variable_scope(name, default_name, (predictions, labels, weights)):
            values, updates = _confusion_matrix_at_thresholds(labels, predictions, thresholds,
                                                              weights, includes=(key,))
            return _finish(values[key], updates[key], metrics_collections, updates_collections)
    metric.__name__ = default_name
    return metric


true_positives_at_thresholds = _count_at_thresholds("tp", "true_positives")
false_positives_at_thresholds = _count_at_thresholds("fp", "false_positives")
false_negatives_at_thresholds = _count_at_thresholds("fn", "false_negatives")
true_negatives_at_thresholds = _count_at_thresholds("tn", "true_negatives")


def _ratio_at_thresholds(default_name, other_key):
    def metric(labels, predictions, thresholds, weights=None, metrics_collections=None,
               updates_collections=None, name=None):
        with variable_scope.variable_scope(name, default_name, (predictions, labels, weights)):
            values, updates = _confusion_matrix_at_thresholds(
                labels, predictions, thresholds, weights, includes=("tp", other_key))
            epsilon = 1e-7

            def compute(tp, other, op_name):
                return math_ops.div(tp, epsilon + tp + other, name=op_name)
            value = compute(values["tp"], values[other_key], "value")
            update_op = compute(updates["tp"], updates[other_key], "update_op")
            return _finish(value, update_op, metrics_collections, updates_collections)
    metric.__name__ = default_name + "_at_thresholds"
    return metric


precision_at_thresholds = _ratio_at_thresholds("precision_at_thresholds", "fp")
recall_at_thresholds = _ratio_at_thresholds("recall_at_thresholds", "fn")


def auc(labels, predictions, weights=None, num_thresholds=200, metrics_collections=None,
        updates_collections=None, curve="ROC", name=None, summation_method="trapezoidal",
        thresholds=None):
    """The area under the ROC or PR curve, a Riemann sum over num_thresholds
    thresholds spread evenly over [0, 1] (or the given `thresholds` with -eps
    and 1 + eps added). summation_method: trapezoidal, careful_interpolation
    (PR only: interpolates precision in the counts; ROC uses trapezoids),
    minoring or majoring."""
    with variable_scope.variable_scope(name, "auc", (labels, predictions, weights)):
        if curve not in ("ROC", "PR"):
            raise ValueError("curve must be either ROC or PR, %s unknown" % curve)
        if summation_method not in ("trapezoidal", "careful_interpolation", "minoring",
                                    "majoring"):
            raise ValueError("Invalid summation_method: %s" % summation_method)
        kepsilon = 1e-7
        if thresholds is not None:
            inner = sorted(float(t) for t in thresholds)
        else:
            if not isinstance(num_thresholds, int) or isinstance(num_thresholds, bool) or \
                    num_thresholds < 2:
                raise ValueError("num_thresholds must be at least 2, got %r" % num_thresholds)
            inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        all_thresholds = [0.0 - kepsilon] + inner + [1.0 + kepsilon]
        n = len(all_thresholds)
        values, updates = _confusion_matrix_at_thresholds(labels, predictions, all_thresholds,
                                                          weights)
        epsilon = 1.0e-6

        def head(x):
            return x[:n - 1]

        def tail(x):
            return x[1:]

        def interpolate_pr_auc(tp, fp, fn, op_name):
            # Precision is interpolated linearly in the true and predicted
            # positive counts between thresholds (Davis & Goadrich 2006).
            dtp = head(tp) - tail(tp)
            p = tp + fp
            dp = math_ops.maximum(head(p) - tail(p), 0.0)
            slope = math_ops.div_no_nan(dtp, dp)
            intercept = tail(tp) - slope * tail(p)
            both_positive = math_ops.logical_and(math_ops.greater(head(p), 0.0),
                                                 math_ops.greater(tail(p), 0.0))
            p_ratio = array_ops.where(both_positive,
                                      math_ops.div_no_nan(head(p), math_ops.maximum(tail(p), 0.0)),
                                      array_ops.ones_like(tail(p)))
            terms = math_ops.div_no_nan(slope * (dtp + intercept * math_ops.log(p_ratio)),
                                        math_ops.maximum(tail(tp) + tail(fn), 0.0))
            return math_ops.reduce_sum(terms, name=op_name)

        def compute_auc(tp, fn, tn, fp, op_name):
            if curve == "PR" and summation_method == "careful_interpolation":
                return interpolate_pr_auc(tp, fp, fn, op_name)
            rec = math_ops.div(tp + epsilon, tp + fn + epsilon)
            if curve == "ROC":
                x = math_ops.div(fp, fp + tn + epsilon)
                y = rec
            else:
                x = rec
                y = math_ops.div(tp + epsilon, tp + fp + epsilon)
            widths = head(x) - tail(x)
            if summation_method == "minoring":
                heights = math_ops.minimum(head(y), tail(y))
            elif summation_method == "majoring":
                heights = math_ops.maximum(head(y), tail(y))
            else:
                heights = (head(y) + tail(y)) / 2.0
            return math_ops.reduce_sum(math_ops.multiply(widths, heights), name=op_name)

        value = compute_auc(values["tp"], values["fn"], values["tn"], values["fp"], "value")
        update_op = compute_auc(updates["tp"], updates["fn"], updates["tn"], updates["fp"],
                                "update_op")
        return _finish(value, update_op, metrics_collections, updates_collections)


def _even_thresholds(num_thresholds, kepsilon):
    if not isinstance(num_thresholds, int) or isinstance(num_thresholds, bool) or \
            num_thresholds < 2:
        raise ValueError("num_thresholds must be an int of at least 2, got %r"
                         % (num_thresholds,))
    inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    return [0.0 - kepsilon] + inner + [1.0 + kepsilon]


def _rate_at_rate(default_name, given_value, given_name, compute, labels, predictions, weights,
                  num_thresholds, metrics_collections, updates_collections, name):
    if not isinstance(given_value, (int, float)) or not 0 <= given_value <= 1:
        raise ValueError("`%s` must be in the range [0, 1]." % given_name)
    with variable_scope.variable_scope(name, default_name, (predictions, labels, weights)):
        kepsilon = 1e-7
        thresholds = _even_thresholds(num_thresholds, kepsilon)
        values, updates = _confusion_matrix_at_thresholds(labels, predictions, thresholds,
                                                          weights)
        value = compute(values["tp"], values["tn"], values["fp"], values["fn"], kepsilon,
                        "value")
        update_op = compute(updates["tp"], updates["tn"], updates["fp"], updates["fn"],
                            kepsilon, "update_op")
        return _finish(value, update_op, metrics_collections, updates_collections)


def sensitivity_at_specificity(labels, predictions, specificity, weights=None,
                               num_thresholds=200, metrics_collections=None,
                               updates_collections=None, name=None):
    """The sensitivity (recall) at the threshold whose specificity is nearest
    `specificity` (the first such threshold), over num_thresholds thresholds."""
    def compute(tp, tn, fp, fn, kepsilon, op_name):
        specificities = math_ops.div(tn, tn + fp + kepsilon)
        index = math_ops.argmin(math_ops.abs(specificities - specificity), 0)
        tp_at = array_ops.gather(tp, index)
        return math_ops.div(tp_at, tp_at + array_ops.gather(fn, index) + kepsilon, name=op_name)
    return _rate_at_rate("sensitivity_at_specificity", specificity, "specificity", compute,
                         labels, predictions, weights, num_thresholds, metrics_collections,
                         updates_collections, name)


def specificity_at_sensitivity(labels, predictions, sensitivity, weights=None,
                               num_thresholds=200, metrics_collections=None,
                               updates_collections=None, name=None):
    """The specificity at the threshold whose sensitivity is nearest
    `sensitivity` (the last such threshold, as TF's), over num_thresholds
    thresholds."""
    def compute(tp, tn, fp, fn, kepsilon, op_name):
        sensitivities = math_ops.div(tp, tp + fn + kepsilon)
        distance = math_ops.abs(sensitivities - sensitivity)
        at_min = math_ops.cast(math_ops.equal(distance, math_ops.reduce_min(distance)),
                               dtypes.int64)
        index = math_ops.argmax(math_ops.cumsum(at_min), 0)  # the last nearest one
        tn_at = array_ops.gather(tn, index)
        return math_ops.div(tn_at, tn_at + array_ops.gather(fp, index) + kepsilon, name=op_name)
    return _rate_at_rate("specificity_at_sensitivity", sensitivity, "sensitivity", compute,
                         labels, predictions, weights, num_thresholds, metrics_collections,
                         updates_collections, name)


# --- per class -------------------------------------------------------------

def _flat_classes(labels, predictions, weights, num_classes):
    """Labels and predictions as flat int64 vectors, each checked (when run)
    to lie in [0, num_classes): an out-of-range class is an
    InvalidArgumentError, never a count in another class's cell."""
    labels = math_ops.cast(ops.convert_to_tensor(labels), dtypes.int64)
    predictions = math_ops.cast(ops.convert_to_tensor(predictions), dtypes.int64)
    checks = []
    for what, t in (("labels", labels), ("predictions", predictions)):
        checks.append(check_ops.assert_non_negative(t, message="`%s` contains negative values"
                                                    % what))
        checks.append(check_ops.assert_less(t, math_ops.cast(num_classes, dtypes.int64),
                                            message="`%s` out of bound" % what))
    with ops.control_dependencies(checks):
        labels = array_ops.reshape(labels, [-1])
        predictions = array_ops.reshape(predictions, [-1])
    if weights is not None:
        weights = array_ops.reshape(math_ops.cast(weights, dtypes.float32), [-1])
    return labels, predictions, weights


def _check_num_classes(num_classes, metric):
    if not isinstance(num_classes, int) or isinstance(num_classes, bool) or num_classes < 1:
        raise ValueError("%s: num_classes must be a positive Python int, got %r"
                         % (metric, num_classes))


def _streaming_confusion_matrix(labels, predictions, num_classes, weights):
    """The running [num_classes, num_classes] float64 confusion matrix (rows
    are labels, columns predictions) and the op adding one batch to it."""
    total_cm = metric_variable([num_classes, num_classes], dtypes.float64,
                               name="total_confusion_matrix")
    labels, predictions, weights = _flat_classes(labels, predictions, weights,
                                                 num_classes)
    index = labels * num_classes + predictions
    counts = array_ops.ones_like(index, dtype=dtypes.float64) if weights is None else \
        math_ops.cast(weights, dtypes.float64)
    current = math_ops.unsorted_segment_sum(counts, index, num_classes * num_classes)
    update_op = total_cm.assign_add(array_ops.reshape(current, [num_classes, num_classes]))
    return total_cm.value(), update_op


def mean_iou(labels, predictions, num_classes, weights=None, metrics_collections=None,
             updates_collections=None, name=None):
    """The mean over classes of intersection / union (classes absent from both
    labels and predictions are left out). update_op returns the updated
    confusion matrix, as TF's."""
    _check_num_classes(num_classes, "mean_iou")
    with variable_scope.variable_scope(name, "mean_iou", (predictions, labels, weights)):
        predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
        total_cm, update_op = _streaming_confusion_matrix(labels, predictions, num_classes,
                                                          weights)
        sum_over_row = math_ops.cast(math_ops.reduce_sum(total_cm, 0), dtypes.float32)
        sum_over_col = math_ops.cast(math_ops.reduce_sum(total_cm, 1), dtypes.float32)
        cm_diag = math_ops.cast(array_ops.matrix_diag_part(total_cm), dtypes.float32)
        denominator = sum_over_row + sum_over_col - cm_diag
        num_valid = math_ops.reduce_sum(
            math_ops.cast(math_ops.not_equal(denominator, 0.0), dtypes.float32))
        denominator = array_ops.where(math_ops.greater(denominator, 0.0), denominator,
                                      array_ops.ones_like(denominator))
        iou = math_ops.div(cm_diag, denominator)
        value = array_ops.where(math_ops.greater(num_valid, 0.0),
                                math_ops.reduce_sum(iou) / num_valid, 0.0, name="mean_iou")
        return _finish(value, update_op, metrics_collections, updates_collections)


def mean_per_class_accuracy(labels, predictions, num_classes, weights=None,
                            metrics_collections=None, updates_collections=None, name=None):
    """The mean over classes of the fraction of each class's labels predicted
    right (classes never seen count as 0); update_op returns the per-class
    accuracies, as TF's."""
    _check_num_classes(num_classes, "mean_per_class_accuracy")
    with variable_scope.variable_scope(name, "mean_accuracy", (predictions, labels, weights)):
        predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
        labels, predictions, weights = _flat_classes(labels, predictions, weights,
                                                 num_classes)
        total = metric_variable([num_classes], dtypes.float32, name="total")
        count = metric_variable([num_classes], dtypes.float32, name="count")
        ones = math_ops.cast(array_ops.ones_like(labels), dtypes.float32)
        is_correct = math_ops.cast(math_ops.equal(predictions, labels), dtypes.float32)
        if weights is not None:
            ones = ones * weights
            is_correct = is_correct * weights
        update_total = total.assign_add(math_ops.unsorted_segment_sum(ones, labels, num_classes))
        update_count = count.assign_add(
            math_ops.unsorted_segment_sum(is_correct, labels, num_classes))
        value = math_ops.reduce_mean(math_ops.div_no_nan(count.value(), total.value()),
                                     name="mean_accuracy")
        # As TF's: update_op gives the per-class accuracies, value their mean.
        update_op = math_ops.div_no_nan(update_count, update_total, name="update_op")
        return _finish(value, update_op, metrics_collections, updates_collections)


# --- top-k precision and recall ----------------------------------------------

def _at_k_name(base, k, class_id):
    return "%s_at_%d" % (base, k) + ("" if class_id is None else "_class%d" % class_id)


def _at_k_counts(labels, predictions, k, class_id, weights):
    """Per example (flattened), the float64 counts of the top-k classes of
    `predictions` that are among the example's labels (tp), that are not
    (fp), and of the labels not among the top k (fn); labels are a set per
    example; a label outside [0, num_classes) is never among the top k, so
    it counts as a false negative, as TF's set difference does. With
    class_id, only that class counts."""
    predictions = ops.convert_to_tensor(predictions)
    num_classes = predictions.shape.dims[-1].value if predictions.shape.ndims else None
    if num_classes is None:
        raise ValueError("precision/recall_at_k need predictions of a known rank and number of "
                         "classes (last dimension), got %s" % predictions.shape)
    if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= num_classes:
        raise ValueError("k must be an int in [1, %d] (the number of classes), got %r"
                         % (num_classes, k))
    if class_id is not None and not 0 <= class_id < num_classes:
        raise ValueError("class_id must be in [0, %d), got %r" % (num_classes, class_id))
    labels = math_ops.cast(ops.convert_to_tensor(labels), dtypes.int64)
    if labels.shape.ndims is not None and labels.shape.ndims == predictions.shape.ndims - 1:
        labels = array_ops.expand_dims(labels, -1)
    _, top = nn_ops.top_k(predictions, k)
    flat_top = array_ops.reshape(top, [-1, k])
    flat_labels = array_ops.reshape(labels, [array_ops.shape(flat_top)[0], -1])
    top_mask = math_ops.reduce_max(array_ops.one_hot(flat_top, num_classes, dtype=dtypes.float64),
                                   axis=1)
    label_mask = math_ops.reduce_max(
        array_ops.one_hot(flat_labels, num_classes, dtype=dtypes.float64), axis=1)
    if class_id is not None:
        top_mask = top_mask[:, class_id:class_id + 1]
        label_mask = label_mask[:, class_id:class_id + 1]
    tp = math_ops.reduce_sum(top_mask * label_mask, 1)
    fp = math_ops.reduce_sum(top_mask * (1.0 - label_mask), 1)
    fn = math_ops.reduce_sum(label_mask * (1.0 - top_mask), 1)
    if class_id is None:
        # TF takes set differences of the raw labels: each distinct label
        # outside [0, num_classes) (say a -1 pad) is one more false negative.
        outside = math_ops.logical_or(math_ops.less(flat_labels, 0),
                                      math_ops.greater_equal(flat_labels, num_classes))
        same = math_ops.equal(array_ops.expand_dims(flat_labels, 2),
                              array_ops.expand_dims(flat_labels, 1))
        positions = math_ops.range(array_ops.shape(flat_labels)[1])
        earlier = math_ops.less(array_ops.expand_dims(positions, 0),
                                array_ops.expand_dims(positions, 1))  # [j, i]: i < j
        repeated = math_ops.reduce_any(math_ops.logical_and(same, earlier), axis=2)
        first_outside = math_ops.logical_and(outside, math_ops.logical_not(repeated))
        fn = fn + math_ops.reduce_sum(math_ops.cast(first_outside, dtypes.float64), 1)
    if weights is not None:
        weights = math_ops.cast(ops.convert_to_tensor(weights), dtypes.float64)
        example_shape = predictions.shape[:-1]
        if weights.shape.ndims is not None and example_shape.ndims is not None and \
                weights.shape.ndims == example_shape.ndims + 1:
            weights = array_ops.squeeze(weights, [-1])
        ones = array_ops.ones_like(math_ops.reduce_sum(
            math_ops.cast(predictions, dtypes.float64), -1))
        weights = array_ops.reshape(math_ops.multiply(weights, ones), [-1])
        tp, fp, fn = tp * weights, fp * weights, fn * weights
    return tp, fp, fn


def _streaming_at_k(base, other_name, pick_other, labels, predictions, k, class_id, weights,
                    metrics_collections, updates_collections, name):
    with ops.name_scope(name, _at_k_name(base, k, class_id), (predictions, labels, weights)):
        tp, fp, fn = _at_k_counts(labels, predictions, k, class_id, weights)
        other = pick_other(fp, fn)
        tp_var = metric_variable([], dtypes.float64, name=_at_k_name("true_positive", k, class_id))
        other_var = metric_variable([], dtypes.float64, name=_at_k_name(other_name, k, class_id))
        tp_update = tp_var.assign_add(math_ops.reduce_sum(tp))
        other_update = other_var.assign_add(math_ops.reduce_sum(other))
        # 0/0 is NaN, as TF's (nothing predicted or labelled yet).
        tp_value = tp_var.value()
        value = math_ops.div(tp_value, tp_value + other_var.value(), name="value")
        update_op = math_ops.div(tp_update, tp_update + other_update, name="update_op")
        return _finish(value, update_op, metrics_collections, updates_collections)


def precision_at_k(labels, predictions, k, class_id=None, weights=None, metrics_collections=None,
                   updates_collections=None, name=None):
    """Of the top-k classes of `predictions` ([..., num_classes] scores), the
    fraction among the example's `labels` (int class ids, [...] or
    [..., num_labels]); with class_id, the precision of that class. float64,
    NaN before anything is counted."""
    return _streaming_at_k("precision", "false_positive", lambda fp, fn: fp, labels,
                           predictions, k, class_id, weights, metrics_collections,
                           updates_collections, name)


def recall_at_k(labels, predictions, k, class_id=None, weights=None, metrics_collections=None,
                updates_collections=None, name=None):
    """Of the examples' labels, the fraction among the top-k classes of
    `predictions` (see precision_at_k; distinct labels outside [0,
    num_classes), such as -1 pads, count as missed, as in TF)."""
    return _streaming_at_k("recall", "false_negative", lambda fp, fn: fn, labels, predictions,
                           k, class_id, weights, metrics_collections, updates_collections, name)
