"""A char-rnn in the TF1 style without tf.contrib: characters embedded with
get_variable under variable_scope, tf.nn.rnn_cell.LSTMCell (with a
MultiRNNCell of two) unrolled by tf.nn.dynamic_rnn with sequence_length, a
softmax layer shared by training and sampling through
variable_scope(reuse=tf.AUTO_REUSE), gradients clipped by global norm, and
greedy sampling that feeds the state back. Initializers are constants from
numpy, so the loss trajectory is deterministic."""
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

tf.reset_default_graph()
text = "hello world, hello weir. " * 8
chars = sorted(set(text))
vocab = len(chars)
index = {c: i for i, c in enumerate(chars)}
data = np.array([index[c] for c in text], np.int32)
batch_size, num_steps, hidden = 4, 12, 16
rng = np.random.RandomState(5)


def softmax_layer(outputs):
    with tf.variable_scope("softmax", reuse=tf.AUTO_REUSE):
        w = tf.get_variable("w", initializer=(0.2 * rng.randn(hidden, vocab)).astype(np.float32))
        b = tf.get_variable("b", [vocab], initializer=tf.zeros_initializer())
    return tf.matmul(tf.reshape(outputs, [-1, hidden]), w) + b


def cells():
    kernels = [(0.2 * rng.randn(8 + hidden, 4 * hidden)).astype(np.float32),
               (0.2 * rng.randn(2 * hidden, 4 * hidden)).astype(np.float32)]
    return tf.nn.rnn_cell.MultiRNNCell(
        [tf.nn.rnn_cell.LSTMCell(hidden, initializer=tf.constant_initializer(k), forget_bias=1.0)
         for k in kernels])


inputs = tf.placeholder(tf.int32, [None, None], name="inputs")
targets = tf.placeholder(tf.int32, [None, None], name="targets")
lengths = tf.placeholder(tf.int32, [None], name="lengths")
with tf.variable_scope("model", reuse=tf.AUTO_REUSE):
    embedding = tf.get_variable("embedding", initializer=(0.5 * rng.randn(vocab, 8)).astype(np.float32))
    cell = cells()
    embedded = tf.nn.embedding_lookup(embedding, inputs)
    outputs, final_state = tf.nn.dynamic_rnn(cell, embedded, sequence_length=lengths, dtype=tf.float32)
    logits = softmax_layer(outputs)
    same_embedding = tf.get_variable("embedding")
mask = tf.reshape(tf.sequence_mask(lengths, tf.shape(inputs)[1], dtype=tf.float32), [-1])
xent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.reshape(targets, [-1]), logits=logits)
loss = tf.reduce_sum(xent * mask) / tf.reduce_sum(mask)
tvars = tf.trainable_variables()
grads, global_norm = tf.clip_by_global_norm(tf.gradients(loss, tvars), 5.0)
train_op = tf.train.AdamOptimizer(0.03).apply_gradients(zip(grads, tvars))

# Sampling: one character at a time, the LSTM state fed back through placeholders.
with tf.variable_scope("model", reuse=True):
    char_in = tf.placeholder(tf.int32, [1, 1])
    state_in = cell.zero_state(1, tf.float32)
    sample_out, sample_state = tf.nn.dynamic_rnn(cell, tf.nn.embedding_lookup(embedding, char_in),
                                                 initial_state=state_in)
    next_char = tf.argmax(softmax_layer(sample_out), axis=1)

starts = [0, 25, 50, 75]
x_batch = np.stack([data[s:s + num_steps] for s in starts])
y_batch = np.stack([data[s + 1:s + num_steps + 1] for s in starts])
len_batch = np.array([12, 12, 9, 6], np.int32)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    losses, norms = [], []
    for step in range(40):
        l, n, _ = sess.run([loss, global_norm, train_op], {inputs: x_batch, targets: y_batch, lengths: len_batch})
        losses.append(float(l))
        norms.append(float(n))
    state = sess.run(state_in)
    c, sampled = index["h"], "h"
    for _ in range(12):
        c, state = sess.run([next_char, sample_state], {char_in: [[c]], state_in: state})
        c = int(c[0])
        sampled += chars[c]
    short_state = sess.run(final_state[1].h, {inputs: x_batch, lengths: len_batch})

assert same_embedding is embedding or same_embedding.name == embedding.name
assert losses[-1] < 0.3 * losses[0], losses
RESULT = {"losses": losses, "norms": norms[:5], "sampled": sampled,
          "variables": [v.name for v in tvars], "state_row3": short_state[3].tolist()}
