"""atan2, lgamma, digamma, polygamma, leaky_relu and einsum against numpy,
Python's math.lgamma and TensorFlow 2.21 (run in a subprocess), values and
gradients, and einsum's errors for malformed equations."""
import math
import os
import subprocess

import numpy as np
import pytest

import weir as wr

from peers import PEERS_PYTHON


@pytest.fixture(autouse=True)
def fresh_graph():
    wr.reset_default_graph()
    yield


def run(fetches, feed_dict=None):
    with wr.Session() as sess:
        return sess.run(fetches, feed_dict)


RNG = np.random.default_rng(15)

EINSUM_CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ii->i", [(4, 4)]),
    ("ii->", [(4, 4)]),
    ("ij->ji", [(3, 4)]),
    ("ijk->j", [(2, 3, 4)]),
    ("ij,jk", [(3, 4), (4, 2)]),
    ("...ij,...jk->...ik", [(2, 1, 2, 3), (5, 3, 4)]),
    ("...j,...j->...j", [(2, 3), (1, 3)]),
    ("i...j,j->i...", [(2, 5, 3), (3,)]),
    ("ab,b->a", [(2, 0), (0,)]),
    ("bi,ij->bj", [(0, 3), (3, 2)]),
]


@pytest.mark.parametrize("equation,shapes", EINSUM_CASES)
def test_einsum_matches_numpy(equation, shapes):
    arrays = [RNG.standard_normal(s) for s in shapes]
    out = wr.einsum(equation, *[wr.constant(a) for a in arrays])
    expected = np.einsum(equation, *arrays)
    got = run(out)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    assert tuple(out.shape.as_list()) == expected.shape  # the shape function agrees


def test_einsum_names_and_errors():
    a = wr.constant(np.ones((2, 3), np.float32))
    assert wr.linalg.einsum is wr.einsum
    assert wr.einsum("ij->ji", a, name="t").op.type == "Einsum"
    for bad in ["ij,jk->ik", "ij->k", "i1->i", "ijk->i", "...i->i"]:
        with pytest.raises(Exception, match="equation"):
            wr.einsum(bad, a)
    with pytest.raises(Exception, match="1 or 2 operands"):
        wr.einsum("ij,ij,ij->ij", a, a, a)
    # A mismatch known only when run is an InvalidArgument naming the equation.
    p = wr.placeholder(wr.float32, [None, None])
    with pytest.raises(wr.errors.InvalidArgumentError, match="ij,jk->ik"):
        run(wr.einsum("ij,jk->ik", p, p), {p: np.ones((2, 3), np.float32)})


def test_special_functions_against_math():
    x = np.array([0.05, 0.5, 1.0, 2.5, 7.0, 30.0, -0.5, -2.5])
    got = run(wr.lgamma(wr.constant(x)))
    np.testing.assert_allclose(got, [math.lgamma(v) for v in x], rtol=1e-12)
    # digamma as the derivative of lgamma (central differences in double).
    h = 1e-6
    positive = x[x > 0]
    numeric = [(math.lgamma(v + h) - math.lgamma(v - h)) / (2 * h) for v in positive]
    np.testing.assert_allclose(run(wr.math.digamma(wr.constant(positive))), numeric, rtol=1e-6)
    # polygamma(1, x) as the derivative of digamma, polygamma(0, x) = digamma.
    pg = run(wr.math.polygamma(wr.constant(np.array([[0.0], [1.0]])), wr.constant(positive)))
    d = run(wr.digamma(wr.constant(positive)))
    np.testing.assert_allclose(pg[0], d, rtol=1e-12)
    dp = (run(wr.digamma(wr.constant(positive + 1e-5))) - run(wr.digamma(wr.constant(positive - 1e-5)))) / 2e-5
    np.testing.assert_allclose(pg[1], dp, rtol=1e-5)
    y = RNG.standard_normal((3, 4))
    xx = RNG.standard_normal((4,))
    np.testing.assert_allclose(run(wr.math.atan2(wr.constant(y), wr.constant(xx))), np.arctan2(y, xx),
                               rtol=1e-12)


def test_leaky_relu_is_one_op_with_its_gradient():
    x = np.array([-2.0, -0.5, 0.0, 0.5, 3.0], np.float32)
    xt = wr.constant(x)
    for alpha in (0.2, 0.01, 2.0):
        y = wr.nn.leaky_relu(xt, alpha=alpha)
        assert y.op.type == "LeakyRelu"
        np.testing.assert_allclose(run(y), np.where(x > 0, x, x * np.float32(alpha)), rtol=1e-6)
        g = wr.gradients(y, xt)[0]
        assert g.op.type == "LeakyReluGrad"
        np.testing.assert_allclose(run(g), np.where(x > 0, 1.0, alpha), rtol=1e-6)


def _numeric_grad(fn, arrays, i, h=1e-6):
    base = [a.copy() for a in arrays]
    grad = np.zeros_like(base[i])
    for idx in np.ndindex(base[i].shape):
        up = [a.copy() for a in base]
        down = [a.copy() for a in base]
        up[i][idx] += h
        down[i][idx] -= h
        grad[idx] = (fn(*up) - fn(*down)).sum() / (2 * h)
    return grad


@pytest.mark.parametrize("equation,shapes", [c for c in EINSUM_CASES if 0 not in sum(c[1], ())])
def test_einsum_gradients_against_numpy_differences(equation, shapes):
    arrays = [RNG.standard_normal(s) for s in shapes]
    tensors = [wr.constant(a) for a in arrays]
    grads = run(wr.gradients(wr.reduce_sum(wr.einsum(equation, *tensors)), tensors))
    for i, g in enumerate(grads):
        expected = _numeric_grad(lambda *a: np.einsum(equation, *a), arrays, i)
        np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-8)


TF_SCRIPT = r"""
import sys
import numpy as np
import tensorflow as tf
inputs = dict(np.load(sys.argv[1]))
out = {}
x, y, a, b = (tf.constant(inputs[k]) for k in ("x", "y", "a", "b"))
with tf.GradientTape(persistent=True) as tape:
    tape.watch([x, y, a, b])
    results = {
        "atan2": tf.math.atan2(y, x),
        "lgamma": tf.math.lgamma(tf.abs(x) + 0.1),
        "digamma": tf.math.digamma(tf.abs(x) + 0.1),
        "polygamma": tf.math.polygamma(tf.constant([[1.0], [2.0]], tf.float64), tf.abs(x) + 0.1),
        "leaky": tf.nn.leaky_relu(x, alpha=0.1),
        "einsum": tf.einsum("...ij,...jk->...ik", a, b),
    }
    weighted = {k: tf.reduce_sum(v * v) for k, v in results.items()}
for k, v in results.items():
    out[k] = v.numpy()
for k in ("atan2", "lgamma", "digamma", "polygamma", "leaky"):
    out["d" + k] = tape.gradient(weighted[k], x).numpy()
out["datan2_y"] = tape.gradient(weighted["atan2"], y).numpy()
da, db = tape.gradient(weighted["einsum"], [a, b])
out["deinsum_a"], out["deinsum_b"] = da.numpy(), db.numpy()
np.savez(sys.argv[2], **out)
"""


def test_against_tensorflow(tmp_path):
    if not os.path.exists(PEERS_PYTHON):
        pytest.skip("TensorFlow peer interpreter %s is missing" % PEERS_PYTHON)
    inputs = {"x": RNG.standard_normal((2, 5)), "y": RNG.standard_normal((5,)),
              "a": RNG.standard_normal((2, 1, 3, 4)), "b": RNG.standard_normal((3, 4, 2))}
    np.savez(tmp_path / "in.npz", **inputs)
    (tmp_path / "ref.py").write_text(TF_SCRIPT)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    subprocess.run([PEERS_PYTHON, str(tmp_path / "ref.py"), str(tmp_path / "in.npz"),
                    str(tmp_path / "out.npz")], check=True, env=env, timeout=180,
                   stdout=subprocess.DEVNULL)
    ref = dict(np.load(tmp_path / "out.npz"))
    x, y, a, b = (wr.constant(inputs[k]) for k in ("x", "y", "a", "b"))
    results = {
        "atan2": wr.math.atan2(y, x),
        "lgamma": wr.math.lgamma(wr.abs(x) + 0.1),
        "digamma": wr.math.digamma(wr.abs(x) + 0.1),
        "polygamma": wr.math.polygamma(wr.constant([[1.0], [2.0]], wr.float64), wr.abs(x) + 0.1),
        "leaky": wr.nn.leaky_relu(x, alpha=0.1),
        "einsum": wr.einsum("...ij,...jk->...ik", a, b),
    }
    weighted = {k: wr.reduce_sum(v * v) for k, v in results.items()}
    fetch = dict(results)
    for k in ("atan2", "lgamma", "digamma", "polygamma", "leaky"):
        fetch["d" + k] = wr.gradients(weighted[k], x)[0]
    fetch["datan2_y"] = wr.gradients(weighted["atan2"], y)[0]
    fetch["deinsum_a"], fetch["deinsum_b"] = wr.gradients(weighted["einsum"], [a, b])
    got = run(fetch)
    for k, v in ref.items():
        np.testing.assert_allclose(got[k], v, rtol=1e-10, atol=1e-10, err_msg=k)


TF_GRAPH_SCRIPT = r"""
import sys, numpy as np, tensorflow as tf
tf.compat.v1.disable_eager_execution()
g = tf.Graph()
with g.as_default():
    x = tf.compat.v1.placeholder(tf.float32, [2, 3], name="x")
    y = tf.compat.v1.placeholder(tf.float32, [3], name="y")
    a = tf.compat.v1.placeholder(tf.float32, [2, 1, 3, 4], name="a")
    b = tf.compat.v1.placeholder(tf.float32, [5, 4, 2], name="b")
    z = tf.compat.v1.placeholder(tf.float32, [3, 3], name="z")
    outs = {
      "leaky": tf.nn.leaky_relu(x, alpha=0.3),
      "atan2": tf.math.atan2(y, x),
      "lgamma": tf.math.lgamma(tf.abs(x) + 0.5),
      "digamma": tf.math.digamma(tf.abs(x) + 0.5),
      "einsum": tf.einsum("...ij,...jk->...ik", a, b),
      "trace": tf.einsum("ii->", z), "diag": tf.einsum("ij,jj->ij", x, tf.abs(z)),
    }
    loss = tf.add_n([tf.reduce_sum(v * v) for v in outs.values()])
    grads = tf.gradients(loss, [x, y, a, b, z])
    for n, gr in zip("xyabz", grads):
        tf.identity(gr, name="grad_" + n)
    for k, v in outs.items():
        tf.identity(v, name="out_" + k)
r = np.random.default_rng(3)
feeds = {"x": r.standard_normal((2, 3)).astype(np.float32), "y": r.standard_normal(3).astype(np.float32),
         "a": r.standard_normal((2, 1, 3, 4)).astype(np.float32), "b": r.standard_normal((5, 4, 2)).astype(np.float32), "z": r.standard_normal((3, 3)).astype(np.float32)}
names = ["out_" + k for k in outs] + ["grad_" + n for n in "xyabz"]
with tf.compat.v1.Session(graph=g) as s:
    vals = s.run([n + ":0" for n in names], {k + ":0": v for k, v in feeds.items()})
open(sys.argv[1], "wb").write(g.as_graph_def().SerializeToString())
np.savez(sys.argv[2], **feeds, **dict(zip(names, vals)))
print(sorted(set(n.op for n in g.as_graph_def().node)))
"""


def test_tensorflow_gradient_graph_runs_unchanged(tmp_path):
    """A tf.compat.v1 graph with these ops and TensorFlow's own gradients of
    them (its Einsum gradient fills diagonals and undoes '...' broadcasts
    with Einsum, BroadcastTo, Reshape...), imported and run as is."""
    if not os.path.exists(PEERS_PYTHON):
        pytest.skip("TensorFlow peer interpreter %s is missing" % PEERS_PYTHON)
    (tmp_path / "graph.py").write_text(TF_GRAPH_SCRIPT)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    subprocess.run([PEERS_PYTHON, str(tmp_path / "graph.py"), str(tmp_path / "g.pb"),
                    str(tmp_path / "ref.npz")], check=True, env=env, timeout=180,
                   stdout=subprocess.DEVNULL)
    ref = dict(np.load(tmp_path / "ref.npz"))
    names = [k for k in ref if k.startswith(("out_", "grad_"))]
    assert len(names) == 12
    outs = wr.import_graph_def((tmp_path / "g.pb").read_bytes(),
                               return_elements=[n + ":0" for n in names], name="")
    got = run(outs, {k + ":0": ref[k] for k in "xyabz"})
    for n, v in zip(names, got):
        np.testing.assert_allclose(v, ref[n], rtol=1e-5, atol=1e-5, err_msg=n)
