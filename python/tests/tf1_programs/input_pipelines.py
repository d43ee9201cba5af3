"""The two TF1 input pipelines feeding one linear model.
tf.data: from_tensor_slices / map / shuffle / batch / repeat with a one-shot
iterator (training) and an initializable one (evaluation, re-run per epoch,
ending in OutOfRangeError). Queues: TFRecord files written with
TFRecordWriter, read back by string_input_producer + TFRecordReader +
parse_single_example + shuffle_batch under a Coordinator and
start_queue_runners."""
import os
import tempfile
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

tf.reset_default_graph()
rng = np.random.RandomState(3)
features = rng.randn(64, 3).astype(np.float32)
targets = (features @ np.array([2.0, -1.0, 0.5], np.float32) + 1.0).astype(np.float32)

# --- tf.data ------------------------------------------------------------------
dataset = tf.data.Dataset.from_tensor_slices((features, targets))
dataset = dataset.map(lambda x, y: (x * 2.0, y + 1.0))
train_set = dataset.batch(16).repeat(3)
next_x, next_y = tf.data.make_one_shot_iterator(train_set).get_next()
# Shuffled: another order (TF's differs from Weir's), the same elements.
shuffled_y = dataset.shuffle(buffer_size=20, seed=5).repeat(2).batch(32).make_one_shot_iterator().get_next()[1]
eval_iterator = dataset.batch(24).make_initializable_iterator()
eval_x, eval_y = eval_iterator.get_next()

w = tf.Variable(tf.zeros([3, 1]))
b = tf.Variable(0.0)


def loss_of(x, y):
    return tf.reduce_mean(tf.square(tf.squeeze(tf.matmul(x, w), 1) + b - y))


train_op = tf.train.GradientDescentOptimizer(0.05).minimize(loss_of(next_x, next_y))
eval_loss = loss_of(eval_x, eval_y)
shapes = [next_x.shape.as_list(), eval_y.shape.as_list()]

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    train_steps = 0
    while True:
        try:
            sess.run(train_op)
            train_steps += 1
        except tf.errors.OutOfRangeError:
            break
    shuffled = np.concatenate([sess.run(shuffled_y) for _ in range(4)])
    eval_sums = []
    for epoch in range(2):
        sess.run(eval_iterator.initializer)
        total, batches = 0.0, []
        try:
            while True:
                value, yb = sess.run([eval_loss, eval_y])
                total += value * len(yb)
                batches.append(len(yb))
        except tf.errors.OutOfRangeError:
            eval_sums.append(float(total / 64))
assert train_steps == 12 and batches == [24, 24, 16], (train_steps, batches)
assert eval_sums[0] == eval_sums[1]
assert np.allclose(np.sort(shuffled[:64]), np.sort(targets + 1.0)) and not np.array_equal(shuffled[:64], targets + 1.0)
assert not np.array_equal(shuffled[:64], shuffled[64:])  # reshuffled each epoch

# --- queues and TFRecord --------------------------------------------------------
tf.reset_default_graph()
folder = tempfile.mkdtemp()
filenames = []
for shard in range(2):
    path = os.path.join(folder, "data-%d.tfrecord" % shard)
    with tf.python_io.TFRecordWriter(path) as writer:
        for i in range(shard * 32, shard * 32 + 32):
            example = tf.train.Example(features=tf.train.Features(feature={
                "x": tf.train.Feature(float_list=tf.train.FloatList(value=features[i].tolist())),
                "y": tf.train.Feature(float_list=tf.train.FloatList(value=[targets[i]])),
                "id": tf.train.Feature(int64_list=tf.train.Int64List(value=[i]))}))
            writer.write(example.SerializeToString())
    filenames.append(path)

# The same files through tf.data: TFRecordDataset + map(parse_single_example) + batch,
# and an initializable iterator over a placeholder (TF1's idiom for data fed at init).
def parse(record):
    example = tf.parse_single_example(record, {"x": tf.FixedLenFeature([3], tf.float32),
                                               "id": tf.FixedLenFeature([], tf.int64)})
    return example["id"], example["x"]


record_ids, record_x = tf.data.TFRecordDataset(filenames).map(parse).batch(20).make_one_shot_iterator().get_next()
features_ph = tf.placeholder(tf.float32, [None, 3])
fed_iterator = tf.data.Dataset.from_tensor_slices(features_ph).batch(50).make_initializable_iterator()
fed_sum = tf.reduce_sum(fed_iterator.get_next(), axis=0)
with tf.Session() as sess:
    record_batches = []
    try:
        while True:
            ids, xs = sess.run([record_ids, record_x])
            record_batches.append(len(ids))
            assert np.array_equal(xs, features[ids])
    except tf.errors.OutOfRangeError:
        pass
    sess.run(fed_iterator.initializer, {features_ph: features[:60]})
    fed_sums = [sess.run(fed_sum).tolist(), sess.run(fed_sum).tolist()]
assert record_batches == [20, 20, 20, 4], record_batches
assert np.allclose(fed_sums[0], features[:50].sum(0), atol=1e-5), fed_sums

filename_queue = tf.train.string_input_producer(filenames, num_epochs=None, shuffle=False)
reader = tf.TFRecordReader()
_, serialized = reader.read(filename_queue)
parsed = tf.parse_single_example(serialized, features={
    "x": tf.FixedLenFeature([3], tf.float32),
    "y": tf.FixedLenFeature([], tf.float32),
    "id": tf.FixedLenFeature([], tf.int64)})
x_batch, y_batch, id_batch = tf.train.shuffle_batch([parsed["x"], parsed["y"], parsed["id"]], batch_size=8,
                                                    capacity=64, min_after_dequeue=16, seed=1)
w2 = tf.Variable(tf.zeros([3, 1]))
queue_loss = tf.reduce_mean(tf.square(tf.squeeze(tf.matmul(x_batch, w2), 1) - y_batch))
queue_train = tf.train.GradientDescentOptimizer(0.05).minimize(queue_loss)
seen = set()
with tf.Session() as sess:
    sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    queue_losses = []
    for step in range(40):
        _, l, ids, xs = sess.run([queue_train, queue_loss, id_batch, x_batch])
        queue_losses.append(float(l))
        seen.update(ids.tolist())
        assert np.array_equal(xs, features[ids]), (ids, xs)  # records are parsed intact
    coord.request_stop()
    coord.join(threads)
assert np.mean(queue_losses[-5:]) < 0.5 * np.mean(queue_losses[:5]) and len(seen) == 64, (queue_losses, seen)
RESULT = {"train_steps": train_steps, "eval_batches": batches, "eval_loss": eval_sums[0], "shapes": shapes,
          "parsed_shapes": [x_batch.shape.as_list(), id_batch.shape.as_list()], "id_dtype": id_batch.dtype.name,
          "record_batches": record_batches, "fed_sums": fed_sums}
