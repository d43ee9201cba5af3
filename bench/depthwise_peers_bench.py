"""Depthwise convolution (MobileNet's 3x3, multiplier 1, [8, 56, 56, 128])
forward and forward+backward, by Weir or by TensorFlow 2.21, and Weir's
Conv2D in NHWC against NCHW (which transposes around the NHWC kernel).
Best of 10 steps, milliseconds, wall and (in parentheses) the process's CPU
time over all threads, which other load on the machine moves much less.

  PYTHONPATH=build/lead/python python3 bench/depthwise_peers_bench.py weir
  /opt/weir-peers/bin/python bench/depthwise_peers_bench.py tf
"""
import sys
import time

import numpy as np

SHAPE, FILTER = (8, 56, 56, 128), (3, 3, 128, 1)
x = np.random.default_rng(0).standard_normal(SHAPE).astype(np.float32)
f = np.random.default_rng(1).standard_normal(FILTER).astype(np.float32)
conv_filter = np.random.default_rng(2).standard_normal((3, 3, 128, 128)).astype(np.float32)


def best(fn, n=10):
    fn()
    times, cpu = [], []
    for _ in range(n):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return "%.2f (%.2f)" % (min(times) * 1e3, min(cpu) * 1e3)


if sys.argv[1] == "weir":
    import weir as wr
    xi = wr.placeholder(wr.float32, SHAPE)
    fi = wr.constant(f)
    y = wr.nn.depthwise_conv2d_native(xi, fi, [1, 1, 1, 1], "SAME")
    gx, gf = wr.gradients(wr.reduce_sum(y), [xi, fi])
    nchw = wr.placeholder(wr.float32, [SHAPE[0], SHAPE[3], SHAPE[1], SHAPE[2]])
    c_nhwc = wr.nn.conv2d(xi, conv_filter, [1, 1, 1, 1], "SAME")
    c_nchw = wr.nn.conv2d(nchw, conv_filter, [1, 1, 1, 1], "SAME", data_format="NCHW")
    x_nchw = np.ascontiguousarray(np.transpose(x, [0, 3, 1, 2]))
    s = wr.Session()
    print("weir depthwise forward ms %s" % best(lambda: s.run(y.op, {xi: x})))
    print("weir depthwise fwd+bwd ms %s" % best(lambda: s.run([gx.op, gf.op], {xi: x})))
    print("weir conv2d NHWC ms %s" % best(lambda: s.run(c_nhwc.op, {xi: x})))
    print("weir conv2d NCHW ms %s" % best(lambda: s.run(c_nchw.op, {nchw: x_nchw})))
else:
    import tensorflow as tf
    forward = tf.function(lambda a: tf.nn.depthwise_conv2d(a, f, [1, 1, 1, 1], "SAME"))
    xt, ft = tf.constant(x), tf.Variable(f)

    @tf.function
    def both(a):
        with tf.GradientTape() as tape:
            tape.watch(a)
            loss = tf.reduce_sum(tf.nn.depthwise_conv2d(a, ft, [1, 1, 1, 1], "SAME"))
        return tape.gradient(loss, [a, ft])

    print("tf depthwise forward ms %s" % best(lambda: forward(xt).numpy()))
    print("tf depthwise fwd+bwd ms %s" % best(lambda: [g.numpy() for g in both(xt)]))
