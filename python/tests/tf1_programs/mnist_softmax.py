"""MNIST-for-beginners style softmax regression: placeholders, feed_dict,
GradientDescentOptimizer, accuracy from tf.equal/tf.argmax/tf.cast.
The data are 28x28 images of ten synthetic classes (a class's pixels are a
fixed random template plus noise), so the script needs no download."""
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

tf.reset_default_graph()
rng = np.random.RandomState(42)
templates = rng.rand(10, 784).astype(np.float32)


def make_split(n):
    labels = rng.randint(10, size=n)
    images = np.clip(templates[labels] + 1.5 * rng.randn(n, 784), 0.0, 1.0).astype(np.float32)
    return images, np.eye(10, dtype=np.float32)[labels]


train_images, train_labels = make_split(1000)
test_images, test_labels = make_split(300)

# The model: y = softmax(x W + b).
x = tf.placeholder(tf.float32, [None, 784])
W = tf.Variable(tf.zeros([784, 10]))
b = tf.Variable(tf.zeros([10]))
y = tf.nn.softmax(tf.matmul(x, W) + b)
y_ = tf.placeholder(tf.float32, [None, 10])

# The tutorial's cross entropy written out, and the stable one from logits.
cross_entropy = tf.reduce_mean(-tf.reduce_sum(y_ * tf.log(y + 1e-10), reduction_indices=[1]))
logits = tf.matmul(x, W) + b
stable = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y_, logits=logits))
train_step = tf.train.GradientDescentOptimizer(0.1).minimize(cross_entropy)

correct_prediction = tf.equal(tf.argmax(y, 1), tf.argmax(y_, 1))
accuracy = tf.reduce_mean(tf.cast(correct_prediction, tf.float32))

sess = tf.InteractiveSession()
tf.global_variables_initializer().run()
losses, accuracies = [], []
batch = 100
for step in range(40):
    start = (step * batch) % len(train_images)
    batch_xs = train_images[start:start + batch]
    batch_ys = train_labels[start:start + batch]
    _, loss_value, stable_value = sess.run([train_step, cross_entropy, stable],
                                           feed_dict={x: batch_xs, y_: batch_ys})
    losses.append(float(loss_value))
    assert abs(loss_value - stable_value) < 1e-3 * max(1.0, loss_value), (loss_value, stable_value)
    if step % 10 == 9:
        accuracies.append(float(sess.run(accuracy, feed_dict={x: test_images, y_: test_labels})))
final_accuracy = accuracy.eval(feed_dict={x: test_images, y_: test_labels})
predictions = sess.run(tf.argmax(y, 1), {x: test_images[:20]})
sess.close()

assert losses[-1] < 0.7 * losses[0], losses
assert final_accuracy > 0.6, final_accuracy
RESULT = {"losses": losses, "accuracies": accuracies, "final_accuracy": float(final_accuracy),
          "predictions": predictions.tolist(), "argmax_dtype": correct_prediction.op.inputs[0].dtype.name}
