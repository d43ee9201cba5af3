"""A TensorFlow 2.21 graph (tf.compat.v1 graph mode) using the special
functions, complex numbers, FFTs, stateless random ops, Roll/TensorScatter/
Bitcast/UniqueWithCounts/bincount and StringLength/Substr, with tf.gradients
through several of them: Weir imports it unchanged and gives TensorFlow's
values (the stateless random ones bit for bit)."""
import numpy as np

import weir as wr

GRAPH = '''
rng = np.random.RandomState(16)
g = tf.Graph()
with g.as_default():
    x = v1.placeholder(tf.float64, [3, 4], name="x")
    s = v1.placeholder(tf.string, [3], name="s")
    ints = v1.placeholder(tf.int32, [8], name="ints")
    a = tf.abs(x) + 0.5
    z = tf.complex(x, tf.roll(x, 1, axis=1))
    outs = {
        "xlogy": tf.math.xlogy(x, a),
        "igamma": tf.math.igamma(a, a * 2.0),
        "betainc": tf.math.betainc(a, a + 1.0, tf.sigmoid(x)),
        "erfinv": tf.math.erfinv(tf.tanh(x)),
        "i1e": tf.math.bessel_i1e(x),
        "abs": tf.abs(z),
        "angle": tf.math.angle(z),
        "fft": tf.signal.fft(z),
        "rfft": tf.signal.rfft(x),
        "irfft": tf.signal.irfft(tf.signal.rfft2d(x)),
        "stft": tf.abs(tf.signal.stft(tf.reshape(x, [12]), 4, 2)),
        "scatter": tf.tensor_scatter_nd_update(x, [[0, 1], [2, 3]], [10.0, 20.0]),
        "scatter_max": tf.tensor_scatter_nd_max(x, [[1]], tf.ones([1, 4], tf.float64)),
        "bitcast": tf.bitcast(tf.cast(x, tf.float32), tf.int32),
        "bincount": tf.math.bincount(ints, minlength=12),
        "length": tf.strings.length(s, unit="UTF8_CHAR"),
        "substr": tf.strings.substr(s, 1, 2),
        "uniform": tf.random.stateless_uniform([5], seed=[4, 2]),
        "normal": tf.random.stateless_normal([2, 3], seed=[1, 9], dtype=tf.float64),
    }
    y, idx, count = tf.unique_with_counts(ints)
    outs.update(unique=y, unique_idx=idx, unique_count=count)
    loss = (tf.reduce_sum(outs["xlogy"]) + tf.reduce_sum(outs["igamma"]) +
            tf.reduce_sum(outs["abs"]) + tf.reduce_sum(tf.abs(outs["fft"])) +
            tf.reduce_sum(outs["scatter"] ** 2))
    outs["grad"] = tf.gradients(loss, x)[0]
    names = sorted(outs)
    xv = rng.randn(3, 4)
    sv = np.array(["hello".encode(), "h\\u00e9llo".encode(), b"abc"])
    iv = np.array([3, 1, 3, 0, 7, 1, 3, 11], np.int32)
    with v1.Session(graph=g) as sess:
        values = sess.run([outs[k] for k in names], {x: xv, s: sv, ints: iv})
save_graph(g.as_graph_def(), "misc16")
save_arrays("misc16", x=xv, s=sv, ints=iv, names=np.array([outs[k].name for k in names]),
            keys=np.array(names), **{"out_" + k: v for k, v in zip(names, values)})
'''


def test_tf_graph_with_misc16_ops(run_tf):
    out = run_tf(GRAPH, "misc16")
    data = np.load(out / "misc16.npz", allow_pickle=True)
    graph = wr.Graph()
    with graph.as_default():
        wr.import_graph_def((out / "misc16.pb").read_bytes(), name="")
    names = [str(n) for n in data["names"]]
    with wr.Session(graph=graph) as sess:
        got = sess.run(names, {"x:0": data["x"], "s:0": data["s"], "ints:0": data["ints"]})
    for key, value in zip(data["keys"], got):
        expected = data["out_" + str(key)]
        if expected.dtype.kind in "OS":
            assert [bytes(v) for v in value] == [bytes(v) for v in expected], key
        elif key in ("uniform", "normal", "bitcast", "bincount", "length") or \
                expected.dtype.kind in "iu":
            np.testing.assert_array_equal(value, expected, err_msg=str(key))
        else:
            np.testing.assert_allclose(value, expected, rtol=1e-5, atol=1e-6, err_msg=str(key))
