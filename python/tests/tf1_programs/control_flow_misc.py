"""The TF1 grab bag around a training loop: tf.cond and tf.while_loop,
tf.py_func, tf.Print and tf.print, tf.assert_* under control_dependencies,
tf.clip_by_global_norm, tf.train.exponential_decay, tf.group / tf.tuple, and
sess.partial_run."""
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

tf.reset_default_graph()
rng = np.random.RandomState(13)
x_data = rng.randn(30, 3).astype(np.float32)
y_data = (x_data @ np.array([[1.0], [2.0], [-3.0]], np.float32)).astype(np.float32)

x = tf.placeholder(tf.float32, [None, 3], name="x")
y = tf.placeholder(tf.float32, [None, 1], name="y")
use_l1 = tf.placeholder(tf.bool, [], name="use_l1")
w = tf.Variable(tf.ones([3, 1]), name="w")
err = tf.matmul(x, w) - y
# tf.cond picks the loss; tf.Print logs it (to stderr) and passes it through.
loss = tf.cond(use_l1, lambda: tf.reduce_mean(tf.abs(err)), lambda: tf.reduce_mean(tf.square(err)))
loss = tf.Print(loss, [loss], message="loss: ", first_n=2)
with tf.control_dependencies([tf.assert_non_negative(loss), tf.assert_rank(x, 2),
                              tf.assert_equal(tf.shape(x)[0], tf.shape(y)[0])]):
    loss = tf.identity(loss)

global_step = tf.Variable(0, trainable=False, name="global_step")
learning_rate = tf.train.exponential_decay(0.1, global_step, decay_steps=5, decay_rate=0.5, staircase=False)
grads = tf.gradients(loss, [w])
clipped, norm = tf.clip_by_global_norm(grads, clip_norm=2.0)
apply = tf.assign_sub(w, learning_rate * clipped[0])
train_op = tf.group(apply, tf.assign_add(global_step, 1), name="train")
loss_t, norm_t = tf.tuple([loss, norm])

# A while_loop: Newton's iteration for sqrt(2) with a counter, and a loop over a TensorArray-free sum.
i0, v0 = tf.constant(0), tf.constant(1.0)
iters, root = tf.while_loop(lambda i, v: tf.abs(v * v - 2.0) > 1e-6, lambda i, v: (i + 1, 0.5 * (v + 2.0 / v)),
                            [i0, v0])
n = tf.placeholder(tf.int32, [])
_, triangle = tf.while_loop(lambda k, s: k <= n, lambda k, s: (k + 1, s + k), [tf.constant(1), tf.constant(0)])
# py_func: numpy inside the graph, and its result used by graph ops.
median = tf.py_func(lambda a: np.float32(np.median(a)), [tf.reshape(err, [-1])], tf.float32, stateful=False)
median.set_shape([])
print_op = tf.print("step", global_step, "w", tf.reshape(w, [-1]), summarize=3)
# partial_run: feed a, fetch c; then feed b, fetch d, in the same step.
a = tf.placeholder(tf.float32, [])
b = tf.placeholder(tf.float32, [])
c = a * 3.0
d = c + b
noise = tf.random_uniform([], seed=3)  # drawn once in the step: shared by both pieces
e = a + noise
f = e * b

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    trajectory = []
    for step in range(20):
        feed = {x: x_data, y: y_data, use_l1: step % 2 == 1}
        l, g, _ = sess.run([loss_t, norm_t, train_op], feed)
        trajectory.append([float(l), float(g)])
    lr_final, w_final, med = sess.run([learning_rate, w, median], {x: x_data, y: y_data})
    sess.run(print_op)
    loop = sess.run([iters, root, triangle], {n: 10})
    handle = sess.partial_run_setup([c, d, e, f], [a, b])
    c_value, e_value = sess.partial_run(handle, [c, e], feed_dict={a: 2.0})
    d_value, f_value = sess.partial_run(handle, [d, f], feed_dict={b: 1.5})
    try:
        sess.run(loss, {x: x_data, y: y_data[:5], use_l1: False})
        assertion = "none"
    except tf.errors.InvalidArgumentError as e:
        assertion = "InvalidArgumentError"

assert trajectory[-1][0] < trajectory[0][0] and abs(loop[1] - 2 ** 0.5) < 1e-6 and loop[2] == 55
assert np.isclose(lr_final, 0.1 * 0.5 ** (20 / 5)) and c_value == 6.0 and d_value == 7.5
assert np.isclose(f_value, e_value * 1.5) and 2.0 <= e_value < 3.0, (e_value, f_value)
assert np.isclose(med, np.median(x_data @ w_final - y_data), atol=1e-5)
RESULT = {"trajectory": trajectory, "lr": float(lr_final), "w": w_final.ravel().tolist(),
          "median": float(med), "loop": [int(loop[0]), float(loop[1]), int(loop[2])],
          "partial_run": [float(c_value), float(d_value)], "assertion": assertion}
