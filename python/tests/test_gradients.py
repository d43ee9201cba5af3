"""wr.gradients against analytic gradients and central finite differences
(float64), unconnected xs, grad_ys, Variables as xs, and naming."""
import numpy as np
import pytest

import weir as wr
from weir.framework import ops


@pytest.fixture
def graph():
    g = ops.Graph()
    with g.as_default():
        yield g


def numeric_grad(sess, y, x, value, feeds, eps=1e-6):
    """d(sum y)/dx by central differences, feeding x = value +- eps."""
    grad = np.zeros_like(value)
    flat = value.reshape(-1)
    out = grad.reshape(-1)
    for i in range(flat.size):
        orig = flat[i]
        flat[i] = orig + eps
        plus = np.sum(sess.run(y, {**feeds, x: value}))
        flat[i] = orig - eps
        minus = np.sum(sess.run(y, {**feeds, x: value}))
        flat[i] = orig
        out[i] = (plus - minus) / (2 * eps)
    return grad


def check(y, xs_and_values, rtol=1e-5, atol=1e-6):
    xs = [x for x, _ in xs_and_values]
    grads = wr.gradients(y, xs)
    feeds = {x: v for x, v in xs_and_values}
    with wr.Session() as sess:
        got = sess.run(grads, feeds)
        for (x, v), g in zip(xs_and_values, got):
            assert g.shape == v.shape
            expected = numeric_grad(sess, y, x, v.copy(), feeds)
            np.testing.assert_allclose(g, expected, rtol=rtol, atol=atol)
    return got


rng = np.random.default_rng(7)


def test_matmul_analytic_and_numeric(graph):
    a = wr.placeholder(wr.float64, [2, 3])
    b = wr.placeholder(wr.float64, [3, 4])
    c = rng.standard_normal((2, 4))
    y = wr.reduce_sum(wr.matmul(a, b) * c)
    av, bv = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    ga, gb = check(y, [(a, av), (b, bv)])
    np.testing.assert_allclose(ga, c @ bv.T, rtol=1e-12)
    np.testing.assert_allclose(gb, av.T @ c, rtol=1e-12)


def test_conv2d_numeric(graph):
    x = wr.placeholder(wr.float64, [1, 5, 5, 2])
    f = wr.placeholder(wr.float64, [3, 3, 2, 3])
    y = wr.nn.conv2d(x, f, strides=[1, 2, 2, 1], padding="SAME")
    y = wr.reduce_sum(y * y)
    check(y, [(x, rng.standard_normal((1, 5, 5, 2))), (f, rng.standard_normal((3, 3, 2, 3)))],
          rtol=1e-5, atol=1e-5)


def test_softmax_cross_entropy(graph):
    logits = wr.placeholder(wr.float64, [3, 4])
    labels = np.eye(4)[[0, 2, 3]]
    loss = wr.reduce_sum(wr.nn.softmax_cross_entropy_with_logits_v2(labels=labels,
                                                                    logits=logits))
    lv = rng.standard_normal((3, 4))
    (g,) = check(loss, [(logits, lv)])
    softmax = np.exp(lv) / np.exp(lv).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(g, softmax - labels, rtol=1e-10)


def test_reductions_and_broadcast(graph):
    x = wr.placeholder(wr.float64, [3, 1])
    z = wr.placeholder(wr.float64, [1, 4])
    y = wr.reduce_mean(wr.square(x + z), axis=1) + wr.reduce_max(x * z, axis=0)[1]
    check(y, [(x, rng.standard_normal((3, 1))), (z, rng.standard_normal((1, 4)))])
    # analytic: d/dx sum(x + z) with broadcasting counts the broadcast copies
    s = wr.reduce_sum(x + z)
    gx, gz = wr.gradients(s, [x, z])
    with wr.Session() as sess:
        gxv, gzv = sess.run([gx, gz], {x: np.zeros((3, 1)), z: np.zeros((1, 4))})
    np.testing.assert_array_equal(gxv, np.full((3, 1), 4.0))
    np.testing.assert_array_equal(gzv, np.full((1, 4), 3.0))


def test_unconnected_grad_ys_and_several_ys(graph):
    x = wr.placeholder(wr.float32, [2])
    unused = wr.placeholder(wr.float32, [2])
    y = x * x
    g_x, g_unused = wr.gradients(y, [x, unused])
    assert g_unused is None
    (zero,) = wr.gradients(y, [unused], unconnected_gradients="zero")
    (seeded,) = wr.gradients(y, x, grad_ys=np.array([10.0, -1.0], np.float32))
    (both,) = wr.gradients([y, 3.0 * x], [x])
    xv = np.array([1.0, 2.0], np.float32)
    with wr.Session() as sess:
        np.testing.assert_allclose(sess.run(g_x, {x: xv}), 2 * xv)
        np.testing.assert_array_equal(sess.run(zero, {x: xv, unused: xv}), [0.0, 0.0])
        np.testing.assert_allclose(sess.run(seeded, {x: xv}), [20.0, -4.0])
        np.testing.assert_allclose(sess.run(both, {x: xv}), 2 * xv + 3.0)


def test_variable_xs_and_names(graph):
    w = wr.Variable(np.array([1.0, -2.0, 3.0], np.float32), name="w")
    # Two reads of w: the gradient sums both paths.
    loss = wr.reduce_sum(w * w) + wr.reduce_sum(3.0 * w)
    (g,) = wr.gradients(loss, [w])
    (g2,) = wr.gradients(loss, w)
    assert g.op.name.startswith("gradients/")
    assert g2.op.name.startswith("gradients_1/")
    with wr.Session() as sess:
        sess.run(w.initializer)
        np.testing.assert_allclose(sess.run(g), 2 * np.array([1.0, -2.0, 3.0]) + 3.0)
    with pytest.raises(ValueError):
        wr.gradients(loss, [w], stop_gradients=[w])


def test_gather_gradients_are_indexed_slices(graph):
    params = wr.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="table")
    c = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)
    via_read = wr.reduce_sum(wr.gather(params, [0, 2, 0]) * c)
    via_handle = wr.reduce_sum(params.sparse_read([0, 2, 0]) * c)
    (g_read,) = wr.gradients(via_read, [params])
    (g_handle,) = wr.gradients(via_handle, [params])
    expected = np.array([[6.0, 8.0], [0.0, 0.0], [3.0, 4.0]])  # row 0 is gathered twice
    # As in TF: a Variable's gather reads it with ResourceGather, whose
    # gradient is an IndexedSlices (densified by convert_to_tensor).
    assert isinstance(g_read, wr.IndexedSlices) and isinstance(g_handle, wr.IndexedSlices)
    with wr.Session() as sess:
        sess.run(params.initializer)
        np.testing.assert_array_equal(sess.run(wr.convert_to_tensor(g_read)), expected)
        np.testing.assert_array_equal(sess.run(wr.convert_to_tensor(g_handle)), expected)
        rows = sess.run(g_read)
        np.testing.assert_array_equal(rows.indices, [0, 2, 0])
        np.testing.assert_array_equal(rows.values, c)


def test_variable_read_inside_while_loop_and_cond(graph):
    v = wr.Variable(1.5, name="v")
    w = wr.Variable(np.array([1.0, 2.0], np.float32), name="w")
    # acc = 3 * (2 v) = 6 v: the read of v is captured into the loop frame
    _, acc = wr.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a + v * 2.0),
                           [wr.constant(0), wr.constant(0.0)])
    y = wr.cond(acc > 5.0, lambda: v * 10.0, lambda: v * 100.0)
    loss = wr.reduce_sum(w * w) * acc
    g_w, g_v = wr.gradients(loss, [w, v])
    (g_y,) = wr.gradients(y, [v])
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        acc_v, y_v, gw, gv, gy = sess.run([acc, y, g_w, g_v, g_y])
    assert acc_v == pytest.approx(9.0) and y_v == pytest.approx(15.0)
    np.testing.assert_allclose(gw, 2 * np.array([1.0, 2.0]) * 9.0)
    assert gv == pytest.approx(5.0 * 6.0)  # d(|w|^2 * 6v)/dv
    assert gy == pytest.approx(10.0)  # only the taken branch


def test_integer_values_get_none_gradients_as_in_tf():
    # Reviewer's find: tf.gradients with respect to an int tensor raised
    # InvalidArgumentError; TF1 answers None (only float/complex backpropagate).
    with wr.Graph().as_default():
        i = wr.constant(3)
        x = wr.placeholder(wr.float32, [2])
        iv = wr.Variable([1, 2], name="int_var")
        y = wr.reduce_sum(x * x) + wr.cast(i * 2, wr.float32)
        assert wr.gradients(wr.constant(3) * 2, [i]) == [None]
        assert wr.gradients(i * 2, [x]) == [None]  # an int y contributes nothing
        gx, gi, gv = wr.gradients(y, [x, i, iv])
        assert gi is None and gv is None
        with wr.Session() as sess:
            np.testing.assert_allclose(sess.run(gx, {x: [1.0, -2.0]}), [2.0, -4.0])
