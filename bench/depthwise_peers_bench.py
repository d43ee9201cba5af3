import sys, time, numpy as np
shape, fshape = (8, 56, 56, 128), (3, 3, 128, 1)
x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
f = np.random.default_rng(1).standard_normal(fshape).astype(np.float32)
def best(fn, n=10):
    fn(); ts = []
    for _ in range(n):
        t = time.perf_counter(); fn(); ts.append(time.perf_counter() - t)
    return min(ts) * 1e3
if sys.argv[1] == "weir":
    import weir as wr
    xi = wr.placeholder(wr.float32, shape)
    fi = wr.constant(f)
    y = wr.nn.depthwise_conv2d_native(xi, fi, [1, 1, 1, 1], "SAME")
    gx, gf = wr.gradients(wr.reduce_sum(y), [xi, fi])
    s = wr.Session()
    print("weir forward ms %.2f" % best(lambda: s.run(y.op, {xi: x})))
    print("weir fwd+bwd ms %.2f" % best(lambda: s.run([gx.op, gf.op], {xi: x})))
else:
    import tensorflow as tf
    fw = tf.function(lambda a: tf.nn.depthwise_conv2d(a, f, [1, 1, 1, 1], "SAME"))
    xt = tf.constant(x); ft = tf.Variable(f)
    @tf.function
    def both(a):
        with tf.GradientTape() as t:
            t.watch(a); yy = tf.reduce_sum(tf.nn.depthwise_conv2d(a, ft, [1, 1, 1, 1], "SAME"))
        return t.gradient(yy, [a, ft])
    print("tf forward ms %.2f" % best(lambda: fw(xt).numpy()))
    print("tf fwd+bwd ms %.2f" % best(lambda: [g.numpy() for g in both(xt)]))
