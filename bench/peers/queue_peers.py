"""TensorFlow's FIFOQueue, the peer of bench/queue_bench.cc: the same graphs in
graph mode through a tf.compat.v1.Session, one intra- and one inter-op thread.

  scalar: one step enqueues a fed float scalar, another dequeues it;
  batch:  one step runs EnqueueMany of a fed [100, 784] float batch, another
          DequeueMany(100).

Each with Session.run and with Session.make_callable (TensorFlow's cheapest
client path). Reports nanoseconds per element, best of --repeats timed runs.
With --weir BINARY it runs Weir's queue_bench in the same script run,
alternating with TensorFlow round by round, and prints both side by side:

  taskset -c 0 /opt/weir-peers/bin/python bench/peers/queue_peers.py \
      --weir build/release/bench/queue_bench
"""
import argparse
import json
import os
import subprocess
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

BATCH, FEATURES = 100, 784


def build(element_shape):
    graph = tf.Graph()
    with graph.as_default():
        queue = tf.queue.FIFOQueue(10000, [tf.float32], shapes=[element_shape])
        value = tf.compat.v1.placeholder(tf.float32, name="value")
        ops = {
            "enqueue": queue.enqueue([value]),
            "enqueue_many": queue.enqueue_many([value]),
            "dequeue": queue.dequeue(),
            "dequeue_many": queue.dequeue_many(BATCH),
        }
    config = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=1,
                                      inter_op_parallelism_threads=1)
    return tf.compat.v1.Session(graph=graph, config=config), value, ops


def case(name, callable_api):
    """(step function doing one enqueue + one dequeue, elements per step)."""
    batched = name.startswith("batch")
    sess, value, ops = build([FEATURES] if batched else [])
    feed = np.arange(BATCH * FEATURES, dtype=np.float32).reshape(BATCH, FEATURES) % 255 \
        if batched else np.float32(1)
    enqueue = ops["enqueue_many" if batched else "enqueue"]
    dequeue = ops["dequeue_many" if batched else "dequeue"]
    if callable_api:
        put = sess.make_callable(enqueue, feed_list=[value])
        take = sess.make_callable(dequeue)
        step = lambda: (put(feed), take())  # noqa: E731
    else:
        step = lambda: (sess.run(enqueue, {value: feed}), sess.run(dequeue))  # noqa: E731
    return step, BATCH if batched else 1


def time_tf(step, elements, steps):
    for _ in range(min(steps, 200)):
        step()  # warm-up
    start = time.perf_counter()
    for _ in range(steps):
        step()
    return (time.perf_counter() - start) / (steps * elements) * 1e9


def time_weir(binary, name):
    out = subprocess.run(
        ["taskset", "-c", "0", binary, f"--benchmark_filter=^{name}/", "--benchmark_format=json",
         "--benchmark_min_time=1"] if os.path.exists("/usr/bin/taskset") else
        [binary, f"--benchmark_filter=^{name}/", "--benchmark_format=json", "--benchmark_min_time=1"],
        check=True, capture_output=True, text=True).stdout
    result = json.loads(out)["benchmarks"][0]
    return 1e9 / result["items_per_second"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20000, help="steps per scalar run")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--weir", help="path to Weir's queue_bench, run in the same script run")
    args = parser.parse_args()
    cases = [("scalar", False, "BM_QueueScalarRun"), ("scalar", True, "BM_QueueScalarCallable"),
             ("batch", False, "BM_QueueBatchRun"), ("batch", True, "BM_QueueBatchCallable")]
    best_tf, best_weir = {}, {}
    for _ in range(args.repeats):
        for name, callable_api, weir_name in cases:
            key = (name, "make_callable" if callable_api else "run")
            step, elements = case(name, callable_api)
            steps = args.steps if elements == 1 else max(args.steps // 10, 100)
            best_tf[key] = min(best_tf.get(key, float("inf")), time_tf(step, elements, steps))
            if args.weir:
                best_weir[key] = min(best_weir.get(key, float("inf")),
                                     time_weir(args.weir, weir_name))
    for key, ns in best_tf.items():
        line = {"case": key[0], "client": key[1], "tensorflow_ns_per_element": round(ns, 1),
                "tensorflow": tf.__version__}
        if key in best_weir:
            line["weir_ns_per_element"] = round(best_weir[key], 1)
            line["tensorflow_over_weir"] = round(ns / best_weir[key], 2)
        print(json.dumps(line))


if __name__ == "__main__":
    main()
