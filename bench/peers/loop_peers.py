"""TensorFlow's minimal while loop (i = i + 1 while i < n), the peer of Weir's
minimal-loop benchmark: iterations per second in graph mode through a
tf.compat.v1.Session with control flow v1 (Switch/Merge/Enter/Exit/
NextIteration, the structure Weir builds) and with control flow v2 (a
functional While), and as a tf.function. One JSON line per variant.

n is fed at run time (a placeholder or a tensor argument), so no variant can
fold the loop away; each run is timed after one warm-up run of the same n,
and the best of --repeats runs is reported, in wall time and in the process's
CPU time (what to compare on a loaded machine). One intra- and one inter-op
thread (run it under `taskset -c 0` for one core):

  taskset -c 0 /opt/weir-peers/bin/python bench/peers/loop_peers.py --n 1000000
"""
import argparse
import json
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402


def session_loop(control_flow_v2, threads):
    """A Session running the loop built with control flow v1 or v2."""
    if control_flow_v2:
        tf.compat.v1.enable_control_flow_v2()
    else:
        tf.compat.v1.disable_control_flow_v2()
    graph = tf.Graph()
    with graph.as_default():
        n = tf.compat.v1.placeholder(tf.int32, [], name="n")
        i = tf.while_loop(lambda i: i < n, lambda i: i + 1, [tf.constant(0)],
                          parallel_iterations=10)
        ops = {op.type for op in graph.get_operations()}
    config = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=threads,
                                      inter_op_parallelism_threads=threads)
    sess = tf.compat.v1.Session(graph=graph, config=config)
    structure = "v1 (Enter/Merge/Switch/NextIteration/Exit)" if "Enter" in ops else \
        "v2 (functional While)"
    assert ("Enter" in ops) != control_flow_v2, ops
    result = i[0] if isinstance(i, (list, tuple)) else i
    return (lambda count: sess.run(result, {n: count})), structure


def function_loop():
    @tf.function
    def loop(n):
        i = tf.constant(0)
        while i < n:  # autograph: a functional While
            i += 1
        return i
    return lambda count: loop(tf.constant(count)).numpy(), "tf.function (functional While)"


def measure(run, n, repeats):
    """The best wall time and the best CPU time (of the whole process, every
    thread: TensorFlow runs the loop on its inter-op thread) of `repeats` runs."""
    assert int(run(n)) == n  # warm-up: builds and caches everything for this n
    best, best_cpu = float("inf"), float("inf")
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = run(n)
        best = min(best, time.perf_counter() - start)
        best_cpu = min(best_cpu, time.process_time() - start_cpu)
        assert int(result) == n
    return best, best_cpu


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=1_000_000, help="iterations per run")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=1, help="intra- and inter-op threads")
    p.add_argument("--variants", default="session_v1,session_v2,function")
    args = p.parse_args()
    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    tf.config.threading.set_inter_op_parallelism_threads(args.threads)
    builders = {"session_v1": lambda: session_loop(False, args.threads),
                "session_v2": lambda: session_loop(True, args.threads),
                "function": function_loop}
    for name in args.variants.split(","):
        run, structure = builders[name]()
        seconds, cpu_seconds = measure(run, args.n, args.repeats)
        print(json.dumps({"framework": "tensorflow", "version": tf.__version__, "variant": name,
                          "structure": structure, "n": args.n, "seconds": round(seconds, 4),
                          "iterations_per_sec": round(args.n / seconds),
                          "us_per_iteration": round(seconds / args.n * 1e6, 3),
                          "cpu_us_per_iteration": round(cpu_seconds / args.n * 1e6, 3),
                          "threads": args.threads}), flush=True)


if __name__ == "__main__":
    main()
