"""float16 kernels against float32, in weir and in TensorFlow 2.21.

    PYTHONPATH=build/lead/python python3 bench/float16_bench.py [--rounds 7] [--threads 1]

The ops a mixed-precision step spends its time in, each on tensors held in
variables of the dtype (no feed; constant folding can't fold them) and run
as a target (no fetch): MatMul 1024x1024x1024, AddV2 and Relu on 4M elements, Sum of
4M, Softmax on 4096x1024, Conv2D NHWC 32x32x32x64 -> 64 with 3x3 SAME, and
FusedBatchNormV3 (training) on the same image. weir's half kernels compute
in float32 with converting loads and stores (kernels/compute_in_float.h):
the "half/float" column is what that costs over float32. TensorFlow runs in
/opt/weir-peers/bin/python (WEIR_PEERS_PYTHON overrides), re-executing this
script with --peer. Each figure is the median over rounds of the time of
one sess.run, in milliseconds, with --threads intra-op threads.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

PEERS_PYTHON = os.environ.get("WEIR_PEERS_PYTHON", "/opt/weir-peers/bin/python")


def cases(tf, np, dtype):
    rng = np.random.default_rng(0)

    def var(*shape):
        return tf.Variable(rng.uniform(-1, 1, shape).astype(dtype))

    a, b = var(1024, 1024), var(1024, 1024)
    v = var(4 * 1024 * 1024)
    logits = var(4096, 1024)
    img, filt = var(32, 32, 32, 64), var(3, 3, 64, 64)
    scale = tf.Variable(np.ones(64, np.float32))
    offset = tf.Variable(np.zeros(64, np.float32))
    return {
        "MatMul 1024^3": tf.matmul(a, b),
        "AddV2 4M": v + v,
        "Relu 4M": tf.nn.relu(v),
        "Sum 4M": tf.reduce_sum(v),
        "Softmax 4096x1024": tf.nn.softmax(logits),
        "Conv2D 32x32x32x64 3x3": tf.nn.conv2d(img, filt, [1, 1, 1, 1], "SAME"),
        "FusedBatchNormV3 32x32x32x64": tf.nn.fused_batch_norm(img, scale, offset)[0],
    }


def median_ms(sess, target, rounds):
    sess.run(target)
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        sess.run(target)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def bench(tf, np, session_config, rounds):
    results = {}
    for dtype in ("float32", "float16"):
        graph = tf.Graph()
        with graph.as_default():
            ops = cases(tf, np, getattr(np, dtype))
            init = tf.global_variables_initializer()
        with tf.Session(graph=graph, config=session_config) as sess:
            sess.run(init)
            for name, op in ops.items():
                results["%s %s" % (name, dtype)] = median_ms(sess, op.op, rounds)
    return results


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--peer", action="store_true")
    args = parser.parse_args()
    import numpy as np
    if args.peer:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow.compat.v1 as tf
        tf.disable_v2_behavior()
        config = tf.ConfigProto(intra_op_parallelism_threads=args.threads,
                                inter_op_parallelism_threads=1)
        json.dump(bench(tf, np, config, args.rounds), sys.stdout)
        return
    import weir as wr
    config = wr.ConfigProto(intra_op_parallelism_threads=args.threads,
                            inter_op_parallelism_threads=1)
    mine = bench(wr, np, config, args.rounds)
    peer = {}
    if os.path.exists(PEERS_PYTHON):
        out = subprocess.run([PEERS_PYTHON, __file__, "--peer", "--rounds", str(args.rounds),
                              "--threads", str(args.threads)],
                             capture_output=True, text=True, check=True, env=dict(
                                 os.environ, CUDA_VISIBLE_DEVICES=""))
        peer = json.loads(out.stdout)
    print("%-30s %10s %10s %8s %10s %10s" % ("op (ms, %d threads)" % args.threads,
                                           "weir f32", "weir f16", "f16/f32", "TF f32",
                                           "TF f16"))
    for name in sorted({k.rsplit(" ", 1)[0] for k in mine}):
        f32, f16 = mine[name + " float32"], mine[name + " float16"]
        print("%-30s %10.3f %10.3f %8.2f %10.3f %10.3f" % (
            name, f32, f16, f16 / f32 if f32 else float("nan"),
            peer.get(name + " float32", float("nan")), peer.get(name + " float16", float("nan"))))


if __name__ == "__main__":
    main()
