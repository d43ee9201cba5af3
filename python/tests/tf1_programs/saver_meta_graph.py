"""Checkpoints the TF1 way: a Saver with max_to_keep and
keep_checkpoint_every_n_hours, saved every few steps with global_step,
tf.train.latest_checkpoint / get_checkpoint_state, then a restore into a fresh
graph rebuilt from the .meta file by import_meta_graph (tensors found by name
and through a collection), training resumed there, and a variable read back
with tf.train.load_variable / NewCheckpointReader."""
import os
import tempfile
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

tf.reset_default_graph()
rng = np.random.RandomState(21)
x_data = rng.randn(40, 4).astype(np.float32)
y_data = np.tanh(x_data @ rng.randn(4, 2)).astype(np.float32)
w1_init = (0.5 * rng.randn(4, 8)).astype(np.float32)
w2_init = (0.5 * rng.randn(8, 2)).astype(np.float32)
ckpt_dir = tempfile.mkdtemp()
prefix = os.path.join(ckpt_dir, "model")

with tf.Graph().as_default():
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    y = tf.placeholder(tf.float32, [None, 2], name="y")
    with tf.variable_scope("net"):
        w1 = tf.get_variable("w1", initializer=w1_init)
        b1 = tf.get_variable("b1", [8], initializer=tf.zeros_initializer())
        w2 = tf.get_variable("w2", initializer=w2_init)
    hidden = tf.nn.tanh(tf.nn.xw_plus_b(x, w1, b1))
    pred = tf.identity(tf.matmul(hidden, w2), name="pred")
    loss = tf.reduce_mean(tf.squared_difference(pred, y), name="loss")
    global_step = tf.Variable(0, trainable=False, name="global_step")
    train_op = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss, global_step=global_step, name="train")
    tf.add_to_collection("train_op", train_op)
    saver = tf.train.Saver(max_to_keep=3, keep_checkpoint_every_n_hours=10000)
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(1, 26):
            l, _ = sess.run([loss, train_op], {x: x_data, y: y_data})
            losses.append(float(l))
            if step % 5 == 0:
                saver.save(sess, prefix, global_step=global_step)
        expected = sess.run(pred, {x: x_data})
        w1_trained = sess.run(w1)

state = tf.train.get_checkpoint_state(ckpt_dir)
latest = tf.train.latest_checkpoint(ckpt_dir)
assert state.model_checkpoint_path == latest

with tf.Graph().as_default() as g:
    restorer = tf.train.import_meta_graph(latest + ".meta")
    with tf.Session() as sess:
        restorer.restore(sess, latest)
        x_t = g.get_tensor_by_name("x:0")
        pred_t = g.get_tensor_by_name("pred:0")
        restored = sess.run(pred_t, {x_t: x_data})
        resumed_train = tf.get_collection("train_op")[0]
        feed = {x_t: x_data, "y:0": y_data}
        resumed = []
        for _ in range(5):
            l, _ = sess.run(["loss:0", resumed_train], feed)
            resumed.append(float(l))
        step_after = sess.run("global_step:0")
        restored_variables = sorted(v.op.name for v in tf.global_variables())
        trainable = sorted(v.op.name for v in tf.trainable_variables())

reader = tf.train.NewCheckpointReader(latest)
shapes = reader.get_variable_to_shape_map()
assert np.array_equal(reader.get_tensor("net/w1"), w1_trained)
assert np.array_equal(tf.train.load_variable(ckpt_dir, "net/w1"), w1_trained)
assert np.array_equal(restored, expected), "restore gives the saved model's predictions"
assert resumed[0] < losses[0] and resumed[-1] < resumed[0], (losses, resumed)
kept = sorted(os.path.basename(p) for p in state.all_model_checkpoint_paths)
RESULT = {"losses": losses, "resumed": resumed, "kept": kept, "latest": os.path.basename(latest),
          "step_after": int(step_after), "restored_variables": restored_variables, "trainable": trainable, "shapes": {k: list(v) for k, v in shapes.items() if "Momentum" not in k},
          "predictions": restored[:3].ravel().tolist()}
