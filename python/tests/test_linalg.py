"""wr.linalg (and TF1's tf.matrix_* names) against TensorFlow 2.21 run in a
subprocess: every linalg op's values on random batched inputs, the
gradients TensorFlow defines (through wr.gradients), a TF1 graph with these
ops and TensorFlow's own gradients imported and run, and the errors of
singular, non-positive-definite and hostile inputs."""
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


def run_tf(tmp_path, script, inputs):
    if not os.path.exists(PEERS_PYTHON):
        pytest.fail("TensorFlow peer interpreter %s is missing (scripts/install_deps.sh)" % PEERS_PYTHON)
    np.savez(tmp_path / "in.npz", **inputs)
    (tmp_path / "ref.py").write_text(script)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    subprocess.run([PEERS_PYTHON, str(tmp_path / "ref.py"), str(tmp_path / "in.npz"),
                    str(tmp_path / "out.npz"), str(tmp_path / "g.pb")], check=True, env=env,
                   timeout=300, stdout=subprocess.DEVNULL)
    return dict(np.load(tmp_path / "out.npz"))


RNG = np.random.default_rng(16)


def make_inputs():
    a = RNG.standard_normal((2, 3, 3)) + 3 * np.eye(3)
    b = RNG.standard_normal((2, 3, 3))
    return {
        "a": a,
        "spd": b @ np.swapaxes(b, -1, -2) + np.eye(3),
        "sym": b + np.swapaxes(b, -1, -2),
        "rhs": RNG.standard_normal((2, 3, 2)),
        "rhs_b": RNG.standard_normal((4, 1, 3, 2)),
        "tall": RNG.standard_normal((2, 4, 3)),
        "wide": RNG.standard_normal((2, 3, 4)),
        "tall_rhs": RNG.standard_normal((2, 4, 2)),
        "u": RNG.standard_normal((2, 5, 3)),
        "v": RNG.standard_normal((2, 5, 3)),
        "band": RNG.standard_normal((2, 3, 4)),
        "m34": RNG.standard_normal((2, 3, 4)),
        "t": RNG.standard_normal((2, 3)),
    }


# Each entry: name -> (expression on the inputs dict `x` of `tf` or `wr`
# tensors, with `lib` the module's linalg). Evaluated identically on both
# sides; "g_<name>" are the gradients of sum(w * out) w.r.t. every input.
CASES = {
    "inv": "L.inv(x['a'])",
    "inv_adj": "L.inv(x['a'], adjoint=True)",
    "det": "L.det(x['a'])",
    "logabsdet": "L.slogdet(x['a'])[1]",
    "sign": "L.slogdet(x['a'])[0]",
    "logdet": "L.logdet(x['spd'])",
    "chol": "L.cholesky(x['spd'])",
    "solve": "L.solve(x['a'], x['rhs'])",
    "solve_adj": "L.solve(x['a'], x['rhs'], adjoint=True)",
    "trisolve": "L.triangular_solve(x['a'], x['rhs_b'])",
    "trisolve_up_adj": "L.triangular_solve(x['a'], x['rhs_b'], lower=False, adjoint=True)",
    "cholsolve": "L.cholesky_solve(L.cholesky(x['spd']), x['rhs'])",
    "qr_q": "L.qr(x['tall'])[0]",
    "qr_r": "L.qr(x['tall'])[1]",
    "qr_wide_q": "L.qr(x['wide'])[0]",
    "qr_wide_r": "L.qr(x['wide'])[1]",
    "qr_full_q": "L.qr(x['wide'], full_matrices=True)[0]",
    "eigh_e": "L.eigh(x['sym'])[0]",
    "eigh_vv": "L.eigh(x['sym'])[1] ** 2",
    "eigvalsh": "L.eigvalsh(x['sym'])",
    "svd_s": "L.svd(x['tall'], compute_uv=False)",
    "svd_uu": "L.svd(x['tall'])[1] ** 2",
    "svd_vv": "L.svd(x['tall'])[2] ** 2",
    "svd_full_vv": "L.svd(x['wide'], full_matrices=True)[2] ** 2",
    "svd_wide_s": "L.svd(x['wide'])[0]",
    "lu": "L.lu(x['a'])[0]",
    "lu_p": "L.lu(x['a'] @ [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])[1]",
    "lstsq": "L.lstsq(x['tall'], x['tall_rhs'])",
    "lstsq_l2": "L.lstsq(x['wide'], x['rhs'], l2_regularizer=0.5)",
    "cross": "L.cross(x['u'], x['v'])",
    "diag3": "L.diag(x['band'], k=(-1, 1), num_rows=4, padding_value=7)",
    "diag3_ll": "L.diag(x['band'], k=(-1, 1), num_cols=5, align='LEFT_LEFT')",
    "diag_k1": "L.diag(x['t'], k=1)",
    "diag_part3": "L.diag_part(x['m34'], k=(-2, 1), padding_value=5)",
    "diag_part3_rr": "L.diag_part(x['m34'], k=(-1, 3), align='RIGHT_RIGHT')",
    "diag_part0": "L.diag_part(x['m34'])",
    "set_diag3": "L.set_diag(x['m34'], x['band'][:, :2, :3], k=(0, 1))",
    "set_diag0": "L.set_diag(x['m34'], x['t'])",
    "tensor_diag": "L.tensor_diag(x['t'])",
    "tensor_diag_part": "L.tensor_diag_part(L.tensor_diag(x['t']))",
}
# Cases without a gradient check: TensorFlow has no Lu gradient (Weir's is
# checked by finite differences in linalg_gradients_test.cc), Weir none for
# MatrixSolveLs (TensorFlow's lstsq is composite); a determinant's sign has none.
NO_GRAD = {"lu", "lu_p", "lstsq", "lstsq_l2", "sign"}

TF_SCRIPT = r"""
import sys, numpy as np, tensorflow as tf
CASES = %r
NO_GRAD = %r
inputs = dict(np.load(sys.argv[1]))
L = tf.linalg
out = {}
for name, expr in CASES.items():
    x = {k: tf.Variable(v) for k, v in inputs.items()}
    with tf.GradientTape(persistent=True) as tape:
        y = eval(expr)
        w = tf.constant(np.cos(np.arange(int(np.prod(y.shape)))).reshape(y.shape), y.dtype)
        loss = tf.reduce_sum(w * y)
    out[name] = y.numpy()
    if name not in NO_GRAD:
        for k, v in x.items():
            g = tape.gradient(loss, v)
            if g is not None:
                out["g_%%s_%%s" %% (name, k)] = g.numpy()
np.savez(sys.argv[2], **out)
""" % (CASES, NO_GRAD)


def test_values_and_gradients_against_tensorflow(tmp_path):
    inputs = make_inputs()
    ref = run_tf(tmp_path, TF_SCRIPT, inputs)
    x = {k: wr.constant(v) for k, v in inputs.items()}
    L = wr.linalg  # noqa: N806  (the expressions' name for the module)
    fetch = {}
    for name, expr in CASES.items():
        y = eval(expr)
        fetch[name] = y
        if name in NO_GRAD:
            continue
        shape = ref[name].shape
        w = wr.constant(np.cos(np.arange(int(np.prod(shape)))).reshape(shape))
        loss = wr.reduce_sum(w * y)
        keys = [k for k in x if "g_%s_%s" % (name, k) in ref]
        assert keys, name
        for k, g in zip(keys, wr.gradients(loss, [x[k] for k in keys])):
            assert g is not None, (name, k)
            fetch["g_%s_%s" % (name, k)] = g
    got = run(fetch)
    assert set(got) == set(ref), set(got) ^ set(ref)
    bad = [k for k, v in ref.items() if not np.allclose(got[k], v, rtol=1e-8, atol=1e-8)]
    assert not bad, ["%s: max diff %g" % (k, np.max(np.abs(got[k] - ref[k]))) for k in bad]


TF_GRAPH_SCRIPT = r"""
import sys, numpy as np, tensorflow as tf
tf.compat.v1.disable_eager_execution()
g = tf.Graph()
with g.as_default():
    a = tf.compat.v1.placeholder(tf.float32, [2, 3, 3], name="a")
    s = tf.compat.v1.placeholder(tf.float32, [2, 3, 3], name="s")
    r = tf.compat.v1.placeholder(tf.float32, [2, 3, 2], name="r")
    d = tf.compat.v1.placeholder(tf.float32, [2, 3], name="d")
    outs = {
      "inv": tf.compat.v1.matrix_inverse(a), "det": tf.compat.v1.matrix_determinant(a),
      "slogdet": tf.linalg.slogdet(a)[1], "chol": tf.compat.v1.cholesky(s),
      "solve": tf.compat.v1.matrix_solve(a, r),
      "trisolve": tf.compat.v1.matrix_triangular_solve(a, r, lower=False),
      "eigh": tf.compat.v1.self_adjoint_eigvals(s), "qr": tf.compat.v1.qr(a)[1],
      "diag": tf.linalg.diag(d, k=(0, 1), num_rows=4), "diag_part": tf.linalg.diag_part(a, k=-1),
      "set_diag": tf.linalg.set_diag(a, d), "v1diag": tf.compat.v1.matrix_diag(d),
      "tdiag": tf.compat.v1.diag(d),
    }
    loss = tf.add_n([tf.reduce_sum(v * v) for v in outs.values()])
    grads = tf.gradients(loss, [a, s, r, d])
    for n, gr in zip("asrd", grads):
        tf.identity(gr, name="grad_" + n)
    for k, v in outs.items():
        tf.identity(v, name="out_" + k)
x = dict(np.load(sys.argv[1]))
feeds = {k: x[k].astype(np.float32) for k in "asrd"}
names = ["out_" + k for k in outs] + ["grad_" + n for n in "asrd"]
with tf.compat.v1.Session(graph=g) as sess:
    vals = sess.run([n + ":0" for n in names], {k + ":0": v for k, v in feeds.items()})
open(sys.argv[3], "wb").write(g.as_graph_def().SerializeToString())
np.savez(sys.argv[2], **dict(zip(names, vals)))
"""


def test_tensorflow_graph_with_its_gradients_runs_unchanged(tmp_path):
    """A TF1 graph of linalg ops (MatrixDiagV3 & co. as TF 2.21 exports
    them) and TensorFlow's own gradient subgraph, imported and run as is."""
    b = RNG.standard_normal((2, 3, 3))
    inputs = {"a": RNG.standard_normal((2, 3, 3)) + 3 * np.eye(3),
              "s": b @ np.swapaxes(b, -1, -2) + np.eye(3),
              "r": RNG.standard_normal((2, 3, 2)), "d": RNG.standard_normal((2, 3))}
    ref = run_tf(tmp_path, TF_GRAPH_SCRIPT, inputs)
    graph_def = wr.GraphDef()
    graph_def.ParseFromString((tmp_path / "g.pb").read_bytes())
    ops_used = {n.op for n in graph_def.node}
    assert {"MatrixInverse", "Cholesky", "MatrixDiagV3", "MatrixDiagPartV3", "MatrixSetDiagV3",
            "SelfAdjointEigV2", "Qr", "MatrixTriangularSolve", "Diag"} <= ops_used, ops_used
    names = sorted(ref)
    outs = wr.import_graph_def((tmp_path / "g.pb").read_bytes(), return_elements=[n + ":0" for n in names], name="")
    got = run(outs, {k + ":0": inputs[k].astype(np.float32) for k in "asrd"})
    for n, v in zip(names, got):
        np.testing.assert_allclose(v, ref[n], rtol=2e-4, atol=2e-4, err_msg=n)


def test_tf1_names():
    v1 = wr.compat.v1
    for name in ["matrix_inverse", "matrix_determinant", "cholesky", "matrix_solve",
                 "matrix_triangular_solve", "qr", "svd", "self_adjoint_eig", "self_adjoint_eigvals",
                 "diag", "diag_part", "matrix_diag", "matrix_diag_part", "matrix_set_diag",
                 "trace", "cross", "cholesky_solve", "matrix_solve_ls", "matrix_band_part",
                 "matrix_transpose"]:
        assert callable(getattr(v1, name)), name
    for name in ["inv", "det", "logdet", "slogdet", "cholesky", "solve", "triangular_solve", "qr",
                 "svd", "eigh", "eigvalsh", "diag", "diag_part", "set_diag", "band_part", "cross",
                 "lu", "lstsq", "cholesky_solve", "matrix_transpose", "adjoint", "trace", "norm",
                 "tensor_diag", "tensor_diag_part"]:
        assert callable(getattr(v1.linalg, name)), name
    # tf.diag is the tensor form, tf.matrix_diag the batched-matrix form.
    got = run([v1.diag([1.0, 2.0]), v1.matrix_diag([[1.0, 2.0]]), v1.trace([[1.0, 2.0], [3.0, 4.0]])])
    np.testing.assert_array_equal(got[0], [[1, 0], [0, 2]])
    np.testing.assert_array_equal(got[1], [[[1, 0], [0, 2]]])
    assert got[2] == 5


def test_errors_name_the_node_and_batch_index():
    singular = np.array([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 4.0]]])
    with pytest.raises(wr.errors.InvalidArgumentError, match=r"my_inverse.*batch index 1|batch index 1.*my_inverse"):
        run(wr.linalg.inv(singular, name="my_inverse"))
    with pytest.raises(wr.errors.InvalidArgumentError, match="not positive definite"):
        run(wr.linalg.cholesky(np.array([[1.0, 2.0], [2.0, 1.0]])))
    with pytest.raises(wr.errors.InvalidArgumentError, match="not invertible"):
        run(wr.linalg.solve(singular, np.ones((2, 2, 1))))


def test_hostile_inputs_are_errors():
    # A declared 2^40 x 2^40 batch: refused when the graph is built, nothing allocated.
    with pytest.raises((ValueError, wr.errors.InvalidArgumentError)):
        wr.linalg.tensor_diag(wr.placeholder(wr.float32, [2 ** 40, 2 ** 40]))
    m = wr.placeholder(wr.float32, [None, None])
    feed = {m: np.ones((2, 2), np.float32)}
    # k outside the matrix, a band wider than it, k[0] > k[1].
    for k in [-5, (-1, 7), (1, -1), (0, 1, 2)]:
        kt = wr.placeholder(wr.int32, None)
        with pytest.raises(wr.errors.InvalidArgumentError):
            run(wr.linalg.diag_part(m, k=kt), {m: feed[m], kt: np.array(k, np.int32)})
    # num_rows inconsistent with the diagonal, and huge num_rows/num_cols.
    rows = wr.placeholder(wr.int32, [])
    cols = wr.placeholder(wr.int32, [])
    dg = wr.placeholder(wr.float32, [None])
    out = wr.linalg.diag(dg, num_rows=rows, num_cols=cols)
    for r, c in [(5, 4), (2 ** 31 - 1, 2 ** 31 - 1), (-3, -1)]:
        with pytest.raises(wr.errors.InvalidArgumentError):
            run(out, {dg: np.ones(3, np.float32), rows: r, cols: c})
    # Empty batches and 0x0 matrices work.
    got = run([wr.linalg.inv(np.zeros((0, 3, 3))), wr.linalg.det(np.zeros((2, 0, 0))),
               wr.linalg.cholesky(np.zeros((0, 0)))])
    assert got[0].shape == (0, 3, 3)
    np.testing.assert_array_equal(got[1], [1, 1])
    assert got[2].shape == (0, 0)
    # NaN input: the decompositions return (NaN) values or errors, never crash.
    nan = np.full((2, 2), np.nan)
    for fn in [wr.linalg.inv, wr.linalg.det, wr.linalg.eigvalsh, lambda t: wr.linalg.svd(t)[0],
               lambda t: wr.linalg.qr(t)[0]]:
        try:
            run(fn(nan))
        except wr.errors.InvalidArgumentError:
            pass


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_kernels_against_numpy(dtype):
    r = np.random.default_rng(7)
    a = (r.standard_normal((2, 3, 3)) + 1j * r.standard_normal((2, 3, 3)) + 3 * np.eye(3)).astype(dtype)
    b = (r.standard_normal((2, 3, 2)) + 1j * r.standard_normal((2, 3, 2))).astype(dtype)
    h = (a @ np.conj(np.swapaxes(a, -1, -2)) + np.eye(3)).astype(dtype)
    L = wr.linalg  # noqa: N806
    got = run([L.inv(a), L.det(a), L.slogdet(a)[1], L.cholesky(h), L.solve(a, b),
               L.triangular_solve(a, b), L.qr(a)[1], L.svd(a, compute_uv=False), L.eigvalsh(h),
               L.inv(a, adjoint=True)])
    want = [np.linalg.inv(a), np.linalg.det(a), np.linalg.slogdet(a)[1], np.linalg.cholesky(h),
            np.linalg.solve(a, b), np.linalg.solve(np.tril(a), b), np.linalg.qr(a)[1],
            np.linalg.svd(a, compute_uv=False), np.linalg.eigvalsh(h),
            np.linalg.inv(np.conj(np.swapaxes(a, -1, -2)))]
    tol = 1e-4 if dtype == np.complex64 else 1e-10
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == dtype, i
        if i == 6:  # R is unique up to a unit phase per row
            g, w = np.abs(g), np.abs(w)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol, err_msg=str(i))


def test_matrix_norms_against_numpy():
    x = np.random.default_rng(3).standard_normal((2, 3, 4))
    for ord_ in [1, 2, np.inf, "fro"]:
        for axis in [(-2, -1), (0, 2)]:
            for keep in (False, True):
                got = run(wr.linalg.norm(x, ord=ord_, axis=axis, keepdims=keep))
                want = np.linalg.norm(np.moveaxis(x, axis, (-2, -1)), ord=ord_, axis=(-2, -1))
                if keep:
                    want = np.expand_dims(want, tuple(sorted(a % 3 for a in axis)))
                np.testing.assert_allclose(got, want, rtol=1e-10, err_msg=str((ord_, axis, keep)))
    np.testing.assert_allclose(run(wr.linalg.norm(x[0, 0], ord=1)), np.abs(x[0, 0]).sum())
