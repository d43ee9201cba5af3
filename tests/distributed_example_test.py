#!/usr/bin/env python3
"""End-to-end test of examples/distributed (issue 16): the Fashion-MNIST MLP trained on a ps/worker
cluster of weir-server processes started by start_cluster.sh on free loopback ports, each task
under supervisor.py.

1. An uninterrupted run.
2. A run whose worker is SIGKILLed mid-run, after a checkpoint exists, and later whose ps is
   SIGKILLed too (its variables are lost with it); the supervisors restart both. Asserted: the
   trainer logged each failure within 5 s of the kill, recreated its session and restored a
   checkpoint; each supervisor logged its restart; the run finished with the same test accuracy
   as the uninterrupted one and bit-identical variables.
   Why equal and not merely close: every step is a function of the variables and the batch alone
   -- the initial values come from fixed seeds, the batch of global step s from s, the CPU kernels
   reduce in a fixed order on the same cluster in both runs -- and a restore brings back every
   variable the step reads bit for bit (kernels, biases, Adam's slots and beta powers, the global
   step), so the steps replayed after a restore compute what the lost ones computed.
3. After the cluster stops, no process of it (supervisors, servers, restarted servers) is left.
Also: a supervisor gives up after its bounded number of restarts and says so; start_cluster.sh
with a command passes it the addresses and returns its status; a task dies with its supervisor.

Environment: WEIR_BUILD_DIR (the build tree: tools/weir-server, python/), PYTHONPATH with the
build tree's python/ (ctest sets both).
"""
import os
import pathlib
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "distributed"
BUILD = pathlib.Path(os.environ.get("WEIR_BUILD_DIR", ROOT / "build" / "release"))
SERVER = BUILD / "tools" / "weir-server"
# A data subset and few steps: about 20 s of training on an idle 2-core machine.
TRAIN_ARGS = ["--steps", "300", "--save-every", "50", "--log-every", "50", "--train-limit", "5000",
              "--test-limit", "2000"]
FINAL_RE = re.compile(r"^final global_step=(\d+) test_accuracy=([\d.]+) loss=\S+ "
                      r"variables_sha256=([0-9a-f]{64}) recoveries=(\d+)$", re.M)
LOG_RE = re.compile(r"^\[trainer (\d+\.\d+)\] (.*)$")


def fail(message):
    raise AssertionError(message)


class Trainer:
    """train.py in a subprocess; its stderr lines are collected as (time, text) as they come."""

    def __init__(self, checkpoint_dir, env):
        self.lines = []
        self.cond = threading.Condition()
        self.proc = subprocess.Popen(
            [sys.executable, str(EXAMPLE / "train.py"), "--checkpoint-dir", checkpoint_dir,
             *TRAIN_ARGS], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stderr:
            match = LOG_RE.match(line.rstrip("\n"))
            with self.cond:
                self.lines.append((float(match.group(1)), match.group(2)) if match else
                                  (time.time(), line.rstrip("\n")))
                self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    def wait_for(self, pattern, after=0, timeout=60):
        """The first (index, time, text) at index >= `after` whose text matches `pattern`."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for i in range(after, len(self.lines)):
                    if regex.search(self.lines[i][1]):
                        return i, self.lines[i][0], self.lines[i][1]
                if not self.reader.is_alive():
                    fail(f"train.py ended before logging /{pattern}/:\n{self.log()}")
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    fail(f"train.py did not log /{pattern}/ within {timeout} s:\n{self.log()}")
                self.cond.wait(remaining)

    def finish(self, timeout=120):
        stdout, _ = self.proc.communicate(timeout=timeout)
        self.reader.join(timeout=5)
        if self.proc.returncode != 0:
            fail(f"train.py exited with {self.proc.returncode}:\n{self.log()}\n{stdout}")
        match = FINAL_RE.search(stdout)
        if not match:
            fail(f"train.py printed no result line:\n{stdout}\n{self.log()}")
        return dict(step=int(match.group(1)), accuracy=match.group(2), digest=match.group(3),
                    recoveries=int(match.group(4)))

    def log(self):
        return "\n".join(f"  [{t:.3f}] {text}" for t, text in self.lines)


def read_pid(state_dir, job):
    return int((state_dir / f"{job}.pid").read_text())


def kill_task(state_dir, job):
    """SIGKILLs the running server of `job`; returns (pid, the time just before the kill)."""
    pid = read_pid(state_dir, job)
    killed_at = time.time()
    os.kill(pid, signal.SIGKILL)
    return pid, killed_at


def check_failure_seen(trainer, killed_at, after, job):
    """The trainer's failure line after the kill: within 5 s; then a new session and a restore.
    Returns the index of the restore line and the restored global step."""
    i, seen_at, text = trainer.wait_for(r"^step failed: (UnavailableError|AbortedError)", after)
    delay = seen_at - killed_at
    print(f"{job} killed: the trainer saw it {delay:.3f} s later: {text}")
    if not -0.05 <= delay < 5:
        fail(f"the trainer saw the {job} kill after {delay:.3f} s (limit 5 s): {text}")
    if job == "ps" and "/job:ps/replica:0/task:0" not in text:
        fail(f"the failure after the ps kill does not name the ps task: {text}")
    i, _, _ = trainer.wait_for(r"^recreating the session$", i)
    # A restarted worker leaves the ps's variables as they were; a restarted ps has none.
    i, _, text = trainer.wait_for(r"^variables uninitialized before the restore: \d+ of \d+$", i)
    lost, total = map(int, re.findall(r"\d+", text))
    print(f"  after the {job} kill: {text}")
    if lost != (total if job == "ps" else 0) or total < 10:
        fail(f"after the {job} kill: {text} (expected {'all' if job == 'ps' else 'none'})")
    i, _, text = trainer.wait_for(r"^restored .*model\.ckpt-(\d+) \(global step (\d+)\)$", i)
    step = int(re.search(r"global step (\d+)", text).group(1))
    if step < 50 or step % 50:
        fail(f"restored global step {step}: expected a checkpoint written every 50 steps")
    return i, step


def check_restart_logged(state_dir, job, old_pid):
    """The supervisor's log names the killed pid and a restart, and the pid file a new pid."""
    deadline = time.monotonic() + 10
    while True:
        log = (state_dir / f"{job}.log").read_text()
        if re.search(rf"pid {old_pid} was killed by SIGKILL after [\d.]+ s; restart 1 of at most",
                     log) and read_pid(state_dir, job) != old_pid:
            return
        if time.monotonic() > deadline:
            fail(f"the {job} supervisor logged no restart of pid {old_pid}:\n{log}")
        time.sleep(0.1)


def session_processes(sid):
    """Pids of live processes in session `sid` (start_cluster.sh and everything it started)."""
    pids = []
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        state, session = fields[0], int(fields[3])
        if session == sid and state != "Z":
            pids.append(int(entry.name))
    return pids


def test_supervisor_gives_up():
    result = subprocess.run([sys.executable, str(EXAMPLE / "supervisor.py"), "--name", "flaky",
                             "--max-restarts", "2", "--restart-delay", "0", "--", "false"],
                            capture_output=True, text=True, timeout=30)
    restarts = re.findall(r"exited with status 1 after [\d.]+ s; restart (\d) of at most 2",
                          result.stderr)
    if result.returncode != 1 or restarts != ["1", "2"] or \
            "giving up after 2 restarts" not in result.stderr:
        fail(f"supervisor: status {result.returncode}, expected 1 and two restarts:\n"
             f"{result.stderr}")


# The command start_cluster.sh runs in test_start_cluster_runs_a_command: checks the addresses
# it was given, SIGKILLs the ps task's supervisor and waits until the ps server is gone too
# (the parent-death signal), then exits 3.
CLUSTER_COMMAND = r"""
import os, pathlib, signal, sys, time
state = pathlib.Path(sys.argv[1])
env = (state / "cluster.env").read_text()
assert f"WEIR_PS_ADDRESS={os.environ['WEIR_PS_ADDRESS']}" in env, env
assert f"WEIR_WORKER_ADDRESS={os.environ['WEIR_WORKER_ADDRESS']}" in env, env
server = int((state / "ps.pid").read_text())
stat = pathlib.Path(f"/proc/{server}/stat").read_text()
supervisor = int(stat[stat.rindex(")") + 2:].split()[1])
os.kill(supervisor, signal.SIGKILL)
deadline = time.monotonic() + 5
while pathlib.Path(f"/proc/{server}").exists() and \
        pathlib.Path(f"/proc/{server}/stat").read_text().split(") ")[1][0] != "Z":
    assert time.monotonic() < deadline, "the ps server outlived its supervisor"
    time.sleep(0.05)
print("ps server gone with its supervisor")
sys.exit(3)
"""


def test_start_cluster_runs_a_command(tmp):
    """start_cluster.sh -- COMMAND: the command gets the addresses, its status is the script's,
    a task dies with its supervisor, and nothing is left once it returns."""
    state_dir = tmp / "command"
    env = dict(os.environ, WEIR_SERVER=str(SERVER))
    proc = subprocess.Popen([str(EXAMPLE / "start_cluster.sh"), "--state-dir", str(state_dir), "--",
                             sys.executable, "-c", CLUSTER_COMMAND, str(state_dir)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=60)
        if proc.returncode != 3 or "ps server gone with its supervisor" not in stdout or \
                not re.match(r"cluster ready: ps=127\.0\.0\.1:\d+ worker=127\.0\.0\.1:\d+", stdout):
            fail(f"start_cluster.sh -- COMMAND: status {proc.returncode} (expected 3)\n"
                 f"{stdout}\n{stderr}")
        left = session_processes(proc.pid)
        if left:
            fail(f"processes left after start_cluster.sh returned: {left}")
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def test_training_survives_killed_tasks(tmp):
    if not SERVER.exists():
        fail(f"{SERVER} is missing: build the weir-server target (WEIR_BUILD_DIR={BUILD})")
    state_dir = tmp / "cluster"
    env = dict(os.environ, WEIR_SERVER=str(SERVER))
    cluster = subprocess.Popen([str(EXAMPLE / "start_cluster.sh"), "--state-dir", str(state_dir),
                                "--max-restarts", "3"], env=env, stdout=subprocess.PIPE, text=True,
                               start_new_session=True)
    server_pids = []
    try:
        line = cluster.stdout.readline()
        match = re.match(r"cluster ready: ps=(\S+) worker=(\S+)", line)
        if not match:
            fail(f"start_cluster.sh printed {line!r}, not 'cluster ready: ...'")
        env["WEIR_PS_ADDRESS"], env["WEIR_WORKER_ADDRESS"] = match.group(1), match.group(2)
        server_pids += [read_pid(state_dir, "ps"), read_pid(state_dir, "worker")]

        started = time.monotonic()
        baseline = Trainer(str(tmp / "uninterrupted"), env).finish()
        print(f"uninterrupted: {baseline} ({time.monotonic() - started:.1f} s)")
        if baseline["step"] != 300 or baseline["recoveries"] != 0:
            fail(f"the uninterrupted run: {baseline}")

        started = time.monotonic()
        trainer = Trainer(str(tmp / "killed"), env)
        # The worker: killed between checkpoints, once the first one is written.
        i, _, _ = trainer.wait_for(r"^saved .*model\.ckpt-50$")
        time.sleep(0.3)
        pid, killed_at = kill_task(state_dir, "worker")
        i, restored = check_failure_seen(trainer, killed_at, i + 1, "worker")
        check_restart_logged(state_dir, "worker", pid)
        server_pids.append(read_pid(state_dir, "worker"))
        # The ps, once the recovered run has written a checkpoint of its own.
        i, _, _ = trainer.wait_for(rf"^saved .*model\.ckpt-{restored + 50}$", i)
        time.sleep(0.3)
        pid, killed_at = kill_task(state_dir, "ps")
        i, _ = check_failure_seen(trainer, killed_at, i + 1, "ps")
        check_restart_logged(state_dir, "ps", pid)
        server_pids.append(read_pid(state_dir, "ps"))
        result = trainer.finish()
        print(f"killed twice: {result} ({time.monotonic() - started:.1f} s)")
        if result["recoveries"] != 2:
            fail(f"expected 2 recoveries, got {result}:\n{trainer.log()}")
        if (result["step"], result["accuracy"], result["digest"]) != \
                (baseline["step"], baseline["accuracy"], baseline["digest"]):
            fail(f"the recovered run ended elsewhere than the uninterrupted one:\n"
                 f"  uninterrupted {baseline}\n  recovered     {result}\n{trainer.log()}")

        cluster.send_signal(signal.SIGTERM)
        cluster.wait(timeout=30)
        left = session_processes(cluster.pid) + [p for p in server_pids
                                                 if pathlib.Path(f"/proc/{p}").exists()]
        if left:
            fail(f"processes left after the cluster stopped: {sorted(set(left))}")
    finally:
        if cluster.poll() is None:
            cluster.kill()
            cluster.wait()
        try:
            os.killpg(cluster.pid, signal.SIGKILL)  # only if something survived a failed test
        except ProcessLookupError:
            pass


def main():
    with tempfile.TemporaryDirectory(prefix="weir_distributed_example_") as tmp:
        test_supervisor_gives_up()
        print("supervisor gives up after its restarts: ok")
        test_start_cluster_runs_a_command(pathlib.Path(tmp))
        print("start_cluster.sh runs a command, a task dies with its supervisor: ok")
        test_training_survives_killed_tasks(pathlib.Path(tmp))
        print("training survives a killed worker and a killed ps: ok")


if __name__ == "__main__":
    main()
