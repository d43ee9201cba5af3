"""A Layers-tutorial CNN: tf.layers conv2d / max_pooling2d / batch_normalization
/ dense / dropout behind a `training` placeholder, the moving averages run by
UPDATE_OPS control dependencies, tf.losses.sparse_softmax_cross_entropy,
AdamOptimizer and a global step. Kernels come from numpy (constant
initializers), so the first phase (dropout off) is deterministic."""
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

tf.reset_default_graph()
tf.set_random_seed(1234)
rng = np.random.RandomState(7)
n = 96
images = (0.3 * rng.rand(n, 12, 12, 1)).astype(np.float32)
labels = rng.randint(3, size=n).astype(np.int32)
for i in range(n):  # class 0: a horizontal bar, 1: a vertical bar, 2: a square
    r, c = rng.randint(2, 8, size=2)
    if labels[i] == 0:
        images[i, r, c:c + 4, 0] += 1.0
    elif labels[i] == 1:
        images[i, r:r + 4, c, 0] += 1.0
    else:
        images[i, r:r + 2, c:c + 2, 0] += 1.0
k1 = (rng.randn(3, 3, 1, 6) * 0.4).astype(np.float32)
k2 = (rng.randn(3, 3, 6, 8) * 0.2).astype(np.float32)
w_dense = (rng.randn(3 * 3 * 8, 16) * 0.1).astype(np.float32)
w_logits = (rng.randn(16, 3) * 0.3).astype(np.float32)


def cnn_model(features, is_training, dropout_on):
    input_layer = tf.reshape(features, [-1, 12, 12, 1])
    conv1 = tf.layers.conv2d(input_layer, filters=6, kernel_size=[3, 3], padding="same",
                             use_bias=False, kernel_initializer=tf.constant_initializer(k1))
    bn1 = tf.layers.batch_normalization(conv1, momentum=0.9, training=is_training)
    pool1 = tf.layers.max_pooling2d(tf.nn.relu(bn1), pool_size=[2, 2], strides=2)
    conv2 = tf.layers.conv2d(pool1, 8, [3, 3], padding="same", activation=tf.nn.relu,
                             kernel_initializer=tf.constant_initializer(k2))
    pool2 = tf.layers.max_pooling2d(conv2, pool_size=[2, 2], strides=2)
    pool2_flat = tf.reshape(pool2, [-1, 3 * 3 * 8])
    dense = tf.layers.dense(pool2_flat, units=16, activation=tf.nn.relu,
                            kernel_initializer=tf.constant_initializer(w_dense))
    dropout = tf.layers.dropout(dense, rate=0.4, training=dropout_on)
    return tf.layers.dense(dropout, units=3, kernel_initializer=tf.constant_initializer(w_logits))


x = tf.placeholder(tf.float32, [None, 12, 12, 1], name="x")
y = tf.placeholder(tf.int32, [None], name="y")
is_training = tf.placeholder_with_default(False, [], name="is_training")
dropout_on = tf.placeholder(tf.bool, [], name="dropout_on")
logits = cnn_model(x, is_training, dropout_on)
loss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
global_step = tf.train.get_or_create_global_step()
update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
with tf.control_dependencies(update_ops):
    train_op = tf.train.AdamOptimizer(learning_rate=0.01).minimize(loss, global_step=global_step)
predictions = tf.argmax(logits, axis=1, output_type=tf.int32)
accuracy = tf.reduce_mean(tf.cast(tf.equal(predictions, y), tf.float32))
moving_mean = [v for v in tf.global_variables() if "moving_mean" in v.name][0]

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    losses = []
    for step in range(30):
        batch = slice((step * 32) % n, (step * 32) % n + 32)
        l, _ = sess.run([loss, train_op], {x: images[batch], y: labels[batch], is_training: True,
                                           dropout_on: False})
        losses.append(float(l))
    for step in range(10):  # with dropout: random masks, still learning
        sess.run(train_op, {x: images, y: labels, is_training: True, dropout_on: True})
    eval_loss, eval_accuracy = sess.run([loss, accuracy], {x: images, y: labels, dropout_on: False})
    mean_value, step_value = sess.run([moving_mean, global_step])

assert losses[-1] < losses[0] and eval_accuracy > 0.6, (losses, eval_accuracy)
assert step_value == 40 and np.abs(mean_value).sum() > 0  # the moving mean moved
RESULT = {"losses": losses, "eval_loss": float(eval_loss), "eval_accuracy": float(eval_accuracy),
          "step": int(step_value), "update_ops": len(update_ops),
          "variables": sorted(v.name for v in tf.global_variables() if "Adam" not in v.name)}
