"""Metrics over class ids: mean IoU and mean per-class accuracy from a
streaming confusion matrix, and top-k precision / recall."""
from weir.framework import dtypes
from weir.framework import ops
from weir.ops import array_ops
from weir.ops import check_ops
from weir.ops import math_ops
from weir.ops import nn_ops
from weir.ops import variable_scope
from weir.metrics.base import (
    _finish, _remove_squeezable_dimensions, metric_variable)

__all__ = [
    "mean_iou", "mean_per_class_accuracy", "precision_at_k", "recall_at_k",
    "precision_at_top_k", "recall_at_top_k", "sparse_precision_at_k",
    "average_precision_at_k", "sparse_average_precision_at_k",
]


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


def _at_k_counts(labels, predictions, k, class_id, weights, top=None):
    """Per example (flattened), the float64 counts of the top-k classes of
    `predictions` that are among the example's labels (tp), that are not
    (fp), and of the labels not among the top k (fn); labels are a set per
    example; a label outside [0, num_classes) is never among the top k, so
    it counts as a false negative, as TF's set difference does. With
    class_id, only that class counts."""
    if top is not None:
        return _top_k_counts(labels, top, class_id, weights)
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


def _top_k_counts(labels, top, class_id, weights):
    """_at_k_counts for given top-k class ids `top` ([..., k], tf1api's
    precision_at_top_k / recall_at_top_k): the classes are those of top and
    labels (the one-hot depth is their maximum + 1)."""
    top = math_ops.cast(ops.convert_to_tensor(top), dtypes.int64)
    if top.shape.ndims is None or top.shape.ndims < 1:
        raise ValueError("predictions_idx must have a known rank >= 1, got %s" % top.shape)
    k = top.shape.dims[-1].value
    if k is None:
        raise ValueError("predictions_idx must have a known last dimension (k), got %s"
                         % top.shape)
    labels = math_ops.cast(ops.convert_to_tensor(labels), dtypes.int64)
    if labels.shape.ndims is not None and labels.shape.ndims == top.shape.ndims - 1:
        labels = array_ops.expand_dims(labels, -1)
    flat_top = array_ops.reshape(top, [-1, k])
    flat_labels = array_ops.reshape(labels, [array_ops.shape(flat_top)[0], -1])
    depth = math_ops.maximum(
        math_ops.maximum(math_ops.reduce_max(array_ops.concat(
            [array_ops.reshape(flat_top, [-1]), array_ops.reshape(flat_labels, [-1]),
             ops.convert_to_tensor([-1], dtypes.int64)], 0)) + 1, 1),
        ops.convert_to_tensor(0 if class_id is None else class_id + 1, dtypes.int64))
    depth = math_ops.cast(depth, dtypes.int32)
    top_mask = math_ops.reduce_max(array_ops.one_hot(flat_top, depth, dtype=dtypes.float64),
                                   axis=1)
    label_mask = math_ops.reduce_max(
        array_ops.one_hot(flat_labels, depth, dtype=dtypes.float64), axis=1)
    if class_id is not None:
        top_mask = top_mask[:, class_id:class_id + 1]
        label_mask = label_mask[:, class_id:class_id + 1]
    tp = math_ops.reduce_sum(top_mask * label_mask, 1)
    fp = math_ops.reduce_sum(top_mask * (1.0 - label_mask), 1)
    fn = math_ops.reduce_sum(label_mask * (1.0 - top_mask), 1)
    if class_id is None:
        # A negative label (a -1 pad) is one more false negative per distinct value.
        outside = math_ops.less(flat_labels, 0)
        same = math_ops.equal(array_ops.expand_dims(flat_labels, 2),
                              array_ops.expand_dims(flat_labels, 1))
        positions = math_ops.range(array_ops.shape(flat_labels)[1])
        earlier = math_ops.less(array_ops.expand_dims(positions, 0),
                                array_ops.expand_dims(positions, 1))
        repeated = math_ops.reduce_any(math_ops.logical_and(same, earlier), axis=2)
        first_outside = math_ops.logical_and(outside, math_ops.logical_not(repeated))
        fn = fn + math_ops.reduce_sum(math_ops.cast(first_outside, dtypes.float64), 1)
    if weights is not None:
        weights = math_ops.cast(ops.convert_to_tensor(weights), dtypes.float64)
        example_shape = top.shape[:-1]
        if weights.shape.ndims is not None and example_shape.ndims is not None and \
                weights.shape.ndims == example_shape.ndims + 1:
            weights = array_ops.squeeze(weights, [-1])
        ones = array_ops.ones_like(math_ops.reduce_sum(math_ops.cast(top, dtypes.float64), -1))
        weights = array_ops.reshape(math_ops.multiply(weights, ones), [-1])
        tp, fp, fn = tp * weights, fp * weights, fn * weights
    return tp, fp, fn


def _streaming_at_k(base, other_name, pick_other, labels, predictions, k, class_id, weights,
                    metrics_collections, updates_collections, name, top=None):
    with ops.name_scope(name, _at_k_name(base, k, class_id), (predictions, labels, weights)):
        tp, fp, fn = _at_k_counts(labels, predictions, k, class_id, weights, top)
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


def _top_k_of(predictions_idx, k):
    """(top, k for the default name): as in TF, k only names the metric."""
    top = ops.convert_to_tensor(predictions_idx)
    if top.shape.ndims is None or top.shape.dims[-1].value is None:
        raise ValueError("predictions_idx must have a known last dimension, got %s" % top.shape)
    if k is None:
        return top, top.shape.dims[-1].value
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise ValueError("k must be a positive int, got %r" % (k,))
    return top, k


def precision_at_top_k(labels, predictions_idx, k=None, class_id=None, weights=None,
                       metrics_collections=None, updates_collections=None, name=None):
    """precision_at_k of given top-k class ids ([..., k]); k only names the
    metric (as in TF)."""
    top, k = _top_k_of(predictions_idx, k)
    return _streaming_at_k("precision", "false_positive", lambda fp, fn: fp, labels, None, k,
                           class_id, weights, metrics_collections, updates_collections, name,
                           top=top)


def recall_at_top_k(labels, predictions_idx, k=None, class_id=None, weights=None,
                    metrics_collections=None, updates_collections=None, name=None):
    """recall_at_k of given top-k class ids ([..., k]); k only names it."""
    top, k = _top_k_of(predictions_idx, k)
    return _streaming_at_k("recall", "false_negative", lambda fp, fn: fn, labels, None, k,
                           class_id, weights, metrics_collections, updates_collections, name,
                           top=top)


sparse_precision_at_k = precision_at_k  # TF1's deprecated name


def _average_precision_counts(labels, top, num_classes):
    """Per example (flattened), the average precision of the ranked class
    ids `top` [n, k]: sum over ranks i of precision@i where top[i] is a
    label, over min(k, number of label entries in [0, num_classes)) (0/0 is
    NaN, as in TF)."""
    k = top.shape.dims[-1].value
    flat_labels = array_ops.reshape(labels, [array_ops.shape(top)[0], -1])
    hit = math_ops.cast(math_ops.reduce_any(math_ops.equal(
        array_ops.expand_dims(top, 2), array_ops.expand_dims(flat_labels, 1)), axis=2),
        dtypes.float64)
    ranks = math_ops.cast(math_ops.range(1, k + 1), dtypes.float64)
    precision = math_ops.cumsum(hit, axis=1) / ranks
    valid = math_ops.logical_and(math_ops.greater_equal(flat_labels, 0),
                                 math_ops.less(flat_labels, num_classes))
    # The label entries in range count, repeats included (as TF counts them).
    entries = math_ops.reduce_sum(math_ops.cast(valid, dtypes.float64), 1)
    relevant = math_ops.minimum(entries, float(k))
    return math_ops.reduce_sum(precision * hit, 1) / relevant


def average_precision_at_k(labels, predictions, k, weights=None, metrics_collections=None,
                           updates_collections=None, name=None):
    """The mean over examples of the average precision of the top k classes
    of `predictions` ([..., num_classes] scores) against `labels` (class ids,
    [...] or [..., num_labels]; ids outside [0, num_classes) are not labels).
    float64; an example with no labels makes it NaN, as in TF."""
    predictions = ops.convert_to_tensor(predictions)
    num_classes = predictions.shape.dims[-1].value if predictions.shape.ndims else None
    if num_classes is None:
        raise ValueError("average_precision_at_k needs predictions of a known rank and number "
                         "of classes (last dimension), got %s" % predictions.shape)
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise ValueError("k must be a positive int, got %r" % (k,))
    k_used = min(k, num_classes)
    with ops.name_scope(name, "average_precision_at_%d" % k, (predictions, labels, weights)):
        labels = math_ops.cast(ops.convert_to_tensor(labels), dtypes.int64)
        if labels.shape.ndims is not None and labels.shape.ndims == predictions.shape.ndims - 1:
            labels = array_ops.expand_dims(labels, -1)
        _, top = nn_ops.top_k(predictions, k_used)
        top = math_ops.cast(array_ops.reshape(top, [-1, k_used]), dtypes.int64)
        ap = _average_precision_counts(labels, top, num_classes)
        if weights is None:
            w = array_ops.ones_like(ap)
        else:
            w = math_ops.cast(ops.convert_to_tensor(weights), dtypes.float64)
            example_shape = predictions.shape[:-1]
            if w.shape.ndims is not None and example_shape.ndims is not None and \
                    w.shape.ndims == example_shape.ndims + 1:
                w = array_ops.squeeze(w, [-1])
            ones = array_ops.ones_like(math_ops.reduce_sum(
                math_ops.cast(predictions, dtypes.float64), -1))
            w = array_ops.reshape(math_ops.multiply(w, ones), [-1])
        total = metric_variable([], dtypes.float64, name="total")
        count = metric_variable([], dtypes.float64, name="max")
        total_update = total.assign_add(math_ops.reduce_sum(ap * w))
        count_update = count.assign_add(math_ops.reduce_sum(w))
        value = math_ops.div(total.value(), count.value(), name="value")
        update_op = math_ops.div(total_update, count_update, name="update_op")
        return _finish(value, update_op, metrics_collections, updates_collections)


sparse_average_precision_at_k = average_precision_at_k  # TF1's deprecated name
