"""Segment reductions, scans, top_k and invert_permutation against numpy, and
values and gradients against TensorFlow 2.21 (run from /opt/weir-peers in a
subprocess, the same inputs given to both)."""
import os
import subprocess
import textwrap

import numpy as np
import pytest

import weir as wr

from peers import PEERS_PYTHON  # noqa: E402


@pytest.fixture(autouse=True)
def fresh_graph():
    wr.reset_default_graph()
    yield


def run(fetches, feed_dict=None):
    with wr.Session() as sess:
        return sess.run(fetches, feed_dict)


X = np.array([[1.5, -2.0, 3.0, 0.5], [4.0, 0.25, -1.0, 2.0], [-3.0, 1.0, 2.5, -0.5]])
IDS = np.array([2, 0, 2], dtype=np.int32)


def np_cum(x, axis, exclusive, reverse, prod=False):
    f = np.cumprod if prod else np.cumsum
    y = np.flip(x, axis) if reverse else x
    out = f(y, axis)
    if exclusive:
        out = np.concatenate([np.ones_like(np.take(out, [0], axis)) if prod else
                              np.zeros_like(np.take(out, [0], axis)),
                              np.delete(out, -1, axis)], axis)
    return np.flip(out, axis) if reverse else out


def test_scans_against_numpy():
    cases, want = [], []
    for prod in (False, True):
        for axis in (0, 1, -1):
            for exclusive in (False, True):
                for reverse in (False, True):
                    f = wr.math.cumprod if prod else wr.math.cumsum
                    cases.append(f(X, axis=axis, exclusive=exclusive, reverse=reverse))
                    want.append(np_cum(X, axis, exclusive, reverse, prod))
    axis_t = wr.placeholder(wr.int32, [])
    cases.append(wr.cumsum(X.astype(np.float32), axis=axis_t))
    want.append(np.cumsum(X, 1))
    out = run(cases, {axis_t: 1})
    for got, expected in zip(out, want):
        np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert wr.cumprod is wr.math.cumprod and wr.cumsum is wr.math.cumsum
    assert wr.cumsum(X, axis=1).op.type == "Cumsum"


def test_segments_against_numpy():
    n = 4
    want_sum = np.zeros((n, 4))
    want_prod = np.ones((n, 4))
    want_max = np.full((n, 4), np.finfo(np.float64).min)
    want_min = np.full((n, 4), np.finfo(np.float64).max)
    for row, s in zip(X, IDS):
        want_sum[s] += row
        want_prod[s] *= row
        want_max[s] = np.maximum(want_max[s], row)
        want_min[s] = np.minimum(want_min[s], row)
    out = run([wr.math.unsorted_segment_sum(X, IDS, n), wr.math.unsorted_segment_prod(X, IDS, n),
               wr.math.unsorted_segment_max(X, IDS, n), wr.math.unsorted_segment_min(X, IDS, n),
               wr.math.segment_sum(X, [0, 0, 2]),
               wr.unsorted_segment_sum(X, [-1, 0, 1], wr.constant(2, wr.int64))])
    np.testing.assert_allclose(out[0], want_sum)
    np.testing.assert_allclose(out[1], want_prod)
    np.testing.assert_allclose(out[2], want_max)
    np.testing.assert_allclose(out[3], want_min)
    np.testing.assert_allclose(out[4], [X[0] + X[1], np.zeros(4), X[2]])
    np.testing.assert_allclose(out[5], [X[1], X[2]])  # the -1 row is dropped
    assert wr.math.unsorted_segment_sum(X, IDS, 4).shape.as_list() == [4, 4]


def test_top_k_and_invert_permutation():
    x = np.array([[1.0, 3.0, 3.0, 2.0, -1.0], [0.5, 0.5, 0.5, 9.0, 0.0]], np.float32)
    k = wr.placeholder(wr.int32, [])
    v, i = wr.nn.top_k(x, 3)
    vd, id_ = wr.math.top_k(x, k)
    assert v.shape.as_list() == [2, 3] and i.dtype == wr.int32
    out = run([v, i, vd, id_, wr.math.invert_permutation([2, 0, 3, 1])], {k: 2})
    np.testing.assert_array_equal(out[1], [[1, 2, 3], [3, 0, 1]])  # ties: lower index first
    np.testing.assert_array_equal(out[0], [[3, 3, 2], [9, 0.5, 0.5]])
    np.testing.assert_array_equal(out[3], [[1, 2], [3, 0]])
    np.testing.assert_array_equal(out[4], [1, 3, 0, 2])
    assert v.op.type == "TopKV2"


def test_bad_inputs_raise_invalid_argument():
    with pytest.raises(wr.errors.InvalidArgumentError, match="out of range"):
        run(wr.math.unsorted_segment_sum(X, [0, 5, 1], 3))
    with pytest.raises(wr.errors.InvalidArgumentError, match="not sorted"):
        run(wr.math.segment_sum(X, wr.constant([1, 0, 2]) + 0))
    with pytest.raises(wr.errors.InvalidArgumentError, match="not a permutation"):
        run(wr.math.invert_permutation(wr.constant([0, 0]) + 0))
    k = wr.placeholder(wr.int32, [])
    with pytest.raises(wr.errors.InvalidArgumentError, match="fewer than k = 9"):
        run(wr.nn.top_k(X, k).values, {k: 9})


# --- against TensorFlow: values and gradients of one shared program ---

_PROGRAM = """
def build(tf, x, data, ids, topk_in):
    out = {}
    out["cumsum"] = tf.math.cumsum(x, axis=1, exclusive=True)
    out["cumprod"] = tf.math.cumprod(x, axis=0, reverse=True)
    out["usum"] = tf.math.unsorted_segment_sum(data, ids, 4)
    out["umax"] = tf.math.unsorted_segment_max(data, ids, 4)
    out["umin"] = tf.math.unsorted_segment_min(data, ids, 4)
    out["uprod"] = tf.math.unsorted_segment_prod(data, ids, 4)
    out["ssum"] = tf.math.segment_sum(data, [0, 0, 1, 3, 3])
    out["topk"] = tf.math.top_k(topk_in, 3).values
    out["topk_i"] = tf.math.top_k(topk_in, 3).indices
    w = {k: tf.constant(np.cos(np.arange(int(np.prod(v.shape))) + 1.0).reshape(v.shape),
                        dtype=v.dtype)
         for k, v in out.items() if v.dtype == tf.float64}
    loss = tf.add_n([tf.reduce_sum(out[k] * w[k]) for k in sorted(w) if k not in ("umax", "umin")]
                    + [tf.reduce_sum(tf.where(tf.abs(out[k]) < 1e300, out[k], tf.zeros_like(out[k])) * w[k])
                       for k in ("umax", "umin")])
    return out, loss
"""

_INPUTS = dict(
    x=np.array([[1.5, -2.0, 3.0], [4.0, 0.25, -1.0], [-3.0, 1.0, 2.5]]),
    data=np.array([[1.0, 2.0], [3.0, 0.0], [0.0, 5.0], [2.0, 2.0], [-1.0, 0.0]]),
    ids=np.array([0, 2, 0, -1, 2], np.int32),
    topk_in=np.array([[0.3, -1.0, 2.0, 2.0, 0.7, 5.0], [1.0, 0.0, -3.0, 4.5, 4.0, 0.5]]),
)


@pytest.mark.skipif(not os.path.exists(PEERS_PYTHON), reason="TensorFlow 2.21 not installed")
def test_values_and_gradients_match_tensorflow(tmp_path):
    inputs = tmp_path / "inputs.npz"
    np.savez(inputs, **_INPUTS)
    result = tmp_path / "tf.npz"
    script = textwrap.dedent("""
        import sys
        import numpy as np
        import tensorflow as tf
        """) + _PROGRAM + textwrap.dedent("""
        args = dict(np.load(sys.argv[1]))
        args = {k: tf.constant(v) for k, v in args.items()}
        with tf.GradientTape() as tape:
            for k in ("x", "data", "topk_in"):
                tape.watch(args[k])
            out, loss = build(tf, **args)
        grads = tape.gradient(loss, [args["x"], args["data"], args["topk_in"]])
        arrays = {k: v.numpy() for k, v in out.items()}
        for name, g in zip(("dx", "ddata", "dtopk"), grads):
            arrays[name] = g.numpy()
        np.savez(sys.argv[2], **arrays)
        """)
    proc = subprocess.run([PEERS_PYTHON, "-c", script, str(inputs), str(result)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    expected = dict(np.load(result))

    namespace = {"np": np}
    exec(_PROGRAM, namespace)  # noqa: S102 -- the same program, built with weir
    feeds = {k: wr.constant(v) for k, v in _INPUTS.items()}
    out, loss = namespace["build"](wr, **feeds)
    grads = wr.gradients(loss, [feeds["x"], feeds["data"], feeds["topk_in"]])
    names = sorted(out)
    got = run([out[k] for k in names] + grads)
    for k, v in zip(names, got):
        np.testing.assert_allclose(v, expected[k], rtol=1e-12, err_msg=k)
    for k, v in zip(("dx", "ddata", "dtopk"), got[len(names):]):
        np.testing.assert_allclose(v, expected[k], rtol=1e-10, atol=1e-12, err_msg=k)


# --- a tf.gradients graph that TensorFlow built uses these ops as helpers ---

_TF_GRADIENT_GRAPH = textwrap.dedent(r'''
    import os, sys
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    import numpy as np
    import tensorflow as tf
    v1 = tf.compat.v1
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(tf.float64, [3, 4], name="x")
        perm = v1.placeholder(tf.int32, [2], name="perm")
        ids = tf.constant([1, 0, 1], name="ids")
        t = tf.transpose(x, perm)                          # grad: InvertPermutation
        c = tf.concat([x, 2.0 * x], axis=1)                # grad: ConcatOffset
        rows = tf.gather(x, [2, 0, 2])                     # IndexedSlices, densified
        s = tf.math.unsorted_segment_max(x, ids, 2)
        k = tf.math.top_k(c, 3).values
        y = (tf.reduce_sum(t * t) + tf.reduce_sum(tf.math.cumsum(c, axis=1) * c)
             + tf.reduce_sum(rows * rows) + tf.reduce_sum(s * s) + tf.reduce_sum(k))
        tf.identity(tf.gradients(y, x)[0], name="dx")
    xv = np.cos(np.arange(12.0)).reshape(3, 4)
    with v1.Session(graph=g) as sess:
        dx = sess.run("dx:0", {"x:0": xv, "perm:0": [1, 0]})
    with open(os.path.join(sys.argv[1], "grad.pb"), "wb") as f:
        f.write(g.as_graph_def().SerializeToString())
    np.save(os.path.join(sys.argv[1], "x.npy"), xv)
    np.save(os.path.join(sys.argv[1], "dx.npy"), dx)
    print(sorted({n.op for n in g.as_graph_def().node}))
''')


@pytest.mark.skipif(not os.path.exists(PEERS_PYTHON), reason="TensorFlow 2.21 not installed")
def test_tensorflow_gradient_graph_runs(tmp_path):
    proc = subprocess.run([PEERS_PYTHON, "-c", _TF_GRADIENT_GRAPH, str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for op in ("InvertPermutation", "ConcatOffset", "UnsortedSegmentSum", "TopKV2", "Cumsum"):
        assert "'%s'" % op in proc.stdout, (op, proc.stdout)
    dx, = wr.import_graph_def((tmp_path / "grad.pb").read_bytes(), return_elements=["dx:0"],
                              name="")
    got = run(dx, {"x:0": np.load(tmp_path / "x.npy"), "perm:0": [1, 0]})
    np.testing.assert_allclose(got, np.load(tmp_path / "dx.npy"), rtol=1e-12)
