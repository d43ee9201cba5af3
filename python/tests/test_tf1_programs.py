"""TF1 graph-mode programs of the tutorial kind, run unchanged but for the import line.

Each program below is written once, for TensorFlow (`import tensorflow.compat.v1 as tf` and
`tf.disable_eager_execution()`); the test runs the same text under Weir in this process with those two
lines replaced by `import weir as tf`, and under TensorFlow 2.21 (/opt/weir-peers/bin/python) in one
subprocess, and compares what each program leaves in RESULT. Initial values come from numpy, so the
deterministic programs must agree step by step (float32 rounding aside); the one with dropout must agree
before training and learn as well. Each program also checks itself (loss falling, restored predictions equal).
"""
import numpy as np
import pytest

import tf1_run
from tf1_run import WEIR_HEADER

PROGRAMS = {}
program = tf1_run.program_registry(PROGRAMS)


@program("mlp_layers_adam")
def _():
    """
    import numpy as np
    import tensorflow.compat.v1 as tf
    tf.disable_eager_execution()

    tf.reset_default_graph()
    rng = np.random.RandomState(0)
    x_data = rng.randn(256, 10).astype(np.float32)
    y_data = np.argmax(x_data @ rng.randn(10, 4), axis=1).astype(np.int32)
    w1 = (rng.randn(10, 32) * 0.3).astype(np.float32)
    w2 = (rng.randn(32, 4) * 0.3).astype(np.float32)

    x = tf.placeholder(tf.float32, [None, 10], name="x")
    y = tf.placeholder(tf.int32, [None], name="y")
    h = tf.layers.dense(x, 32, activation=tf.nn.relu, kernel_initializer=tf.constant_initializer(w1))
    logits = tf.layers.dense(h, 4, kernel_initializer=tf.constant_initializer(w2))
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    train_op = tf.train.AdamOptimizer(0.01).minimize(loss)
    names = sorted(v.name for v in tf.trainable_variables())

    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(60):
            l, _ = sess.run([loss, train_op], feed_dict={x: x_data, y: y_data})
            losses.append(float(l))
    assert losses[-1] < 0.5 * losses[0], losses
    RESULT = {"losses": losses, "names": names}
    """


@program("convnet_layers_dropout")
def _():
    """
    import numpy as np
    import tensorflow.compat.v1 as tf
    tf.disable_eager_execution()

    tf.reset_default_graph()
    tf.set_random_seed(7)
    rng = np.random.RandomState(1)
    images = rng.rand(64, 8, 8, 1).astype(np.float32)
    # The class is the quadrant holding the brightest 2x2 patch.
    labels = np.zeros(64, np.int32)
    for i in range(64):
        q = rng.randint(4)
        r, c = 4 * (q // 2) + rng.randint(3), 4 * (q % 2) + rng.randint(3)
        images[i, r:r + 2, c:c + 2, 0] += 2.0
        labels[i] = q
    k1 = (rng.randn(3, 3, 1, 8) * 0.3).astype(np.float32)
    k2 = (rng.randn(4 * 4 * 8, 4) * 0.1).astype(np.float32)

    x = tf.placeholder(tf.float32, [None, 8, 8, 1])
    y = tf.placeholder(tf.int32, [None])
    training = tf.placeholder(tf.bool, [], name="training")
    conv = tf.layers.conv2d(x, 8, 3, padding="same", activation=tf.nn.relu,
                            kernel_initializer=tf.constant_initializer(k1))
    pool = tf.layers.max_pooling2d(conv, pool_size=2, strides=2)
    flat = tf.layers.flatten(pool)
    drop = tf.layers.dropout(flat, rate=0.3, training=training)
    logits = tf.layers.dense(drop, 4, kernel_initializer=tf.constant_initializer(k2))
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1, output_type=tf.int32), y), tf.float32))
    train_op = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss)
    shapes = [conv.shape.as_list(), pool.shape.as_list(), flat.shape.as_list()]

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        eval_feed = {x: images, y: labels, training: False}
        first = sess.run([loss, accuracy], eval_feed)
        for step in range(80):
            sess.run(train_op, {x: images, y: labels, training: True})
        last = sess.run([loss, accuracy], eval_feed)
        # Dropout is off when not training: evaluating twice gives the same loss.
        again = sess.run(loss, eval_feed)
    assert last[0] < 0.5 * first[0] and last[0] == again, (first, last, again)
    RESULT = {"first_loss": float(first[0]), "first_accuracy": float(first[1]),
              "last_loss": float(last[0]), "last_accuracy": float(last[1]), "shapes": shapes}
    """


@program("gradients_manual_updates")
def _():
    """
    import numpy as np
    import tensorflow.compat.v1 as tf
    tf.disable_eager_execution()

    tf.reset_default_graph()
    rng = np.random.RandomState(2)
    x_data = rng.randn(100, 3).astype(np.float32)
    y_data = (x_data @ np.array([[1.5], [-2.0], [0.7]], np.float32) + 0.4
              + 0.01 * rng.randn(100, 1)).astype(np.float32)

    W = tf.Variable(np.zeros([3, 1], np.float32), name="W")
    b = tf.Variable(0.0, name="b")
    with tf.name_scope("model"):
        pred = tf.matmul(x_data, W) + b
        loss = tf.reduce_mean(tf.square(pred - y_data))
    grad_W, grad_b = tf.gradients(loss, [W, b])
    lr = 0.1
    train = tf.group(W.assign_sub(lr * grad_W), b.assign_sub(lr * grad_b))

    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        g0 = sess.run(grad_W)
        for _ in range(100):
            losses.append(float(sess.run(loss)))
            sess.run(train)
        W_final, b_final = sess.run([W, b])
    # d loss / dW at W = 0, b = 0 is -2/n X^T y.
    assert np.allclose(g0, -2.0 / 100 * x_data.T @ y_data, rtol=1e-4, atol=1e-5)
    assert np.allclose(W_final.ravel(), [1.5, -2.0, 0.7], atol=0.02), W_final
    RESULT = {"losses": losses, "W": W_final.ravel().tolist(), "b": float(b_final),
              "scope": pred.name.split("/")[0]}
    """


@program("saver_round_trip")
def _():
    """
    import os, tempfile
    import numpy as np
    import tensorflow.compat.v1 as tf
    tf.disable_eager_execution()

    rng = np.random.RandomState(3)
    x_data = rng.randn(32, 5).astype(np.float32)
    y_data = rng.randn(32, 2).astype(np.float32)
    w0 = rng.randn(5, 2).astype(np.float32)
    ckpt_dir = tempfile.mkdtemp()

    def model():
        x = tf.placeholder(tf.float32, [None, 5], name="x")
        w = tf.get_variable("w", initializer=w0)
        b = tf.get_variable("b", [2], initializer=tf.zeros_initializer())
        return x, tf.matmul(x, w) + b

    with tf.Graph().as_default():
        x, pred = model()
        loss = tf.reduce_mean(tf.square(pred - y_data))
        step = tf.train.get_or_create_global_step()
        train_op = tf.train.GradientDescentOptimizer(0.05).minimize(loss, global_step=step)
        saver = tf.train.Saver(max_to_keep=2)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            paths = []
            for i in range(3):
                for _ in range(5):
                    sess.run(train_op, {x: x_data})
                paths.append(saver.save(sess, os.path.join(ckpt_dir, "model.ckpt"), global_step=step))
            before = sess.run(pred, {x: x_data})
            trained_step = int(sess.run(step))

    latest = tf.train.latest_checkpoint(ckpt_dir)
    with tf.Graph().as_default():
        x, pred = model()
        saver = tf.train.Saver()
        with tf.Session() as sess:
            saver.restore(sess, latest)
            after = sess.run(pred, {x: x_data})
    kept = sorted(f for f in os.listdir(ckpt_dir) if f.endswith(".index"))
    assert np.array_equal(before, after), (before, after)
    assert not np.allclose(before, x_data @ w0)  # training moved the weights
    RESULT = {"paths": [os.path.basename(p) for p in paths], "latest": os.path.basename(latest),
              "kept": kept, "step": trained_step, "predictions": after.ravel().tolist()}
    """


@program("feed_dict_classification")
def _():
    """
    import numpy as np
    import tensorflow.compat.v1 as tf
    tf.disable_eager_execution()

    tf.reset_default_graph()
    rng = np.random.RandomState(4)
    centers = rng.randn(3, 2) * 3
    labels = rng.randint(3, size=600)
    points = (centers[labels] + rng.randn(600, 2)).astype(np.float32)

    x = tf.placeholder(tf.float32, shape=[None, 2], name="x")
    y = tf.placeholder(tf.int64, shape=[None], name="y")
    W = tf.Variable(tf.zeros([2, 3]))
    b = tf.Variable(tf.zeros([3]))
    logits = tf.matmul(x, W) + b
    cross_entropy = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    global_step = tf.Variable(0, trainable=False, name="global_step")
    learning_rate = tf.train.exponential_decay(0.5, global_step, 10, 0.9, staircase=True)
    train_step = tf.train.GradientDescentOptimizer(learning_rate).minimize(cross_entropy, global_step=global_step)
    correct = tf.equal(tf.argmax(logits, 1), y)
    accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))

    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    losses = []
    for epoch in range(5):
        for i in range(0, 600, 50):
            _, l = sess.run([train_step, cross_entropy], feed_dict={x: points[i:i + 50], y: labels[i:i + 50]})
            losses.append(float(l))
    acc, lr_final, step = sess.run([accuracy, learning_rate, global_step], {x: points, y: labels})
    sess.close()
    assert acc > 0.85 and losses[-1] < losses[0], (acc, losses)
    RESULT = {"losses": losses, "accuracy": float(acc), "learning_rate": float(lr_final), "step": int(step),
              "argmax_dtype": correct.op.inputs[0].dtype.name}
    """


@program("flags_logging_metrics_gfile")
def _():
    """
    import os, tempfile
    import numpy as np
    import tensorflow.compat.v1 as tf
    tf.disable_eager_execution()

    flags = tf.app.flags
    flags.DEFINE_integer("tf1prog_batch_size", 32, "examples per batch")
    flags.DEFINE_float("tf1prog_learning_rate", 0.1, "step size")
    flags.DEFINE_string("tf1prog_model_dir", "", "where to write")
    FLAGS = flags.FLAGS
    rest = FLAGS(["prog", "--tf1prog_batch_size=50", "--tf1prog_learning_rate", "0.3", "extra"])
    tf.logging.set_verbosity(tf.logging.INFO)

    tf.reset_default_graph()
    rng = np.random.RandomState(5)
    x_data = rng.randn(400, 4).astype(np.float32)
    y_data = (x_data @ np.array([1.0, -2.0, 0.5, 0.0]) + 0.3 * rng.randn(400) > 0).astype(np.int64)
    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.placeholder(tf.int64, [None])
    w = tf.get_variable("w", initializer=np.zeros([4, 1], np.float32))
    b = tf.get_variable("b", initializer=np.float32(0))
    logits = tf.squeeze(tf.matmul(x, w), [1]) + b
    prob = tf.sigmoid(logits)
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.cast(y, tf.float32), logits=logits))
    train = tf.train.GradientDescentOptimizer(FLAGS.tf1prog_learning_rate).minimize(loss)
    predicted = tf.cast(prob > 0.5, tf.int64)
    with tf.name_scope("eval"):
        acc, acc_up = tf.metrics.accuracy(y, predicted)
        auc, auc_up = tf.metrics.auc(y, prob)
        prec, prec_up = tf.metrics.precision(y, predicted)
        rec, rec_up = tf.metrics.recall(y, predicted)
        mean_loss, loss_up = tf.metrics.mean(loss)
    updates = tf.group(acc_up, auc_up, prec_up, rec_up, loss_up)

    model_dir = FLAGS.tf1prog_model_dir or tempfile.mkdtemp()
    tf.gfile.MakeDirs(os.path.join(model_dir, "eval"))
    evals = []
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        for epoch in range(3):
            for i in range(0, 400, FLAGS.tf1prog_batch_size):
                sess.run(train, {x: x_data[i:i + FLAGS.tf1prog_batch_size], y: y_data[i:i + FLAGS.tf1prog_batch_size]})
            sess.run(tf.local_variables_initializer())  # a fresh evaluation each epoch
            for i in range(0, 400, 100):
                sess.run(updates, {x: x_data[i:i + 100], y: y_data[i:i + 100]})
            values = sess.run([acc, auc, prec, rec, mean_loss])
            tf.logging.info("epoch %d: accuracy %.3f auc %.3f", epoch, values[0], values[1])
            evals.append([float(v) for v in values])
        probs = sess.run(prob, {x: x_data[:5]})
    path = os.path.join(model_dir, "eval", "predictions.csv")
    with tf.gfile.GFile(path, "w") as f:
        for p in probs:
            f.write("%.4f\\n" % p)
    with tf.gfile.GFile(path) as f:
        lines = [line.strip() for line in f]
    assert evals[-1][0] > 0.85 and evals[-1][1] > evals[0][1] - 1e-6, evals
    RESULT = {"rest": rest, "evals": evals, "lines": len(lines), "listing": tf.gfile.ListDirectory(os.path.join(model_dir, "eval")),
              "metric_vars": sorted(v.op.name for v in tf.local_variables()), "exists": tf.gfile.Exists(path)}
    """


@pytest.fixture(scope="module")
def tf_results():
    # tf.compat.v1.layers needs Keras 2 (the tf-keras package) under TensorFlow 2.16+.
    return tf1_run.run_tf_programs(PROGRAMS, TF_USE_LEGACY_KERAS="1")


def _run_weir(name):
    return tf1_run.run_weir_program(PROGRAMS[name], name)


def _tf(tf_results, name):
    return tf1_run.tf_result(tf_results, name)


def test_the_programs_differ_only_in_the_import():
    for name, text in PROGRAMS.items():
        weir_text = tf1_run.as_weir(text)
        assert "tensorflow" not in weir_text and WEIR_HEADER in weir_text
        assert len(weir_text.splitlines()) == len(text.splitlines()) - 1


def test_mlp_with_layers_and_adam(tf_results):
    tf = _tf(tf_results, "mlp_layers_adam")
    wr = _run_weir("mlp_layers_adam")
    assert wr["names"] == tf["names"] == ["dense/bias:0", "dense/kernel:0", "dense_1/bias:0", "dense_1/kernel:0"]
    np.testing.assert_allclose(wr["losses"], tf["losses"], rtol=2e-3, atol=1e-4)


def test_convnet_with_layers_and_dropout(tf_results):
    tf = _tf(tf_results, "convnet_layers_dropout")
    wr = _run_weir("convnet_layers_dropout")
    assert wr["shapes"] == tf["shapes"] == [[None, 8, 8, 8], [None, 4, 4, 8], [None, 128]]
    # Before training everything is determined by numpy's values.
    np.testing.assert_allclose(wr["first_loss"], tf["first_loss"], rtol=1e-4)
    assert wr["first_accuracy"] == tf["first_accuracy"]
    # Dropout masks differ (another generator); both learn the task.
    assert wr["last_accuracy"] >= 0.9 and tf["last_accuracy"] >= 0.9, (wr, tf)
    assert wr["last_loss"] < 3 * tf["last_loss"] + 0.05, (wr, tf)


def test_custom_loop_with_gradients_and_assign_sub(tf_results):
    tf = _tf(tf_results, "gradients_manual_updates")
    wr = _run_weir("gradients_manual_updates")
    np.testing.assert_allclose(wr["losses"], tf["losses"], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(wr["W"], tf["W"], rtol=1e-4)
    np.testing.assert_allclose(wr["b"], tf["b"], rtol=1e-4)
    assert wr["scope"] == tf["scope"] == "model"


def test_saver_round_trip(tf_results):
    tf = _tf(tf_results, "saver_round_trip")
    wr = _run_weir("saver_round_trip")
    assert wr["paths"] == tf["paths"] == ["model.ckpt-5", "model.ckpt-10", "model.ckpt-15"]
    assert wr["latest"] == tf["latest"] == "model.ckpt-15"
    assert wr["kept"] == tf["kept"] == ["model.ckpt-10.index", "model.ckpt-15.index"]  # max_to_keep=2
    assert wr["step"] == tf["step"] == 15
    np.testing.assert_allclose(wr["predictions"], tf["predictions"], rtol=1e-4, atol=1e-5)


def test_feed_dict_classification(tf_results):
    tf = _tf(tf_results, "feed_dict_classification")
    wr = _run_weir("feed_dict_classification")
    assert wr["argmax_dtype"] == tf["argmax_dtype"] == "int64"
    assert wr["step"] == tf["step"] == 60
    np.testing.assert_allclose(wr["learning_rate"], tf["learning_rate"], rtol=1e-6)  # 0.5 * 0.9 ** 6
    np.testing.assert_allclose(wr["learning_rate"], 0.5 * 0.9 ** 6, rtol=1e-6)
    np.testing.assert_allclose(wr["losses"], tf["losses"], rtol=1e-3, atol=1e-5)
    assert abs(wr["accuracy"] - tf["accuracy"]) <= 1 / 600 + 1e-6


def test_flags_logging_metrics_and_gfile(tf_results):
    tf = _tf(tf_results, "flags_logging_metrics_gfile")
    wr = _run_weir("flags_logging_metrics_gfile")
    assert wr["rest"] == tf["rest"] == ["prog", "extra"]
    assert wr["metric_vars"] == tf["metric_vars"]
    assert "eval/accuracy/total" in wr["metric_vars"] and "eval/auc/true_positives" in wr["metric_vars"]
    np.testing.assert_allclose(wr["evals"], tf["evals"], rtol=1e-4, atol=1e-5)
    assert wr["lines"] == tf["lines"] == 5
    assert wr["listing"] == tf["listing"] == ["predictions.csv"]
    assert wr["exists"] and tf["exists"]
