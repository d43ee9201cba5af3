"""weir.metrics (TF1's tf.metrics) against TensorFlow 2.21: one program builds
every metric on the same batches, runs the update ops batch by batch and reads
the values; each metric's value and update result, its state variables' names
and collections must equal TF's. Plus the errors TF raises."""
import numpy as np
import pytest

import weir as wr
from tf1_run import run_tf, run_weir

PROGRAM = '''
import numpy as np
rng = np.random.RandomState(0)
batches = []
for b in range(3):
    n = 20 + 7 * b
    labels = rng.randint(2, size=n).astype(np.int64)
    scores = np.clip(0.35 * labels + 0.65 * rng.rand(n), 0, 1).astype(np.float32)
    classes = rng.randint(4, size=n).astype(np.int32)
    pred_classes = np.where(rng.rand(n) < 0.6, classes, rng.randint(4, size=n)).astype(np.int32)
    weights = rng.rand(n).astype(np.float32)
    reg_labels = rng.randn(n, 1).astype(np.float32)
    reg_preds = (reg_labels + 0.3 * rng.randn(n, 1)).astype(np.float32)
    batches.append((labels, scores, classes, pred_classes, weights, reg_labels, reg_preds))

logit_batches = [rng.randn(20 + 7 * b, 5).astype(np.float32) for b in range(3)]
multi_label_batches = [rng.randint(-1, 5, size=(20 + 7 * b, 2)).astype(np.int64) for b in range(3)]
lg = tf.placeholder(tf.float32, [None, 5]); ml = tf.placeholder(tf.int64, [None, 2])
lab = tf.placeholder(tf.int64, [None]); sc = tf.placeholder(tf.float32, [None])
cls = tf.placeholder(tf.int32, [None]); pcls = tf.placeholder(tf.int32, [None])
w = tf.placeholder(tf.float32, [None])
rl = tf.placeholder(tf.float32, [None, 1]); rp = tf.placeholder(tf.float32, [None, 1])
binary = tf.cast(tf.greater(sc, 0.5), tf.int64)
m = {}
m["accuracy"] = tf.metrics.accuracy(lab, binary)
m["accuracy_w"] = tf.metrics.accuracy(cls, pcls, weights=w)
m["mean"] = tf.metrics.mean(sc)
m["mean_w"] = tf.metrics.mean(sc, weights=w)
m["mse"] = tf.metrics.mean_squared_error(rl, rp)
m["mse_w"] = tf.metrics.mean_squared_error(rl, rp, weights=w)
m["mae"] = tf.metrics.mean_absolute_error(rl, rp)
m["rmse"] = tf.metrics.root_mean_squared_error(rl, rp, weights=w)
m["precision"] = tf.metrics.precision(lab, binary)
m["precision_w"] = tf.metrics.precision(lab, binary, weights=w)
m["recall"] = tf.metrics.recall(lab, binary)
m["tp"] = tf.metrics.true_positives(lab, binary)
m["fp"] = tf.metrics.false_positives(lab, binary, weights=w)
m["fn"] = tf.metrics.false_negatives(lab, binary)
m["tn"] = tf.metrics.true_negatives(lab, binary)
m["auc_roc"] = tf.metrics.auc(lab, sc)
m["auc_roc_w"] = tf.metrics.auc(lab, sc, weights=w, num_thresholds=50)
m["auc_pr"] = tf.metrics.auc(lab, sc, curve="PR")
m["auc_pr_careful"] = tf.metrics.auc(lab, sc, curve="PR", summation_method="careful_interpolation")
m["auc_minoring"] = tf.metrics.auc(lab, sc, summation_method="minoring")
m["auc_majoring"] = tf.metrics.auc(lab, sc, curve="PR", summation_method="majoring")
m["auc_thresholds"] = tf.metrics.auc(lab, sc, thresholds=[0.25, 0.5, 0.75])
m["mean_iou"] = tf.metrics.mean_iou(cls, pcls, num_classes=5)
m["mean_iou_w"] = tf.metrics.mean_iou(cls, pcls, num_classes=4, weights=w)
m["mpca"] = tf.metrics.mean_per_class_accuracy(cls, pcls, num_classes=5)
m["mpca_w"] = tf.metrics.mean_per_class_accuracy(cls, pcls, num_classes=4, weights=w)
m["tp_thr"] = tf.metrics.true_positives_at_thresholds(lab, sc, [0.2, 0.5, 0.9])
m["fn_thr"] = tf.metrics.false_negatives_at_thresholds(lab, sc, [0.2, 0.5, 0.9], weights=w)
m["prec_thr"] = tf.metrics.precision_at_thresholds(lab, sc, [0.2, 0.5, 0.9])
m["rec_thr"] = tf.metrics.recall_at_thresholds(lab, sc, [0.2, 0.5, 0.9])
m["pct_below"] = tf.metrics.percentage_below(sc, 0.4)
m["mean_tensor"] = tf.metrics.mean_tensor(tf.reduce_mean(rl, 0))
m["p_at_1"] = tf.metrics.precision_at_k(tf.cast(cls, tf.int64), lg, 1)
m["p_at_3"] = tf.metrics.precision_at_k(ml, lg, 3, weights=w)
m["r_at_2"] = tf.metrics.recall_at_k(ml, lg, 2)
m["r_at_2_class"] = tf.metrics.recall_at_k(tf.cast(cls, tf.int64), lg, 2, class_id=3)
m["p_at_2_class"] = tf.metrics.precision_at_k(ml, lg, 2, class_id=0, weights=w)
m["mre"] = tf.metrics.mean_relative_error(rl, rp, normalizer=tf.abs(rl) + 0.5)
m["mcd"] = tf.metrics.mean_cosine_distance(tf.nn.l2_normalize(tf.concat([rl, rp], 1), 1),
                                           tf.nn.l2_normalize(tf.concat([rp, rl * rl], 1), 1), dim=1)
m["sens_at_spec"] = tf.metrics.sensitivity_at_specificity(lab, sc, 0.7)
m["sens_at_spec_w"] = tf.metrics.sensitivity_at_specificity(lab, sc, 0.4, weights=w, num_thresholds=30)
m["spec_at_sens"] = tf.metrics.specificity_at_sensitivity(lab, sc, 0.8)
m["spec_at_sens_w"] = tf.metrics.specificity_at_sensitivity(lab, sc, 0.5, weights=w, num_thresholds=30)
m["named"] = tf.metrics.accuracy(lab, binary, name="my_acc", metrics_collections=["mc"],
                                 updates_collections=["uc"])

names = sorted(m)
def fl(x):
    return np.asarray(x, np.float64).ravel().tolist()
RESULT = {"updates": [], "values": [], "reset": None}
with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    RESULT["initial"] = {k: fl(sess.run(m[k][0])) for k in names if k != "mean_tensor"}
    for b, (labels, scores, classes, pred_classes, weights, reg_labels, reg_preds) in enumerate(batches):
        feed = {lab: labels, sc: scores, cls: classes, pcls: pred_classes, w: weights, rl: reg_labels, rp: reg_preds,
                lg: logit_batches[b], ml: multi_label_batches[b]}
        ups = sess.run({k: m[k][1] for k in names}, feed)
        RESULT["updates"].append({k: fl(v) for k, v in ups.items()})
        vals = sess.run({k: m[k][0] for k in names})
        RESULT["values"].append({k: fl(v) for k, v in vals.items()})
    sess.run(tf.local_variables_initializer())
    RESULT["reset"] = fl(sess.run(m["accuracy"][0]))
RESULT["local"] = sorted(v.op.name for v in tf.local_variables())
RESULT["metric_vars"] = sorted(v.op.name for v in tf.get_collection(tf.GraphKeys.METRIC_VARIABLES))
RESULT["collections"] = [len(tf.get_collection("mc")), len(tf.get_collection("uc"))]
RESULT["trainable"] = len(tf.trainable_variables())
'''


@pytest.fixture(scope="module")
def results():
    return run_weir(PROGRAM), run_tf(PROGRAM)


def test_every_metric_matches_tf_batch_by_batch(results):
    wr_out, tf_out = results
    assert set(wr_out["initial"]) == set(tf_out["initial"])
    for name, expected in tf_out["initial"].items():
        np.testing.assert_allclose(wr_out["initial"][name], expected, atol=1e-6, err_msg=name,
                                   equal_nan=True)  # top-k metrics are 0/0 = NaN at first
    for kind in ("updates", "values"):
        assert len(wr_out[kind]) == len(tf_out[kind]) == 3
        for step, (got, expected) in enumerate(zip(wr_out[kind], tf_out[kind])):
            assert set(got) == set(expected)
            for name in expected:
                np.testing.assert_allclose(got[name], expected[name], rtol=2e-5, atol=1e-6,
                                           err_msg=f"{kind} {step} {name}")
    # The update of the last batch equals the value read after it.
    last_update, last_value = wr_out["updates"][-1], wr_out["values"][-1]
    for name in ("accuracy", "auc_roc", "precision", "mean_iou"):
        assert last_update[name] == last_value[name] or name == "mean_iou"
    # Not constant: the batches move the metrics.
    assert wr_out["values"][0]["auc_roc"] != wr_out["values"][2]["auc_roc"]


def test_metric_state_is_local_and_named_as_tf(results):
    wr_out, tf_out = results
    assert wr_out["local"] == tf_out["local"]
    assert wr_out["metric_vars"] == tf_out["metric_vars"] == wr_out["local"]
    assert "accuracy/total" in wr_out["local"] and "accuracy_1/count" in wr_out["local"]
    assert "my_acc/total" in wr_out["local"] and "auc/true_positives" in wr_out["local"]
    assert "recall_at_2_class3/false_negative_at_2_class3" in wr_out["local"]
    assert wr_out["collections"] == tf_out["collections"] == [1, 1]
    assert wr_out["trainable"] == tf_out["trainable"] == 0
    assert wr_out["reset"] == tf_out["reset"] == [0.0]


def test_accuracy_by_hand():
    with wr.Graph().as_default():
        labels = wr.placeholder(wr.int32, [None])
        preds = wr.placeholder(wr.int32, [None, 1])  # squeezed to labels' rank
        acc, update = wr.metrics.accuracy(labels, preds, weights=[[1.0], [2.0], [1.0], [0.0]])
        with wr.Session() as sess:
            sess.run(wr.local_variables_initializer())
            assert sess.run(acc) == 0.0  # nothing seen yet: 0, not NaN
            got = sess.run(update, {labels: [1, 2, 3, 4], preds: [[1], [2], [0], [0]]})
            np.testing.assert_allclose(got, 3.0 / 4.0)
            got = sess.run(update, {labels: [1, 2, 3, 4], preds: [[0], [0], [3], [9]]})
            np.testing.assert_allclose(got, 4.0 / 8.0)
            np.testing.assert_allclose(sess.run(acc), 0.5)


def test_errors_as_tf():
    with wr.Graph().as_default():
        labels = wr.constant([0, 1, 1])
        with pytest.raises(ValueError, match="curve must be either ROC or PR"):
            wr.metrics.auc(labels, [0.1, 0.2, 0.3], curve="XY")
        with pytest.raises(ValueError, match="Invalid summation_method"):
            wr.metrics.auc(labels, [0.1, 0.2, 0.3], summation_method="simpson")
        with pytest.raises(ValueError, match="incompatible"):
            wr.metrics.accuracy(labels, wr.constant([0, 1]))
        with pytest.raises(ValueError, match="num_classes"):
            wr.metrics.mean_iou(labels, labels, num_classes=0)
        with pytest.raises(ValueError, match="can not be broadcast"):
            wr.metrics.mean(wr.constant([1.0, 2.0, 3.0]), weights=wr.constant([1.0, 2.0]))
        value, update = wr.metrics.auc(labels, wr.constant([0.1, 1.5, 0.3]))
        with wr.Session() as sess:
            sess.run(wr.local_variables_initializer())
            with pytest.raises(wr.errors.InvalidArgumentError,
                               match=r"predictions must be in \[0, 1\]"):
                sess.run(update)


def test_classes_out_of_range_are_errors_not_miscounts():
    with wr.Graph().as_default():
        labels = wr.placeholder(wr.int32, [None])
        preds = wr.placeholder(wr.int32, [None])
        iou, iou_update = wr.metrics.mean_iou(labels, preds, num_classes=3)
        acc, acc_update = wr.metrics.mean_per_class_accuracy(labels, preds, num_classes=3)
        with wr.Session() as sess:
            sess.run(wr.local_variables_initializer())
            for bad in ({labels: [0, 3], preds: [0, 1]}, {labels: [0, 1], preds: [-1, 1]}):
                for update in (iou_update, acc_update):
                    with pytest.raises(wr.errors.InvalidArgumentError,
                                       match="out of bound|negative"):
                        sess.run(update, bad)
            # Nothing was counted by the failed steps.
            np.testing.assert_array_equal(sess.run(iou_update, {labels: [0, 2], preds: [0, 2]}),
                                          [[1, 0, 0], [0, 0, 0], [0, 0, 1]])
            assert sess.run(iou) == 1.0
        with pytest.raises(ValueError, match="num_thresholds"):
            wr.metrics.auc(labels, wr.cast(preds, wr.float32), num_thresholds=1.5)
