"""SparseTensor ops, IndexedSlices gradients and sparse optimizer updates,
against TensorFlow 2.21 run in a subprocess (the same TF1-style program built
with tf.compat.v1 there and with weir here, fed the same inputs), plus
feeding/fetching SparseTensorValues and hostile sparse inputs."""
import os
import subprocess
import textwrap

import numpy as np
import pytest

import weir as wr

from peers import PEERS_PYTHON  # noqa: E402

needs_tf = pytest.mark.skipif(not os.path.exists(PEERS_PYTHON),
                              reason="TensorFlow 2.21 not installed")


@pytest.fixture(autouse=True)
def fresh_graph():
    wr.reset_default_graph()
    yield


def run(fetches, feed_dict=None):
    with wr.Session() as sess:
        return sess.run(fetches, feed_dict)


def run_tf(tmp_path, body, inputs):
    """Runs `body` (defines `result`, a dict of arrays) with TF 2.21's v1 API
    as `tf`, `inputs` loaded as `args`; returns the result."""
    np.savez(tmp_path / "in.npz", **inputs)
    script = textwrap.dedent("""
        import os, sys
        os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
        import numpy as np
        import tensorflow as tf2
        tf = tf2.compat.v1
        tf.disable_eager_execution()
        args = dict(np.load(sys.argv[1]))
        """) + textwrap.dedent(body) + textwrap.dedent("""
        np.savez(sys.argv[2], **result)
        """)
    proc = subprocess.run([PEERS_PYTHON, "-c", script, str(tmp_path / "in.npz"),
                           str(tmp_path / "out.npz")], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return dict(np.load(tmp_path / "out.npz", allow_pickle=True))


# --- values and gradients of every op on random sparse inputs ---

_PROGRAM = """
def build(tf, vals, vals2, b, c, dense, dvec, data):
    idx = np.array([[0, 1], [0, 3], [1, 0], [2, 2], [2, 3]], np.int64)
    idx2 = np.array([[0, 0], [0, 3], [2, 1], [2, 2]], np.int64)
    sp = tf.SparseTensor(idx, vals, [3, 4])
    sp2 = tf.SparseTensor(idx2, vals2, [3, 4])
    to_dense = tf.sparse_tensor_to_dense
    out = {}
    out["to_dense"] = to_dense(sp)
    out["s2d"] = tf.sparse_to_dense(idx, [3, 4], vals, default_value=0.5)
    out["matmul"] = tf.sparse_tensor_dense_matmul(sp, b)
    out["matmul_adj_a"] = tf.sparse_tensor_dense_matmul(sp, c, adjoint_a=True)
    out["matmul_adj_b"] = tf.sparse_tensor_dense_matmul(sp, tf.transpose(b), adjoint_b=True)
    out["reduce_1"] = tf.sparse_reduce_sum(sp, 1)
    out["reduce_all"] = tf.sparse_reduce_sum(sp)
    out["reduce_keep"] = tf.sparse_reduce_sum(sp, 0, keepdims=True)
    # No gradient in TF (none registered): its value only.
    out["reduce_sparse"] = tf.stop_gradient(to_dense(tf.sparse_reduce_sum_sparse(sp, 1)))
    out["softmax"] = to_dense(tf.sparse_softmax(sp))
    out["add"] = to_dense(tf.sparse_add(sp, sp2))
    out["add_dense"] = tf.sparse_add(sp, dense)
    out["mul"] = to_dense(sp * dvec)
    out["div"] = to_dense(sp / dvec)
    out["concat"] = to_dense(tf.sparse_concat(1, [sp, sp2]))
    out["concat0"] = to_dense(tf.sparse_concat(0, [sp, sp2]))
    rev = tf.SparseTensor(idx[::-1].copy(), tf.reverse(vals, [0]), [3, 4])
    out["reorder"] = to_dense(tf.sparse_reorder(rev))
    out["reorder_values"] = tf.sparse_reorder(rev).values
    out["reshape"] = to_dense(tf.sparse_reshape(sp, [6, 2]))
    out["reshape_infer"] = to_dense(tf.sparse_reshape(sp, [-1, 3, 2]))
    out["slice"] = to_dense(tf.sparse_slice(sp, [0, 1], [2, 9]))
    holes = tf.SparseTensor(np.array([[0, 1], [2, 0], [2, 2]], np.int64), vals[:3], [5, 3])
    filled, empty = tf.sparse_fill_empty_rows(holes, 7.0)
    out["fill"] = to_dense(filled)
    out["fill_empty"] = tf.cast(empty, tf.float64)
    out["seg_sum"] = tf.sparse_segment_sum(data, [0, 2, 1, 2], [0, 0, 1, 3])
    out["seg_mean"] = tf.sparse_segment_mean(data, [0, 2, 1, 2], [0, 0, 1, 3])
    out["seg_sqrtn"] = tf.sparse_segment_sqrt_n(data, [3, 2, 2], [0, 0, 2])
    out["seg_sum_n"] = tf.sparse_segment_sum(data, [0, 2, 1], [0, 0, 1], num_segments=4)
    out["seg_mean_n"] = tf.sparse_segment_mean(data, [0, 2, 1], [1, 1, 2], num_segments=4)
    out["seg_sqrtn_n"] = tf.sparse_segment_sqrt_n(data, [0, 2, 1], [1, 1, 2], num_segments=4)
    out["retain"] = to_dense(tf.sparse_retain(sp, [True, False, True, False, True]))
    ids = tf.SparseTensor(np.array([[0, 0], [0, 1], [1, 0], [2, 0]], np.int64),
                          np.array([1, 3, 0, 3], np.int64), [3, 2])
    out["indicator"] = tf.cast(tf.sparse_to_indicator(ids, 5), tf.float64)
    out["expand"] = to_dense(tf.sparse.expand_dims(sp, 1))
    out["transpose"] = to_dense(tf.sparse.transpose(sp))
    out["dense_sparse_matmul"] = tf.sparse.sparse_dense_matmul(tf.transpose(c), sp)
    out["from_dense"] = to_dense(tf.sparse.from_dense(dense * tf.cast(dense > 0, tf.float64)))
    w = {k: tf.reshape(tf.cos(tf.cast(tf.range(tf.size(v)), tf.float64) + 1.0), tf.shape(v))
         for k, v in out.items()}
    loss = tf.add_n([tf.reduce_sum(out[k] * w[k]) for k in sorted(out)])
    return out, loss
"""

_RNG = np.random.RandomState(16)
_INPUTS = dict(
    vals=_RNG.randn(5), vals2=_RNG.randn(4), b=_RNG.randn(4, 2), c=_RNG.randn(3, 2),
    dense=_RNG.randn(3, 4), dvec=_RNG.rand(4) + 0.5, data=_RNG.randn(4, 3))
_GRAD_OF = ("vals", "vals2", "b", "c", "dense", "dvec", "data")


@needs_tf
def test_values_and_gradients_match_tensorflow(tmp_path):
    expected = run_tf(tmp_path, _PROGRAM + """
args = {k: tf.constant(v) for k, v in args.items()}
out, loss = build(tf, **args)
grads = tf.gradients(loss, [args[k] for k in %r])
with tf.Session() as sess:
    got = sess.run([out, [tf.convert_to_tensor(g) for g in grads]])
result = dict(got[0])
result.update({"d_" + k: g for k, g in zip(%r, got[1])})
""" % (_GRAD_OF, _GRAD_OF), _INPUTS)

    namespace = {"np": np}
    exec(_PROGRAM, namespace)  # noqa: S102 -- the same program, built with weir
    args = {k: wr.constant(v) for k, v in _INPUTS.items()}
    out, loss = namespace["build"](wr, **args)
    grads = wr.gradients(loss, [args[k] for k in _GRAD_OF])
    got_out, got_grads = run([out, [wr.convert_to_tensor(g) for g in grads]])
    for k in sorted(out):
        np.testing.assert_allclose(got_out[k], expected[k], rtol=1e-12, atol=1e-12, err_msg=k)
    for k, g in zip(_GRAD_OF, got_grads):
        np.testing.assert_allclose(g, expected["d_" + k], rtol=1e-10, atol=1e-12, err_msg=k)


def test_gradients_against_finite_differences():
    x0 = _INPUTS["vals"]
    vals = wr.placeholder(wr.float64, [5])
    sp = wr.SparseTensor([[0, 1], [0, 3], [1, 0], [2, 2], [2, 3]], vals, [3, 4])
    y = (wr.reduce_sum(wr.sparse_tensor_dense_matmul(sp, _INPUTS["b"]) ** 2)
         + wr.reduce_sum(wr.sparse.to_dense(wr.sparse.softmax(sp)) * _INPUTS["dense"])
         + wr.reduce_sum(wr.sparse.reduce_sum(sp, 0) ** 3))
    g, = wr.gradients(y, [vals])
    with wr.Session() as sess:
        analytic = sess.run(g, {vals: x0})
        numeric = np.zeros(5)
        for i in range(5):
            e = np.zeros(5)
            e[i] = 1e-6
            numeric[i] = (sess.run(y, {vals: x0 + e}) - sess.run(y, {vals: x0 - e})) / 2e-6
    np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-8)


# --- feeding and fetching SparseTensorValues ---

def test_sparse_placeholder_feed_and_fetch():
    sp = wr.compat.v1.sparse_placeholder(wr.float32, name="sp")
    fixed = wr.sparse_placeholder(wr.float32, shape=[2, 3])
    dense = wr.sparse.to_dense(sp)
    doubled = sp * 2.0
    value = wr.SparseTensorValue(np.array([[0, 1], [1, 2]], np.int64),
                                 np.array([1.5, -2.0], np.float32), np.array([2, 3], np.int64))
    with wr.Session() as sess:
        np.testing.assert_array_equal(sess.run(dense, {sp: value}),
                                      [[0, 1.5, 0], [0, 0, -2.0]])
        # An (indices, values, dense_shape) tuple feeds it too.
        np.testing.assert_array_equal(sess.run(dense, {sp: ([[1, 0]], [4.0], [3, 1])}),
                                      [[0], [4], [0]])
        got = sess.run(doubled, {sp: value})
        assert isinstance(got, wr.SparseTensorValue)
        np.testing.assert_array_equal(got.indices, value.indices)
        np.testing.assert_array_equal(got.values, [3.0, -4.0])
        np.testing.assert_array_equal(got.dense_shape, [2, 3])
        fetched = sess.run(fixed, {fixed.indices: [[0, 0]], fixed.values: [1.0]})
        np.testing.assert_array_equal(fetched.dense_shape, [2, 3])
        with pytest.raises(TypeError, match="SparseTensor"):
            sess.run(dense, {sp: np.zeros([2, 3], np.float32)})
    assert sp.indices.op.name == "sp/indices" and sp.values.op.name == "sp/values"
    assert fixed.shape.as_list() == [2, 3]


def test_indexed_slices_gradient_fetch_and_densify():
    emb = wr.Variable(np.arange(12, dtype=np.float32).reshape(4, 3))
    ids = wr.constant([0, 2, 2, 3, 0])
    loss = wr.reduce_sum(wr.nn.embedding_lookup(emb, ids) ** 2)
    g, = wr.gradients(loss, [emb])
    assert isinstance(g, wr.IndexedSlices)
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        value, dense = sess.run([g, wr.convert_to_tensor(g)])
    assert isinstance(value, wr.IndexedSlicesValue)
    np.testing.assert_array_equal(value.indices, [0, 2, 2, 3, 0])  # repeats kept, not summed
    np.testing.assert_array_equal(value.dense_shape, [4, 3])
    table = np.arange(12, dtype=np.float32).reshape(4, 3)
    want = np.zeros_like(table)
    for i in [0, 2, 2, 3, 0]:
        want[i] += 2 * table[i]
    np.testing.assert_allclose(dense, want)


# --- a TF1 embedding model: repeated ids, global-norm clipping, sparse updates ---

_TRAIN = """
def train(tf, optimizer, table, w0, batches, targets, steps):
    resource = {"use_resource": True} if tf.__name__.startswith("tensorflow") else {}
    emb = tf.Variable(table, name="emb", **resource)
    w = tf.Variable(w0, name="w", **resource)
    ids = tf.placeholder(tf.int64, [None])
    y = tf.placeholder(tf.float32, [None])
    e = tf.nn.embedding_lookup(emb, ids)
    loss = tf.reduce_mean(tf.square(tf.reduce_sum(e * w, 1) - y))
    opt = {"sgd": lambda: tf.train.GradientDescentOptimizer(0.3),
           "adagrad": lambda: tf.train.AdagradOptimizer(0.5),
           "adam": lambda: tf.train.AdamOptimizer(0.05),
           "momentum": lambda: tf.train.MomentumOptimizer(0.2, 0.9),
           "rmsprop": lambda: tf.train.RMSPropOptimizer(0.05, momentum=0.5),
           "centered_rmsprop": lambda: tf.train.RMSPropOptimizer(0.05, centered=True),
           "adadelta": lambda: tf.train.AdadeltaOptimizer(1.0),
           "ftrl": lambda: tf.train.FtrlOptimizer(0.5, l1_regularization_strength=0.01),
           "proximal_adagrad": lambda: tf.train.ProximalAdagradOptimizer(
               0.3, l2_regularization_strength=0.01)}[optimizer]()
    grads_and_vars = opt.compute_gradients(loss)
    grads, norm = tf.clip_by_global_norm([g for g, _ in grads_and_vars], 0.5)
    step = opt.apply_gradients(list(zip(grads, [v for _, v in grads_and_vars])))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for i in range(steps):
            sess.run(step, {ids: batches[i % len(batches)], y: targets[i % len(targets)]})
        return sess.run([emb, w])
"""

_TRAIN_INPUTS = dict(
    table=_RNG.randn(6, 4).astype(np.float32), w0=_RNG.randn(4).astype(np.float32),
    batches=np.array([[1, 1, 3, 1, 5], [0, 2, 2, 2, 4], [5, 5, 5, 1, 0]], np.int64),
    targets=_RNG.randn(3, 5).astype(np.float32))


@needs_tf
@pytest.mark.parametrize("optimizer", ["sgd", "adagrad", "adam", "momentum", "rmsprop",
                                       "centered_rmsprop", "adadelta", "ftrl",
                                       "proximal_adagrad"])
def test_embedding_training_matches_tensorflow(tmp_path, optimizer):
    expected = run_tf(tmp_path, _TRAIN + """
emb, w = train(tf, %r, steps=7, **args)
result = {"emb": emb, "w": w}
""" % optimizer, _TRAIN_INPUTS)
    namespace = {"np": np}
    exec(_TRAIN, namespace)  # noqa: S102
    emb, w = namespace["train"](wr, optimizer, steps=7, **_TRAIN_INPUTS)
    np.testing.assert_allclose(emb, expected["emb"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(w, expected["w"], rtol=1e-5, atol=1e-5)
    assert not np.allclose(emb, _TRAIN_INPUTS["table"])  # it did train


def test_sparse_update_touches_only_gathered_rows():
    table = np.ones([5, 2], np.float32)
    emb = wr.Variable(table)
    loss = wr.reduce_sum(wr.gather(emb, [1, 1, 3]))
    opt = wr.train.MomentumOptimizer(0.1, 0.9)
    step = opt.minimize(loss)
    assert any(op.type == "ResourceSparseApplyMomentum"
               for op in wr.get_default_graph().get_operations())
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        sess.run(step)
        got = sess.run(emb)
    want = table.copy()
    want[1] -= 0.2
    want[3] -= 0.1
    np.testing.assert_allclose(got, want, rtol=1e-6)


@needs_tf
def test_embedding_lookup_sparse_matches_tensorflow(tmp_path):
    program = """
def build(tf, table, weights):
    params = tf.constant(table)
    ids = tf.SparseTensor(np.array([[0, 0], [0, 1], [0, 2], [2, 0], [3, 1]], np.int64),
                          np.array([1, 4, 1, 0, 3], np.int64), [4, 3])
    sw = tf.SparseTensor(ids.indices, weights, ids.dense_shape)
    bad = tf.SparseTensor(np.array([[0, 0], [0, 1], [2, 0]], np.int64),
                          np.array([2, -1, 4], np.int64), [4, 2])
    out = {}
    for combiner in ("sum", "mean", "sqrtn"):
        out["plain_" + combiner] = tf.nn.embedding_lookup_sparse(params, ids, None,
                                                                 combiner=combiner)
        out["weighted_" + combiner] = tf.nn.embedding_lookup_sparse(params, ids, sw,
                                                                    combiner=combiner)
    out["safe"] = tf.nn.safe_embedding_lookup_sparse(params, bad)
    out["safe_default"] = tf.nn.safe_embedding_lookup_sparse(params, bad, default_id=5)
    out["safe_weighted"] = tf.nn.safe_embedding_lookup_sparse(params, ids, sw, combiner="sqrtn")
    loss = tf.add_n([tf.reduce_sum(v * v) for v in out.values()])
    out["d_table"] = tf.convert_to_tensor(tf.gradients(loss, params)[0])
    return out
"""
    inputs = dict(table=_RNG.randn(6, 3), weights=_RNG.rand(5) + 0.1)
    expected = run_tf(tmp_path, program + """
out = build(tf, **args)
with tf.Session() as sess:
    result = sess.run(out)
""", inputs)
    namespace = {"np": np}
    exec(program, namespace)  # noqa: S102
    out = namespace["build"](wr, **inputs)
    got = run(out)
    for k in sorted(out):
        np.testing.assert_allclose(got[k], expected[k], rtol=1e-10, atol=1e-12, err_msg=k)


# --- hostile inputs: errors naming the op and the entry, never a crash ---

def _sparse_feed(dtype=wr.float32):
    indices = wr.placeholder(wr.int64, [None, None])
    values = wr.placeholder(dtype, [None])
    shape = wr.placeholder(wr.int64, [None])
    return wr.SparseTensor(indices, values, shape)


def test_hostile_sparse_inputs_are_errors():
    sp = _sparse_feed()
    feeds = lambda i, v, s: {sp.indices: np.array(i, np.int64).reshape(-1, len(s) or 1),  # noqa
                             sp.values: np.array(v, np.float32), sp.dense_shape: s}
    dense = wr.sparse.to_dense(sp)
    err = wr.errors.InvalidArgumentError
    with wr.Session() as sess:
        with pytest.raises(err, match=r"SparseToDense.*indices\[1\] = \[5, 0\] is out of bounds"):
            sess.run(dense, feeds([[0, 0], [5, 0]], [1, 2], [2, 2]))
        with pytest.raises(err, match="out of bounds"):
            sess.run(dense, feeds([[0, -1]], [1], [2, 2]))
        with pytest.raises(err, match="out of order"):
            sess.run(dense, feeds([[1, 0], [0, 0]], [1, 2], [2, 2]))
        with pytest.raises(err, match="repeats"):
            sess.run(dense, feeds([[1, 0], [1, 0]], [1, 2], [2, 2]))
        with pytest.raises(err, match="one value per index"):
            sess.run(dense, feeds([[0, 0], [1, 1]], [1, 2, 3], [2, 2]))
        big = 2 ** 62
        with pytest.raises(err, match="overflow|2\\^63"):
            sess.run(dense, feeds([[0, 0]], [1], [big, big]))
        with pytest.raises(err, match="negative"):
            sess.run(dense, feeds([[0, 0]], [1], [2, -3]))
        # The ops that read a SparseTensor check it the same way.
        for fetch in (wr.sparse.reduce_sum(sp, 0), wr.sparse.reorder(sp).values,
                      wr.sparse_tensor_dense_matmul(sp, np.ones([2, 2], np.float32)),
                      wr.sparse.slice(sp, [0, 0], [1, 1]).values,
                      wr.sparse.add(sp, sp).values, (sp * np.ones([2], np.float32)).values):
            with pytest.raises(err, match="out of bounds"):
                sess.run(fetch, feeds([[0, 0], [0, 7]], [1, 2], [2, 2]))
        with pytest.raises(err, match="overflow|2\\^63"):
            sess.run(wr.sparse.reshape(sp, [-1]).indices, feeds([[0, 0]], [1], [big, big]))
        with pytest.raises(err, match="cannot reshape"):
            sess.run(wr.sparse.reshape(sp, [3]).indices, feeds([[0, 0]], [1], [2, 2]))
        # A [2^62] float result: refused (too many bytes), not allocated.
        with pytest.raises((err, wr.errors.ResourceExhaustedError)):
            sess.run(wr.sparse.reduce_sum(sp, 0), feeds([[0, 0]], [1], [big, big]))
        with pytest.raises(err, match="rank >= 2"):
            sess.run(wr.sparse.softmax(sp).values, feeds([[0]], [1], [2]))
        with pytest.raises(err, match="row out of bounds"):
            sess.run(wr.sparse.fill_empty_rows(sp, 0.0)[1], feeds([[3, 0]], [1], [2, 2]))
        with pytest.raises(err, match="inner dims"):
            sess.run(wr.sparse_tensor_dense_matmul(sp, np.ones([3, 2], np.float32)),
                     feeds([[0, 0]], [1], [2, 2]))
        # Empty SparseTensors are fine.
        np.testing.assert_array_equal(sess.run(dense, feeds(np.zeros([0, 2]), [], [2, 3])),
                                      np.zeros([2, 3]))
        np.testing.assert_array_equal(sess.run(dense, feeds(np.zeros([0, 2]), [], [0, 3])),
                                      np.zeros([0, 3]))


def test_hostile_segment_and_integer_inputs_are_errors():
    data = np.ones([3, 2], np.float32)
    idx = wr.placeholder(wr.int32, [None])
    seg = wr.placeholder(wr.int32, [None])
    err = wr.errors.InvalidArgumentError
    with wr.Session() as sess:
        s = wr.sparse.segment_sum(data, idx, seg)
        with pytest.raises(err, match=r"indices\[1\] = 3 is out of range"):
            sess.run(s, {idx: [0, 3], seg: [0, 0]})
        with pytest.raises(err, match="not sorted"):
            sess.run(s, {idx: [0, 1], seg: [1, 0]})
        with pytest.raises(err, match="out of range"):
            sess.run(s, {idx: [0, 1], seg: [-1, -1]})
        with pytest.raises(err, match="one length"):
            sess.run(s, {idx: [0, 1], seg: [0]})
        with pytest.raises(err, match="out of range"):
            sess.run(wr.sparse.segment_mean(data, idx, seg, num_segments=2),
                     {idx: [0, 1], seg: [0, 2]})
        # Integer division by zero is an error, not SIGFPE.
        isp = wr.SparseTensor([[0, 0]], wr.constant([5], wr.int32), [1, 2])
        with pytest.raises(err, match="division by zero"):
            sess.run((isp / wr.constant([0, 1], wr.int32)).values)
    with pytest.raises(ValueError):
        wr.SparseTensor([[0, 0], [1, 1]], [1.0, 2.0, 3.0], [2, 2])


# --- ParseExample (V1), as TF1-exported graphs hold it ---

_PARSE_EXAMPLE_GRAPH = textwrap.dedent(r'''
    import os, sys
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    import numpy as np
    import tensorflow as tf
    v1 = tf.compat.v1

    def example(ids, score):
        feature = {"ids": tf.train.Feature(int64_list=tf.train.Int64List(value=ids))}
        if score is not None:
            feature["score"] = tf.train.Feature(float_list=tf.train.FloatList(value=[score]))
        return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()

    records = np.array([example([3, 1, 4], 0.5), example([], None), example([9], 2.0)],
                       dtype=object)
    g = tf.Graph()
    with g.as_default():
        s = v1.placeholder(tf.string, [None], name="serialized")
        out = tf.raw_ops.ParseExample(
            serialized=s, names=tf.constant([], tf.string),
            sparse_keys=[tf.constant("ids")], dense_keys=[tf.constant("score")],
            dense_defaults=[tf.constant([-1.0])], sparse_types=[tf.int64],
            dense_shapes=[[1]], name="parse")
        tf.identity(out.sparse_indices[0], name="idx")
        tf.identity(out.sparse_values[0], name="vals")
        tf.identity(out.sparse_shapes[0], name="shape")
        tf.identity(out.dense_values[0], name="score")
    with v1.Session(graph=g) as sess:
        got = sess.run(["idx:0", "vals:0", "shape:0", "score:0"], {"serialized:0": records})
    with open(os.path.join(sys.argv[1], "parse.pb"), "wb") as f:
        f.write(g.as_graph_def().SerializeToString())
    np.savez(os.path.join(sys.argv[1], "expected.npz"), records=records, idx=got[0],
             vals=got[1], shape=got[2], score=got[3])
    print(sorted({n.op for n in g.as_graph_def().node}))
''')


@needs_tf
def test_tf1_parse_example_graph_runs(tmp_path):
    proc = subprocess.run([PEERS_PYTHON, "-c", _PARSE_EXAMPLE_GRAPH, str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "'ParseExample'" in proc.stdout, proc.stdout
    expected = dict(np.load(tmp_path / "expected.npz", allow_pickle=True))
    outs = wr.import_graph_def((tmp_path / "parse.pb").read_bytes(),
                               return_elements=["idx:0", "vals:0", "shape:0", "score:0"], name="")
    got = run(outs, {"serialized:0": expected["records"]})
    for name, value in zip(["idx", "vals", "shape", "score"], got):
        np.testing.assert_array_equal(value, expected[name], err_msg=name)
    with pytest.raises(wr.errors.InvalidArgumentError):
        run(outs, {"serialized:0": np.array([b"\xff\xff not a proto"], dtype=object)})


def test_clip_by_norm_and_two_lookups_keep_indexed_slices():
    emb = wr.Variable(np.arange(8, dtype=np.float32).reshape(4, 2))
    loss = (wr.reduce_sum(wr.nn.embedding_lookup(emb, [1, 3]) ** 2)
            + wr.reduce_sum(wr.gather(emb, [3, 0])))
    g, = wr.gradients(loss, [emb])
    assert isinstance(g, wr.IndexedSlices)
    clipped = wr.clip_by_norm(g, 1.0)
    by_value = wr.clip_by_value(g, -1.0, 1.5)
    assert isinstance(clipped, wr.IndexedSlices) and isinstance(by_value, wr.IndexedSlices)
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        rows, dense, clipped_rows, by_value_rows = sess.run(
            [g, wr.convert_to_tensor(g), clipped, by_value])
    np.testing.assert_allclose(by_value_rows.values, np.clip(rows.values, -1.0, 1.5))
    # The two lookups' rows are concatenated, not summed (TF's aggregation).
    assert sorted(rows.indices.tolist()) == [0, 1, 3, 3]
    table = np.arange(8, dtype=np.float32).reshape(4, 2)
    want = np.zeros_like(table)
    want[[1, 3]] += 2 * table[[1, 3]]
    want[[3, 0]] += 1
    np.testing.assert_allclose(dense, want)
    # clip_by_norm scales the rows by the norm of the values as given (TF's).
    norm = np.sqrt(np.sum(rows.values ** 2))
    np.testing.assert_allclose(clipped_rows.values, rows.values / norm, rtol=1e-6)
    np.testing.assert_array_equal(clipped_rows.indices, rows.indices)


# --- a TF 2.21 gradient graph of embedding_lookup_sparse (SparseSegment*GradV2) ---

_TF_SPARSE_GRAPH = textwrap.dedent(r'''
    import os, sys
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    import numpy as np
    import tensorflow as tf
    v1 = tf.compat.v1
    g = tf.Graph()
    with g.as_default():
        params = v1.placeholder(tf.float64, [6, 3], name="params")
        ids = tf.SparseTensor(np.array([[0, 0], [0, 1], [1, 0], [3, 0], [3, 1]], np.int64),
                              np.array([1, 4, 1, 5, 1], np.int64), [4, 2])
        out = {}
        for combiner in ("sum", "mean", "sqrtn"):
            out[combiner] = v1.nn.embedding_lookup_sparse(params, ids, None, combiner=combiner)
        dense = tf.sparse.to_dense(tf.sparse.reorder(ids))
        x = v1.placeholder(tf.float64, [4, 3], name="x")
        sp = tf.sparse.from_dense(x)
        b = v1.placeholder(tf.float64, [3, 2], name="b")
        prod = tf.sparse.sparse_dense_matmul(sp, b)
        red = tf.sparse.reduce_sum(sp, 1)
        loss = tf.add_n([tf.reduce_sum(v * v) for v in out.values()]
                        + [tf.reduce_sum(prod ** 2), tf.reduce_sum(red ** 3)])
        dp, dx, db = tf.gradients(loss, [params, x, b])
        tf.identity(tf.convert_to_tensor(dp), name="dparams")
        tf.identity(dx, name="dx")
        tf.identity(db, name="db")
        tf.identity(loss, name="loss")
        tf.identity(dense, name="dense")
    feed = {"params:0": np.cos(np.arange(18.0)).reshape(6, 3),
            "x:0": np.array([[0, 1.5, 0], [2, 0, 0], [0, 0, 0], [0, -1, 3]]),
            "b:0": np.sin(np.arange(6.0)).reshape(3, 2)}
    with v1.Session(graph=g) as sess:
        got = sess.run(["dparams:0", "dx:0", "db:0", "loss:0", "dense:0"], feed)
    with open(os.path.join(sys.argv[1], "g.pb"), "wb") as f:
        f.write(g.as_graph_def().SerializeToString())
    np.savez(os.path.join(sys.argv[1], "expected.npz"), params=feed["params:0"], x=feed["x:0"],
             b=feed["b:0"], dparams=got[0], dx=got[1], db=got[2], loss=got[3], dense=got[4])
    print(sorted({n.op for n in g.as_graph_def().node}))
''')


@needs_tf
def test_tensorflow_sparse_gradient_graph_runs(tmp_path):
    proc = subprocess.run([PEERS_PYTHON, "-c", _TF_SPARSE_GRAPH, str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "GradV2'" in proc.stdout, proc.stdout  # the sparse_gradient form
    expected = dict(np.load(tmp_path / "expected.npz"))
    names = ["dparams", "dx", "db", "loss", "dense"]
    outs = wr.import_graph_def((tmp_path / "g.pb").read_bytes(),
                               return_elements=[n + ":0" for n in names], name="")
    got = run(outs, {"params:0": expected["params"], "x:0": expected["x"],
                     "b:0": expected["b"]})
    for name, value in zip(names, got):
        np.testing.assert_allclose(value, expected[name], rtol=1e-12, atol=1e-12, err_msg=name)


# --- parse_example's VarLenFeature and SparseFeature give SparseTensors ---

_PARSE_PROGRAM = """
def example(tf, idx, val, tag):
    f = tf.train.Feature
    feature = {"idx": f(int64_list=tf.train.Int64List(value=idx)),
               "val": f(float_list=tf.train.FloatList(value=val)),
               "tag": f(bytes_list=tf.train.BytesList(value=tag))}
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def build(tf, records):
    features = {"sp": tf.io.SparseFeature("idx", "val", tf.float32, 6),
                "tag": tf.io.VarLenFeature(tf.string)}
    batch = tf.io.parse_example(records, features)
    single = tf.io.parse_single_example(records[0], features)
    out = {}
    for prefix, parsed in (("batch_", batch), ("single_", single)):
        assert sorted(parsed) == ["sp", "tag"], sorted(parsed)
        for key in ("sp", "tag"):
            out[prefix + key + "_indices"] = parsed[key].indices
            out[prefix + key + "_values"] = parsed[key].values
            out[prefix + key + "_shape"] = parsed[key].dense_shape
    return out
"""


@needs_tf
def test_parse_example_sparse_features_match_tensorflow(tmp_path):
    body = _PARSE_PROGRAM + """
records = [example(tf, [4, 1], [0.5, -2.0], [b"a"]), example(tf, [], [], []),
           example(tf, [5, 0, 2], [1.0, 2.0, 3.0], [b"x", b"yz"])]
out = build(tf, tf.constant(records))
with tf.Session() as sess:
    result = sess.run(out)
result = {k: np.asarray(v, dtype=object if v.dtype == object else v.dtype)
          for k, v in result.items()}
np.save(sys.argv[2] + ".records.npy", np.array(records, dtype=object))
"""
    expected = run_tf(tmp_path, body, {"unused": np.zeros(1)})
    records = np.load(str(tmp_path / "out.npz") + ".records.npy", allow_pickle=True)
    namespace = {"np": np}
    exec(_PARSE_PROGRAM, namespace)  # noqa: S102
    out = namespace["build"](wr, wr.constant(records))
    got = run(out)
    for k in sorted(out):
        np.testing.assert_array_equal(got[k], expected[k], err_msg=k)


def test_sync_replicas_takes_indexed_slices_through_a_sparse_accumulator():
    """An embedding's IndexedSlices gradient goes through a
    SparseConditionalAccumulator (TF's), then the sparse SGD update."""
    table = np.arange(8, dtype=np.float32).reshape(4, 2)
    g = wr.Graph()
    with g.as_default():
        emb = wr.Variable(table, name="emb")
        global_step = wr.train.get_or_create_global_step()
        c = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)
        loss = wr.reduce_sum(wr.nn.embedding_lookup(emb, [1, 3, 1]) * c)
        opt = wr.train.SyncReplicasOptimizer(wr.train.GradientDescentOptimizer(0.1), 1)
        train_op = opt.apply_gradients(opt.compute_gradients(loss), global_step=global_step)
        types = {op.type for op in g.get_operations()}
        assert "SparseConditionalAccumulator" in types and "ResourceScatterAdd" in types
        hook = opt.make_session_run_hook(is_chief=True)
        hook.begin()
        init = wr.global_variables_initializer()
    with wr.Session(graph=g) as sess:
        sess.run(init)
        coord = wr.train.Coordinator()
        hook.after_create_session(sess, coord)
        local_step, runs = 0, 0
        while local_step < 3:
            local_step = int(sess.run(train_op, options=wr.RunOptions(timeout_in_ms=60000)))
            runs += 1
            assert runs < 20
        got = sess.run(emb)
        coord.request_stop()
    coord.join(stop_grace_period_secs=10, ignore_live_threads=True)
    grad = np.zeros_like(table)
    grad[1] += c[0] + c[2]
    grad[3] += c[1]
    np.testing.assert_allclose(got, table - 3 * 0.1 * grad, rtol=1e-6)
