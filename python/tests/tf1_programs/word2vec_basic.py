"""word2vec_basic style skip-gram: tf.nn.embedding_lookup, tf.nn.nce_loss and
tf.nn.sampled_softmax_loss, SGD, then nearest neighbours by cosine similarity
(tf.nn.l2_normalize and matmul(transpose_b=True)). The negative samples are
given (sampled_values) so that the loss trajectory is deterministic; one more
loss uses the default log-uniform sampler."""
import collections
import math
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

tf.reset_default_graph()
rng = np.random.RandomState(11)
vocabulary_size, embedding_size, batch_size, num_sampled = 50, 16, 32, 8
# A corpus where word w is followed by w + 1 or w + 2 (mod 25) inside two halves.
words = [0]
for _ in range(3000):
    w = words[-1]
    half = 25 * (w // 25)
    words.append(half + (w - half + rng.randint(1, 3)) % 25)
count = collections.Counter(words)


def generate_batch(position):
    centers = np.array([words[(position + i) % len(words)] for i in range(batch_size)], np.int32)
    context = np.array([[words[(position + i + 1) % len(words)]] for i in range(batch_size)], np.int64)
    return centers, context


init_embeddings = rng.uniform(-1.0, 1.0, [vocabulary_size, embedding_size]).astype(np.float32)
init_weights = (rng.randn(vocabulary_size, embedding_size) / math.sqrt(embedding_size)).astype(np.float32)
sampled_ids = rng.randint(vocabulary_size, size=num_sampled).astype(np.int64)
# Expected counts of the log-uniform (Zipf) sampler: num_sampled * P(class).
def p(c, log=np.log):
    return (log(c + 2.0) - log(c + 1.0)) / math.log(vocabulary_size + 1.0)


train_inputs = tf.placeholder(tf.int32, shape=[batch_size])
train_labels = tf.placeholder(tf.int64, shape=[batch_size, 1])
valid_dataset = tf.constant([0, 5, 25, 30], dtype=tf.int32)
embeddings = tf.Variable(init_embeddings)
embed = tf.nn.embedding_lookup(embeddings, train_inputs)
nce_weights = tf.Variable(init_weights)
nce_biases = tf.Variable(tf.zeros([vocabulary_size]))
true_expected = tf.cast(num_sampled * p(tf.cast(train_labels, tf.float64), tf.log), tf.float32)
sampled_expected = tf.constant(num_sampled * p(sampled_ids.astype(np.float64)), tf.float32)
sampled_values = (tf.constant(sampled_ids), true_expected, sampled_expected)
loss = tf.reduce_mean(tf.nn.nce_loss(weights=nce_weights, biases=nce_biases, labels=train_labels,
                                     inputs=embed, num_sampled=num_sampled, num_classes=vocabulary_size,
                                     sampled_values=sampled_values))
softmax_loss = tf.reduce_mean(tf.nn.sampled_softmax_loss(
    weights=nce_weights, biases=nce_biases, labels=train_labels, inputs=embed, num_sampled=num_sampled,
    num_classes=vocabulary_size, sampled_values=sampled_values, remove_accidental_hits=True))
random_loss = tf.reduce_mean(tf.nn.nce_loss(nce_weights, nce_biases, train_labels, embed,
                                            num_sampled, vocabulary_size))
optimizer = tf.train.GradientDescentOptimizer(0.5).minimize(loss + softmax_loss)

norm = tf.sqrt(tf.reduce_sum(tf.square(embeddings), 1, keepdims=True))
normalized_embeddings = embeddings / norm
also_normalized = tf.nn.l2_normalize(embeddings, axis=1)
valid_embeddings = tf.nn.embedding_lookup(normalized_embeddings, valid_dataset)
similarity = tf.matmul(valid_embeddings, normalized_embeddings, transpose_b=True)

with tf.Session() as session:
    tf.global_variables_initializer().run()
    losses, softmax_losses, random_losses = [], [], []
    for step in range(60):
        inputs, labels = generate_batch(step * batch_size)
        feed_dict = {train_inputs: inputs, train_labels: labels}
        _, loss_val, softmax_val, random_val = session.run([optimizer, loss, softmax_loss, random_loss],
                                                           feed_dict=feed_dict)
        losses.append(float(loss_val))
        softmax_losses.append(float(softmax_val))
        random_losses.append(float(random_val))
    sim, a, b = session.run([similarity, normalized_embeddings, also_normalized])
nearest = [(-sim[i, :]).argsort()[1:4].tolist() for i in range(4)]

assert np.allclose(a, b, atol=1e-5)
assert losses[-1] < 0.5 * losses[0] and softmax_losses[-1] < softmax_losses[0], (losses, softmax_losses)
assert all(0 < v < 100 for v in random_losses), random_losses
RESULT = {"losses": losses, "softmax_losses": softmax_losses, "similarity": sim.ravel().tolist(),
          "nearest": nearest, "random_first": random_losses[:1], "common": count.most_common(1)[0][1]}
