"""Graphs TensorFlow 2.21 writes in graph mode (tf.compat.v1), imported and
run by Weir unchanged: tf.gradients graphs (MatMul's grad_a/grad_b attrs,
BroadcastGradientArgs, the softmax loss), and resource-variable training
graphs (VarHandleOp with debug_name, an optimizer's update ops, init)."""
import numpy as np
import pytest

import weir as wr

GRADIENTS = '''
rng = np.random.RandomState(0)
g = tf.Graph()
with g.as_default():
    x = v1.placeholder(tf.float32, [None, 4], name="x")
    labels = v1.placeholder(tf.float32, [None, 3], name="labels")
    w1 = tf.constant(rng.randn(4, 8).astype(np.float32), name="w1")
    b1 = tf.constant(rng.randn(8).astype(np.float32), name="b1")
    w2 = tf.constant(rng.randn(8, 3).astype(np.float32), name="w2")
    h = tf.nn.relu(tf.matmul(x, w1) + b1)
    logits = tf.matmul(h, w2, transpose_b=False)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits),
                          name="loss")
    grads = tf.gradients(loss, [w1, b1, w2, x])
    names = [t.name for t in grads]
    xv = rng.randn(5, 4).astype(np.float32)
    lv = np.eye(3, dtype=np.float32)[rng.randint(0, 3, 5)]
    with v1.Session(graph=g) as s:
        values = s.run([loss] + grads, {x: xv, labels: lv})
save_graph(g.as_graph_def(), "gradients")
save_arrays("gradients", x=xv, labels=lv, names=np.array(names),
            **{f"arr_{i}": v for i, v in enumerate(values)})
'''

TRAINING = '''
rng = np.random.RandomState(1)
g = tf.Graph()
with g.as_default():
    x = v1.placeholder(tf.float32, [None, 3], name="x")
    y = v1.placeholder(tf.float32, [None, 1], name="y")
    w = v1.get_variable("w", initializer=rng.randn(3, 1).astype(np.float32), use_resource=True)
    b = v1.get_variable("b", shape=[1], initializer=v1.zeros_initializer(), use_resource=True)
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y), name="loss")
    train = v1.train.GradientDescentOptimizer(0.1).minimize(loss, name="train")
    w_value = tf.identity(w, name="w_value")
    init = v1.global_variables_initializer()
    xv = rng.randn(8, 3).astype(np.float32)
    yv = rng.randn(8, 1).astype(np.float32)
    losses = []
    with v1.Session(graph=g) as s:
        s.run(init)
        for _ in range(4):
            losses.append(s.run([loss, train], {x: xv, y: yv})[0])
        wv = s.run(w_value)
save_graph(g.as_graph_def(), "training")
save_arrays("training", x=xv, y=yv, losses=np.array(losses), w=wv, init=np.array(init.name))
'''


def import_graph(path):
    graph = wr.Graph()
    with graph.as_default():
        wr.import_graph_def(path.read_bytes(), name="")
    return graph


def test_tf_gradients_graph(run_tf):
    out = run_tf(GRADIENTS, "gradients")
    data = np.load(out / "gradients.npz")
    graph = import_graph(out / "gradients.pb")
    fetches = ["loss:0"] + [str(n) for n in data["names"]]
    with wr.Session(graph=graph) as sess:
        got = sess.run(fetches, {"x:0": data["x"], "labels:0": data["labels"]})
    for i, (name, value) in enumerate(zip(fetches, got)):
        np.testing.assert_allclose(value, data[f"arr_{i}"], rtol=1e-5, atol=1e-6, err_msg=name)


def test_tf_resource_variable_training_graph(run_tf):
    out = run_tf(TRAINING, "training")
    data = np.load(out / "training.npz")
    graph = import_graph(out / "training.pb")
    with wr.Session(graph=graph) as sess:
        sess.run(str(data["init"]))
        losses = [sess.run(["loss:0", "train"], {"x:0": data["x"], "y:0": data["y"]})[0]
                  for _ in range(4)]
        w = sess.run("w_value:0")
    np.testing.assert_allclose(losses, data["losses"], rtol=1e-5)
    np.testing.assert_allclose(w, data["w"], rtol=1e-5, atol=1e-6)


TEXT_TF2 = '''
# Control flow v2 (TF 2.x's default, also in tf.compat.v1 graphs): a While with a
# TensorArray, whose TensorList nodes carry `experimental_type` (FullTypeDef), written as
# text (tf.io.write_graph as_text), where the type ids appear by name.
g = tf.Graph()
with g.as_default():
    x = v1.placeholder(tf.float32, [3], name="x")
    def body(i, ta):
        return i + 1, ta.write(i, x * tf.cast(i + 1, tf.float32))
    _, ta = tf.while_loop(lambda i, ta: i < 4, body,
                          [tf.constant(0), tf.TensorArray(tf.float32, size=4)])
    out = tf.identity(ta.stack(), name="out")
    xv = np.array([1.0, -2.0, 0.5], np.float32)
    with v1.Session(graph=g) as s:
        value = s.run(out, {x: xv})
tf.io.write_graph(g.as_graph_def(add_shapes=True), OUT, "text_tf2.pbtxt", as_text=True)
save_arrays("text_tf2", x=xv, out=value)
'''


def test_tf2_text_graph_with_full_types(run_tf):
    out = run_tf(TEXT_TF2, "text_tf2")
    text = (out / "text_tf2.pbtxt").read_text()
    assert "experimental_type" in text and "TFT_" in text  # what the test is about
    data = np.load(out / "text_tf2.npz")
    graph = wr.Graph()
    with graph.as_default():
        wr.import_graph_def(text, name="")
    with wr.Session(graph=graph) as sess:
        got = sess.run("out:0", {"x:0": data["x"]})
    np.testing.assert_allclose(got, data["out"], rtol=1e-6)
