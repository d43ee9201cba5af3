"""wr.train.SyncReplicasOptimizer: synchronous replication with a backup
worker, on a real cluster (1 ps + 3 worker weir-servers on free loopback
ports), and its hook and argument checks in one process.

The model: w (on the ps) with loss 0.5 * |w - t|^2, so every replica's
gradient at step k is w_k - t and one synchronous SGD step with rate lr gives
w_{k+1} = w_k - lr (w_k - t): after K global steps w_K = t + (1 - lr)^K (w_0 - t)
exactly, and global_step is exactly K. Gradients applied one by one, a stale
gradient counted, or a step taken twice would give another w or step.

The backup (replicas_to_aggregate=2 of total_num_replicas=3) runs in its own
process and is SIGKILLed once the run is half done (global_step 3 of 6); the
two survivors, held at the half-way point until then, must finish the other
half by themselves, each step under a timeout."""
import os
import pathlib
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import pytest

import weir as wr

BUILD = pathlib.Path(os.environ.get("WEIR_BUILD_DIR", pathlib.Path(__file__).resolve().parents[2] /
                                    "build" / "release"))
SERVER = BUILD / "tools" / "weir-server"
W0 = np.array([4.0, -3.0], np.float32)
TARGET = np.array([1.0, 2.0], np.float32)
LR = 0.5
STEPS = 6
TIMEOUT_MS = 20000


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_listening(address, procs):
    host, port = address.split(":")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if any(p.poll() is not None for p in procs):
            pytest.fail(f"a weir-server exited before {address} listened")
        try:
            socket.create_connection((host, int(port)), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    pytest.fail(f"weir-server at {address} did not come up")


@pytest.fixture(scope="module")
def cluster():
    if not SERVER.exists():
        pytest.fail(f"{SERVER} is missing: build the weir-server target (WEIR_BUILD_DIR={BUILD})")
    ps = f"127.0.0.1:{_free_port()}"
    workers = [f"127.0.0.1:{_free_port()}" for _ in range(3)]
    spec = f"worker={','.join(workers)};ps={ps}"
    procs = [subprocess.Popen([str(SERVER), "--cluster", spec, "--job", job, "--task", str(task)],
                              stderr=subprocess.DEVNULL)
             for job, task in [("ps", 0)] + [("worker", i) for i in range(3)]]
    try:
        for address in [ps] + workers:
            _wait_listening(address, procs)
        yield {"ps": ps, "workers": workers}
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(timeout=30)


def build_replica(task):
    """One replica's graph (between-graph replication): w and global_step on
    the ps, the rest on /job:worker/task:<task>."""
    g = wr.Graph()
    with g.as_default():
        with wr.device("/job:ps/task:0"):
            w = wr.Variable(W0, name="w")
            global_step = wr.train.get_or_create_global_step()
        with wr.device(f"/job:worker/task:{task}"):
            t = wr.placeholder(wr.float32, [2], name="t")
            loss = 0.5 * wr.reduce_sum(wr.square(w - t))
            opt = wr.train.SyncReplicasOptimizer(wr.train.GradientDescentOptimizer(LR),
                                                 replicas_to_aggregate=2, total_num_replicas=3)
            grads = opt.compute_gradients(loss)
            train_op = opt.apply_gradients(grads, global_step=global_step)
        init = wr.global_variables_initializer()
        hook = opt.make_session_run_hook(is_chief=(task == 0))
        hook.begin()
    return {"graph": g, "w": w, "global_step": global_step, "t": t, "train_op": train_op,
            "init": init, "hook": hook, "opt": opt}


def _wait_initialized(sess, replica):
    deadline = time.monotonic() + 20
    with replica["graph"].as_default():
        check = wr.report_uninitialized_variables([replica["w"], replica["global_step"]])
    while len(sess.run(check)):
        assert time.monotonic() < deadline, "the chief never initialized the variables"
        time.sleep(0.05)


def _step(sess, replica):
    """One train step; returns the replica's new local step."""
    options = wr.RunOptions(timeout_in_ms=TIMEOUT_MS)
    return int(sess.run(replica["train_op"], {replica["t"]: TARGET}, options=options))


def _worker_main(worker_address, task):
    """A replica in its own process (the one the test kills): steps, printing
    each new local step, until it has taken part in the first half of the
    run; then waits in its training loop for the SIGKILL. (Stepping on, with
    the surplus tokens of the backup, it could advance global_step on its own
    and make the end of the run depend on when the kill lands.)"""
    replica = build_replica(task)
    with wr.Session("grpc://" + worker_address, graph=replica["graph"]) as sess:
        _wait_initialized(sess, replica)
        replica["hook"].after_create_session(sess, wr.train.Coordinator())
        print("ready", flush=True)
        while True:
            local_step = _step(sess, replica)
            print("ran", local_step, flush=True)
            while local_step >= STEPS // 2:
                time.sleep(1)


def test_backup_worker_killed_mid_run(cluster):
    replicas = [build_replica(task) for task in range(2)]
    sessions = [wr.Session("grpc://" + cluster["workers"][task], graph=replicas[task]["graph"])
                for task in range(2)]
    coord = wr.train.Coordinator()
    victim = None
    try:
        sessions[0].run(replicas[0]["init"])
        for task in (0, 1):
            replicas[task]["hook"].after_create_session(sessions[task], coord)
        # The third replica, a backup, in a process of its own.
        victim_log = tempfile.TemporaryFile(mode="w+")
        victim = subprocess.Popen([sys.executable, __file__, cluster["workers"][2], "2"],
                                  stdout=subprocess.PIPE, stderr=victim_log, text=True)

        killed = threading.Event()
        results, failures = {}, []

        def worker(task):
            try:
                local_step = 0
                while local_step < STEPS:
                    if local_step >= STEPS // 2:
                        # Half way: go on only once the backup is dead, so the
                        # rest of the run needs both survivors.
                        assert killed.wait(120), "the backup was never killed"
                    local_step = _step(sessions[task], replicas[task])
                results[task] = local_step
            except Exception as e:  # noqa: BLE001  (reported below)
                failures.append((task, e))

        threads = [threading.Thread(target=worker, args=(task,), daemon=True) for task in (0, 1)]
        for t in threads:
            t.start()
        # Kill the backup once it has taken part in the first half. The
        # bounds are generous: on a loaded CI machine the backup's process
        # (Python, the import, its session) can take tens of seconds to start.
        ran = None
        deadline = time.monotonic() + 90
        while (ran is None or ran < STEPS // 2) and time.monotonic() < deadline:
            readable, _, _ = select.select([victim.stdout], [], [], 0.5)
            if readable:
                line = victim.stdout.readline()
                if not line:
                    break
                if line.startswith("ran"):
                    ran = int(line.split()[1])
        if ran is None or ran < STEPS // 2:
            victim.kill()
            victim.wait(timeout=10)
            victim_log.seek(0)
            pytest.fail("the backup replica never reached the half-way step: " +
                        victim_log.read()[-3000:])
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=10)
        killed.set()
        for t in threads:
            t.join(timeout=60)
        assert not any(t.is_alive() for t in threads), "a step hung after the backup died"
        assert not failures, failures
        assert results == {0: STEPS, 1: STEPS}

        w, step = sessions[0].run([replicas[0]["w"], replicas[0]["global_step"]])
        assert step == STEPS
        expected = TARGET + (1 - LR) ** STEPS * (W0 - TARGET)
        np.testing.assert_allclose(w, expected, rtol=1e-6)
    finally:
        if victim is not None and victim.poll() is None:
            victim.kill()
            victim.wait(timeout=10)
        coord.request_stop()
        # The chief's queue runner waits in the take of step STEPS + 1, and
        # closing a grpc:// session does not cancel a step in flight on the ps
        # (a gap of the distributed runtime): one more synchronous step by both
        # survivors lets it finish and see the stop.
        extra = [threading.Thread(target=_ignore_errors, args=(_step, sessions[task],
                                                                replicas[task]), daemon=True)
                 for task in (0, 1)]
        for t in extra:
            t.start()
        for t in extra:
            t.join(timeout=30)
        coord.join(stop_grace_period_secs=10)
        for sess in sessions:
            sess.close()


def _ignore_errors(fn, *args):
    try:
        fn(*args)
    except Exception:  # noqa: BLE001  (teardown: the test's outcome is decided)
        pass


def test_one_replica_in_process_with_the_chief_hook():
    """replicas_to_aggregate=1 in an in-process session: the hook fills the
    first token and starts the chief's queue runner; the replica steps until
    its local step (the token it got) is 3, so exactly 3 updates ran. A run
    whose gradient was taken stale is dropped and leaves w alone."""
    g = wr.Graph()
    with g.as_default():
        w = wr.Variable(W0, name="w")
        global_step = wr.train.get_or_create_global_step()
        t = wr.placeholder(wr.float32, [2])
        loss = 0.5 * wr.reduce_sum(wr.square(w - t))
        # variable_averages: the chief moves w's average after each update.
        ema = wr.train.ExponentialMovingAverage(0.5)
        opt = wr.train.SyncReplicasOptimizer(wr.train.GradientDescentOptimizer(LR), 1,
                                             variable_averages=ema,
                                             variables_to_average=[w])
        train_op = opt.apply_gradients(opt.compute_gradients(loss), global_step=global_step)
        local_steps = wr.get_collection(wr.GraphKeys.LOCAL_VARIABLES)
        assert [v.op.name for v in local_steps] == ["sync_rep_local_step"]
        assert opt.get_chief_queue_runner() is not None
        hook = opt.make_session_run_hook(is_chief=True)
        hook.begin()
        init = wr.global_variables_initializer()
    with wr.Session(graph=g) as sess:
        with pytest.raises(RuntimeError, match="did not make model ready"):
            hook.after_create_session(sess, wr.train.Coordinator())
        sess.run(init)
        coord = wr.train.Coordinator()
        hook.after_create_session(sess, coord)
        options = wr.RunOptions(timeout_in_ms=TIMEOUT_MS)
        local_step, runs = 0, 0
        while local_step < 3:
            local_step = int(sess.run(train_op, {t: TARGET}, options=options))
            runs += 1
            assert runs < 20
        assert sess.run(global_step) == 3
        # The averages run after each update's tokens are in: the third may
        # still be on its way. After update k, w is TARGET + (1 - LR)^k (W0 -
        # TARGET), and the average moves half way to it.
        average = ema.average(w)
        assert average.op.name == "w/ExponentialMovingAverage"
        expected = np.array(W0, np.float64)
        for k in (1, 2, 3):
            expected = expected - (expected - (TARGET + (1 - LR) ** k * (W0 - TARGET))) * 0.5
        deadline = time.monotonic() + 10
        while (not np.allclose(sess.run(average), expected, rtol=1e-6) and
               time.monotonic() < deadline):
            time.sleep(0.01)
        np.testing.assert_allclose(sess.run(average), expected, rtol=1e-6)
        np.testing.assert_allclose(sess.run(w), TARGET + (1 - LR) ** 3 * (W0 - TARGET), rtol=1e-6)
        coord.request_stop()
    coord.join(stop_grace_period_secs=10, ignore_live_threads=True)


def test_argument_checks():
    with wr.Graph().as_default():
        w = wr.Variable(W0)
        opt = wr.train.SyncReplicasOptimizer(wr.train.GradientDescentOptimizer(LR), 2, 3)
        with pytest.raises(ValueError, match="apply_gradient should be called"):
            opt.make_session_run_hook(True).begin()
        with pytest.raises(ValueError, match="after apply_gradients"):
            opt.get_init_tokens_op()
        grads = opt.compute_gradients(wr.reduce_sum(w * w))
        with pytest.raises(ValueError, match="Global step is required"):
            opt.apply_gradients(grads)
        with pytest.raises(ValueError, match="at least one variable"):
            opt.apply_gradients([], global_step=wr.train.get_or_create_global_step())
        opt.apply_gradients(grads, global_step=wr.train.get_or_create_global_step())
        assert opt.get_init_tokens_op(0).type == "NoOp"
        with pytest.raises(ValueError, match="Too few tokens"):
            opt.get_init_tokens_op(-2)


if __name__ == "__main__":
    _worker_main(sys.argv[1], int(sys.argv[2]))
