"""weir's array ops against numpy: values, static shapes, dtypes, getitem."""
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


X = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5) - 50.0


# Every basic-indexing form: ints (negative), slices with steps (negative,
# out of range), Ellipsis, newaxis, and their mixes.
GETITEM_CASES = [
    (1,), (-1,), (slice(None),), (slice(1, None),), (slice(None, -1),),
    (0, 2), (-1, -2, 3), (slice(None, None, -1),), (slice(None, None, 2),),
    (slice(3, 0, -1),), (1, slice(None, None, -2)), (slice(-100, 100),),
    (Ellipsis, 1), (Ellipsis, slice(None, 2)), (1, Ellipsis, 2), (None,), (None, 1),
    (Ellipsis, None), (slice(None), None, 1, Ellipsis), (0, 1, 2, 3), (0, 1, 2, slice(None, None, -3)),
    (slice(None), slice(None), slice(None), slice(4, None, -2)), (slice(5, 1, -1),),
    (1, None, slice(None), None, -1), (Ellipsis,), (slice(0, 0),),
]


@pytest.mark.parametrize("index", GETITEM_CASES, ids=[repr(c) for c in GETITEM_CASES])
def test_getitem_matches_numpy(index):
    t = wr.constant(X)
    y = t[index if len(index) != 1 else index[0]]
    expected = X[index]
    assert y.shape.as_list() == list(expected.shape)
    np.testing.assert_array_equal(run(y), expected)


def test_getitem_partial_shape_and_tensor_indices():
    x = wr.placeholder(wr.float32, [None, 4])
    i = wr.placeholder(wr.int32, [])
    rows = x[1:, ::-1]
    assert rows.shape.as_list() == [None, 4]
    col = x[:, i]
    assert col.shape.as_list() == [None]
    sl = x[i:i + 2]
    data = np.arange(20, dtype=np.float32).reshape(5, 4)
    out = run([rows, col, sl], {x: data, i: 2})
    np.testing.assert_array_equal(out[0], data[1:, ::-1])
    np.testing.assert_array_equal(out[1], data[:, 2])
    np.testing.assert_array_equal(out[2], data[2:4])


def test_getitem_errors():
    t = wr.constant(X)
    with pytest.raises(TypeError):
        t[1.5]
    with pytest.raises(TypeError):
        t[wr.constant(1.0)]
    with pytest.raises(ValueError):
        t[::0]
    # Out-of-range int index: caught by shape inference, naming the op.
    with pytest.raises((ValueError, wr.errors.InvalidArgumentError)) as e:
        t[5]
    assert "StridedSlice" in str(e.value) or "strided_slice" in str(e.value)


def test_strided_slice_masks():
    y = wr.strided_slice(X, [0, 1], [0, 3], [1, 1], begin_mask=1, end_mask=1, shrink_axis_mask=0)
    np.testing.assert_array_equal(run(y), X[:, 1:3])
    z = wr.strided_slice(X, [1, 0], [2, 0], [1, 1], shrink_axis_mask=1, ellipsis_mask=2)
    np.testing.assert_array_equal(run(z), X[1, ...])


def test_placeholder_shapes_and_feed():
    a = wr.placeholder(wr.float32)
    b = wr.placeholder(wr.int64, [None, 3], name="b")
    assert a.shape.ndims is None
    assert b.shape.as_list() == [None, 3]
    assert b.name == "b:0" and b.dtype == wr.int64
    big = np.array([[2**40, -2**62, 7]], dtype=np.int64)
    np.testing.assert_array_equal(run(b, {b: big}), big)


def test_zeros_ones_fill_like():
    z = wr.zeros([2, 3])
    o = wr.ones((4,), dtype=wr.int64)
    f = wr.fill([2, 2], 7.5)
    n = wr.placeholder(wr.int32, [None])
    dyn = wr.zeros(wr.shape(n), dtype=wr.int32)
    big = wr.zeros([40, 40])  # above the Const threshold: a Fill
    assert z.dtype == wr.float32 and z.shape.as_list() == [2, 3]
    assert o.dtype == wr.int64
    assert big.op.type == "Fill" and big.shape.as_list() == [40, 40]
    x = wr.constant([[1.5, -2.0, 3.0]])
    zl, ol, zl_int = wr.zeros_like(x), wr.ones_like(x), wr.zeros_like(x, dtype=wr.int32)
    r = run([z, o, f, dyn, big, zl, ol, zl_int], {n: [1, 2, 3]})
    np.testing.assert_array_equal(r[0], np.zeros((2, 3)))
    np.testing.assert_array_equal(r[1], np.ones(4, np.int64))
    np.testing.assert_array_equal(r[2], np.full((2, 2), 7.5))
    np.testing.assert_array_equal(r[3], np.zeros(3))
    assert r[4].shape == (40, 40) and not r[4].any()
    np.testing.assert_array_equal(r[5], np.zeros((1, 3)))
    np.testing.assert_array_equal(r[6], np.ones((1, 3)))
    assert r[7].dtype == np.int32


def test_reshape_transpose_expand_squeeze():
    x = wr.constant(X)
    r = wr.reshape(x, [6, -1])
    assert r.shape.as_list() == [6, 20]
    t = wr.transpose(x)
    assert t.shape.as_list() == [5, 4, 3, 2]
    tp = wr.transpose(x, [0, 2, 1, 3])
    e = wr.expand_dims(x, axis=-1)
    e_old = wr.expand_dims(x, dim=1)
    s = wr.squeeze(wr.constant(np.zeros((1, 3, 1, 2))), axis=[0])
    s_all = wr.squeeze(wr.constant(np.zeros((1, 3, 1, 2))))
    s_old = wr.squeeze(wr.constant(np.zeros((1, 3, 1, 2))), squeeze_dims=[2])
    assert e.shape.as_list() == [2, 3, 4, 5, 1]
    assert e_old.shape.as_list() == [2, 1, 3, 4, 5]
    assert s.shape.as_list() == [3, 1, 2] and s_all.shape.as_list() == [3, 2]
    assert s_old.shape.as_list() == [1, 3, 2]
    out = run([r, t, tp])
    np.testing.assert_array_equal(out[0], X.reshape(6, 20))
    np.testing.assert_array_equal(out[1], X.transpose())
    np.testing.assert_array_equal(out[2], X.transpose(0, 2, 1, 3))
    # Unknown rank: the reversed perm is computed at run time.
    p = wr.placeholder(wr.float32)
    np.testing.assert_array_equal(run(wr.transpose(p), {p: X}), X.transpose())
    with pytest.raises(ValueError):
        wr.expand_dims(x)


def test_reshape_bad_size_is_clear_error():
    with pytest.raises((ValueError, wr.errors.InvalidArgumentError)) as e:
        wr.reshape(wr.constant(X), [7, -1])
    assert "Reshape" in str(e.value)


def test_concat_stack_unstack_split():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = a + 10
    c = wr.concat([a, b], axis=1)
    c1 = wr.concat([a], 0)
    st = wr.stack([a, b], axis=1)
    us = wr.unstack(wr.constant(a), axis=1)
    sp = wr.split(wr.constant(X), 3, axis=1)
    spv = wr.split(wr.constant(X), [1, -1, 2], axis=3)
    assert c.shape.as_list() == [2, 6] and st.shape.as_list() == [2, 2, 3]
    assert len(us) == 3 and us[0].shape.as_list() == [2]
    assert [t.shape.as_list() for t in spv] == [[2, 3, 4, 1], [2, 3, 4, 2], [2, 3, 4, 2]]
    out = run([c, c1, st, us, sp, spv])
    np.testing.assert_array_equal(out[0], np.concatenate([a, b], 1))
    np.testing.assert_array_equal(out[1], a)
    np.testing.assert_array_equal(out[2], np.stack([a, b], 1))
    for k in range(3):
        np.testing.assert_array_equal(out[3][k], a[:, k])
        np.testing.assert_array_equal(out[4][k], X[:, k:k + 1])
    np.testing.assert_array_equal(out[5][1], X[..., 1:3])
    with pytest.raises(ValueError):
        wr.unstack(wr.placeholder(wr.float32, [None, 2]))


def test_shape_size_rank():
    x = wr.placeholder(wr.float32, [None, 3])
    s, n, r = wr.shape(x), wr.size(x), wr.rank(x)
    s64 = wr.shape(x, out_type=wr.int64)
    static = wr.shape(wr.constant(X))
    assert static.op.type == "Const" and s64.dtype == wr.int64
    sn = wr.shape_n([x, wr.constant(X)])
    out = run([s, n, r, s64, static, sn], {x: np.zeros((4, 3))})
    np.testing.assert_array_equal(out[0], [4, 3])
    assert out[1] == 12 and out[2] == 2
    assert out[3].dtype == np.int64
    np.testing.assert_array_equal(out[4], [2, 3, 4, 5])
    np.testing.assert_array_equal(out[5][1], [2, 3, 4, 5])


def test_slice_gather_gather_nd_tile_pad():
    params = np.arange(12, dtype=np.int64).reshape(4, 3) * (2**33)
    sl = wr.slice(params, [1, 0], [2, -1])
    g = wr.gather(params, [3, 0, 3])
    g1 = wr.gather(params, [[2], [1]], axis=1)
    gnd = wr.gather_nd(params, [[0, 1], [3, 2]])
    ti = wr.tile(wr.constant([[1, 2]]), [2, 3])
    pd = wr.pad(wr.constant(params), [[1, 0], [0, 2]])
    pv = wr.pad(wr.constant([[1., 2.], [3., 4.]]), [[1, 1], [1, 1]], constant_values=9.)
    pr = wr.pad(wr.constant([[1., 2., 3.], [4., 5., 6.]]), [[1, 1], [2, 2]], "REFLECT")
    ps = wr.pad(wr.constant([[1., 2., 3.], [4., 5., 6.]]), [[1, 1], [2, 2]], mode="symmetric")
    assert g1.shape.as_list() == [4, 2, 1]
    out = run([sl, g, g1, gnd, ti, pd, pv, pr, ps])
    np.testing.assert_array_equal(out[0], params[1:3])
    np.testing.assert_array_equal(out[1], params[[3, 0, 3]])
    np.testing.assert_array_equal(out[2], params[:, [[2], [1]]])
    np.testing.assert_array_equal(out[3], [params[0, 1], params[3, 2]])
    np.testing.assert_array_equal(out[4], np.tile([[1, 2]], [2, 3]))
    np.testing.assert_array_equal(out[5], np.pad(params, [[1, 0], [0, 2]]))
    np.testing.assert_array_equal(out[6], np.pad([[1., 2.], [3., 4.]], 1, constant_values=9.))
    a = np.array([[1., 2., 3.], [4., 5., 6.]])
    np.testing.assert_array_equal(out[7], np.pad(a, [[1, 1], [2, 2]], "reflect"))
    np.testing.assert_array_equal(out[8], np.pad(a, [[1, 1], [2, 2]], "symmetric"))
    with pytest.raises(ValueError):
        wr.pad(wr.constant(a), [[0, 0], [0, 0]], mode="WRAP")


def test_gather_out_of_range_is_runtime_error():
    with pytest.raises(wr.errors.InvalidArgumentError) as e:
        run(wr.gather(wr.constant([1., 2.]), wr.constant([0, 5]), name="bad_gather"))
    assert "bad_gather" in str(e.value)


def test_one_hot_where_select_boolean_mask():
    oh = wr.one_hot([0, 2, -1, 5], 3)
    oh_ax0 = wr.one_hot([1, 0], 3, on_value=5, off_value=-1, axis=0)
    assert oh.dtype == wr.float32 and oh.shape.as_list() == [4, 3]
    assert oh_ax0.dtype == wr.int32 and oh_ax0.shape.as_list() == [3, 2]
    cond = np.array([[True, False, True], [False, False, True]])
    w1 = wr.where(cond)
    w3 = wr.where(cond, np.ones((2, 3)), np.zeros((2, 3)))
    wrow = wr.where([True, False], np.ones((2, 3)), np.zeros((2, 3)))
    w2 = wr.where_v2(cond, 1.0, np.zeros((1, 3)))
    tensor = np.arange(12).reshape(2, 3, 2)
    bm = wr.boolean_mask(tensor, cond)
    bm_ax = wr.boolean_mask(tensor, [True, False], axis=2)
    assert w1.dtype == wr.int64
    assert bm.shape.as_list() == [None, 2]
    out = run([oh, oh_ax0, w1, w3, wrow, w2, bm, bm_ax])
    np.testing.assert_array_equal(out[0], np.array([[1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]]))
    np.testing.assert_array_equal(out[1], [[-1, 5], [5, -1], [-1, -1]])
    np.testing.assert_array_equal(out[2], np.argwhere(cond))
    np.testing.assert_array_equal(out[3], cond.astype(float))
    np.testing.assert_array_equal(out[4], [[1, 1, 1], [0, 0, 0]])
    np.testing.assert_array_equal(out[5], cond.astype(float))
    np.testing.assert_array_equal(out[6], tensor[cond])
    np.testing.assert_array_equal(out[7], tensor[:, :, [True, False]])
    with pytest.raises(ValueError):
        wr.where(cond, x=1.0)


def test_identity_stop_gradient_cast():
    values = np.array([1.7, -1.7, 2.5, np.nan], dtype=np.float32)
    x = wr.constant(values)
    ci = wr.cast(x, wr.int32)
    cb = wr.cast(x, wr.bool)
    assert wr.cast(x, wr.float32) is x
    assert wr.to_float(wr.constant([1])).dtype == wr.float32
    assert wr.to_int64(x).dtype == wr.int64 and wr.to_double(x).dtype == wr.float64
    assert wr.to_int32(x).dtype == wr.int32
    sat = wr.saturate_cast(wr.constant([300.0, -5.0, 7.9]), wr.uint8)
    out = run([wr.identity(x), wr.stop_gradient(x), ci, cb, sat])
    np.testing.assert_array_equal(out[0], values)
    np.testing.assert_array_equal(out[1], values)
    np.testing.assert_array_equal(out[2], [1, -1, 2, 0])
    np.testing.assert_array_equal(out[3], [True, True, True, True])
    np.testing.assert_array_equal(out[4], [255, 0, 7])
    # int64 values survive exactly through a cast to int64 and back.
    big = wr.constant(np.array([2**62 + 1], dtype=np.int64))
    assert run(wr.cast(wr.cast(big, wr.float64), wr.int64))[0] == 2**62  # float64 rounds
    assert run(wr.identity(big))[0] == 2**62 + 1


def test_reverse_sequence_mask_eye_diag_meshgrid_unique():
    rv = wr.reverse(X, [1, -1])
    sm = wr.sequence_mask([1, 3, 0], 4)
    sm_default = wr.sequence_mask(wr.constant([[2], [1]]), dtype=wr.float32)
    ey = wr.eye(3, 4, dtype=wr.int32)
    ey_b = wr.eye(2, batch_shape=[3])
    n = wr.placeholder(wr.int32, [])
    ey_dyn = wr.eye(n)
    md = wr.matrix_diag([[1., 2.], [3., 4.]])
    mdp = wr.matrix_diag_part(np.arange(12.).reshape(3, 4))
    mx, my = wr.meshgrid([1, 2, 3], [4, 5])
    ix, iy = wr.meshgrid([1, 2, 3], [4, 5], indexing="ij")
    y, idx = wr.unique([4, 1, 4, 2, 1])
    ip = wr.invert_permutation([2, 0, 3, 1])
    bt = wr.broadcast_to([1, 2, 3], [2, 3])
    out = run([rv, sm, sm_default, ey, ey_b, ey_dyn, md, mdp, mx, my, ix, iy, y, idx, ip, bt], {n: 3})
    np.testing.assert_array_equal(out[0], X[:, ::-1, :, ::-1])
    np.testing.assert_array_equal(out[1], np.arange(4)[None, :] < np.array([1, 3, 0])[:, None])
    np.testing.assert_array_equal(out[2], [[[1., 1.]], [[1., 0.]]])
    np.testing.assert_array_equal(out[3], np.eye(3, 4, dtype=np.int32))
    np.testing.assert_array_equal(out[4], np.broadcast_to(np.eye(2), (3, 2, 2)))
    np.testing.assert_array_equal(out[5], np.eye(3))
    np.testing.assert_array_equal(out[6], [np.diag([1., 2.]), np.diag([3., 4.])])
    np.testing.assert_array_equal(out[7], np.diag(np.arange(12.).reshape(3, 4)))
    nx, ny = np.meshgrid([1, 2, 3], [4, 5])
    np.testing.assert_array_equal(out[8], nx)
    np.testing.assert_array_equal(out[9], ny)
    nx, ny = np.meshgrid([1, 2, 3], [4, 5], indexing="ij")
    np.testing.assert_array_equal(out[10], nx)
    np.testing.assert_array_equal(out[11], ny)
    np.testing.assert_array_equal(out[12], [4, 1, 2])
    np.testing.assert_array_equal(out[13], [0, 1, 0, 2, 1])
    np.testing.assert_array_equal(out[14], [1, 3, 0, 2])
    np.testing.assert_array_equal(out[15], [[1, 2, 3], [1, 2, 3]])


def test_broadcast_static_shape():
    s = wr.broadcast_static_shape(wr.TensorShape([None, 1, 3]), wr.TensorShape([4, 1]))
    assert s.as_list() == [None, 4, 3]
    with pytest.raises(ValueError):
        wr.broadcast_static_shape(wr.TensorShape([2]), wr.TensorShape([3]))


def test_getitem_index_dtypes():
    t = wr.constant(X)
    i64 = wr.constant(1, dtype=wr.int64)
    cases = [
        (t[i64], X[1]), (t[np.int64(1), ::np.int32(-1)], X[1, ::-1]),
        (t[:2**31 + 5], X[:2**31 + 5]),        # a bound past int32: int64 indices
        (t[:, i64:], X[:, 1:]), (t[()], X),
    ]
    out = run([c for c, _ in cases])
    for got, (tensor, want) in zip(out, cases):
        np.testing.assert_array_equal(got, want)
    assert cases[0][0].shape.as_list() == [3, 4, 5]
    assert cases[3][0].shape.as_list() == [2, None, 4, 5]  # a run-time begin: size unknown, as TF
    with pytest.raises(TypeError):
        t[True]
    with pytest.raises(TypeError):
        t[wr.constant([0, 1])]   # gather-style indexing is not basic indexing


def test_placeholder_with_default_is_its_input_unless_fed():
    with wr.Graph().as_default():
        x = wr.placeholder_with_default([1.0, 2.0], shape=[None])
        assert x.shape.as_list() == [None]
        y = x * 3.0
        with wr.Session() as sess:
            np.testing.assert_allclose(sess.run(y), [3.0, 6.0])
            np.testing.assert_allclose(sess.run(y, {x: [1.0, 1.0, 1.0]}), [3.0, 3.0, 3.0])
        with pytest.raises(wr.errors.InvalidArgumentError, match="not compatible"):
            wr.placeholder_with_default([1.0, 2.0], shape=[3])
