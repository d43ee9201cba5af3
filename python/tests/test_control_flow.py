"""cond, while_loop, case, group/tuple/with_dependencies, Assert and the
check/clip ops: values against Python/numpy, gradients against finite
differences."""
import collections

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


def gradients(y, xs):
    if hasattr(wr, "gradients"):
        return wr.gradients(y, xs)
    g = wr.get_default_graph()
    eps = g._c_graph.add_gradients([y._as_endpoint()], [x._as_endpoint() for x in xs], [None],
                                   "gradients")
    return [None if e is None else g._tensor_for(tuple(e)) for e in eps]


def check_gradient(build, x0, atol=1e-6):
    """d sum(build(x)) / dx against central differences, in float64."""
    x = wr.placeholder(wr.float64, list(np.shape(x0)))
    y = wr.reduce_sum(build(x))
    (dx,) = gradients(y, [x])
    assert dx is not None
    with wr.Session() as sess:
        analytic = sess.run(dx, {x: x0})
        numeric = np.zeros_like(x0)
        h = 1e-6
        for i in np.ndindex(*np.shape(x0)):
            xp, xm = x0.copy(), x0.copy()
            xp[i] += h
            xm[i] -= h
            numeric[i] = (sess.run(y, {x: xp}) - sess.run(y, {x: xm})) / (2 * h)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=atol)


def test_cond_values_and_lazy_branches():
    p = wr.placeholder(wr.bool, [])
    x = wr.constant(3.0)
    r = wr.cond(p, lambda: x * 2.0, lambda: -x)
    # Only the taken branch runs: the false branch would fail its Assert.
    guarded = wr.cond(p, lambda: wr.identity(x),
                      lambda: wr.with_dependencies([wr.Assert(False, ["false branch ran"])], x))
    assert r.dtype == wr.float32
    assert r.op.name.startswith("cond")
    assert run(r, {p: True}) == 6.0 and run(r, {p: False}) == -3.0
    assert run(guarded, {p: True}) == 3.0
    with pytest.raises(wr.errors.InvalidArgumentError) as e:
        run(guarded, {p: False})
    assert "false branch ran" in str(e.value)


def test_cond_nested_structures_and_names():
    p = wr.placeholder(wr.bool, [])
    out = wr.cond(p, lambda: {"a": wr.constant(1), "b": (wr.constant(2.0), 3.0)},
                  lambda: {"a": wr.constant(10), "b": (wr.constant(20.0), 30.0)}, name="pick")
    single = wr.cond(p, true_fn=lambda: [wr.constant(1)], false_fn=lambda: [wr.constant(2)])
    strict = wr.cond(p, lambda: [wr.constant(1)], lambda: [wr.constant(2)], strict=True)
    legacy = wr.cond(p, fn1=lambda: wr.constant(5), fn2=lambda: wr.constant(6))
    assert isinstance(single, wr.Tensor) and isinstance(strict, list)
    assert out["a"].op.name.startswith("pick")
    got = run([out, single, strict, legacy], {p: False})
    assert got[0]["a"] == 10 and got[0]["b"][0] == 20.0 and got[0]["b"][1] == 30.0
    assert got[1] == 2 and got[2] == [2] and got[3] == 6
    with pytest.raises(TypeError):
        wr.cond(True, lambda: 1, lambda: 2)
    with pytest.raises(ValueError):
        wr.cond(p, lambda: (wr.constant(1), wr.constant(2)), lambda: wr.constant(1))


def test_cond_gradient():
    p = wr.placeholder(wr.bool, [])

    def build(x):
        return wr.cond(p, lambda: wr.sin(x) * x, lambda: x * x * x)
    for value in (True, False):
        with wr.Graph().as_default():
            p = wr.placeholder(wr.bool, [])
            x = wr.placeholder(wr.float64, [3])
            y = wr.reduce_sum(build(x))
            (dx,) = gradients(y, [x])
            x0 = np.array([0.3, -1.2, 2.0])
            want = np.sin(x0) + x0 * np.cos(x0) if value else 3 * x0 ** 2
            np.testing.assert_allclose(run(dx, {p: value, x: x0}), want, rtol=1e-10)


def test_while_loop_values():
    i, s = wr.while_loop(lambda i, s: i < 10, lambda i, s: (i + 1, s + i), [0, 0])
    single = wr.while_loop(lambda v: v < 100.0, lambda v: v * 2.0, wr.constant(1.0))
    listed = wr.while_loop(lambda v: v < 100.0, lambda v: [v * 3.0], [wr.constant(1.0)])
    same = wr.while_loop(lambda v: v < 100.0, lambda v: [v * 3.0], [wr.constant(1.0)],
                         return_same_structure=True)
    assert isinstance(single, wr.Tensor) and isinstance(listed, wr.Tensor) and isinstance(same, list)
    assert i.op.name.startswith("while")
    out = run([i, s, single, listed, same])
    assert out[0] == 10 and out[1] == sum(range(10))
    assert out[2] == 128.0 and out[3] == 243.0 and out[4] == [243.0]


def test_while_loop_captured_tensor_maximum_iterations_and_namedtuple():
    step = wr.placeholder(wr.float32, [])
    State = collections.namedtuple("State", ["n", "acc"])
    final = wr.while_loop(lambda st: st.n < 5, lambda st: State(st.n + 1, st.acc + step),
                          [State(wr.constant(0), wr.constant(0.0))])
    capped = wr.while_loop(lambda k: k < 1000, lambda k: k + 1, [0], maximum_iterations=7)
    assert isinstance(final, State)
    out = run([final, capped], {step: 1.5})
    assert out[0].n == 5 and out[0].acc == 7.5 and out[1] == 7


def test_nested_loop_and_cond_in_loop():
    def outer_body(i, total):
        inner = wr.while_loop(lambda j, t: j < i, lambda j, t: (j + 1, t + j), [0, 0])[1]
        return i + 1, total + inner
    _, total = wr.while_loop(lambda i, t: i < 5, outer_body, [0, 0])

    def body(k, acc):
        return k + 1, wr.cond(wr.equal(k % 2, 0), lambda: acc + k, lambda: acc - k)
    _, alt = wr.while_loop(lambda k, acc: k < 6, body, [0, 0])
    out = run([total, alt])
    assert out[0] == sum(sum(range(i)) for i in range(5))
    assert out[1] == sum(k if k % 2 == 0 else -k for k in range(6))


def test_while_loop_shape_invariants():
    x0 = wr.constant(np.ones((1, 2), np.float32))
    _, grown = wr.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, wr.concat([x, x], 0)),
                             [0, x0], shape_invariants=[wr.TensorShape([]), wr.TensorShape([None, 2])])
    assert grown.shape.as_list() == [None, 2]
    assert run(grown).shape == (8, 2)
    with pytest.raises((ValueError, wr.errors.InvalidArgumentError)):
        wr.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, wr.concat([x, x], 0)), [0, x0])


def test_while_loop_errors():
    with pytest.raises(TypeError):
        wr.while_loop(lambda v: v, lambda v: v + 1, [1])  # cond not a bool
    with pytest.raises(ValueError):
        wr.while_loop(lambda a, b: a < 3, lambda a, b: a + 1, [0, 0])
    with pytest.raises(TypeError):
        wr.while_loop(None, lambda v: v, [0])


def test_while_loop_gradient_with_captured_tensor():
    def build(x):
        # x^(2^3) through a loop that also multiplies by a captured constant.
        c = wr.constant(np.array([1.0, 0.5, 2.0]))
        return wr.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * v * c), [0, x])[1]
    check_gradient(build, np.array([0.9, 1.1, -0.7]), atol=1e-5)


def test_case():
    x = wr.placeholder(wr.int32, [])
    r = wr.case([(wr.less(x, 0), lambda: wr.constant(-1)), (wr.equal(x, 0), lambda: wr.constant(0))],
                default=lambda: wr.constant(1))
    no_default = wr.case([(wr.less(x, 0), lambda: wr.constant(-1)), (wr.greater_equal(x, 0),
                                                                     lambda: wr.constant(7))])
    excl = wr.case([(wr.less(x, 5), lambda: wr.constant(1)), (wr.less(x, 10), lambda: wr.constant(2))],
                   default=lambda: wr.constant(3), exclusive=True)
    assert [run(r, {x: v}) for v in (-5, 0, 9)] == [-1, 0, 1]
    assert run(no_default, {x: 3}) == 7 and run(no_default, {x: -3}) == -1
    assert run(excl, {x: 20}) == 3 and run(excl, {x: 7}) == 2
    with pytest.raises(wr.errors.InvalidArgumentError):
        run(excl, {x: 1})


def test_group_tuple_with_dependencies_no_op():
    v = wr.placeholder(wr.float32, [])
    a = wr.Assert(wr.greater(v, 0.0), ["v must be positive, got", v])
    g = wr.group(a, [wr.no_op()])
    assert isinstance(g, wr.Operation) and g.type == "NoOp"
    assert a.op if False else True
    guarded = wr.with_dependencies([a], v * 2.0)
    t1, t2 = wr.tuple([v + 1.0, v - 1.0], control_inputs=[a])
    assert run([guarded, t1, t2], {v: 2.0}) == [4.0, 3.0, 1.0]
    run(g, {v: 1.0})
    with pytest.raises(wr.errors.InvalidArgumentError) as e:
        run(g, {v: -3.0})
    assert "v must be positive" in str(e.value) and "-3" in str(e.value)
    with pytest.raises(wr.errors.InvalidArgumentError):
        run(t1, {v: -1.0})


def test_check_ops():
    x = wr.placeholder(wr.float32, [None])
    checks = {
        "equal": wr.assert_equal(x, x * 1.0),
        "positive": wr.assert_positive(x, message="needs positive"),
        "non_negative": wr.assert_non_negative(x),
        "less": wr.assert_less(x, 10.0),
    }
    with wr.Session() as sess:
        sess.run(list(checks.values()), {x: [1.0, 2.0]})
        with pytest.raises(wr.errors.InvalidArgumentError) as e:
            sess.run(checks["positive"], {x: [1.0, 0.0]})
        assert "needs positive" in str(e.value)
        sess.run(checks["non_negative"], {x: [1.0, 0.0]})
        with pytest.raises(wr.errors.InvalidArgumentError):
            sess.run(checks["less"], {x: [11.0]})
    with pytest.raises(ValueError):
        wr.assert_rank(wr.constant([1, 2]), 2)
    dyn = wr.placeholder(wr.float32)
    rank_check = wr.assert_rank(dyn, 2)
    run(rank_check, {dyn: np.zeros((2, 2))})
    with pytest.raises(wr.errors.InvalidArgumentError):
        run(rank_check, {dyn: np.zeros(3)})
    with pytest.raises(TypeError):
        wr.assert_type(wr.constant(1), wr.float32)


def test_clip_ops():
    t = np.array([[-3.0, 0.5], [2.0, 4.0]], dtype=np.float32)
    cv = wr.clip_by_value(t, -1.0, 2.5)
    cn = wr.clip_by_norm(t, 2.0)
    cn_axes = wr.clip_by_norm(t, 2.0, axes=[1])
    cn_zero = wr.clip_by_norm(np.zeros(3, np.float32), 1.0)
    u = np.array([3.0, 4.0], dtype=np.float32)
    gn = wr.global_norm([t, None, u])
    (c1, none, c2), norm = wr.clip_by_global_norm([t, None, u], 5.0)
    (s1,), _ = wr.clip_by_global_norm([u], 100.0)
    assert none is None
    out = run([cv, cn, cn_axes, cn_zero, gn, c1, c2, norm, s1])
    np.testing.assert_allclose(out[0], np.clip(t, -1.0, 2.5))
    np.testing.assert_allclose(out[1], t * 2.0 / np.linalg.norm(t), rtol=1e-6)
    rows = np.linalg.norm(t, axis=1, keepdims=True)
    np.testing.assert_allclose(out[2], t * 2.0 / np.maximum(rows, 2.0), rtol=1e-6)
    np.testing.assert_array_equal(out[3], np.zeros(3))
    full = np.sqrt((t ** 2).sum() + (u ** 2).sum())
    np.testing.assert_allclose(out[4], full, rtol=1e-6)
    np.testing.assert_allclose(out[5], t * 5.0 / full, rtol=1e-6)
    np.testing.assert_allclose(out[6], u * 5.0 / full, rtol=1e-6)
    np.testing.assert_allclose(out[7], full, rtol=1e-6)
    np.testing.assert_allclose(out[8], u)  # below the norm: unchanged


def test_clip_gradients():
    check_gradient(lambda x: wr.clip_by_norm(x, 1.0) * wr.constant(np.array([1.0, 2.0, 3.0])),
                   np.array([0.5, -2.0, 1.5]))
    check_gradient(lambda x: wr.clip_by_value(x, -1.0, 1.0) * x, np.array([0.5, -2.0, 1.5]))


def test_math_gradients_against_finite_differences():
    x0 = np.array([[0.3, -0.8, 1.2], [0.9, 0.1, -1.5]])
    check_gradient(lambda x: wr.reduce_logsumexp(x, axis=1), x0)
    check_gradient(lambda x: x[:, ::-1][1:, 1] * x[0, :2], x0)
    check_gradient(lambda x: wr.matmul(x, wr.transpose(x)) / (1.0 + x * x)[:, :2], x0)
    check_gradient(lambda x: wr.reduce_max(x, axis=0) + wr.tanh(x) ** 2, x0)
    check_gradient(lambda x: wr.cumsum(x, axis=1) * x, x0)


def test_cond_with_operation_branches():
    p = wr.placeholder(wr.bool, [])
    v = wr.placeholder(wr.float32, [])
    r = wr.cond(p, lambda: wr.Assert(wr.greater(v, 0.0), ["true branch check"]), lambda: wr.no_op())
    run(r, {p: False, v: -1.0})   # the Assert is in the untaken branch
    run(r, {p: True, v: 1.0})
    with pytest.raises(wr.errors.InvalidArgumentError) as e:
        run(r, {p: True, v: -1.0})
    assert "true branch check" in str(e.value)


def test_cond_nodes_are_named_as_tensorflow_names_them():
    x = wr.placeholder(wr.float32, [3])
    first = wr.cond(wr.constant(True), lambda: x + 1, lambda: x - 1)
    with wr.name_scope("outer"):
        second = wr.cond(wr.constant(True), lambda: x + 1, lambda: x - 1)
    assert first.name == "cond/Merge:0"
    assert second.name == "outer/cond/Merge:0"
    names = {op.name for op in wr.get_default_graph().get_operations()}
    assert {"cond/Switch", "cond/pred_id", "cond/add", "cond/sub"} <= names, sorted(names)


def test_while_loop_weight_gradient_is_summed_by_one_fused_product():
    # h <- tanh(h w), 4 times: w's gradient is summed over the iterations,
    # each h^T dy going straight into the sum (one _MatMulAccumulate per
    # iteration, graph/fuse_ops.h). Against backpropagation in numpy.
    h0 = np.array([[0.3, -0.2, 0.5], [0.1, 0.4, -0.6]], np.float32)
    w0 = np.array([[0.5, -0.3, 0.2], [0.1, 0.7, -0.4], [0.3, 0.2, 0.6]], np.float32)
    h = wr.placeholder(wr.float32, [2, 3])
    w = wr.placeholder(wr.float32, [3, 3])
    out = wr.while_loop(lambda i, v: i < 4, lambda i, v: (i + 1, wr.tanh(wr.matmul(v, w))),
                        [0, h])[1]
    dh, dw = gradients(wr.reduce_sum(out), [h, w])
    options = wr.RunOptions(trace_level=wr.RunOptions.FULL_TRACE)
    metadata = wr.RunMetadata()
    with wr.Session() as sess:
        got_dh, got_dw = sess.run([dh, dw], {h: h0, w: w0}, options=options,
                                  run_metadata=metadata)
    ops = [n.op for d in metadata.step_stats.dev_stats for n in d.node_stats]
    assert ops.count("_MatMulAccumulate") == 4
    assert "MatMul" in ops  # h's gradient, dy w^T, is not a sum
    hs = [h0.astype(np.float64)]
    for _ in range(4):
        hs.append(np.tanh(hs[-1] @ w0))
    g, want_dw = np.ones((2, 3)), np.zeros((3, 3))
    for t in range(4, 0, -1):
        dy = g * (1 - hs[t] ** 2)
        want_dw += hs[t - 1].T @ dy
        g = dy @ w0.T
    np.testing.assert_allclose(got_dw, want_dw, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_dh, g, rtol=1e-5, atol=1e-6)
