"""Per-call overhead of running a one-node graph from Python.

    PYTHONPATH=build/py/python python3 bench/python_session_bench.py [--rounds 7] [--number 20000]

One feed and one fetch of a float32 scalar through Identity (weir, and
TensorFlow 2.21's tf.compat.v1.Session in graph mode), and the same tiny
work as one PyTorch eager op (torch.add(x, 1) on a one-element tensor):
- weir sess.run(y, {x: value})
- weir sess.make_callable(y, [x])(value)
- TensorFlow tf.compat.v1.Session.run(y, {x: value}) and its make_callable
- PyTorch torch.add(x, 1)
The peers run in /opt/weir-peers/bin/python (WEIR_PEERS_PYTHON overrides):
this script re-executes itself there with --peer. Each figure is the median
over rounds of (time of `number` calls) / number, in microseconds, with
the minimum and the median process CPU time (all threads) per call. The
"_C" lines are the extension alone (no Python session layer): the floor
each Python path adds to. On a shared, loaded machine wall time includes
time the process waited for a core; the CPU column is then the figure to
read (a weir step of this graph runs wholly on the calling thread).
"""
import argparse
import json
import os
import statistics
import subprocess
import time
import timeit

PEERS_PYTHON = os.environ.get("WEIR_PEERS_PYTHON", "/opt/weir-peers/bin/python")


def measure(fn, rounds, number):
    fn()  # warm: first-call compilation and caches are not per-call overhead
    wall = []
    cpu = []
    for _ in range(rounds):
        # Wall time is the figure; process CPU time (all threads) beside it
        # tells a busy machine's waiting apart from the work itself.
        c0 = time.process_time()
        wall.append(timeit.timeit(fn, number=number) / number * 1e6)
        cpu.append((time.process_time() - c0) / number * 1e6)
    return {"median_us": statistics.median(wall), "min_us": min(wall),
            "cpu_median_us": statistics.median(cpu)}


def bench_weir(rounds, number):
    import numpy as np

    import weir as wr
    from weir import raw_ops

    results = {}
    graph = wr.Graph()
    with graph.as_default():
        x = raw_ops.Placeholder(dtype=wr.float32, shape=[], name="x")
        y = raw_ops.Identity(input=x, name="y")
    value = np.array(1.0, dtype=np.float32)
    with wr.Session(graph=graph) as sess:
        feed = {x: value}
        results["weir sess.run"] = measure(lambda: sess.run(y, feed), rounds, number)
        results["weir sess.run (Python float feed)"] = measure(
            lambda: sess.run(y, {x: 1.0}), rounds, number)
        fn = sess.make_callable(y, [x])
        results["weir make_callable"] = measure(lambda: fn(value), rounds, number)
        c_sess = sess._c
        c_feeds = [("x:0", value)]
        results["weir _C Session.run (floor of sess.run)"] = measure(
            lambda: c_sess.run(c_feeds, ["y:0"], [], None, False), rounds, number)
        handle = c_sess.make_callable(["x:0"], ["y:0"], [])
        values = [value]
        results["weir _C run_callable (floor)"] = measure(
            lambda: c_sess.run_callable(handle, values), rounds, number)
    return results


def bench_peers(rounds, number):
    results = {}
    import numpy as np
    try:
        import tensorflow as tf
    except ImportError as e:
        results["tensorflow"] = {"error": str(e)}
    else:
        tf.compat.v1.disable_eager_execution()
        graph = tf.Graph()
        with graph.as_default():
            x = tf.compat.v1.placeholder(tf.float32, [], name="x")
            y = tf.identity(x, name="y")
        value = np.array(1.0, dtype=np.float32)
        with tf.compat.v1.Session(graph=graph) as sess:
            feed = {x: value}
            results["tensorflow %s Session.run" % tf.__version__] = measure(
                lambda: sess.run(y, feed), rounds, number)
            fn = sess.make_callable(y, [x])
            results["tensorflow %s make_callable" % tf.__version__] = measure(
                lambda: fn(value), rounds, number)
    try:
        import torch
    except ImportError as e:
        results["torch"] = {"error": str(e)}
    else:
        torch.set_num_threads(1)
        t = torch.ones(1)
        results["torch %s eager torch.add(x, 1)" % torch.__version__] = measure(
            lambda: torch.add(t, 1), rounds, number)
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--number", type=int, default=20000)
    parser.add_argument("--peer", action="store_true", help="(internal) run the peers, print JSON")
    parser.add_argument("--no-peers", action="store_true")
    args = parser.parse_args()
    if args.peer:
        print(json.dumps(bench_peers(args.rounds, args.number)))
        return
    results = bench_weir(args.rounds, args.number)
    if not args.no_peers:
        if os.path.exists(PEERS_PYTHON):
            env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
            env.pop("PYTHONPATH", None)
            proc = subprocess.run([PEERS_PYTHON, os.path.abspath(__file__), "--peer", "--rounds",
                                   str(args.rounds), "--number", str(args.number)],
                                  capture_output=True, text=True, env=env)
            lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
            if proc.returncode == 0 and lines:
                results.update(json.loads(lines[-1]))
            else:
                results["peers"] = {"error": (proc.stderr or proc.stdout)[-500:]}
        else:
            results["peers"] = {"error": "%s not found" % PEERS_PYTHON}
    width = max(len(name) for name in results)
    print("%-*s  %10s  %10s  %10s" % (width, "per call (one scalar feed + fetch)", "median us",
                                       "min us", "cpu us"))
    for name, r in results.items():
        if "error" in r:
            print("%-*s  skipped: %s" % (width, name, r["error"].strip().splitlines()[-1]))
        else:
            print("%-*s  %10.2f  %10.2f  %10.2f" % (width, name, r["median_us"], r["min_us"],
                                                   r["cpu_median_us"]))


if __name__ == "__main__":
    main()
