"""weir's math ops and Tensor operators against numpy: values, static
shapes, TF1's dtype rules, int64 exactness, broadcasting, errors."""
import numpy as np
import pytest

import weir as wr


@pytest.fixture(autouse=True)
def fresh_graph():
    with wr.Graph().as_default() as g:
        yield g


def run(fetches, feed_dict=None):
    with wr.Session() as sess:
        return sess.run(fetches, feed_dict)


RNG = np.random.default_rng(7)
A = RNG.standard_normal((3, 4)).astype(np.float32)
B = RNG.standard_normal((4,)).astype(np.float32) + 3.0


def test_binary_ops_broadcast_against_numpy():
    a, b = wr.constant(A), wr.constant(B)
    cases = [
        (wr.add(a, b), A + B), (wr.subtract(a, b), A - B), (wr.multiply(a, b), A * B),
        (wr.divide(a, b), A / B), (wr.maximum(a, b), np.maximum(A, B)),
        (wr.minimum(a, b), np.minimum(A, B)), (wr.squared_difference(a, b), (A - B) ** 2),
        (wr.pow(wr.abs(a), b), np.abs(A) ** B), (wr.floordiv(a, b), np.floor_divide(A, B)),
        (wr.floormod(a, b), np.mod(A, B)),
    ]
    for t, _ in cases:
        assert t.shape.as_list() == [3, 4] and t.dtype == wr.float32
    out = run([t for t, _ in cases])
    for got, (_, want) in zip(out, cases):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_operators():
    a = wr.constant(A)
    i = wr.constant(np.array([7, -7, 9], dtype=np.int32))
    j = wr.constant(np.array([2, 2, -4], dtype=np.int32))
    m = wr.constant(A.T)
    cases = [
        (a + 1, A + 1), (1 + a, 1 + A), (a - 2.5, A - 2.5), (2.5 - a, 2.5 - A), (a * 3, A * 3),
        (3 * a, 3 * A), (a / 2, A / 2), (2 / (a * a + 1), 2 / (A * A + 1)), (-a, -A),
        (abs(a), np.abs(A)), (a ** 2, A ** 2), (2 ** a, 2 ** A), (a @ m, A @ A.T),
        (i // j, np.array([7, -7, 9]) // np.array([2, 2, -4])),
        (i % j, np.array([7, -7, 9]) % np.array([2, 2, -4])),
        (a // 0.5, A // 0.5), (a % 0.7, A % np.float32(0.7)),
        (a < 0, A < 0), (a <= 0.5, A <= 0.5), (a > 0, A > 0), (a >= 0.5, A >= 0.5),
        (0 < a, 0 < A),
    ]
    out = run([t for t, _ in cases])
    for k, (got, (t, want)) in enumerate(zip(out, cases)):
        assert got.dtype == t.dtype.as_numpy_dtype, k
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=str(k))
    assert (a + 1).dtype == wr.float32 and (i + 1).dtype == wr.int32
    # TF1 has no elementwise ==: Tensors compare by identity and hash.
    assert (a == a) is True and (a == wr.constant(A)) is False
    assert len({a, a}) == 1


def test_bool_operators():
    p = wr.constant([True, True, False, False])
    q = wr.constant([True, False, True, False])
    out = run([p & q, p | q, p ^ q, ~p, wr.logical_xor(p, q), True & p])
    np.testing.assert_array_equal(out[0], [True, False, False, False])
    np.testing.assert_array_equal(out[1], [True, True, True, False])
    np.testing.assert_array_equal(out[2], [False, True, True, False])
    np.testing.assert_array_equal(out[3], [False, False, True, True])
    np.testing.assert_array_equal(out[4], [False, True, True, False])
    np.testing.assert_array_equal(out[5], [True, True, False, False])
    with pytest.raises(TypeError):
        ~wr.constant([1, 2])


def test_truediv_dtype_rule():
    assert (wr.constant([1, 2], dtype=wr.int32) / 2).dtype == wr.float64
    assert (wr.constant([1, 2], dtype=wr.int16) / 2).dtype == wr.float32
    assert wr.truediv(wr.constant([1], dtype=wr.int64), 3).dtype == wr.float64
    x = wr.constant(np.array([7, -7], dtype=np.int32))
    out = run([x / 2, wr.div(x, 2), wr.floordiv(x, 2), wr.truncatediv(x, 2)])
    np.testing.assert_array_equal(out[0], [3.5, -3.5])
    np.testing.assert_array_equal(out[1], [3, -4])   # Python 2 division floors
    np.testing.assert_array_equal(out[2], [3, -4])
    np.testing.assert_array_equal(out[3], [3, -3])


def test_operand_dtype_errors():
    i = wr.constant([1, 2])
    with pytest.raises((TypeError, ValueError)):
        i + 0.5
    with pytest.raises((TypeError, ValueError, wr.errors.InvalidArgumentError)):
        wr.add(i, wr.constant([1.0, 2.0]))
    with pytest.raises((ValueError, wr.errors.InvalidArgumentError)) as e:
        wr.add(wr.constant(np.zeros((2, 3))), wr.constant(np.zeros((4,))), name="mismatch")
    assert "mismatch" in str(e.value)


def test_int64_exact():
    big = np.array([2**62 + 1, -(2**62) - 3], dtype=np.int64)
    x = wr.constant(big)
    out = run([x + 1, x - x, x * 1, wr.reduce_sum(x), wr.reduce_max(x), x // 2, 2**40 + x])
    np.testing.assert_array_equal(out[0], big + 1)
    np.testing.assert_array_equal(out[1], [0, 0])
    np.testing.assert_array_equal(out[2], big)
    assert out[3] == big.sum() and out[4] == big.max()
    np.testing.assert_array_equal(out[5], big // 2)
    np.testing.assert_array_equal(out[6], big + 2**40)


def test_unary_ops():
    x = wr.constant(B)
    cases = [
        (wr.negative(x), -B), (wr.abs(x - 3), np.abs(B - 3)), (wr.sign(x - 3), np.sign(B - 3)),
        (wr.square(x), B * B), (wr.sqrt(x), np.sqrt(B)), (wr.rsqrt(x), 1 / np.sqrt(B)),
        (wr.exp(x), np.exp(B)), (wr.log(x), np.log(B)), (wr.log1p(x), np.log1p(B)),
        (wr.sigmoid(x), 1 / (1 + np.exp(-B))), (wr.tanh(x), np.tanh(B)), (wr.sin(x), np.sin(B)),
        (wr.cos(x), np.cos(B)), (wr.floor(x), np.floor(B)), (wr.ceil(x), np.ceil(B)),
        (wr.reciprocal(x), 1 / B), (wr.round(wr.constant([0.5, 1.5, 2.5, -0.5, 2.6])),
                                    np.array([0., 2., 2., -0., 3.])),
        (wr.math.log_sigmoid(wr.constant([-100., 0., 100.])), [-100., np.log(0.5), 0.]),
        (wr.scalar_mul(2.0, x), 2 * B), (wr.math.expm1(x), np.expm1(B)),
    ]
    out = run([t for t, _ in cases])
    for k, (got, (_, want)) in enumerate(zip(out, cases)):
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6, err_msg=str(k))


def test_comparisons_and_logic():
    a, b = np.array([1, 5, 3]), np.array([3, 5, 1])
    out = run([wr.equal(a, b), wr.not_equal(a, b), wr.less(a, b), wr.less_equal(a, b),
               wr.greater(a, b), wr.greater_equal(a, b),
               wr.logical_and([True, False], True), wr.logical_or([True, False], False),
               wr.logical_not([True, False]), wr.is_nan([np.nan, 1.0]),
               wr.is_finite([np.inf, 1.0])])
    np.testing.assert_array_equal(out[0], a == b)
    np.testing.assert_array_equal(out[1], a != b)
    np.testing.assert_array_equal(out[2], a < b)
    np.testing.assert_array_equal(out[3], a <= b)
    np.testing.assert_array_equal(out[4], a > b)
    np.testing.assert_array_equal(out[5], a >= b)
    np.testing.assert_array_equal(out[6], [True, False])
    np.testing.assert_array_equal(out[7], [True, False])
    np.testing.assert_array_equal(out[8], [False, True])
    np.testing.assert_array_equal(out[9], [True, False])
    np.testing.assert_array_equal(out[10], [False, True])


def test_matmul_forms():
    a = RNG.standard_normal((2, 3)).astype(np.float32)
    b = RNG.standard_normal((4, 3)).astype(np.float32)
    ba = RNG.standard_normal((5, 2, 3)).astype(np.float32)
    bb = RNG.standard_normal((1, 3, 4)).astype(np.float32)
    m1 = wr.matmul(a, b, transpose_b=True)
    m2 = wr.matmul(a.T.copy(), b, transpose_a=True, transpose_b=True)
    m3 = wr.matmul(ba, bb)
    m4 = wr.matmul(bb, ba, adjoint_a=True, adjoint_b=True)
    assert m1.op.type == "MatMul" and m3.op.type == "BatchMatMulV2"
    assert m3.shape.as_list() == [5, 2, 4] and m4.shape.as_list() == [5, 4, 2]
    out = run([m1, m2, m3, m4])
    np.testing.assert_allclose(out[0], a @ b.T, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out[1], a @ b.T, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out[2], ba @ bb, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out[3], np.swapaxes(bb, 1, 2) @ np.swapaxes(ba, 1, 2), rtol=1e-5, atol=1e-5)
    with pytest.raises((ValueError, wr.errors.InvalidArgumentError)):
        wr.matmul(a, b)
    with pytest.raises(ValueError):
        wr.matmul(a, b, transpose_b=True, adjoint_b=True)
    f64 = wr.matmul(np.array([[2.0**40, 1.0]]), np.array([[1.0], [1.0]]))
    assert f64.dtype == wr.float64 and run(f64)[0, 0] == 2**40 + 1


def test_tensordot():
    a = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    b = RNG.standard_normal((4, 3, 5)).astype(np.float32)
    t1 = wr.tensordot(a, b, [[1, 2], [1, 0]])
    t2 = wr.tensordot(a, b[:, :, :], 1)
    t3 = wr.tensordot(a, a, 0)
    assert t1.shape.as_list() == [2, 5]
    out = run([t1, t2, t3])
    np.testing.assert_allclose(out[0], np.tensordot(a, b, [[1, 2], [1, 0]]), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out[1], np.tensordot(a, b, 1), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out[2], np.tensordot(a, a, 0), rtol=1e-5, atol=1e-6)


def test_add_n_accumulate_n():
    xs = [A, A * 2, A * 3]
    out = run([wr.add_n(xs), wr.add_n([A]), wr.accumulate_n(xs)])
    np.testing.assert_allclose(out[0], A * 6, rtol=1e-6)
    np.testing.assert_allclose(out[1], A)
    np.testing.assert_allclose(out[2], A * 6, rtol=1e-6)
    with pytest.raises(ValueError):
        wr.add_n([])


X = RNG.standard_normal((2, 3, 4)).astype(np.float32)


@pytest.mark.parametrize("axis", [None, 0, -1, [0, 2], (1,), [-3, -2]])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions(axis, keepdims):
    np_axis = tuple(axis) if isinstance(axis, (list, tuple)) else axis
    x = wr.constant(X)
    b = wr.constant(X > 0)
    pairs = [
        (wr.reduce_sum(x, axis, keepdims=keepdims), np.sum(X, np_axis, keepdims=keepdims)),
        (wr.reduce_mean(x, axis, keepdims=keepdims), np.mean(X, np_axis, keepdims=keepdims)),
        (wr.reduce_max(x, axis, keepdims=keepdims), np.max(X, np_axis, keepdims=keepdims)),
        (wr.reduce_min(x, axis, keepdims=keepdims), np.min(X, np_axis, keepdims=keepdims)),
        (wr.reduce_prod(x, axis, keepdims=keepdims), np.prod(X, np_axis, keepdims=keepdims)),
        (wr.reduce_all(b, axis, keepdims=keepdims), np.all(X > 0, np_axis, keepdims=keepdims)),
        (wr.reduce_any(b, axis, keepdims=keepdims), np.any(X > 0, np_axis, keepdims=keepdims)),
        (wr.reduce_logsumexp(x, axis, keepdims=keepdims),
         np.log(np.sum(np.exp(X), np_axis, keepdims=keepdims))),
        (wr.count_nonzero(b, axis, keepdims=keepdims),
         np.count_nonzero(X > 0, np_axis, keepdims=keepdims)),
    ]
    for t, want in pairs:
        assert t.shape.as_list() == list(np.shape(want))
    out = run([t for t, _ in pairs])
    for k, (got, (_, want)) in enumerate(zip(out, pairs)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=str(k))


def test_reduction_aliases_and_dynamic_rank():
    x = wr.constant(X)
    old = wr.reduce_sum(x, reduction_indices=[1], keep_dims=True)
    assert old.shape.as_list() == [2, 1, 4]
    p = wr.placeholder(wr.float32)
    total = wr.reduce_sum(p)
    mean = wr.reduce_mean(p, keepdims=False)
    out = run([old, total, mean], {p: X})
    np.testing.assert_allclose(out[0], X.sum(1, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(out[1], X.sum(), rtol=1e-5)
    np.testing.assert_allclose(out[2], X.mean(), rtol=1e-5)
    with pytest.raises(ValueError):
        wr.reduce_sum(x, axis=0, reduction_indices=0)
    with pytest.raises((ValueError, wr.errors.InvalidArgumentError)):
        wr.reduce_sum(x, axis=3)


def test_logsumexp_is_stable():
    big = wr.constant([[1000., 1000.], [-np.inf, -np.inf]])
    out = run(wr.reduce_logsumexp(big, axis=1))
    np.testing.assert_allclose(out[0], 1000 + np.log(2), rtol=1e-6)
    assert out[1] == -np.inf


def test_argmax_argmin():
    x = wr.constant(X)
    a0 = wr.argmax(x)
    a1 = wr.argmin(x, axis=-1, output_type=wr.int32)
    a2 = wr.argmax(x, dimension=1)
    assert a0.dtype == wr.int64 and a1.dtype == wr.int32 and a0.shape.as_list() == [3, 4]
    out = run([a0, a1, a2])
    np.testing.assert_array_equal(out[0], X.argmax(0))
    np.testing.assert_array_equal(out[1], X.argmin(-1))
    np.testing.assert_array_equal(out[2], X.argmax(1))


def test_range_linspace_cumsum():
    r1 = wr.range(5)
    r2 = wr.range(2, 11, 3)
    r3 = wr.range(1.0, 2.0, 0.25)
    r4 = wr.range(10, 0, -3, dtype=wr.int64)
    assert r1.dtype == wr.int32 and r3.dtype == wr.float32 and r4.dtype == wr.int64
    ls = wr.linspace(1.0, 2.0, 5)
    ls1 = wr.lin_space(3.0, 7.0, 1)
    c = wr.cumsum(X, axis=1)
    ce = wr.cumsum(X, axis=-1, exclusive=True)
    cr = wr.cumsum(X, axis=0, reverse=True)
    ci = wr.cumsum(wr.constant([1, 2, 3]), exclusive=True, reverse=True)
    big = np.array([[2**60, 1, 2**40]], dtype=np.int64)
    cbig = wr.cumsum(big, axis=1)
    out = run([r1, r2, r3, r4, ls, ls1, c, ce, cr, ci, cbig])
    np.testing.assert_array_equal(out[0], np.arange(5))
    np.testing.assert_array_equal(out[1], np.arange(2, 11, 3))
    np.testing.assert_allclose(out[2], np.arange(1.0, 2.0, 0.25))
    np.testing.assert_array_equal(out[3], np.arange(10, 0, -3))
    np.testing.assert_allclose(out[4], np.linspace(1.0, 2.0, 5), rtol=1e-6)
    assert out[4][-1] == 2.0
    np.testing.assert_allclose(out[5], [3.0])
    np.testing.assert_allclose(out[6], np.cumsum(X, 1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out[7], np.cumsum(X, -1) - X, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out[8], np.flip(np.cumsum(np.flip(X, 0), 0), 0), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(out[9], [5, 3, 0])
    np.testing.assert_array_equal(out[10], np.cumsum(big, axis=1))  # int64 exact


def test_count_nonzero_dtype_and_l2_normalize_trace():
    cn = wr.count_nonzero([[0, 1, 2], [0, 0, 3]], axis=1, dtype=wr.int32)
    assert cn.dtype == wr.int32
    v = np.array([[3., 4.], [0., 0.]], dtype=np.float32)
    out = run([cn, wr.math.l2_normalize(v, axis=1), wr.linalg.trace(np.arange(9.).reshape(3, 3))])
    np.testing.assert_array_equal(out[0], [2, 1])
    np.testing.assert_allclose(out[1], [[0.6, 0.8], [0., 0.]], rtol=1e-6)
    assert out[2] == 12.0


def test_op_names_follow_tf():
    a = wr.constant(1.0)
    assert (a + a).op.name == "add" and (a + a).op.name == "add_1"
    assert (a * a).op.name == "mul" and (a / a).op.name == "truediv"
    s = wr.reduce_sum(a, name="total")
    assert s.op.name == "total"
    with wr.name_scope("scope"):
        assert wr.matmul([[1.0]], [[2.0]]).op.name == "scope/MatMul"


def test_math_and_linalg_namespaces():
    assert wr.math.reduce_sum is wr.reduce_sum and wr.math.divide is wr.divide
    assert wr.linalg.matmul is wr.matmul and wr.linalg.eye is wr.eye
    np.testing.assert_allclose(run(wr.linalg.transpose(np.ones((2, 3, 4)))).shape, (2, 4, 3))


def test_norm_div_no_nan_arg_max():
    v = np.array([[3., -4.], [1., 2.]], dtype=np.float32)
    cases = [
        (wr.norm(v), np.linalg.norm(v)), (wr.norm(v, axis=1), np.linalg.norm(v, axis=1)),
        (wr.norm(v, ord=1, axis=0), np.abs(v).sum(0)), (wr.norm(v, ord=np.inf, axis=1), np.abs(v).max(1)),
        (wr.linalg.norm(v, ord="fro", axis=[0, 1], keepdims=True), np.linalg.norm(v, keepdims=True)),
        (wr.norm(v, ord=3, axis=1), (np.abs(v) ** 3).sum(1) ** (1 / 3)),
        (wr.div_no_nan([1., 0., -2.], [0., 0., 4.]), [0., 0., -0.5]),
        (wr.arg_max(v, 1), [0, 1]), (wr.arg_min(v, 0), [1, 0]),
    ]
    assert cases[4][0].shape.as_list() == [1, 1]
    out = run([t for t, _ in cases])
    for k, (got, (_, want)) in enumerate(zip(out, cases)):
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=str(k))
    with pytest.raises(ValueError):
        wr.norm(v, ord=1, axis=[0, 1])


# The same TF1 expressions evaluated by weir and by TensorFlow 2.21 (tf.compat.v1, graph mode).
TF_EXPRESSIONS = [
    "tf.constant([7, -7, 9]) / 2",
    "tf.constant([7, -7, 9]) // tf.constant([2, 2, -4])",
    "tf.constant([7, -7, 9]) % tf.constant([2, 2, -4])",
    "tf.constant([-7.5, 7.5]) % 2.0",
    "tf.round(tf.constant([0.5, 1.5, 2.5, -2.5]))",
    "tf.constant(np.arange(24.).reshape(2, 3, 4))[1, ::-2, tf.newaxis, 1:]",
    "tf.constant(np.arange(24.).reshape(2, 3, 4))[..., -1]",
    "tf.reduce_logsumexp(tf.constant([[1., 2., 3.], [-1., 0., 1000.]]), axis=1, keepdims=True)",
    "tf.cumsum(tf.constant([[1., 2., 3.], [4., 5., 6.]]), axis=1, exclusive=True, reverse=True)",
    "tf.linspace(-1.0, 3.0, 7)",
    "tf.one_hot([1, 0, 3], 3, on_value=2.0, off_value=-1.0, axis=0)",
    "tf.sequence_mask([2, 0, 3], 4, dtype=tf.int32)",
    "tf.clip_by_global_norm([tf.constant([3., 4.]), tf.constant([[12.]])], 6.5)[0][1]",
    "tf.clip_by_norm(tf.constant([[3., 4.], [0., 1.]]), 2.0, axes=[1])",
    "tf.count_nonzero(tf.constant([[0, 1], [2, 0]]), axis=0)",
    "tf.argmax(tf.constant([[1, 5, 5], [7, 0, 7]]), axis=1)",
    "tf.reduce_mean(tf.constant([1, 2, 4]))",
    "tf.range(1, 2.0, 0.3)",
    "tf.where(tf.constant([[True, False], [False, True]]))",
    "tf.boolean_mask(tf.constant([[1, 2], [3, 4], [5, 6]]), [True, False, True])",
    "tf.tensordot(tf.constant(np.arange(6.).reshape(2, 3)), tf.constant(np.arange(12.).reshape(3, 4)), 1)",
    "tf.matmul(tf.ones([2, 1, 2, 3]), tf.ones([4, 3, 5]))",
    "tf.pad(tf.constant([[1, 2], [3, 4]]), [[1, 0], [0, 1]], 'REFLECT')",
    "tf.pad(tf.constant([[1, 2], [3, 4]]), [[1, 0], [0, 2]], 'SYMMETRIC')",
    "tf.cast(tf.constant([-1.7, 2.9, 1e3]), tf.int32)",
    "tf.squared_difference(tf.constant([1, 5]), 2)",
    "tf.math.log_sigmoid(tf.constant([-50., 0., 50.]))",
    "tf.while_loop(lambda i, s: i < 5, lambda i, s: (i + 1, s * 2), [0, 1])[1]",
    "tf.cond(tf.constant(False), lambda: tf.constant(1.0), lambda: tf.constant(2.0))",
]

TF_SCRIPT = r"""
import sys, numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
exprs = %r
out = {}
with tf.Session() as sess:
    for k, e in enumerate(exprs):
        t = eval(e)
        out["v%%d" %% k] = sess.run(t)
np.savez(sys.argv[1], **out)
"""


def test_expressions_match_tensorflow(tmp_path):
    import os
    import subprocess
    from peers import PEERS_PYTHON as peer
    if not os.path.exists(peer):
        pytest.skip("TensorFlow peer venv /opt/weir-peers is not installed")
    script = tmp_path / "tf_exprs.py"
    script.write_text(TF_SCRIPT % (TF_EXPRESSIONS,))
    result = tmp_path / "tf.npz"
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    proc = subprocess.run([peer, str(script), str(result)], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    want = np.load(result)
    scope = {"tf": wr, "np": np}  # the expressions say `tf.`; their lambdas need it global
    tensors = [eval(e, scope) for e in TF_EXPRESSIONS]
    got = run(tensors)
    for k, (e, g) in enumerate(zip(TF_EXPRESSIONS, got)):
        w = want["v%d" % k]
        assert g.dtype == w.dtype, (e, g.dtype, w.dtype)
        assert g.shape == w.shape, (e, g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6, err_msg=e)
