#!/usr/bin/env python3
"""Runs one task of a cluster and starts it again when it dies.

    supervisor.py --name ps --max-restarts 5 --pid-file run/ps.pid -- \
        weir-server --cluster ... --job ps --task 0

- When the task exits for any reason other than this supervisor stopping it -- killed by a
  signal, crashed, or returned a status -- it logs one line and starts the same command again
  after --restart-delay seconds, at most --max-restarts times; one restart more and the
  supervisor gives up, exits with status 1 and says so. (A weir-server never exits on its own,
  so any exit is a failure; pass --exit-on-success for a command that may finish with status 0.)
- SIGTERM or SIGINT stops it: the task gets SIGTERM, then SIGKILL after --grace seconds, and the
  supervisor exits 0. The task also gets SIGKILL if the supervisor itself dies (Linux's
  parent-death signal), so no task outlives its supervisor.
- --pid-file holds the running task's pid (replaced atomically at each start), so a test or an
  operator can kill the task on purpose.

Log lines go to stderr: "[supervisor ps 1765012345.678] started pid 4242 (start 1)".
"""
import argparse
import ctypes
import os
import signal
import subprocess
import sys
import time

PR_SET_PDEATHSIG = 1


class Supervisor:
    def __init__(self, options):
        self.options = options
        self.stopping = False
        self.child = None

    def log(self, message):
        print(f"[supervisor {self.options.name} {time.time():.3f}] {message}", file=sys.stderr,
              flush=True)

    def on_signal(self, signum, _frame):
        self.stopping = True
        if self.child is not None and self.child.poll() is None:
            self.child.send_signal(signal.SIGTERM)

    def write_pid(self, pid):
        if not self.options.pid_file:
            return
        temporary = f"{self.options.pid_file}.tmp{os.getpid()}"
        with open(temporary, "w") as f:
            f.write(f"{pid}\n")
        os.replace(temporary, self.options.pid_file)

    def start(self):
        libc = ctypes.CDLL(None, use_errno=True)

        def die_with_parent():
            # SIGKILL the task when the supervisor dies, however it dies.
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)

        self.child = subprocess.Popen(self.options.command, preexec_fn=die_with_parent)
        self.write_pid(self.child.pid)

    def wait_child(self):
        """Waits for the child; on a stop, ends it (SIGTERM, then SIGKILL after the grace)."""
        stop_deadline = None
        while True:
            try:
                return self.child.wait(timeout=0.1)
            except subprocess.TimeoutExpired:
                pass
            if self.stopping:
                if stop_deadline is None:
                    stop_deadline = time.monotonic() + self.options.grace
                    if self.child.poll() is None:
                        self.child.send_signal(signal.SIGTERM)
                elif time.monotonic() > stop_deadline:
                    self.log(f"pid {self.child.pid} ignored SIGTERM for {self.options.grace} s: "
                             "SIGKILL")
                    self.child.kill()

    def run(self):
        signal.signal(signal.SIGTERM, self.on_signal)
        signal.signal(signal.SIGINT, self.on_signal)
        restarts = 0
        while True:
            started = time.monotonic()
            self.start()
            self.log(f"started pid {self.child.pid} (start {restarts + 1})")
            status = self.wait_child()
            pid, lived = self.child.pid, time.monotonic() - started
            if self.stopping:
                self.log(f"stopped pid {pid} ({describe(status)})")
                return 0
            if status == 0 and self.options.exit_on_success:
                self.log(f"pid {pid} finished with status 0")
                return 0
            if restarts >= self.options.max_restarts:
                self.log(f"pid {pid} {describe(status)} after {lived:.1f} s; giving up after "
                         f"{self.options.max_restarts} restarts")
                return 1
            restarts += 1
            self.log(f"pid {pid} {describe(status)} after {lived:.1f} s; restart {restarts} of "
                     f"at most {self.options.max_restarts} in {self.options.restart_delay} s")
            deadline = time.monotonic() + self.options.restart_delay
            while time.monotonic() < deadline and not self.stopping:
                time.sleep(0.05)
            if self.stopping:
                self.log("stopped while waiting to restart")
                return 0


def describe(status):
    if status is not None and status < 0:
        try:
            return f"was killed by {signal.Signals(-status).name}"
        except ValueError:
            return f"was killed by signal {-status}"
    return f"exited with status {status}"


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--name", required=True, help="the task's name in log lines (e.g. ps, worker0)")
    p.add_argument("--max-restarts", type=int, default=5, help="restarts before giving up")
    p.add_argument("--restart-delay", type=float, default=0.5, help="seconds before a restart")
    p.add_argument("--grace", type=float, default=10,
                   help="seconds from SIGTERM to SIGKILL on stop")
    p.add_argument("--pid-file", default="", help="keep the running task's pid here")
    p.add_argument("--exit-on-success", action="store_true",
                   help="a task that exits with status 0 is done, not restarted")
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- the task's command line")
    options = p.parse_args(argv)
    if options.command and options.command[0] == "--":
        options.command = options.command[1:]
    if not options.command:
        p.error("give the task's command after --")
    if options.max_restarts < 0 or options.restart_delay < 0 or options.grace < 0:
        p.error("--max-restarts, --restart-delay and --grace must not be negative")
    return options


if __name__ == "__main__":
    sys.exit(Supervisor(parse_args()).run())
