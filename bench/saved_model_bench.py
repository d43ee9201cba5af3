"""Loading and serving a convnet SavedModel: Weir and TensorFlow 2.21 on the
same model and inputs.

    PYTHONPATH=build/lead/python python3 bench/saved_model_bench.py [--rounds 5]

TensorFlow (in /opt/weir-peers/bin/python; WEIR_PEERS_PYTHON overrides; this
script re-executes itself there with --peer) writes a graph-mode
(tf.compat.v1, resource variables, simple_save) convnet for 28x28x1 images:
conv 5x5x32 + relu, max pool 2, conv 5x5x64 + relu, max pool 2, dense 1024 +
relu, dense 10, softmax. Then each system, in its own process:
- load: a fresh graph and session, loader.load of the SavedModel (parse,
  import, restore the variables), median of `rounds` loads, in ms;
- batch 1: median latency of one sess.run of the signature, in ms;
- batch 256: median time of one sess.run on 256 images, in ms, and images/s.
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


def median_ms(fn, rounds):
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


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
    one, many = images[:1], images
    run(one)
    run(many)  # warm: compilation, allocator pools
    batch1 = median_ms(lambda: run(one), rounds * 20)
    batch256 = median_ms(lambda: run(many), rounds * 4)
    return {"load_ms": load_ms, "batch1_ms": batch1, "batch256_ms": batch256,
            "images_per_s": len(many) / batch256 * 1e3, "probs": run(many).tolist()}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--peer", nargs=2, metavar=("EXPORT_DIR", "IMAGES"))
    args = parser.parse_args()
    if args.peer:
        export_dir, images_path = args.peer
        export_convnet(export_dir)
        import tensorflow as tf
        result = measure(tf.compat.v1, export_dir, args.rounds, np.load(images_path))
        print(json.dumps(result))
        return

    import weir as wr
    with tempfile.TemporaryDirectory() as tmp:
        images = np.random.default_rng(1).random((256, 28, 28, 1), dtype=np.float32)
        images_path = os.path.join(tmp, "images.npy")
        np.save(images_path, images)
        export_dir = os.path.join(tmp, "convnet")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        proc = subprocess.run([PEERS_PYTHON, os.path.abspath(__file__), "--rounds",
                               str(args.rounds), "--peer", export_dir, images_path],
                              capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            sys.exit("TensorFlow's side failed:\n" + proc.stderr[-3000:])
        tf_result = json.loads(proc.stdout.strip().splitlines()[-1])
        weir_result = measure(wr.compat.v1 if hasattr(wr, "compat") else wr, export_dir,
                              args.rounds, images)
    diff = float(np.max(np.abs(np.array(tf_result.pop("probs")) -
                               np.array(weir_result.pop("probs")))))
    print(f"convnet SavedModel, {args.rounds} rounds; max |weir - tf| of probs: {diff:.2e}")
    print(f"{'':12} {'load ms':>10} {'batch 1 ms':>11} {'batch 256 ms':>13} {'images/s':>10}")
    for name, r in (("weir", weir_result), ("tensorflow", tf_result)):
        print(f"{name:12} {r['load_ms']:10.2f} {r['batch1_ms']:11.3f} {r['batch256_ms']:13.2f} "
              f"{r['images_per_s']:10.0f}")


if __name__ == "__main__":
    main()
