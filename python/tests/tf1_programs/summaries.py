"""TensorBoard summaries the TF1 way: tf.summary.scalar / histogram inside
name scopes, merge_all, a FileWriter opened with sess.graph, add_summary each
step, add_meta_graph, and add_run_metadata for a step traced with
RunOptions(trace_level=FULL_TRACE). The test reads the event file back with
TensorFlow's summary_iterator. LOGDIR may be set before the script runs."""
import os
import tempfile
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

tf.reset_default_graph()
logdir = globals().get("LOGDIR") or tempfile.mkdtemp()
rng = np.random.RandomState(9)
x_data = rng.randn(50, 2).astype(np.float32)
y_data = (x_data @ np.array([[3.0], [-1.0]], np.float32) + 0.5).astype(np.float32)

with tf.name_scope("input"):
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
with tf.name_scope("model"):
    w = tf.Variable(tf.constant([[0.1], [0.2]]), name="w")
    b = tf.Variable(0.0, name="b")
    pred = tf.matmul(x, w) + b
    tf.summary.histogram("weights", w)
with tf.name_scope("loss"):
    loss = tf.reduce_mean(tf.square(pred - y))
    tf.summary.scalar("mse", loss)
global_step = tf.train.get_or_create_global_step()
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
lr_summary = tf.summary.scalar("learning_rate", tf.constant(0.1))
merged = tf.summary.merge_all()

losses = []
with tf.Session() as sess:
    writer = tf.summary.FileWriter(logdir, sess.graph)
    sess.run(tf.global_variables_initializer())
    for step in range(10):
        feed = {x: x_data, y: y_data}
        if step == 5:
            run_options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
            run_metadata = tf.RunMetadata()
            summary, l, _ = sess.run([merged, loss, train_op], feed, options=run_options,
                                     run_metadata=run_metadata)
            writer.add_run_metadata(run_metadata, "step%03d" % step)
            traced_nodes = sum(len(d.node_stats) for d in run_metadata.step_stats.dev_stats)
        else:
            summary, l, _ = sess.run([merged, loss, train_op], feed)
        writer.add_summary(summary, step)
        losses.append(float(l))
    writer.add_meta_graph(tf.train.export_meta_graph(), global_step=10)
    writer.flush()
    writer.close()
    summary_value = tf.Summary()
    summary_value.ParseFromString(sess.run(lr_summary))

files = [f for f in os.listdir(logdir) if f.startswith("events.out.tfevents.")]
assert len(files) == 1 and losses[-1] < losses[0] and traced_nodes > 0, (files, losses)
RESULT = {"losses": losses, "event_file": os.path.join(logdir, files[0]),
          "lr_tag": summary_value.value[0].tag, "lr": summary_value.value[0].simple_value}
