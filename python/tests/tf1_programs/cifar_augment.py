"""A CIFAR-10-tutorial style model: uint8 images through a tf.data map of
convert_image_dtype, random_flip_left_right and per_image_standardization;
the model built by tf.make_template so that the training tower (fed by the
iterator) and the evaluation tower (a placeholder) share variables; a 1x1
convolution and global average pooling (so that the random flips leave the
loss unchanged); an image summary of the evaluation batch, the moving average
of the weights (ExponentialMovingAverage), tf.confusion_matrix and
tf.random_crop."""
import base64
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

tf.reset_default_graph()
tf.set_random_seed(42)
rng = np.random.RandomState(8)
n, size = 120, 10
labels = rng.randint(3, size=n).astype(np.int32)
images = rng.randint(0, 120, size=(n, size, size, 3)).astype(np.uint8)
for i in range(n):  # the class is the dominant color channel
    images[i, :, :, labels[i]] += np.uint8(100)
k = (0.5 * rng.randn(1, 1, 3, 6)).astype(np.float32)
w_out = (0.5 * rng.randn(6, 3)).astype(np.float32)


def preprocess(image, label, training):
    image = tf.image.convert_image_dtype(image, tf.float32)
    if training:
        image = tf.image.random_flip_left_right(image)
    return tf.image.per_image_standardization(image), label


def model(x):
    kernel = tf.get_variable("conv/kernel", initializer=k)
    hidden = tf.nn.relu(tf.nn.conv2d(x, kernel, strides=[1, 1, 1, 1], padding="SAME"))
    pooled = tf.reduce_mean(hidden, axis=[1, 2])
    dense = tf.get_variable("out/kernel", initializer=w_out)
    bias = tf.get_variable("out/bias", [3], initializer=tf.zeros_initializer())
    return tf.matmul(pooled, dense) + bias


net = tf.make_template("net", model)
train_data = tf.data.Dataset.from_tensor_slices((images, labels)).map(lambda i, l: preprocess(i, l, True))
x_train, y_train = train_data.batch(30).repeat(4).make_one_shot_iterator().get_next()
train_loss = tf.losses.sparse_softmax_cross_entropy(y_train, net(x_train))
optimizer = tf.train.GradientDescentOptimizer(0.5)
train_step = optimizer.minimize(train_loss)
ema = tf.train.ExponentialMovingAverage(decay=0.9)
with tf.control_dependencies([train_step]):
    train_op = ema.apply(tf.trainable_variables())

eval_images = tf.placeholder(tf.uint8, [None, size, size, 3])
eval_labels = tf.placeholder(tf.int32, [None])
standardized, _ = preprocess(eval_images, eval_labels, False)
eval_logits = net(standardized)
predictions = tf.argmax(eval_logits, 1, output_type=tf.int32)
confusion = tf.confusion_matrix(eval_labels, predictions, num_classes=3)
image_summary = tf.summary.image("eval_images", standardized, max_outputs=2)
crop = tf.random_crop(eval_images[0], [4, 4, 3])
assert len(net.trainable_variables) == 3 and len(tf.trainable_variables()) == 3

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    losses = []
    try:
        while True:
            l, _ = sess.run([train_loss, train_op])
            losses.append(float(l))
    except tf.errors.OutOfRangeError:
        pass
    feed = {eval_images: images[:60], eval_labels: labels[:60]}
    matrix, summary_bytes, crop_value = sess.run([confusion, image_summary, crop], feed)
    averaged = sess.run(ema.average(net.trainable_variables[2]))
    std_value = sess.run(standardized, feed)

assert len(losses) == 16 and losses[-1] < 0.5 * losses[0], losses
assert matrix.sum() == 60 and np.trace(matrix) >= 45, matrix
found = any(np.array_equal(images[0][r:r + 4, c:c + 4], crop_value) for r in range(7) for c in range(7))
assert found and np.allclose(std_value.mean(axis=(1, 2, 3)), 0, atol=1e-5)
RESULT = {"losses": losses, "confusion": matrix.tolist(), "ema_bias": averaged.tolist(),
          "names": [v.op.name for v in net.trainable_variables],
          "summary": base64.b64encode(summary_bytes).decode()}
