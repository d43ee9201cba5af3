"""The TF1.x training loop of the official models: MonitoredTrainingSession
with a checkpoint_dir, StopAtStepHook, LoggingTensorHook, NanTensorHook,
a custom SessionRunHook (before_run/after_run with SessionRunArgs), summaries
and checkpoints saved by the session, tf.train.piecewise_constant, then a
second MonitoredTrainingSession that resumes from the checkpoint and stops at
a later step, and a SingularMonitoredSession that evaluates."""
import os
import tempfile
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

rng = np.random.RandomState(17)
x_data = rng.randn(64, 5).astype(np.float32)
y_data = (x_data @ rng.randn(5, 1) + 0.3).astype(np.float32)
w0 = (0.1 * rng.randn(5, 1)).astype(np.float32)
model_dir = tempfile.mkdtemp()


class RecordLoss(tf.train.SessionRunHook):
    """Fetches the loss with every step and keeps it."""

    def __init__(self, loss):
        self.loss, self.values = loss, []

    def begin(self):
        self.calls = 0

    def before_run(self, run_context):
        self.calls += 1
        return tf.train.SessionRunArgs({"loss": self.loss})

    def after_run(self, run_context, run_values):
        self.values.append(float(run_values.results["loss"]))


def build():
    x = tf.placeholder(tf.float32, [None, 5], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    w = tf.get_variable("w", initializer=w0)
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y), name="loss")
    tf.summary.scalar("loss", loss)
    step = tf.train.get_or_create_global_step()
    lr = tf.train.piecewise_constant(step, [10, 20], [0.1, 0.05, 0.02])
    train_op = tf.train.GradientDescentOptimizer(lr).minimize(loss, global_step=step)
    return x, y, loss, train_op, lr


records = []
for last_step in (15, 30):
    with tf.Graph().as_default():
        x, y, loss, train_op, lr = build()
        recorder = RecordLoss(loss)
        hooks = [tf.train.StopAtStepHook(last_step=last_step), tf.train.NanTensorHook(loss),
                 tf.train.LoggingTensorHook({"loss": loss, "lr": lr}, every_n_iter=10), recorder]
        with tf.train.MonitoredTrainingSession(checkpoint_dir=model_dir, hooks=hooks, save_checkpoint_steps=5,
                                               save_summaries_steps=5, log_step_count_steps=None) as sess:
            while not sess.should_stop():
                sess.run(train_op, {x: x_data, y: y_data})
        records.append(recorder.values)

with tf.Graph().as_default():
    x, y, loss, train_op, lr = build()
    with tf.train.SingularMonitoredSession(checkpoint_dir=model_dir) as sess:
        final_loss, final_step = sess.run([loss, tf.train.get_global_step()], {x: x_data, y: y_data})

checkpoints = sorted(int(f.split("-")[1].split(".")[0]) for f in os.listdir(model_dir) if f.endswith(".index"))
events = [f for f in os.listdir(model_dir) if f.startswith("events.out.tfevents")]
summary_steps = sorted({e.step for f in events for e in tf.train.summary_iterator(os.path.join(model_dir, f))
                        if e.HasField("summary") and any(v.tag == "loss_1" for v in e.summary.value)})
assert len(records[0]) == len(records[1]) == 15 and final_step == 30, (records, final_step)
assert records[1][-1] < records[0][0] * 0.2 and final_loss < records[1][-1], records
RESULT = {"records": records, "final_loss": float(final_loss), "final_step": int(final_step),
          "checkpoints": checkpoints, "summary_steps": summary_steps}
