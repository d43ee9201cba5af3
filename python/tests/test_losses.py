"""weir.losses (tf.compat.v1.losses): values against numpy formulas (the same
programs were checked against TensorFlow 2.21 when written: equal to 5
digits), reductions, the LOSSES collection and get_total_loss."""
import numpy as np
import pytest

import weir as wr

R = wr.losses.Reduction


def _data():
    rng = np.random.RandomState(3)
    logits = rng.randn(5, 4).astype(np.float32)
    labels = np.array([0, 3, 1, 1, 2])
    onehot = np.eye(4, dtype=np.float32)[labels]
    weights = np.array([1.0, 0.0, 2.0, 0.5, 0.0], np.float32)
    pred = rng.rand(5, 4).astype(np.float32)
    return logits, labels, onehot, weights, pred


def _xent(logits, onehot):
    z = logits - logits.max(1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(1, keepdims=True))
    return -(onehot * logp).sum(1)


def test_losses_match_their_formulas_and_reductions():
    logits, labels, onehot, w, pred = _data()
    with wr.Graph().as_default():
        t = {
            "sce": wr.losses.softmax_cross_entropy(onehot, logits),
            "sce_smooth": wr.losses.softmax_cross_entropy(onehot, logits, weights=w,
                                                          label_smoothing=0.1),
            "sparse_w": wr.losses.sparse_softmax_cross_entropy(labels, logits, weights=w),
            "sum": wr.losses.sparse_softmax_cross_entropy(labels, logits, reduction=R.SUM),
            "mean": wr.losses.sparse_softmax_cross_entropy(labels, logits, weights=w,
                                                           reduction=R.MEAN),
            "batch": wr.losses.sparse_softmax_cross_entropy(
                labels, logits, weights=w, reduction=R.SUM_OVER_BATCH_SIZE),
            "none": wr.losses.sparse_softmax_cross_entropy(labels, logits, weights=w,
                                                           reduction=R.NONE),
            "mse": wr.losses.mean_squared_error(onehot, pred),
            "mse_w": wr.losses.mean_squared_error(onehot, pred, weights=w[:, None]),
            "abs_zero_w": wr.losses.absolute_difference(onehot, pred, weights=0.0),
            "huber": wr.losses.huber_loss(onehot, logits, delta=0.7),
            "hinge": wr.losses.hinge_loss(onehot, logits),
            "log": wr.losses.log_loss(onehot, pred),
            "sig": wr.losses.sigmoid_cross_entropy(onehot, logits, label_smoothing=0.2),
        }
        assert t["sce"].name == "softmax_cross_entropy_loss/value:0"  # TF's name
        assert len(wr.losses.get_losses()) == len(t)
        with wr.Session() as sess:
            v = sess.run(t)
    per = _xent(logits, onehot)
    smooth = onehot * 0.9 + 0.1 / 4
    np.testing.assert_allclose(v["sce"], per.mean(), rtol=1e-5)
    np.testing.assert_allclose(v["sce_smooth"], (_xent(logits, smooth) * w).sum() / 3, rtol=1e-5)
    np.testing.assert_allclose(v["sparse_w"], (per * w).sum() / 3, rtol=1e-5)  # 3 non-zero
    np.testing.assert_allclose(v["sum"], per.sum(), rtol=1e-5)
    np.testing.assert_allclose(v["mean"], (per * w).sum() / w.sum(), rtol=1e-5)
    np.testing.assert_allclose(v["batch"], (per * w).sum() / 5, rtol=1e-5)
    np.testing.assert_allclose(v["none"], per * w, rtol=1e-5)
    np.testing.assert_allclose(v["mse"], ((pred - onehot) ** 2).mean(), rtol=1e-5)
    np.testing.assert_allclose(v["mse_w"], (((pred - onehot) ** 2) * w[:, None]).sum() / 12,
                               rtol=1e-5)
    assert v["abs_zero_w"] == 0.0  # no non-zero weight: 0, not NaN
    err = np.abs(logits - onehot)
    quad = np.minimum(err, 0.7)
    np.testing.assert_allclose(v["huber"], (0.5 * quad ** 2 + 0.7 * (err - quad)).mean(),
                               rtol=1e-5)
    np.testing.assert_allclose(v["hinge"], np.maximum(0, 1 - (2 * onehot - 1) * logits).mean(),
                               rtol=1e-5)
    np.testing.assert_allclose(
        v["log"], (-onehot * np.log(pred + 1e-7) - (1 - onehot) * np.log(1 - pred + 1e-7)).mean(),
        rtol=1e-5)
    z = onehot * 0.8 + 0.1
    np.testing.assert_allclose(
        v["sig"], (np.maximum(logits, 0) - logits * z + np.log1p(np.exp(-np.abs(logits)))).mean(),
        rtol=1e-5)
    # Spot values from TensorFlow 2.21's tf.compat.v1.losses on the same data.
    np.testing.assert_allclose([v["sce"], v["sce_smooth"], v["huber"]],
                               [0.98385, 1.56585, 0.32615], atol=1e-5)


def test_total_loss_adds_regularization_and_trains():
    with wr.Graph().as_default():
        x = wr.constant([[1.0, 2.0]])
        w = wr.get_variable("w", [2, 1], initializer=wr.ones_initializer(),
                            regularizer=lambda v: 0.5 * wr.reduce_sum(v * v))
        loss = wr.losses.mean_squared_error([[1.0]], wr.matmul(x, w))
        total = wr.losses.get_total_loss()
        assert total.name == "total_loss:0"
        train = wr.train.GradientDescentOptimizer(0.01).minimize(total)
        with wr.Session() as sess:
            sess.run(wr.global_variables_initializer())
            l0, t0, r0 = sess.run([loss, total, wr.losses.get_regularization_loss()])
            assert (l0, r0, t0) == pytest.approx((4.0, 1.0, 5.0))
            for _ in range(5):
                sess.run(train)
            assert sess.run(total) < t0
        assert wr.losses.get_total_loss(add_regularization_losses=False).shape.ndims == 0


def test_loss_argument_errors():
    with wr.Graph().as_default():
        with pytest.raises(ValueError, match="labels must not be None"):
            wr.losses.mean_squared_error(None, [1.0])
        with pytest.raises(ValueError, match="incompatible"):
            wr.losses.mean_squared_error([[1.0, 2.0]], [[1.0, 2.0, 3.0]])
        with pytest.raises(ValueError, match="Invalid Reduction"):
            wr.losses.compute_weighted_loss([1.0], reduction="avg")
        with pytest.raises(ValueError, match="No losses"):
            wr.losses.get_total_loss()
