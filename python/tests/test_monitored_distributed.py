"""MonitoredTrainingSession on a cluster: between-graph replication with a ps task (weir-server)
and two worker processes, each a TF1 script with its own in-process Server, replica_device_setter
and MonitoredTrainingSession(master=server.target, is_chief=task == 0).

The non-chief starts first and waits (WorkerSessionCreator) until the chief has initialized the
variables on ps. Both pause at global step 10 (a hook blocks on a line of stdin: the test's
synchronization, no sleeps); the test kills the ps (SIGKILL) and starts it again on its port — the
variables on ps are lost — and lets the chief go on, then (once the chief's new session has
restored the checkpoint) the non-chief. Their next run fails (AbortedError or
UnavailableError); each monitored session closes its session and makes a new one: the chief
restores the newest checkpoint, the non-chief waits for that, and both train on to the last step.
"""
import os
import pathlib
import queue
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import weir as wr

BUILD = pathlib.Path(os.environ.get("WEIR_BUILD_DIR", pathlib.Path(__file__).resolve().parents[2] /
                                    "build" / "release"))
SERVER = BUILD / "tools" / "weir-server"
LAST_STEP = 30
PAUSE_STEP = 10
TIMEOUT = 60  # seconds for any one event; the whole test takes a few on an idle machine

WORKER = textwrap.dedent("""
    import logging, os, sys
    import numpy as np
    import weir as tf

    cluster = tf.train.ClusterSpec({"ps": [sys.argv[1]], "worker": sys.argv[2].split(",")})
    task = int(sys.argv[3])
    checkpoint_dir = sys.argv[4]
    logging.basicConfig(level=logging.INFO, format="%(name)s %(message)s")
    server = tf.train.Server(cluster, job_name="worker", task_index=task)
    is_chief = task == 0

    rng = np.random.RandomState(0)
    x_data = rng.randn(32, 3).astype(np.float32)
    y_data = (x_data @ np.array([[1.0], [-2.0], [0.5]], np.float32)).astype(np.float32)
    with tf.device(tf.train.replica_device_setter(worker_device="/job:worker/task:%d" % task,
                                                  cluster=cluster)):
        global_step = tf.train.get_or_create_global_step()
        w = tf.get_variable("w", initializer=np.zeros([3, 1], np.float32))
        loss = tf.reduce_mean(tf.square(tf.matmul(x_data, w) - y_data))
        train_op = tf.train.GradientDescentOptimizer(0.05).minimize(loss, global_step=global_step)

    def say(*words):
        print(*words, flush=True)

    class Report(tf.train.SessionRunHook):
        # Says each session made and each step; at PAUSE_STEP, waits for a line of stdin.
        paused = False

        def after_create_session(self, session, coord):
            say("SESSION", int(session.run(global_step)), session.run(w).ravel().tolist())

        def before_run(self, run_context):
            return tf.train.SessionRunArgs(global_step)

        def after_run(self, run_context, run_values):
            say("STEP", int(run_values.results))
            if run_values.results >= PAUSE_STEP and not self.paused:
                self.paused = True
                say("PAUSED")
                sys.stdin.readline()

    say("STARTED")
    losses = []
    with tf.train.MonitoredTrainingSession(
            master=server.target, is_chief=is_chief, checkpoint_dir=checkpoint_dir,
            save_checkpoint_steps=5, hooks=[tf.train.StopAtStepHook(last_step=LAST_STEP), Report()],
            max_wait_secs=TIMEOUT) as sess:
        while not sess.should_stop():
            losses.append(float(sess.run([loss, train_op])[0]))
    say("DONE", len(losses), losses[0], losses[-1])
    if is_chief:
        sys.stdin.readline()  # the chief's server serves until the other worker is done
""").replace("PAUSE_STEP", str(PAUSE_STEP)).replace("LAST_STEP", str(LAST_STEP)).replace(
    "TIMEOUT", str(TIMEOUT))


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_listening(address):
    host, port = address.split(":")
    deadline = time.monotonic() + TIMEOUT
    while True:
        try:
            socket.create_connection((host, int(port)), timeout=0.5).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                pytest.fail(f"{address} did not start listening")
            time.sleep(0.05)


def _checkpointed_step(path):
    """The global step saved in the checkpoint `path`."""
    graph = wr.Graph()
    with graph.as_default():
        step = wr.train.get_or_create_global_step()
        saver = wr.train.Saver([step])
        with wr.Session(graph=graph) as sess:
            saver.restore(sess, path)
            return int(sess.run(step))


class Process:
    """A subprocess whose stdout lines arrive, timestamped, on a queue."""

    def __init__(self, args, env=None, stdin=False):
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env=env)
        self.lines, self.seen, self.stderr = queue.Queue(), [], []
        threading.Thread(target=self._read, args=(self.proc.stdout, self.lines), daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()

    @staticmethod
    def _read(stream, out):
        for line in stream:
            out.put((time.monotonic(), line.split()))
        out.put((time.monotonic(), None))

    def _read_err(self):
        for line in self.proc.stderr:
            self.stderr.append(line)

    def expect(self, word):
        """Reads lines until one starts with `word`; returns (time, words)."""
        deadline = time.monotonic() + TIMEOUT
        while True:
            try:
                when, words = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                words = None
            if words is None:
                pytest.fail(f"no {word} line; stdout so far {self.seen[-20:]}\nstderr:\n"
                            + "".join(self.stderr[-40:]))
            self.seen.append(words)
            if words and words[0] == word:
                return when, words

    def send(self, text):
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)


def test_ps_restart_mid_run_is_recovered(tmp_path):
    if not SERVER.exists():
        pytest.fail(f"{SERVER} is missing: build the weir-server target (WEIR_BUILD_DIR={BUILD})")
    if not wr.distribute.server_lib.available():
        pytest.skip("this build of weir has no distributed runtime")
    ps = f"127.0.0.1:{_free_port()}"
    workers = [f"127.0.0.1:{_free_port()}" for _ in range(2)]
    spec = f"ps={ps};worker={','.join(workers)}"
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    checkpoint_dir = tmp_path / "ckpt"
    env = dict(os.environ, PYTHONPATH=str(BUILD / "python"))

    def start_ps():
        process = Process([str(SERVER), "--cluster", spec, "--job", "ps", "--task", "0"])
        _wait_listening(ps)
        return process

    def start_worker(task):
        return Process([sys.executable, str(script), ps, ",".join(workers), str(task),
                        str(checkpoint_dir)], env=env, stdin=True)

    started = time.monotonic()
    processes = [start_ps()]
    try:
        # The non-chief first: it must wait for the chief's initialization.
        other = start_worker(1)
        processes.append(other)
        other.expect("STARTED")
        chief = start_worker(0)
        processes.append(chief)
        chief.expect("SESSION")
        other.expect("SESSION")
        chief.expect("PAUSED")
        other.expect("PAUSED")

        # Both paused between steps: the newest checkpoint is the one the chief will restore. (Its
        # global step may be past the one in its name: the other worker can run a step between the
        # chief's read of the step and the save, as in TensorFlow.)
        latest = wr.train.latest_checkpoint(str(checkpoint_dir))
        saved_step = _checkpointed_step(latest)
        assert saved_step >= int(latest.rsplit("-", 1)[1]) >= 5
        processes[0].proc.send_signal(signal.SIGKILL)
        processes[0].stop()
        processes[0] = start_ps()
        chief.send("go")
        _, words = chief.expect("SESSION")
        # The new session restored the checkpoint.
        assert int(words[1]) == saved_step, (latest, chief.seen, "".join(chief.stderr))
        other.send("go")  # only now, so that the step above is the restored one
        _, words = other.expect("SESSION")
        assert int(words[1]) >= saved_step
        _, other_done = other.expect("DONE")
        assert other.proc.wait(timeout=TIMEOUT) == 0
        _, chief_done = chief.expect("DONE")
        chief.send("exit")
        assert chief.proc.wait(timeout=TIMEOUT) == 0
        # The non-chief, started first, waited for the chief's initialization.
        assert "Waiting for model to be ready" in "".join(other.stderr)
        # Each saw its session fail as a lost task's does, and made a new one.
        for worker in (chief, other):
            log = "".join(worker.stderr)
            assert "The session will be closed and a new one made" in log, log
            assert "AbortedError" in log or "UnavailableError" in log, log
        for done in (chief_done, other_done):
            assert int(done[1]) > 0 and float(done[3]) < float(done[2])  # both trained
        steps = [int(s[1]) for s in chief.seen + other.seen if s and s[0] == "STEP"]
        assert max(steps) + 1 >= 30
        final = wr.train.latest_checkpoint(str(checkpoint_dir))
        assert int(final.rsplit("-", 1)[1]) >= 30
        print(f"wall time {time.monotonic() - started:.1f} s")
    finally:
        for process in processes:
            process.stop()
