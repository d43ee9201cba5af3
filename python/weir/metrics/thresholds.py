"""Metrics over thresholds of [0, 1] scores: tp / fn / tn / fp counts per
threshold, precision and recall at thresholds, AUC (ROC and PR), and
sensitivity / specificity at a given rate of the other."""
from weir.framework import dtypes
from weir.framework import ops
from weir.ops import array_ops
from weir.ops import check_ops
from weir.ops import math_ops
from weir.ops import variable_scope
from weir.metrics.base import (
    _broadcast_weights, _finish, _remove_squeezable_dimensions, metric_variable)

__all__ = [
    "true_positives_at_thresholds", "false_positives_at_thresholds",
    "false_negatives_at_thresholds", "true_negatives_at_thresholds", "precision_at_thresholds",
    "recall_at_thresholds", "auc", "sensitivity_at_specificity", "specificity_at_sensitivity",
]


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
