"""Distributed null-step latency, Weir against TensorFlow (OSDI 2016, Fig. 6),
like for like: for each N, N server processes on free loopback ports (one
intra-op thread each) and one client process that runs a step fetching one
scalar Const placed on each /job:worker/task:i through a grpc:// session to
task 0's master, with the same warm-up and timed step counts.

  Weir: N weir-server processes (started here) and bench/null_step_client;
  TensorFlow: bench/peers/null_step_peers.py (N tf.distribute.Server
  processes and a tf.compat.v1.Session), run with TensorFlow's Python.

The two sides run one after the other for each N (their order alternating
with N and round), so they share the machine's load, and the script prints
one Markdown table: median and p90 step latency, the client's CPU time per
step and the servers' CPU time per step (all N processes together, over the
timed steps). Run it through bench/null_step.sh, which builds nothing and
takes the binaries from a build folder.
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def free_ports(count):
    """`count` distinct free loopback ports (held open together)."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def run_weir(args, n):
    addresses = ["127.0.0.1:%d" % port for port in free_ports(n)]
    cluster = "worker=" + ",".join(addresses)
    processes = []
    with tempfile.TemporaryDirectory(prefix="null_step.") as tmp:
        try:
            for task in range(n):
                processes.append(subprocess.Popen(
                    [args.weir_server, "--cluster", cluster, "--job", "worker", "--task",
                     str(task), "--intra-op-threads", "1",
                     "--address-file", os.path.join(tmp, "address%d" % task)],
                    stderr=subprocess.DEVNULL))
            deadline = time.monotonic() + 60
            for task, process in enumerate(processes):
                path = os.path.join(tmp, "address%d" % task)
                while not (os.path.exists(path) and os.path.getsize(path) > 0):
                    if process.poll() is not None:
                        raise RuntimeError("weir-server task %d exited (%d)" %
                                           (task, process.returncode))
                    if time.monotonic() > deadline:
                        raise RuntimeError("weir-server task %d did not start in 60 s" % task)
                    time.sleep(0.02)
            out = subprocess.run(
                [args.client, "--target", "grpc://" + addresses[0], "--job", "worker",
                 "--tasks", str(n), "--steps", str(args.steps), "--warmup", str(args.warmup),
                 "--server-pids", ",".join(str(p.pid) for p in processes)],
                check=True, capture_output=True, text=True, timeout=600)
            return json.loads(out.stdout.strip().splitlines()[-1])
        finally:
            for p in processes:
                p.kill()
            for p in processes:
                p.wait()


def run_tf(args, n):
    out = subprocess.run(
        [args.tf_python, os.path.join(HERE, "peers", "null_step_peers.py"), "--workers", str(n),
         "--steps", str(args.steps), "--warmup", str(args.warmup)],
        check=True, capture_output=True, text=True, timeout=900)
    return json.loads(out.stdout.strip().splitlines()[-1])


def combine(results):
    """The median of each field over the rounds."""
    merged = dict(results[0])
    for key in ("median_ms", "p90_ms", "mean_ms", "client_cpu_ms_per_step",
                "server_cpu_ms_per_step"):
        values = [r[key] for r in results if key in r]
        if values:
            merged[key] = round(statistics.median(values), 3)
    return merged


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(HERE, "..", "build", "release"),
                        help="the build folder holding tools/weir-server and bench/null_step_client")
    parser.add_argument("--tf-python", default="/opt/weir-peers/bin/python",
                        help="a Python with TensorFlow")
    parser.add_argument("--workers", default="1,2,4,8,16,32", help="comma-separated N")
    parser.add_argument("--steps", type=int, default=1000, help="timed steps per N and side")
    parser.add_argument("--warmup", type=int, default=50, help="untimed steps first")
    parser.add_argument("--rounds", type=int, default=1,
                        help="runs of each side per N (the table gives their medians)")
    parser.add_argument("--no-tf", action="store_true", help="Weir only")
    parser.add_argument("--json", action="store_true", help="also print each run's JSON line")
    args = parser.parse_args()
    args.weir_server = os.path.join(args.build, "tools", "weir-server")
    args.client = os.path.join(args.build, "bench", "null_step_client")
    for path in (args.weir_server, args.client):
        if not os.access(path, os.X_OK):
            sys.exit("null_step.py: %s is missing; build weir-server and null_step_client" % path)

    rows = []
    for i, n in enumerate(int(x) for x in args.workers.split(",")):
        weir, tf = [], []
        for r in range(args.rounds):
            sides = [("weir", run_weir, weir)]
            if not args.no_tf:
                sides.append(("tf", run_tf, tf))
            if (i + r) % 2:
                sides.reverse()
            for _, run, results in sides:
                results.append(run(args, n))
                if args.json:
                    print(json.dumps(results[-1]), file=sys.stderr, flush=True)
        rows.append((n, combine(weir), combine(tf) if tf else None))

    def cell(result, key):
        return "%.3f" % result[key] if result and key in result else "-"

    print("| N | Weir median ms | Weir p90 ms | Weir client CPU ms/step | Weir servers CPU "
          "ms/step | TF median ms | TF p90 ms | TF client CPU ms/step | TF servers CPU "
          "ms/step | TF / Weir (median) |")
    print("| ---: " * 10 + "|")
    for n, weir, tf in rows:
        ratio = "%.2fx" % (tf["median_ms"] / weir["median_ms"]) if tf else "-"
        print("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            n, cell(weir, "median_ms"), cell(weir, "p90_ms"), cell(weir, "client_cpu_ms_per_step"),
            cell(weir, "server_cpu_ms_per_step"), cell(tf, "median_ms"), cell(tf, "p90_ms"),
            cell(tf, "client_cpu_ms_per_step"), cell(tf, "server_cpu_ms_per_step"), ratio))


if __name__ == "__main__":
    main()
