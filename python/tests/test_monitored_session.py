"""tf.train.MonitoredTrainingSession, MonitoredSession and their hooks against TensorFlow 2.21.

The TF1 programs below run under TensorFlow (one subprocess) and under Weir (in this process), changed
only in their import line (tf1_run.py's harness), and must leave the same RESULT: the
hooks' logged values, the checkpoints written, the summaries and session logs in the event file,
the final variables, the steps replayed after a recovery, the values an input pipeline gave before
its OutOfRangeError ended the `with` block. The tests after them check Weir's side alone: merging
of the hooks' fetches, feeds and options, the errors, the waits and their time limits.
"""
import json
import os

import numpy as np
import pytest

import tf1_run
import weir as wr
from weir.framework import errors

PROGRAMS = {}
program = tf1_run.program_registry(PROGRAMS)


@program("training_hooks_and_resume")
def _():
    """
    import os, tempfile
    import numpy as np
    import tensorflow.compat.v1 as tf
    tf.disable_eager_execution()

    tf.reset_default_graph()
    rng = np.random.RandomState(5)
    x_data = rng.randn(64, 3).astype(np.float32)
    y_data = (x_data @ np.array([[2.0], [-1.0], [0.5]], np.float32) + 0.3).astype(np.float32)
    ckpt_dir = tempfile.mkdtemp()

    global_step = tf.train.get_or_create_global_step()
    w = tf.get_variable("w", initializer=np.zeros([3, 1], np.float32))
    b = tf.get_variable("b", initializer=np.float32(0.0))
    lr = tf.placeholder_with_default(0.01, [], name="lr")
    loss = tf.reduce_mean(tf.square(tf.matmul(x_data, w) + b - y_data), name="loss")
    tf.summary.scalar("loss", loss)
    train_op = tf.train.GradientDescentOptimizer(lr).minimize(loss, global_step=global_step)

    logged = []
    def keep(values):
        logged.append([float(values["loss"]), float(values["by_name"])])
        return "logged %d" % len(logged)

    class Listener(tf.train.CheckpointSaverListener):
        calls = []
        def before_save(self, session, step):
            self.calls.append(["before", int(step)])
        def after_save(self, session, step):
            self.calls.append(["after", int(step)])
        def end(self, session, step):
            self.calls.append(["end", int(step)])

    hooks = [tf.train.StopAtStepHook(last_step=12),
             tf.train.LoggingTensorHook({"loss": loss, "by_name": "loss"}, every_n_iter=4, at_end=True,
                                        formatter=keep),
             tf.train.FeedFnHook(lambda: {lr: 0.1})]
    chief_only = [tf.train.CheckpointSaverHook(ckpt_dir, save_steps=6, checkpoint_basename="extra.ckpt",
                                               saver=tf.train.Saver(max_to_keep=10), listeners=[Listener()])]
    losses = []
    with tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt_dir, hooks=hooks, chief_only_hooks=chief_only,
                                           save_checkpoint_steps=5, save_summaries_steps=4) as sess:
        finalized_inside = tf.get_default_graph().finalized
        while not sess.should_stop():
            l, _ = sess.run([loss, train_op])
            losses.append(float(l))
    finalized_after = tf.get_default_graph().finalized

    # The second block resumes from the newest checkpoint (global step 12) and runs 4 more steps.
    final = tf.train.FinalOpsHook([w, b, global_step])
    resumed = []
    with tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt_dir, save_checkpoint_steps=5,
                                           save_summaries_steps=4,
                                           hooks=[tf.train.StopAtStepHook(num_steps=4), final]) as sess:
        start_step = int(sess.run(global_step))
        while not sess.should_stop():
            resumed.append(float(sess.run([loss, train_op])[0]))
    w_final, b_final, step_final = final.final_ops_values

    checkpoints = sorted((f[:-len(".index")] for f in os.listdir(ckpt_dir) if f.endswith(".index")),
                         key=lambda name: (name.split("-")[0], int(name.split("-")[1])))
    summaries, session_logs = [], []
    for name in sorted(os.listdir(ckpt_dir)):
        if name.startswith("events.out.tfevents"):
            for record in tf.io.tf_record_iterator(os.path.join(ckpt_dir, name)):
                event = tf.summary.Event.FromString(record)
                if event.HasField("session_log"):
                    session_logs.append([int(event.step), int(event.session_log.status)])
                for value in event.summary.value:
                    if value.tag == "loss":
                        summaries.append([int(event.step), float(value.simple_value)])
    assert losses[-1] < 0.5 * losses[0], losses
    RESULT = {"losses": losses, "logged": logged, "finalized": [finalized_inside, finalized_after],
              "resumed": resumed, "start_step": start_step, "step_final": int(step_final),
              "w": w_final.ravel().tolist(), "b": float(b_final), "checkpoints": checkpoints,
              "listener": Listener.calls, "summaries": summaries, "session_logs": session_logs,
              "graph_pbtxt": os.path.exists(os.path.join(ckpt_dir, "graph.pbtxt"))}
    """


@program("recovery_after_aborted")
def _():
    """
    import os, tempfile
    import numpy as np
    import tensorflow.compat.v1 as tf
    tf.disable_eager_execution()

    tf.reset_default_graph()
    ckpt_dir = tempfile.mkdtemp()
    global_step = tf.train.get_or_create_global_step()
    v = tf.get_variable("v", initializer=np.float32(10.0))
    loss = tf.square(v - 1.0, name="loss")
    train_op = tf.train.GradientDescentOptimizer(0.05).minimize(loss, global_step=global_step)

    class AbortOnce(tf.train.SessionRunHook):
        # As a lost ps does: the sixth run fails with AbortedError (after its update).
        def __init__(self):
            self.sessions, self.runs = [], 0
        def after_create_session(self, session, coord):
            self.sessions.append(int(session.run(global_step)))
        def after_run(self, run_context, run_values):
            self.runs += 1
            if self.runs == 6:
                raise tf.errors.AbortedError(None, None, "the ps went away")

    abort = AbortOnce()
    losses = []
    with tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt_dir, save_checkpoint_steps=4,
                                           hooks=[abort, tf.train.StopAtStepHook(last_step=10)]) as sess:
        while not sess.should_stop():
            losses.append(float(sess.run([loss, train_op])[0]))
    RESULT = {"losses": losses, "sessions": abort.sessions,
              "latest": os.path.basename(tf.train.latest_checkpoint(ckpt_dir))}
    """


@program("nan_tensor_hook")
def _():
    """
    import numpy as np
    import tensorflow.compat.v1 as tf
    tf.disable_eager_execution()

    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, [], name="x")
    v = tf.get_variable("v", initializer=np.float32(2.0))
    loss = tf.sqrt(x) * v
    feeds = [4.0, 1.0, -1.0, 9.0]
    seen, caught = [], None
    try:
        with tf.train.MonitoredSession(hooks=[tf.train.NanTensorHook(loss)]) as sess:
            for value in feeds:
                seen.append(float(sess.run(loss, {x: value})))
    except tf.train.NanLossDuringTrainingError as e:
        caught = [type(e).__name__, str(e), isinstance(e, RuntimeError)]
    runs = 0
    with tf.train.MonitoredSession(hooks=[tf.train.NanTensorHook(loss, fail_on_nan_loss=False)]) as sess:
        for value in feeds:
            if sess.should_stop():
                break
            sess.run(loss, {x: value})
            runs += 1
    # Hooks that need a global step say so when the graph has none.
    missing = []
    for make in [lambda: tf.train.StopAtStepHook(num_steps=1), lambda: tf.train.StepCounterHook(),
                 lambda: tf.train.CheckpointSaverHook("/nonexistent", save_steps=1)]:
        try:
            tf.train.MonitoredSession(hooks=[make()])
            missing.append("no error")
        except RuntimeError as e:
            missing.append(str(e))
        tf.get_default_graph()._unsafe_unfinalize()
    RESULT = {"seen": seen, "caught": caught, "runs": runs, "missing": missing}
    """


@program("queue_runner_out_of_range")
def _():
    """
    import numpy as np
    import tensorflow.compat.v1 as tf
    tf.disable_eager_execution()

    tf.reset_default_graph()
    values = np.arange(10, dtype=np.int32)
    # num_epochs makes a local variable: the session's local_init_op initializes it.
    item = tf.train.slice_input_producer([values], num_epochs=2, shuffle=False)
    batch = tf.train.batch(item, batch_size=3, allow_smaller_final_batch=True)
    total = tf.Variable(0, name="total")
    add = tf.assign_add(total, tf.reduce_sum(batch))
    final = tf.train.FinalOpsHook(total)
    got = []
    with tf.train.MonitoredSession(hooks=[final]) as sess:
        while not sess.should_stop():
            got.append(sess.run([batch, add])[0].tolist())
    RESULT = {"got": got, "total": int(final.final_ops_values)}
    """


@pytest.fixture(scope="module")
def tf_results():
    return tf1_run.run_tf_programs(PROGRAMS)


def _run_weir(name):
    return tf1_run.run_weir_program(PROGRAMS[name], name)


def _tf(tf_results, name):
    return tf1_run.tf_result(tf_results, name)


def test_the_programs_differ_only_in_the_import():
    for text in PROGRAMS.values():
        weir_text = tf1_run.as_weir(text)
        assert "tensorflow" not in weir_text and len(weir_text.splitlines()) == len(text.splitlines()) - 1


def test_training_hooks_checkpoints_summaries_and_resume(tf_results):
    tf = _tf(tf_results, "training_hooks_and_resume")
    wr_ = _run_weir("training_hooks_and_resume")
    assert len(wr_["losses"]) == len(tf["losses"]) == 12
    np.testing.assert_allclose(wr_["losses"], tf["losses"], rtol=1e-5)
    # Logged at runs 0, 4 and 8 and at the end (after step 12), by tensor and by name.
    assert len(wr_["logged"]) == len(tf["logged"]) == 4
    np.testing.assert_allclose(wr_["logged"], tf["logged"], rtol=1e-5)
    assert wr_["finalized"] == tf["finalized"] == [True, False]
    assert wr_["start_step"] == tf["start_step"] == 12
    assert wr_["step_final"] == tf["step_final"] == 16
    np.testing.assert_allclose(wr_["resumed"], tf["resumed"], rtol=1e-5)
    np.testing.assert_allclose(wr_["resumed"][0], wr_["logged"][-1][0], rtol=1e-6)  # went on from 12
    np.testing.assert_allclose(wr_["w"], tf["w"], rtol=1e-5)
    np.testing.assert_allclose(wr_["b"], tf["b"], rtol=1e-5)
    assert wr_["checkpoints"] == tf["checkpoints"]
    assert "model.ckpt-16" in wr_["checkpoints"] and "extra.ckpt-6" in wr_["checkpoints"]
    assert wr_["listener"] == tf["listener"]
    assert [s for s, _ in wr_["summaries"]] == [s for s, _ in tf["summaries"]]
    np.testing.assert_allclose([v for _, v in wr_["summaries"]], [v for _, v in tf["summaries"]],
                               rtol=1e-5)
    assert sorted(wr_["session_logs"]) == sorted(tf["session_logs"])
    assert wr_["graph_pbtxt"] and tf["graph_pbtxt"]


def test_recovery_after_aborted_restores_the_checkpoint(tf_results):
    tf = _tf(tf_results, "recovery_after_aborted")
    wr_ = _run_weir("recovery_after_aborted")
    assert wr_["sessions"] == tf["sessions"] == [0, 4]  # the second session restored model.ckpt-4
    assert wr_["latest"] == tf["latest"] == "model.ckpt-10"
    np.testing.assert_allclose(wr_["losses"], tf["losses"], rtol=1e-5)
    # The run of step 6 failed; the new session went on from step 4: steps 5 and 6 ran twice.
    assert len(wr_["losses"]) == 11


def test_nan_tensor_hook_and_missing_global_step(tf_results):
    tf = _tf(tf_results, "nan_tensor_hook")
    wr_ = _run_weir("nan_tensor_hook")
    assert wr_["seen"] == tf["seen"] == [4.0, 2.0]
    assert wr_["caught"] == tf["caught"] == ["NanLossDuringTrainingError", "NaN loss during training.",
                                             True]
    assert wr_["runs"] == tf["runs"] == 3
    assert wr_["missing"] == tf["missing"]
    assert all(m.startswith("Global step should be created") for m in wr_["missing"])


def test_queue_runner_pipeline_ends_cleanly(tf_results):
    tf = _tf(tf_results, "queue_runner_out_of_range")
    wr_ = _run_weir("queue_runner_out_of_range")
    assert wr_["got"] == tf["got"]
    assert sorted(sum(wr_["got"], [])) == sorted(list(range(10)) * 2)
    assert wr_["total"] == tf["total"] == 90


# ---------------------------------------------------------------------------
# Weir's side alone


class Recorder(wr.train.SessionRunHook):
    """Records its calls; asks for `request` (a SessionRunArgs) in every run."""

    def __init__(self, request=None):
        self.calls, self.request, self.values = [], request, []

    def begin(self):
        self.calls.append("begin")

    def after_create_session(self, session, coord):
        assert wr.get_default_graph().finalized
        self.calls.append("after_create_session")

    def before_run(self, run_context):
        self.calls.append("before_run")
        self.original_args = run_context.original_args
        return self.request

    def after_run(self, run_context, run_values):
        self.calls.append("after_run")
        self.values.append(run_values)

    def end(self, session):
        self.calls.append("end")


def _counter_graph():
    graph = wr.Graph()
    with graph.as_default():
        step = wr.train.get_or_create_global_step()
        x = wr.placeholder(wr.float32, [], name="x")
        y = wr.placeholder_with_default(np.float32(3.0), [], name="y")
        increment = wr.assign_add(step, 1)
    return graph, step, x, y, increment


def test_hooks_fetches_feeds_and_options_are_merged_and_split():
    graph, step, x, y, increment = _counter_graph()
    with graph.as_default():
        product = x * y
        request = wr.train.SessionRunArgs({"product": product, "pair": [x, y]}, feed_dict={y: 5.0},
                                          options=wr.RunOptions(trace_level=wr.RunOptions.FULL_TRACE))
        hook, plain = Recorder(request), Recorder()
        metadata = wr.RunMetadata()
        x_plus_1 = x + 1.0
        with wr.train.MonitoredSession(hooks=[hook, plain]) as sess:
            out = sess.run({"sum": x_plus_1, "inc": increment}, feed_dict={x: 2.0}, run_metadata=metadata)
        assert set(out) == {"sum", "inc"} and out["sum"] == 3.0 and out["inc"] == 1
        values = hook.values[0]
        assert values.results == {"product": 10.0, "pair": [2.0, 5.0]}
        assert values.options.trace_level == wr.RunOptions.FULL_TRACE
        assert values.run_metadata is metadata and len(metadata.step_stats) > 0
        assert plain.values[0].results is None
        assert hook.original_args.feed_dict == {x: 2.0}
        assert hook.calls == plain.calls == ["begin", "after_create_session", "before_run", "after_run", "end"]
        assert not graph.finalized  # unfinalized again by close()


def test_feeds_fed_twice_are_errors():
    graph, step, x, y, increment = _counter_graph()
    with graph.as_default():
        twice = [Recorder(wr.train.SessionRunArgs(None, feed_dict={x: 1.0})) for _ in range(2)]
        with wr.train.MonitoredSession(hooks=twice) as sess:
            with pytest.raises(RuntimeError, match="Same tensor is fed by two hooks"):
                sess.run(increment)
        doubled = x * 2.0
        with wr.train.MonitoredSession(hooks=[wr.train.FeedFnHook(lambda: {x: 1.0})]) as sess:
            with pytest.raises(RuntimeError, match="Same tensor is fed by a SessionRunHook and user"):
                sess.run(increment, {x: 2.0})
            assert sess.run(doubled) == 2.0  # the hook's feed alone


def test_stop_close_and_errors_in_the_with_block():
    graph, step, x, y, increment = _counter_graph()
    with graph.as_default():
        hook = Recorder()
        with wr.train.MonitoredSession(hooks=[wr.train.StopAtStepHook(num_steps=2), hook]) as sess:
            while not sess.should_stop():
                sess.run(increment)
            with pytest.raises(RuntimeError, match="Run called even after should_stop requested"):
                sess.run(increment)
        assert hook.calls.count("after_run") == 2 and hook.calls[-1] == "end"
        with pytest.raises(RuntimeError, match="already closed"):
            sess.run(increment)
        assert sess.should_stop()
        # An error other than OutOfRange leaves the block without the hooks' end().
        hook = Recorder()
        unknown = wr.placeholder(wr.float32, None)
        bad = wr.reshape(unknown, [2])
        with pytest.raises(errors.InvalidArgumentError):
            with wr.train.MonitoredSession(hooks=[hook]) as sess:
                sess.run(bad, {unknown: [1.0, 2.0, 3.0]})
        assert "end" not in hook.calls
        assert not graph.finalized
    for bad in [dict(), dict(num_steps=1, last_step=2), dict(num_steps=0)]:
        with pytest.raises(ValueError):
            wr.train.StopAtStepHook(**bad)


def test_singular_session_does_not_recover():
    graph, step, x, y, increment = _counter_graph()

    class Abort(wr.train.SessionRunHook):
        def after_run(self, run_context, run_values):
            raise errors.AbortedError(None, None, "lost a task")

    with graph.as_default():
        with pytest.raises(errors.AbortedError, match="lost a task"):
            with wr.train.SingularMonitoredSession(hooks=[Abort()]) as sess:
                assert isinstance(sess.raw_session(), wr.Session)
                sess.run(increment)


def test_worker_session_creator_times_out_naming_the_variables():
    graph = wr.Graph()
    with graph.as_default():
        wr.Variable(1.0, name="never_initialized")
        creator = wr.train.WorkerSessionCreator(max_wait_secs=0.5)
        with pytest.raises(errors.DeadlineExceededError, match="never_initialized"):
            wr.train.MonitoredSession(session_creator=creator)
        assert not graph.finalized


def test_scaffold_defaults_and_collections():
    graph = wr.Graph()
    with graph.as_default():
        v = wr.Variable(1.0, name="v")
        local = wr.Variable(2.0, name="local", collections=[wr.GraphKeys.LOCAL_VARIABLES])
        mine = wr.group(v.initializer, name="my_init")
        wr.add_to_collection(wr.GraphKeys.INIT_OP, mine)
        scaffold = wr.train.Scaffold().finalize()
        assert scaffold.init_op is mine and graph.finalized
        assert scaffold.saver is wr.get_collection(wr.GraphKeys.SAVERS)[0]
        assert scaffold.summary_op is None and scaffold.local_init_op is not None
        with wr.Session(graph=graph) as sess:
            assert sorted(sess.run(scaffold.ready_op).tolist()) == [b"local", b"v"]
            assert sess.run(scaffold.ready_for_local_init_op).tolist() == [b"v"]
            sess.run(scaffold.init_op)
            sess.run(scaffold.local_init_op)
            assert sess.run(scaffold.ready_op).size == 0 and sess.run(local) == 2.0
        graph._unsafe_unfinalize()
        wr.add_to_collection(wr.GraphKeys.READY_OP, wr.constant([], wr.string))
        wr.add_to_collection(wr.GraphKeys.READY_OP, wr.constant([], wr.string))
        with pytest.raises(RuntimeError, match="More than one item"):
            wr.train.Scaffold().finalize()
    # init_fn gets the scaffold and the session; feeds reach init_op.
    graph = wr.Graph()
    with graph.as_default():
        seen = []
        value = wr.placeholder(wr.float32, [])
        w = wr.Variable(0.0, name="w")
        scaffold = wr.train.Scaffold(init_op=w.assign(value), init_feed_dict={value: 4.0},
                                     init_fn=lambda s, sess: seen.append((s, sess.run(w))))
        with wr.train.MonitoredSession(wr.train.ChiefSessionCreator(scaffold=scaffold)) as sess:
            assert sess.run(w) == 4.0
        assert seen[0][0] is scaffold and seen[0][1] == 4.0


def test_run_step_fn():
    graph, step, x, y, increment = _counter_graph()
    with graph.as_default():
        hook = Recorder()
        with wr.train.MonitoredSession(hooks=[hook]) as sess:
            def step_fn(step_context):
                raw = step_context.session.run(step)  # no hooks
                value = step_context.run_with_hooks(increment)
                if value >= 2:
                    step_context.request_stop()
                return raw, value
            assert sess.run_step_fn(step_fn) == (0, 1)
            assert sess.run_step_fn(step_fn) is None and sess.should_stop()
            with pytest.raises(ValueError, match="step_context"):
                sess.run_step_fn(lambda ctx: None)
        assert hook.calls.count("after_run") == 2
        # A lost task inside step_fn: a new session, and step_fn is called again.
        hook, attempts = Recorder(), []
        with wr.train.MonitoredSession(hooks=[hook]) as sess:
            def flaky(step_context):
                attempts.append(step_context.session)
                if len(attempts) == 1:
                    raise errors.UnavailableError(None, None, "the ps went away")
                return step_context.run_with_hooks(increment)
            assert sess.run_step_fn(flaky) == 1
        assert hook.calls.count("after_create_session") == 2 and attempts[0] is not attempts[1]


def test_timer_summary_saver_and_step_waiter(tmp_path):
    timer = wr.train.SecondOrStepTimer(every_steps=3)
    assert timer.should_trigger_for_step(0) and timer.update_last_triggered_step(0) == (None, None)
    assert not timer.should_trigger_for_step(0) and not timer.should_trigger_for_step(2)
    assert timer.should_trigger_for_step(3)
    assert timer.update_last_triggered_step(3)[1] == 3 and timer.last_triggered_step() == 3
    with pytest.raises(ValueError):
        wr.train.SecondOrStepTimer(every_secs=1, every_steps=1)
    graph, step, x, y, increment = _counter_graph()
    with graph.as_default():
        summary = wr.summary.scalar("twice", wr.cast(step, wr.float32) * 2.0)
        saver_hook = wr.train.SummarySaverHook(save_steps=2, output_dir=str(tmp_path), summary_op=summary)
        with wr.train.MonitoredSession(hooks=[saver_hook, wr.train.GlobalStepWaiterHook(0)]) as sess:
            for _ in range(5):
                sess.run(increment)
        wr.summary.FileWriterCache.clear()
        steps = []
        for name in os.listdir(tmp_path):
            for record in wr.io.tf_record_iterator(str(tmp_path / name)):
                event = wr.summary.Event.FromString(record)
                steps += [(event.step, v.simple_value) for v in event.summary.value]
        # Written at the first run and every second step after it; the step read before the update.
        assert sorted(steps) == [(1, 0.0), (3, 4.0), (5, 8.0)]


def test_profiler_hook_writes_chrome_traces(tmp_path):
    graph, step, x, y, increment = _counter_graph()
    with graph.as_default():
        hook = wr.train.ProfilerHook(save_steps=2, output_dir=str(tmp_path))
        with wr.train.MonitoredSession(hooks=[hook]) as sess:
            for _ in range(5):
                sess.run(increment)
    # Not the first run, then every second step: the files TensorFlow 2.21 writes for this loop.
    assert sorted(os.listdir(tmp_path)) == ["timeline-2.json", "timeline-4.json"]
    trace = json.loads((tmp_path / "timeline-4.json").read_text())
    assert "AssignAddVariableOp" in [event.get("name") for event in trace["traceEvents"]]


def test_a_job_the_master_lacks_is_an_error_not_a_wait(monkeypatch):
    if not wr.distribute.server_lib.available():
        pytest.skip("this build of weir has no distributed runtime")
    from weir.train import session_manager
    monkeypatch.setattr(session_manager, "_DEVICE_WAIT_SECS", 0.5)
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = wr.distribute.Server({"localhost": ["127.0.0.1:%d" % port]})
    try:
        graph = wr.Graph()
        with graph.as_default():
            with wr.device("/job:nonexistent/task:0"):
                wr.Variable(1.0, name="v")
            creator = wr.train.ChiefSessionCreator(master=server.target)
            with pytest.raises(errors.InvalidArgumentError, match="/job:nonexistent/"):
                wr.train.MonitoredSession(session_creator=creator)
    finally:
        server.stop()


def test_queue_runners_are_stopped_on_close():
    import threading
    graph = wr.Graph()
    with graph.as_default():
        # An endless producer: its thread blocks on the full queue until close() cancels it.
        item = wr.train.range_input_producer(1000, shuffle=False, capacity=4).dequeue()
        batch = wr.train.batch([item], batch_size=2, capacity=4)
        with wr.train.MonitoredSession(stop_grace_period_secs=30) as sess:
            assert sess.run(batch).tolist() == [0, 1]
            assert any(t.name.startswith("QueueRunnerThread") for t in threading.enumerate())
        assert not [t.name for t in threading.enumerate() if t.name.startswith("QueueRunnerThread")]


def test_logging_and_step_counter_lines(caplog, tmp_path):
    graph, step, x, y, increment = _counter_graph()
    with graph.as_default():
        doubled = wr.cast(step, wr.float32) * 2.0
        hooks = [wr.train.LoggingTensorHook({"doubled": doubled, "y": y}, every_n_iter=2),
                 wr.train.LoggingTensorHook(["y"], at_end=True),
                 wr.train.StepCounterHook(every_n_steps=2, output_dir=str(tmp_path))]
        with caplog.at_level("INFO", logger="weir.train"):
            with wr.train.MonitoredSession(hooks=hooks) as sess:
                for _ in range(4):
                    sess.run(increment)
    lines = [r.getMessage() for r in caplog.records if r.name == "weir.train"]
    logged = [line for line in lines if line.startswith("doubled")]
    # Runs 0 and 2 (the step read before each run's update), tags in sorted order; then the elapsed time.
    assert logged[0] == "doubled = 0.0, y = 3.0"
    assert logged[1].startswith("doubled = 4.0, y = 3.0 (") and logged[1].endswith(" sec)")
    assert len(logged) == 2 and lines.count("y = 3.0") == 1  # at_end: once, at close
    rates = [line for line in lines if line.startswith("global_step/sec: ")]
    assert len(rates) >= 1 and all(float(line.split(": ")[1]) > 0 for line in rates)
    wr.summary.FileWriterCache.clear()
    tags = [v.tag for name in os.listdir(tmp_path)
            for record in wr.io.tf_record_iterator(str(tmp_path / name))
            for v in wr.summary.Event.FromString(record).summary.value]
    assert tags and set(tags) == {"global_step/sec"}
