"""wr.TensorArray, map_fn/scan/foldl/foldr and the RNNs without TensorFlow:
values against numpy (an LSTM and a GRU written out in numpy), gradients
against central differences in float64, static shapes, and the errors.
(test_rnn.py compares the same surfaces with TensorFlow 2.21.)"""
import numpy as np
import pytest

import weir as wr


@pytest.fixture(autouse=True)
def fresh_graph():
    with wr.Graph().as_default() as g:
        yield g


def run(fetches, feed_dict=None):
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        return sess.run(fetches, feed_dict)


def check_gradient(build, x0, rtol=1e-5, atol=1e-6):
    """d sum(build(x)) / dx against central differences, in float64."""
    x = wr.placeholder(wr.float64, list(np.shape(x0)))
    y = wr.reduce_sum(build(x))
    (dx,) = wr.gradients(y, [x])
    assert dx is not None
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        analytic = sess.run(dx, {x: x0})
        numeric = np.zeros_like(x0)
        h = 1e-6
        for i in np.ndindex(*np.shape(x0)):
            xp, xm = x0.copy(), x0.copy()
            xp[i] += h
            xm[i] -= h
            numeric[i] = (sess.run(y, {x: xp}) - sess.run(y, {x: xm})) / (2 * h)
    np.testing.assert_allclose(analytic, numeric, rtol=rtol, atol=atol)


# ---- TensorArray ----

def test_write_read_stack_and_static_shapes():
    ta = wr.TensorArray(wr.float32, size=3)
    ta = ta.write(0, [1.0, 2.0]).write(1, [3.0, 4.0]).write(2, [5.0, 6.0])
    assert ta.element_shape.as_list() == [2]
    r = ta.read(1)
    assert r.shape.as_list() == [2]
    s = ta.stack()
    assert s.shape.as_list() == [3, 2]  # a constant size is the stack's dim 0
    np.testing.assert_array_equal(run(r), [3.0, 4.0])


def test_unstack_gather_scatter_concat_split_size():
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    ta = wr.TensorArray(wr.float32, size=4, clear_after_read=False).unstack(x)
    gathered = ta.gather([3, 1])
    concat = ta.concat()
    size = ta.size()
    sc = wr.TensorArray(wr.float32, size=4).scatter([2, 0, 3, 1], x)
    parts = wr.TensorArray(wr.float32, size=3, infer_shape=False).split(x, [1, 2, 1])
    g, c, n, s, p1 = run([gathered, concat, size, sc.stack(), parts.read(1)])
    np.testing.assert_array_equal(g, x[[3, 1]])
    np.testing.assert_array_equal(c, x.reshape(-1))
    assert n == 4
    np.testing.assert_array_equal(s, x[[1, 3, 0, 2]])
    np.testing.assert_array_equal(p1, x[1:3])


def test_split_with_equal_lengths_infers_the_element_shape():
    ta = wr.TensorArray(wr.float32, size=2).split(wr.zeros([4, 3]), [2, 2])
    assert ta.element_shape.as_list() == [2, 3]


def test_dynamic_size_grows_in_a_loop():
    def body(i, ta):
        return i + 1, ta.write(i, wr.cast(i, wr.float32) * 2.0)
    _, ta = wr.while_loop(lambda i, _: i < 7, body,
                          [0, wr.TensorArray(wr.float32, size=0, dynamic_size=True)])
    values, size = run([ta.stack(), ta.size()])
    assert size == 7
    np.testing.assert_array_equal(values, np.arange(7) * 2.0)


def test_grad_array_and_identity_share_the_array():
    ta = wr.TensorArray(wr.float32, size=2).write(0, [1.0]).write(1, [2.0])
    same = ta.identity()
    assert same.handle is ta.handle and same.flow is not ta.flow
    g = ta.grad("manual")
    assert g.handle is not ta.handle and g.element_shape.as_list() == [1]
    g = g.write(0, [5.0]).write(0, [1.0])  # a gradient array adds writes to one index
    np.testing.assert_array_equal(run(g.read(0)), [6.0])


def test_gradient_through_loop_reads_and_writes():
    def build(x):
        inp = wr.TensorArray(wr.float64, size=4).unstack(x)

        def body(i, acc, out):
            v = inp.read(i)
            acc = acc * v + wr.sin(v)
            return i + 1, acc, out.write(i, acc * acc)
        _, _, out = wr.while_loop(lambda i, *_: i < 4, body,
                                  [0, wr.ones([3], wr.float64), wr.TensorArray(wr.float64, size=4)])
        return out.stack() * wr.constant([[1.0], [2.0], [3.0], [4.0]], wr.float64)
    check_gradient(build, np.random.RandomState(0).uniform(-1, 1, (4, 3)))


def test_gradient_through_gather_scatter_concat_split():
    def build(x):
        ta = wr.TensorArray(wr.float64, size=4, clear_after_read=False).scatter([3, 0, 2, 1], x * x)
        parts = wr.TensorArray(wr.float64, size=2, infer_shape=False).split(
            wr.reshape(x, [-1]), [5, 7])
        return wr.concat([wr.reshape(ta.gather([1, 1, 3]), [-1]) * 3.0, ta.concat(),
                          wr.sin(parts.read(0)), parts.read(1) * 2.0], 0)
    check_gradient(build, np.random.RandomState(1).uniform(-1, 1, (4, 3)))


def test_tensor_array_errors():
    with pytest.raises(ValueError, match="Size must be provided"):
        wr.TensorArray(wr.float32)
    ta = wr.TensorArray(wr.float32, size=2).write(0, [1.0, 2.0])
    with pytest.raises(ValueError, match=r"Inconsistent shapes: saw \(3,\) but expected \(2,\)"):
        ta.write(1, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="TensorArray dtype is float32 but Op is trying to write "
                                         "dtype int32"):
        ta.write(1, wr.constant([1, 2]))
    with pytest.raises(ValueError, match="Cannot provide both a handle and size"):
        wr.TensorArray(wr.float32, size=2, handle=ta.handle, flow=ta.flow)
    past = wr.TensorArray(wr.float32, size=2, name="short").unstack(wr.ones([2, 3])).read(5)
    with pytest.raises(wr.errors.InvalidArgumentError, match="short"):
        run(past)


# ---- map_fn, scan, foldl, foldr ----

def test_map_fn_nested_and_static_shapes():
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    a, b = wr.map_fn(lambda e: (e[0] + e[1], wr.reduce_sum(e[1])), (x, x * 2.0),
                     dtype=(wr.float32, wr.float32))
    assert a.shape.as_list() == [3, 2] and b.shape.as_list() == [3]
    d = wr.map_fn(lambda e: {"s": e["u"] * 2.0}, {"u": x}, dtype={"s": wr.float32})
    av, bv, dv = run([a, b, d["s"]])
    np.testing.assert_allclose(av, 3 * x)
    np.testing.assert_allclose(bv, (2 * x).sum(1))
    np.testing.assert_allclose(dv, 2 * x)


def test_scan_and_folds_against_numpy():
    x = np.random.RandomState(2).uniform(0.5, 1.5, (5, 2)).astype(np.float32)
    s = wr.scan(lambda a, e: a * e + 1.0, x)
    sr = wr.scan(lambda a, e: a + e, x, initializer=wr.zeros([2]), reverse=True)
    fl = wr.foldl(lambda a, e: a * 2.0 + e, x, initializer=wr.zeros([2]))
    fr = wr.foldr(lambda a, e: a * 2.0 + e, x)
    sv, srv, flv, frv = run([s, sr, fl, fr])
    want = [x[0]]
    for row in x[1:]:
        want.append(want[-1] * row + 1.0)
    np.testing.assert_allclose(sv, want, rtol=1e-6)
    np.testing.assert_allclose(srv, np.cumsum(x[::-1], 0)[::-1], rtol=1e-6)
    acc = np.zeros(2)
    for row in x:
        acc = acc * 2 + row
    np.testing.assert_allclose(flv, acc, rtol=1e-6)
    acc = x[-1]
    for row in x[-2::-1]:
        acc = acc * 2 + row
    np.testing.assert_allclose(frv, acc, rtol=1e-6)


def test_map_scan_fold_gradients():
    x0 = np.random.RandomState(3).uniform(-1, 1, (4, 2))
    check_gradient(lambda x: wr.map_fn(lambda e: wr.sin(e) * e, x), x0)
    check_gradient(lambda x: wr.scan(lambda a, e: a * e + wr.cos(e), x), x0)
    check_gradient(lambda x: wr.foldl(lambda a, e: a * wr.tanh(e), x, initializer=wr.ones([2], wr.float64)), x0)
    check_gradient(lambda x: wr.foldr(lambda a, e: (a + e) * e, x), x0)


def test_functional_errors():
    with pytest.raises(ValueError, match="1\\+ dimensional"):
        wr.map_fn(lambda e: e, wr.constant(1.0))
    with pytest.raises(TypeError, match="fn must be callable"):
        wr.scan(None, wr.constant([1.0]))
    with pytest.raises(ValueError, match="same nested structure"):
        wr.scan(lambda a, e: (a, a), wr.constant([1.0, 2.0]))


# ---- the RNNs against numpy ----

def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


def _numpy_lstm(x, lengths, kernel, bias, forget_bias=1.0):
    batch, time, _ = x.shape
    n = bias.shape[0] // 4
    c, h = np.zeros((batch, n)), np.zeros((batch, n))
    outs = np.zeros((batch, time, n))
    for t in range(time):
        z = np.concatenate([x[:, t], h], 1) @ kernel + bias
        i, j, f, o = np.split(z, 4, axis=1)
        nc = c * _sigmoid(f + forget_bias) + _sigmoid(i) * np.tanh(j)
        nh = np.tanh(nc) * _sigmoid(o)
        live = (t < lengths)[:, None]
        c, h = np.where(live, nc, c), np.where(live, nh, h)
        outs[:, t] = np.where(live, nh, 0.0)
    return outs, c, h


def test_dynamic_rnn_lstm_with_sequence_length_against_numpy():
    rng = np.random.RandomState(4)
    x = rng.randn(3, 5, 2).astype(np.float32)
    lengths = np.array([5, 0, 3], np.int32)
    kernel = (rng.randn(2 + 4, 16) * 0.5).astype(np.float32)
    bias = (rng.randn(16) * 0.1).astype(np.float32)
    xs = wr.placeholder(wr.float32, [None, None, 2])
    seq = wr.placeholder(wr.int32, [None])
    cell = wr.nn.rnn_cell.BasicLSTMCell(4)
    out, state = wr.nn.dynamic_rnn(cell, xs, sequence_length=seq, dtype=wr.float32)
    assert isinstance(state, wr.nn.rnn_cell.LSTMStateTuple)
    assert out.shape.as_list() == [None, None, 4]
    assert [v.op.name for v in cell.variables] == ["rnn/basic_lstm_cell/kernel", "rnn/basic_lstm_cell/bias"]
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        sess.run([cell.variables[0].assign(kernel), cell.variables[1].assign(bias)])
        o, c, h = sess.run([out, state.c, state.h], {xs: x, seq: lengths})
        # A new trip count runs the same graph.
        o2 = sess.run(out, {xs: x[:, :2], seq: [2, 1, 2]})
        # The loop stops after the longest sequence: the steps never written read as zeros.
        o3, h3 = sess.run([out, state.h], {xs: x, seq: [2, 0, 1]})
    want_o, want_c, want_h = _numpy_lstm(x, lengths, kernel, bias)
    np.testing.assert_allclose(o, want_o, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(c, want_c, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h, want_h, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(o2, _numpy_lstm(x[:, :2], np.array([2, 1, 2]), kernel, bias)[0],
                               rtol=1e-5, atol=1e-6)
    want_o3, _, want_h3 = _numpy_lstm(x, np.array([2, 0, 1]), kernel, bias)
    assert np.all(o3[:, 2:] == 0) and np.all(o3[1] == 0) and np.all(h3[1] == 0)
    np.testing.assert_allclose(o3, want_o3, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h3, want_h3, rtol=1e-5, atol=1e-6)


def test_dynamic_rnn_gru_gradient_against_finite_differences():
    def build(x):
        with wr.variable_scope("g", reuse=wr.AUTO_REUSE):
            cell = wr.nn.rnn_cell.GRUCell(3, kernel_initializer=wr.constant_initializer(0.3),
                                          dtype=wr.float64)
            out, state = wr.nn.dynamic_rnn(cell, x, sequence_length=[3, 1], dtype=wr.float64)
        return wr.reduce_sum(out * out) + wr.reduce_sum(wr.sin(state))
    check_gradient(build, np.random.RandomState(5).uniform(-1, 1, (2, 3, 2)))


def test_bidirectional_and_static_rnn_gradients_against_finite_differences():
    def build(x):
        with wr.variable_scope("b", reuse=wr.AUTO_REUSE):
            (fw, bw), _ = wr.nn.bidirectional_dynamic_rnn(
                wr.nn.rnn_cell.BasicRNNCell(2, dtype=wr.float64), wr.nn.rnn_cell.BasicRNNCell(2, dtype=wr.float64),
                x, sequence_length=[3, 2], dtype=wr.float64)
            outs, _ = wr.nn.static_rnn(wr.nn.rnn_cell.LSTMCell(2, use_peepholes=True, dtype=wr.float64),
                                       wr.unstack(x, axis=1), sequence_length=[1, 3], dtype=wr.float64)
        return wr.reduce_sum(fw * bw) + wr.reduce_sum(wr.stack(outs) ** 2)
    check_gradient(build, np.random.RandomState(6).uniform(-1, 1, (2, 3, 2)))


def test_reverse_sequence_helper():
    from weir.ops import rnn
    x = np.arange(2 * 4, dtype=np.float32).reshape(2, 4, 1)
    got = run(rnn._reverse_sequence(x, [3, 4], seq_axis=1, batch_axis=0))
    np.testing.assert_array_equal(got[..., 0], [[2, 1, 0, 3], [7, 6, 5, 4]])
    got = run(rnn._reverse_sequence(np.transpose(x, [1, 0, 2]), [1, 2], seq_axis=0, batch_axis=1))
    np.testing.assert_array_equal(got[..., 0].T, [[0, 1, 2, 3], [5, 4, 6, 7]])


def test_dropout_wrapper_drops_outputs_and_keeps_the_lstm_cell_state():
    cell = wr.nn.rnn_cell.DropoutWrapper(wr.nn.rnn_cell.BasicLSTMCell(50), output_keep_prob=0.5,
                                         state_keep_prob=0.5, seed=3)
    x = wr.ones([4, 6, 3])
    out, state = wr.nn.dynamic_rnn(cell, x, dtype=wr.float32)
    # The wrapper has no scope of its own: the variables are the wrapped cell's.
    assert sorted(v.op.name for v in wr.trainable_variables()) == ["rnn/basic_lstm_cell/bias",
                                                                   "rnn/basic_lstm_cell/kernel"]
    o = run(out)
    zero_fraction = np.mean(o == 0)
    assert 0.35 < zero_fraction < 0.65, zero_fraction
    with pytest.raises(ValueError, match="between 0 and 1"):
        wr.nn.rnn_cell.DropoutWrapper(wr.nn.rnn_cell.GRUCell(2), input_keep_prob=1.5)


def test_multi_rnn_cell_zero_state_and_errors():
    cell = wr.nn.rnn_cell.MultiRNNCell([wr.nn.rnn_cell.BasicLSTMCell(2), wr.nn.rnn_cell.GRUCell(3)])
    assert cell.state_size == (wr.nn.rnn_cell.LSTMStateTuple(2, 2), 3) and cell.output_size == 3
    z = cell.zero_state(5, wr.float32)
    assert z[0].c.shape.as_list() == [5, 2] and z[1].shape.as_list() == [5, 3]
    with pytest.raises(ValueError, match="at least one cell"):
        wr.nn.rnn_cell.MultiRNNCell([])
    with pytest.raises(ValueError, match="you must give a dtype"):
        wr.nn.dynamic_rnn(cell, wr.zeros([2, 3, 4]))
    with pytest.raises(ValueError, match="sequence_length must be a vector"):
        wr.nn.dynamic_rnn(cell, wr.zeros([2, 3, 4]), sequence_length=[[1]], dtype=wr.float32)
    with pytest.raises(ValueError, match="depth of inputs"):
        wr.nn.dynamic_rnn(cell, wr.placeholder(wr.float32, [2, 3, None]), dtype=wr.float32)
    with pytest.raises(wr.errors.InvalidArgumentError, match=r"condition \[3\] must have one element "
                                                             r"per row of t and e \[2,3\]"):
        wr.nn.dynamic_rnn(cell, wr.ones([2, 3, 4]), sequence_length=wr.constant([1, 2, 3]),
                          dtype=wr.float32)
    seq = wr.placeholder(wr.int32, [None])
    out, _ = wr.nn.dynamic_rnn(cell, wr.ones([2, 3, 4]), sequence_length=seq, dtype=wr.float32,
                               scope="fed")
    with pytest.raises(wr.errors.InvalidArgumentError, match="Expected shape for Tensor sequence_length"):
        run(out, {seq: [1, 2, 3]})


def test_cond_and_nested_loop_carry_tensor_arrays():
    pred = wr.placeholder(wr.bool, [])
    ta = wr.TensorArray(wr.float32, size=2)
    ta = wr.cond(pred, lambda: ta.write(0, [1.0]).write(1, [2.0]),
                 lambda: ta.write(0, [-1.0]).write(1, [-2.0]))
    assert isinstance(ta, wr.TensorArray) and ta.element_shape.as_list() == [1]

    def outer(i, acc):
        def inner(j, acc):
            return j + 1, acc.write(i * 3 + j, wr.cast(wr.stack([i, j]), wr.float32))
        _, acc = wr.while_loop(lambda j, _: j < 3, inner, [0, acc])
        return i + 1, acc
    _, grid = wr.while_loop(lambda i, _: i < 2, outer,
                            [0, wr.TensorArray(wr.float32, size=6, element_shape=[2])])
    assert grid.stack().shape.as_list() == [6, 2]
    with wr.Session() as sess:
        np.testing.assert_array_equal(sess.run(ta.stack(), {pred: True})[:, 0], [1.0, 2.0])
        np.testing.assert_array_equal(sess.run(ta.stack(), {pred: False})[:, 0], [-1.0, -2.0])
        np.testing.assert_array_equal(sess.run(grid.stack()), [[i, j] for i in range(2) for j in range(3)])


def test_dropout_wrapper_state_filter():
    rc = wr.nn.rnn_cell
    cell = rc.DropoutWrapper(rc.MultiRNNCell([rc.BasicLSTMCell(2), rc.GRUCell(2)]), state_keep_prob=0.5)
    state = cell.zero_state(3, wr.float32)
    assert cell._state_keep_filter(state) == [False, True, True]  # an LSTM's c is kept
    # A visitor that says False everywhere: no state dropout, the wrapped cell's numbers.
    inner = rc.GRUCell(4)
    quiet = rc.DropoutWrapper(inner, state_keep_prob=0.1, dropout_state_filter_visitor=lambda s: False)
    x = wr.constant(np.random.RandomState(7).randn(3, 5, 2).astype(np.float32))
    out_quiet, _ = wr.nn.dynamic_rnn(quiet, x, dtype=wr.float32, scope="q")
    out_plain, _ = wr.nn.dynamic_rnn(inner, x, dtype=wr.float32, scope="q")  # the same cell, built
    noisy, _ = wr.nn.dynamic_rnn(rc.DropoutWrapper(inner, state_keep_prob=0.1, seed=1), x, dtype=wr.float32,
                                 scope="q")
    a, b, c = run([out_quiet, out_plain, noisy])
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(c, b)


def test_the_names_tf1_scripts_use():
    import weir.compat.v1 as tf1
    assert tf1.nn is wr.nn and wr.compat.v1.nn.rnn_cell.LSTMCell is wr.nn.rnn_cell.LSTMCell
    for name in ("TensorArray", "map_fn", "scan", "foldl", "foldr"):
        assert callable(getattr(wr, name))
    for name in ("dynamic_rnn", "static_rnn", "bidirectional_dynamic_rnn", "static_bidirectional_rnn"):
        assert callable(getattr(wr.nn, name))
    for name in ("RNNCell", "BasicRNNCell", "BasicLSTMCell", "LSTMCell", "GRUCell", "MultiRNNCell",
                 "DropoutWrapper", "ResidualWrapper", "DeviceWrapper", "LSTMStateTuple"):
        assert isinstance(getattr(wr.nn.rnn_cell, name), type)


def test_dynamic_rnn_graph_round_trips_through_a_graph_def():
    g = wr.get_default_graph()
    x = wr.placeholder(wr.float32, [None, 4, 3], name="x")
    cell = wr.nn.rnn_cell.GRUCell(2, kernel_initializer=wr.constant_initializer(0.2))
    out, _ = wr.nn.dynamic_rnn(cell, x, sequence_length=[4, 2], dtype=wr.float32)
    gx = wr.gradients(wr.reduce_sum(out * out), x)[0]
    init = wr.global_variables_initializer()
    xv = np.random.RandomState(0).randn(2, 4, 3).astype(np.float32)
    want = run([out, gx], {x: xv})
    with wr.Graph().as_default() as imported:
        wr.import_graph_def(g.as_graph_def(), name="")
        with wr.Session(graph=imported) as sess:
            sess.run(init.name)
            got = sess.run([out.name, gx.name], {"x:0": xv})
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert np.abs(want[1]).sum() > 0


def test_a_full_reduction_of_an_unknown_rank_is_a_scalar():
    # A concat of an array without element shapes has an unknown rank; its full
    # sum is still a scalar (TF's rule), so it can be a loop variable.
    joined = wr.TensorArray(wr.float32, size=2, infer_shape=False).split(wr.ones([3]), [1, 2]).concat()
    assert joined.shape.ndims is None
    assert wr.reduce_sum(joined).shape.as_list() == [] and wr.reduce_max(joined).shape.as_list() == []
    assert wr.reduce_sum(joined, keepdims=True).shape.ndims is None
    total = wr.while_loop(lambda i, t: i < 3, lambda i, t: (i + 1, t + wr.reduce_sum(joined)), [0, 0.0])[1]
    assert run(total) == 9.0
