"""The PTB language-model tutorial's shape: ptb_producer (range_input_producer
+ strided_slice under an assert_positive), a two-layer BasicLSTMCell
MultiRNNCell in DropoutWrapper, a training model and a validation model
sharing variables (variable_scope reuse), the state carried between runs by
feeding the LSTMStateTuples, a learning rate assigned through a placeholder,
clip_by_global_norm, and tf.train.Supervisor's managed_session (restoring
the first run's checkpoint in the second)."""
import tempfile
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

rng = np.random.RandomState(23)
vocab, hidden, batch_size, num_steps = 12, 10, 2, 5
words = [0]
for _ in range(400):  # a Markov chain: the next word is w + 1 or w + 3 (mod 12)
    words.append((words[-1] + (1 if rng.rand() < 0.8 else 3)) % vocab)
train_words, valid_words = words[:300], words[300:]
emb0 = (0.3 * rng.randn(vocab, hidden)).astype(np.float32)
kernel0 = (0.2 * rng.randn(2 * hidden, 4 * hidden)).astype(np.float32)
w0 = (0.3 * rng.randn(hidden, vocab)).astype(np.float32)
logdir = tempfile.mkdtemp()


def ptb_producer(raw_data, name):
    with tf.name_scope(name, "PTBProducer"):
        raw_data = tf.convert_to_tensor(raw_data, name="raw_data", dtype=tf.int32)
        batch_len = tf.size(raw_data) // batch_size
        data = tf.reshape(raw_data[0: batch_size * batch_len], [batch_size, batch_len])
        epoch_size = (batch_len - 1) // num_steps
        with tf.control_dependencies([tf.assert_positive(epoch_size, message="epoch_size == 0")]):
            epoch_size = tf.identity(epoch_size, name="epoch_size")
        i = tf.train.range_input_producer(epoch_size, shuffle=False).dequeue()
        x = tf.strided_slice(data, [0, i * num_steps], [batch_size, (i + 1) * num_steps])
        x.set_shape([batch_size, num_steps])
        y = tf.strided_slice(data, [0, i * num_steps + 1], [batch_size, (i + 1) * num_steps + 1])
        y.set_shape([batch_size, num_steps])
        return x, y


class Model(object):
    def __init__(self, is_training, data):
        self.inputs, targets = ptb_producer(data, "TrainInput" if is_training else "ValidInput")
        cells = [tf.nn.rnn_cell.DropoutWrapper(
            tf.nn.rnn_cell.BasicLSTMCell(hidden, forget_bias=0.0, state_is_tuple=True,
                                         reuse=not is_training), output_keep_prob=1.0) for _ in range(2)]
        cell = tf.nn.rnn_cell.MultiRNNCell(cells, state_is_tuple=True)
        self.initial_state = cell.zero_state(batch_size, tf.float32)
        embedding = tf.get_variable("embedding", initializer=emb0)
        inputs = tf.nn.embedding_lookup(embedding, self.inputs)
        # The kernels from numpy (the scope's initializer; the biases are zeros, the cell's own).
        with tf.variable_scope("RNN", initializer=tf.constant_initializer(kernel0)):
            outputs, self.final_state = tf.nn.dynamic_rnn(cell, inputs, initial_state=self.initial_state)
        softmax_w = tf.get_variable("softmax_w", initializer=w0)
        softmax_b = tf.get_variable("softmax_b", [vocab], initializer=tf.zeros_initializer())
        logits = tf.matmul(tf.reshape(outputs, [-1, hidden]), softmax_w) + softmax_b
        self.cost = tf.reduce_sum(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=tf.reshape(targets, [-1]), logits=logits)) / batch_size
        if not is_training:
            return
        self.lr = tf.Variable(0.0, trainable=False)
        tvars = tf.trainable_variables()
        grads, _ = tf.clip_by_global_norm(tf.gradients(self.cost, tvars), 5.0)
        self.train_op = tf.train.GradientDescentOptimizer(self.lr).apply_gradients(
            zip(grads, tvars), global_step=tf.train.get_or_create_global_step())
        self.new_lr = tf.placeholder(tf.float32, shape=[], name="new_learning_rate")
        self.lr_update = tf.assign(self.lr, self.new_lr)


def run_epoch(session, model, steps, eval_op=None):
    costs, state = 0.0, session.run(model.initial_state)
    fetches = {"cost": model.cost, "final_state": model.final_state}
    if eval_op is not None:
        fetches["eval_op"] = eval_op
    for step in range(steps):
        feed_dict = {}
        for i, (c, h) in enumerate(model.initial_state):
            feed_dict[c] = state[i].c
            feed_dict[h] = state[i].h
        vals = session.run(fetches, feed_dict)
        costs += vals["cost"]
        state = vals["final_state"]
    return float(np.exp(costs / (steps * num_steps)))


perplexities = []
for run in range(2):
    with tf.Graph().as_default():
        with tf.name_scope("Train"), tf.variable_scope("Model", reuse=None):
            m = Model(is_training=True, data=train_words)
        with tf.name_scope("Valid"), tf.variable_scope("Model", reuse=True):
            mvalid = Model(is_training=False, data=valid_words)
        sv = tf.train.Supervisor(logdir=logdir, save_model_secs=0, save_summaries_secs=0)
        with sv.managed_session() as session:
            for epoch in range(2):
                session.run(m.lr_update, feed_dict={m.new_lr: 1.0 * 0.5 ** max(epoch + 2 * run - 1, 0)})
                train_ppl = run_epoch(session, m, 29, eval_op=m.train_op)
                valid_ppl = run_epoch(session, mvalid, 9)
                perplexities.append([train_ppl, valid_ppl])
            step = int(session.run(sv.global_step))
            sv.saver.save(session, logdir + "/model.ckpt", global_step=sv.global_step)
assert step == 116 and perplexities[-1][1] < 0.5 * perplexities[0][0], (step, perplexities)
RESULT = {"perplexities": perplexities, "step": step}
