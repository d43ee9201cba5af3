"""Loading and serving a convnet SavedModel: Weir and TensorFlow 2.21 on the
same model and inputs.

    PYTHONPATH=build/lead/python python3 bench/saved_model_bench.py [--rounds 5] \
        [--model graph|keras|both]

TensorFlow (in /opt/weir-peers/bin/python; WEIR_PEERS_PYTHON overrides; this
script re-executes itself there with --peer, one process per model) writes
the SavedModel of one convnet for 28x28x1 images: conv 5x5x32 + relu, max
pool 2, conv 5x5x64 + relu, max pool 2, dense 1024 + relu, dense 10, softmax,
in one of two forms:
- graph: graph mode (tf.compat.v1, resource variables, simple_save);
- keras: a tf_keras functional model saved by TF2's tf.saved_model.save (the
  serving signature calls the model's functions through
  StatefulPartitionedCall, which Weir inlines at load).
Then each system, in its own process:
- load: a fresh graph and session, loader.load of the SavedModel (parse,
  import, restore the variables; for Weir's keras model also the function
  library and the calls' shape inference), median of `rounds` loads, in ms.
  TensorFlow loads the keras model the TF2 way, tf.saved_model.load (which
  also restores the object graph), and the graph one with tf.compat.v1's
  loader;
- batch 1: median latency of one call of the serving signature, in ms
  (Weir: sess.make_callable; TensorFlow: make_callable, or the keras model's
  signature function on a tf.constant);
- batch 256: median time of one call on 256 images, in ms, and images/s.
Beside each wall time, the median CPU time of the same calls (the process's
user + system time over all its threads; each system runs in its own
process): on a machine that other work loads, it moves much less than the
wall time. Both systems run with their default thread settings: one
intra-op and one inter-op thread per core (Weir's SessionOptions and TF's
ConfigProto default to 0, meaning that).
Both check that their outputs agree (max abs difference printed).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

PEERS_PYTHON = os.environ.get("WEIR_PEERS_PYTHON", "/opt/weir-peers/bin/python")


def export_convnet(export_dir):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf
    tf.compat.v1.disable_eager_execution()
    rng = np.random.default_rng(0)

    def var(name, shape):
        fan_in = int(np.prod(shape[:-1]))
        value = rng.normal(0, 1 / np.sqrt(fan_in), shape).astype(np.float32)
        return tf.compat.v1.get_variable(name, initializer=tf.constant(value), use_resource=True)

    with tf.Graph().as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None, 28, 28, 1], name="images")
        h = tf.nn.relu(tf.nn.conv2d(x, var("conv1", [5, 5, 1, 32]), 1, "SAME") + var("b1", [32]))
        h = tf.nn.max_pool2d(h, 2, 2, "VALID")
        h = tf.nn.relu(tf.nn.conv2d(h, var("conv2", [5, 5, 32, 64]), 1, "SAME") + var("b2", [64]))
        h = tf.nn.max_pool2d(h, 2, 2, "VALID")
        h = tf.reshape(h, [-1, 7 * 7 * 64])
        h = tf.nn.relu(tf.matmul(h, var("fc1", [7 * 7 * 64, 1024])) + var("b3", [1024]))
        logits = tf.matmul(h, var("fc2", [1024, 10])) + var("b4", [10])
        probs = tf.nn.softmax(logits, name="probs")
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            tf.compat.v1.saved_model.simple_save(sess, export_dir, {"images": x},
                                                 {"probs": probs})


def export_keras_convnet(export_dir):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf
    import tf_keras as keras
    keras.utils.set_random_seed(0)
    image = keras.Input(shape=(28, 28, 1), name="images")
    h = keras.layers.Conv2D(32, 5, padding="same", activation="relu")(image)
    h = keras.layers.MaxPooling2D(2)(h)
    h = keras.layers.Conv2D(64, 5, padding="same", activation="relu")(h)
    h = keras.layers.MaxPooling2D(2)(h)
    h = keras.layers.Flatten()(h)
    h = keras.layers.Dense(1024, activation="relu")(h)
    probs = keras.layers.Dense(10, activation="softmax", name="probs")(h)
    tf.saved_model.save(keras.Model(image, probs), export_dir)


def median_ms(fn, rounds):
    return timed(fn, rounds)[0]


def timed(fn, rounds):
    """(median wall ms, median CPU ms) of `rounds` calls of fn. CPU time is
    the process's (every thread's) user + system time, which the other
    processes on a loaded machine change much less than the wall time."""
    wall, cpu = [], []
    for _ in range(rounds):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        wall.append((time.perf_counter() - start) * 1e3)
        cpu.append((time.process_time() - start_cpu) * 1e3)
    return statistics.median(wall), statistics.median(cpu)


def serve_figures(run, images, rounds):
    """Batch 1 and batch 256 figures of `run` (warmed up first)."""
    one, many = images[:1], images
    run(one)
    run(many)  # warm: compilation, allocator pools
    batch1, batch1_cpu = timed(lambda: run(one), rounds * 20)
    batch256, batch256_cpu = timed(lambda: run(many), rounds * 4)
    return {"batch1_ms": batch1, "batch1_cpu_ms": batch1_cpu, "batch256_ms": batch256,
            "batch256_cpu_ms": batch256_cpu, "images_per_s": len(many) / batch256 * 1e3,
            "probs": run(many).tolist()}


def measure(wr, export_dir, rounds, images):
    """The figures of one system; `wr` is tensorflow.compat.v1 or weir."""
    sessions = []

    def load():
        graph = wr.Graph()
        sess = wr.Session(graph=graph)
        meta = wr.saved_model.loader.load(sess, ["serve"], export_dir)
        sessions.append((sess, meta))

    load_ms = median_ms(load, rounds)
    for sess, _ in sessions[:-1]:
        sess.close()
    sess, meta = sessions[-1]
    sig = meta.signature_def["serving_default"]
    run = sess.make_callable(sig.outputs["probs"].name, [sig.inputs["images"].name])
    return {"load_ms": load_ms, **serve_figures(run, images, rounds)}


def measure_tf2(export_dir, rounds, images):
    """TensorFlow's figures for the TF2 SavedModel, loaded and called the TF2
    way."""
    import tensorflow as tf
    loaded = []
    load_ms = median_ms(lambda: loaded.append(tf.saved_model.load(export_dir)), rounds)
    model = loaded[-1]
    del loaded[:-1]
    fn = model.signatures["serving_default"]

    def run(x):
        return fn(images=tf.constant(x))["probs"].numpy()

    return {"load_ms": load_ms, **serve_figures(run, images, rounds)}


def compare(model, rounds, images, tmp, wr):
    load_before = f"{os.getloadavg()[0]:.1f}"
    images_path = os.path.join(tmp, "images.npy")
    np.save(images_path, images)
    export_dir = os.path.join(tmp, model)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([PEERS_PYTHON, os.path.abspath(__file__), "--rounds", str(rounds),
                           "--peer", model, export_dir, images_path],
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        sys.exit(f"TensorFlow's side ({model}) failed:\n" + proc.stderr[-3000:])
    tf_result = json.loads(proc.stdout.strip().splitlines()[-1])
    weir_result = measure(wr.compat.v1 if hasattr(wr, "compat") else wr, export_dir, rounds,
                          images)
    diff = float(np.max(np.abs(np.array(tf_result.pop("probs")) -
                               np.array(weir_result.pop("probs")))))
    print(f"{model} convnet SavedModel, {rounds} rounds; max |weir - tf| of probs: {diff:.2e}; "
          f"load average before {load_before}, after {os.getloadavg()[0]:.1f} "
          f"({os.cpu_count()} CPUs)")
    print(f"{'':12} {'load ms':>10} {'batch 1 ms':>11} {'(cpu ms)':>9} {'batch 256 ms':>13} "
          f"{'(cpu ms)':>9} {'images/s':>10}")
    for name, r in (("weir", weir_result), ("tensorflow", tf_result)):
        print(f"{name:12} {r['load_ms']:10.2f} {r['batch1_ms']:11.3f} {r['batch1_cpu_ms']:9.3f} "
              f"{r['batch256_ms']:13.2f} {r['batch256_cpu_ms']:9.2f} {r['images_per_s']:10.0f}")
    sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--model", choices=["graph", "keras", "both"], default="both")
    parser.add_argument("--peer", nargs=3, metavar=("MODEL", "EXPORT_DIR", "IMAGES"))
    args = parser.parse_args()
    if args.peer:
        model, export_dir, images_path = args.peer
        images = np.load(images_path)
        if model == "keras":
            export_keras_convnet(export_dir)
            result = measure_tf2(export_dir, args.rounds, images)
        else:
            export_convnet(export_dir)
            import tensorflow as tf
            result = measure(tf.compat.v1, export_dir, args.rounds, images)
        print(json.dumps(result))
        return

    import weir as wr
    images = np.random.default_rng(1).random((256, 28, 28, 1), dtype=np.float32)
    models = ["graph", "keras"] if args.model == "both" else [args.model]
    for model in models:
        with tempfile.TemporaryDirectory() as tmp:
            compare(model, args.rounds, images, tmp, wr)


if __name__ == "__main__":
    main()
