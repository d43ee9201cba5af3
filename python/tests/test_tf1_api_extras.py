"""tf1api: the tf.compat.v1 names composed in Python (weir.ops.tf1_extras,
tf1_modules, custom_gradient), each program run under TensorFlow 2.21 (one
subprocess) and under Weir (`import weir.compat.v1 as tf`), results compared;
plus the hostile-input errors."""
import numpy as np
import pytest

import tf1_run
import weir as wr

WEIR_V1_HEADER = "import weir.compat.v1 as tf\n"
PROGRAMS = {}


def program(name, body):
    PROGRAMS[name] = tf1_run.TF_HEADER + "import numpy as np\n" + body


program("gradient_override", """
@tf.RegisterGradient("MySquareT")
def _g(op, grad):
    return grad * 5.0 * op.inputs[0]
x = tf.constant([1., 2., 3.])
with tf.get_default_graph().gradient_override_map({"Square": "MySquareT"}):
    y = tf.square(x)
z = tf.reduce_sum(tf.sin(y)) + tf.reduce_sum(x * x)
d = tf.gradients(z, x)[0]
with tf.Session() as s:
    RESULT = s.run(d).tolist()
""")

program("custom_gradient", """
@tf.custom_gradient
def clip_grad(a, b):
    def grad(dy):
        return tf.clip_by_value(dy, -0.5, 0.5), dy * 3.0
    return a * b, grad
x = tf.constant([1., -2., 3.])
w = tf.constant([4., 5., 6.])
y = clip_grad(x * x, w)
g = tf.gradients(tf.reduce_sum(y * y), [x, w])
with tf.Session() as s:
    RESULT = [v.tolist() for v in s.run(g)]
""")

program("not_differentiable", """
tf.NotDifferentiable("MyNoGradOpT")
with tf.get_default_graph().gradient_override_map({"Exp": "MyNoGradOpT"}):
    pass
x = tf.constant([1., 2.])
with tf.get_default_graph().gradient_override_map({"Sin": "MyNoGradOpT"}):
    y = tf.sin(x)
g = tf.gradients(tf.reduce_sum(y) + tf.reduce_sum(3.0 * x), x)[0]
with tf.Session() as s:
    RESULT = s.run(g).tolist()
""")

program("sorting", """
x = tf.constant([[3., 1., 2., 1.], [0., 5., -1., 5.]])
i = tf.constant([[3, 1, 2], [9, -4, 0]])
ops = [tf.sort(x), tf.sort(x, direction="DESCENDING"), tf.sort(x, axis=0), tf.argsort(x),
       tf.argsort(x, direction="DESCENDING", stable=True), tf.sort(i), tf.argsort(i, axis=0)]
with tf.Session() as s:
    RESULT = [v.tolist() for v in s.run(ops)]
""")

program("repeat_setdiff_unravel", """
ops = [tf.repeat(tf.constant([[1, 2], [3, 4]]), [1, 2], axis=0),
       tf.repeat(tf.constant([[1, 2], [3, 4]]), 3, axis=1), tf.repeat([1., 2., 3.], 2),
       tf.repeat(tf.constant([[1, 2], [3, 4]]), [0, 2, 1, 0]),
       tf.setdiff1d([1, 2, 3, 4, 5, 2], [2, 4])[0], tf.setdiff1d([1, 2, 3, 4, 5, 2], [2, 4])[1],
       tf.setdiff1d(tf.constant([], tf.int32), [1])[0],
       tf.unravel_index([1, 5, 7], [3, 4]), tf.unravel_index(22, [7, 6]),
       tf.unravel_index(tf.constant([1, 2, 3, 11], tf.int64), tf.constant([3, 4], tf.int64))]
with tf.Session() as s:
    RESULT = [v.tolist() for v in s.run(ops)]
""")

program("misc_top", """
x = tf.constant([[1., 2.], [3., 4.]])
ops = [tf.batch_gather([[1, 2, 3], [4, 5, 6]], [[2, 0], [1, 1]]),
       tf.parallel_stack([[1, 2], [3, 4], [5, 6]]),
       tf.hessians(tf.reduce_sum(x * x * x) + tf.reduce_prod(x), x)[0],
       tf.is_non_decreasing([1, 2, 2]), tf.is_strictly_increasing([1, 2, 2]),
       tf.is_strictly_increasing([[1.], [2.]]), tf.is_non_decreasing(tf.constant([], tf.float32)),
       tf.lbeta([[1., 2.], [3., 4.], [0.5, 0.25]]), tf.truncatemod([-7, 7, -7, 7], [3, -3, -3, 3]),
       tf.truncatemod([-7.5, 7.5, -7.5], [2., -2., -2.]),
       tf.switch_case(tf.constant(1), [lambda: tf.constant(10), lambda: tf.constant(20),
                                       lambda: tf.constant(30)]),
       tf.switch_case(tf.constant(7), [lambda: tf.constant(10), lambda: tf.constant(20)]),
       tf.switch_case(tf.constant(-1), {1: lambda: tf.constant(1), 0: lambda: tf.constant(2)},
                      default=lambda: tf.constant(99)),
       tf.py_function(lambda a: a * 2, [tf.constant(3.)], tf.float32)]
with tf.Session() as s:
    out = s.run(ops)
RESULT = [np.asarray(v).tolist() for v in out] + [
    tf.get_static_value(tf.constant([1, 2])).tolist(),
    tf.dimension_at_index(tf.TensorShape([2, None]), 0).value,
    tf.control_flow_v2_enabled() in (True, False), tf.executing_eagerly_outside_functions()]
""")

program("math_extras", """
x = tf.constant([1., np.nan, np.inf, 2.])
y = tf.constant([0., 0., 0., 3.])
data = tf.constant([[1., 2.], [3., 4.], [5., 6.], [7., 8.]])
ids = tf.constant([0, 0, 2, 2])
ops = [tf.math.multiply_no_nan(x, y), tf.math.reciprocal_no_nan(tf.constant([0., 2., -4.])),
       tf.math.divide_no_nan(tf.constant([1., 2.]), tf.constant([0., 4.])),
       tf.math.polyval([1., 2., 3.], tf.constant([0., 1., 2.])),
       tf.math.zero_fraction(tf.constant([[0, 1], [0, 0]])),
       tf.math.segment_max(data, ids), tf.math.segment_min(data, ids),
       tf.math.segment_mean(data, ids), tf.math.segment_prod(data, ids),
       tf.math.unsorted_segment_mean(data, [1, 0, 1, 1], 3),
       tf.math.unsorted_segment_sqrt_n(data, [1, 0, 1, 1], 3),
       tf.math.log_softmax([1., 2., 3.]), tf.math.softsign([-2., 1.]),
       tf.math.in_top_k(tf.constant([[0.1, 0.9], [0.8, 0.2]]), [1, 1], 1),
       tf.math.lbeta([2., 3.])]
with tf.Session() as s:
    RESULT = [np.asarray(v).tolist() for v in s.run(ops)]
""")

program("nn_extras", """
t = tf.constant([0., 1., 2., 5.])
li = tf.constant([0.5, -1., 1., 2.])
x = tf.constant(np.arange(2 * 5 * 5 * 3, dtype=np.float32).reshape(2, 5, 5, 3) / 50.)
f = tf.constant(np.linspace(-1, 1, 3 * 3 * 3 * 4, dtype=np.float32).reshape(3, 3, 3, 4))
x1 = tf.constant(np.arange(2 * 7 * 3, dtype=np.float32).reshape(2, 7, 3) / 10.)
f1 = tf.constant(np.linspace(-1, 1, 2 * 3 * 2, dtype=np.float32).reshape(2, 3, 2))
c, m, v, _ = tf.nn.sufficient_statistics(x, [0, 1, 2])
c2, m2, v2, sh = tf.nn.sufficient_statistics(x, [1], shift=0.5, keepdims=True)
ops = [tf.nn.log_poisson_loss(t, li), tf.nn.log_poisson_loss(t, li, compute_full_loss=True),
       c, m, v, c2, m2, v2,
       tf.nn.batch_norm_with_global_normalization(
           x, tf.constant([0.1, 0.2, 0.3]), tf.constant([1., 2., 3.]), tf.constant([0., 1., 0.]),
           tf.constant([2., 2., 2.]), 1e-3, True),
       tf.nn.compute_average_loss([1., 2., 3.], sample_weight=[1., 0., 2.]),
       tf.nn.compute_average_loss([1., 2., 3.], global_batch_size=6),
       tf.nn.scale_regularization_loss([tf.constant(2.), tf.constant(3.)]),
       tf.nn.convolution(x, f, "SAME"), tf.nn.convolution(x, f, "VALID", strides=[2, 2]),
       tf.nn.convolution(x, f, "SAME", dilation_rate=[2, 2]),
       tf.nn.convolution(x1, f1, "VALID"), tf.nn.convolution(x1, f1, "SAME", dilations=[2]),
       tf.nn.conv_transpose(x, tf.transpose(f, [0, 1, 3, 2])[:, :, :, :], [2, 10, 10, 4], 2),
       tf.nn.pool(x, [2, 2], "MAX", "VALID", strides=[2, 2]),
       tf.nn.pool(x, [3, 3], "AVG", "SAME"),
       tf.nn.max_pool_v2(x, 2, 2, "SAME"), tf.nn.avg_pool_v2(x, [2, 3], [1, 2], "VALID"),
       tf.nn.max_pool_v2(x1, 2, 1, "VALID")]
with tf.Session() as s:
    RESULT = [np.asarray(v).tolist() for v in s.run(ops)]
""")

program("losses_decays", """
labels = tf.constant([[0., 1.], [1., 0.], [0.6, 0.8]])
preds = tf.constant([[0., 1.], [0., 1.], [0.8, 0.6]])
gs = tf.placeholder(tf.int64, [])
decays = [tf.train.cosine_decay_restarts(0.1, gs, 10), tf.train.cosine_decay_restarts(
    0.1, gs, 7, t_mul=1.0, m_mul=0.5, alpha=0.1), tf.train.linear_cosine_decay(0.1, gs, 30),
    tf.train.linear_cosine_decay(0.2, gs, 25, num_periods=2, alpha=0.1, beta=0.01),
    tf.train.noisy_linear_cosine_decay(0.1, gs, 30, initial_variance=0.0),
    tf.train.piecewise_constant_decay(gs, [5, 15], [1.0, 0.5, 0.1])]
ops = [tf.losses.cosine_distance(labels, preds, axis=1),
       tf.losses.cosine_distance(labels, preds, axis=1, weights=[[1.], [0.], [2.]],
                                 reduction=tf.losses.Reduction.SUM),
       tf.losses.mean_pairwise_squared_error([[1., 2., 3.], [4., 5., 7.]],
                                             [[1.5, 2., 2.], [4., 6., 6.]]),
       tf.losses.mean_pairwise_squared_error([[1., 2., 3.], [4., 5., 7.]],
                                             [[1.5, 2., 2.], [4., 6., 6.]], weights=[[2.], [0.5]])]
with tf.Session() as s:
    RESULT = [np.asarray(v).tolist() for v in s.run(ops)] + [
        [np.asarray(v).tolist() for v in s.run(decays, {gs: step})] for step in (0, 3, 10, 16, 35, 100)]
""")

program("saved_model_constants", """
sm = tf.saved_model
names = ["ASSETS_DIRECTORY", "ASSETS_KEY", "CLASSIFY_INPUTS", "CLASSIFY_METHOD_NAME",
         "CLASSIFY_OUTPUT_CLASSES", "CLASSIFY_OUTPUT_SCORES", "DEBUG_DIRECTORY",
         "DEBUG_INFO_FILENAME_PB", "LEGACY_INIT_OP_KEY", "MAIN_OP_KEY", "PREDICT_INPUTS",
         "PREDICT_METHOD_NAME", "PREDICT_OUTPUTS", "REGRESS_INPUTS", "REGRESS_METHOD_NAME",
         "REGRESS_OUTPUTS", "SAVED_MODEL_FILENAME_PB", "SAVED_MODEL_FILENAME_PBTXT",
         "SAVED_MODEL_SCHEMA_VERSION", "VARIABLES_DIRECTORY", "VARIABLES_FILENAME"]
ex = tf.placeholder(tf.string, [None], name="ex")
cl = tf.placeholder(tf.string, [None], name="cl")
sc = tf.placeholder(tf.float32, [None], name="sc")
c = sm.classification_signature_def(ex, cl, sc)
r = sm.regression_signature_def(ex, sc)
RESULT = [getattr(sm, n) for n in names] + [
    c.method_name, sorted(c.inputs), sorted(c.outputs), c.outputs["scores"].name,
    r.method_name, sorted(r.outputs), sm.is_valid_signature(c), sm.is_valid_signature(r),
    sm.get_tensor_from_tensor_info(c.outputs["classes"]).name]
""")

program("queues_asserts", """
q = tf.queue.PaddingFIFOQueue(5, [tf.int32], shapes=[[None]])
e1 = q.enqueue([[1, 2, 3]])
e2 = q.enqueue([[4]])
d = q.dequeue_many(2)
pq = tf.io.PriorityQueue(5, [tf.string], shapes=[[]])
pe = pq.enqueue_many([[3, 1, 2], [b"c", b"a", b"b"]])
pd = pq.dequeue_many(3)
a1 = tf.debugging.assert_near(tf.constant([1., 2.]), tf.constant([1., 2.0000001]))
x = tf.placeholder(tf.float32)
a2 = tf.assert_rank_in(x, [1, 3])
with tf.control_dependencies([a2]):
    y = tf.identity(x)
out = []
with tf.Session() as s:
    s.run(e1); s.run(e2); out.append(s.run(d).tolist())
    s.run(pe); out.append([v.tolist() if hasattr(v, "tolist") else v for v in s.run(pd)])
    s.run(a1)
    out.append(s.run(y, {x: [1., 2.]}).tolist())
    try:
        s.run(y, {x: [[1.]]})
        out.append("no error")
    except tf.errors.InvalidArgumentError:
        out.append("InvalidArgumentError")
    try:
        s.run(tf.debugging.assert_near(tf.constant([1.]), tf.constant([1.5]), atol=0.1))
        out.append("no error")
    except tf.errors.InvalidArgumentError:
        out.append("InvalidArgumentError")
out[1] = [out[1][0], [v.decode() for v in out[1][1]]]
RESULT = out + [tf.debugging.assert_same_float_dtype([tf.constant(1.), tf.constant(2.)]).name]
""")

program("gradient_checker", """
x = tf.placeholder(tf.float64, [2, 3])
y = tf.reduce_sum(tf.sin(x) * x, axis=1)
with tf.Session():
    t, n = tf.test.compute_gradient(x, [2, 3], y, [2], x_init_value=np.arange(6.).reshape(2, 3) / 7)
    err = tf.test.compute_gradient_error(x, [2, 3], y, [2],
                                         x_init_value=np.arange(6.).reshape(2, 3) / 7)
RESULT = [t.tolist(), list(t.shape), bool(err < 1e-6), bool(np.allclose(t, n, atol=1e-6))]
""")


# --- hostile inputs and errors ----------------------------------------------------------------
@pytest.fixture(autouse=True)
def fresh_graph():
    wr.reset_default_graph()
    yield


def _run(t, feed=None):
    with wr.Session() as s:
        return s.run(t, feed)


def test_unravel_index_out_of_bounds_is_an_error():
    with pytest.raises(wr.errors.InvalidArgumentError):
        _run(wr.unravel_index([12], [3, 4]))
    with pytest.raises(wr.errors.InvalidArgumentError):
        _run(wr.unravel_index([-1], [3, 4]))
    with pytest.raises(wr.errors.InvalidArgumentError):
        _run(wr.unravel_index([0], [3, 0]))
    with pytest.raises(wr.errors.InvalidArgumentError):
        _run(wr.unravel_index([[1, 2]], [3, 4]))
    with pytest.raises(TypeError):
        wr.unravel_index([1.5], [3, 4])
    with pytest.raises(ValueError):
        wr.switch_case(wr.constant(0), {0: lambda: wr.constant(1), 3: lambda: wr.constant(2)})


def test_repeat_and_sort_hostile_inputs():
    with pytest.raises(wr.errors.InvalidArgumentError):
        _run(wr.repeat([1, 2], [-1, 2]))
    with pytest.raises(ValueError):
        wr.repeat(wr.constant([[1, 2]]), 2, axis=5)
    with pytest.raises(TypeError):
        wr.repeat([1, 2], 1.5)
    with pytest.raises(wr.errors.InvalidArgumentError):
        _run(wr.repeat([1, 2], wr.constant(2**31 + 5, wr.int64)))
    assert _run(wr.repeat(wr.zeros([0, 3]), 3, axis=0)).shape == (0, 3)
    with pytest.raises(ValueError):
        wr.sort(wr.constant(3.0))
    with pytest.raises(ValueError):
        wr.sort([1., 2.], direction="UP")
    assert _run(wr.sort(wr.constant([], wr.float32))).shape == (0,)
    nan_sorted = _run(wr.sort(wr.constant([3., np.nan, 1.]), direction="DESCENDING"))
    assert nan_sorted.shape == (3,)


def test_setdiff_and_segments_hostile_inputs():
    with pytest.raises(ValueError):
        wr.setdiff1d([[1, 2]], [1])
    with pytest.raises(wr.errors.InvalidArgumentError):
        _run(wr.math.segment_max([1., 2., 3.], [1, 0, 0]))
    with pytest.raises(wr.errors.InvalidArgumentError):
        _run(wr.math.segment_mean([1., 2., 3.], [-1, 0, 0]))
    with pytest.raises(ValueError):
        wr.math.segment_sum if False else wr.math.segment_min([1., 2.], [0, 0, 1])
    assert _run(wr.math.segment_max(wr.zeros([0, 2]), wr.zeros([0], wr.int32))).shape == (0, 2)
    with pytest.raises(ValueError):
        wr.math.polyval(wr.constant([1., 2.]), 1.0)


def test_registration_and_override_errors():
    @wr.RegisterGradient("Tf1ApiTwice")
    def _g(op, grad):
        return grad
    with pytest.raises(KeyError):
        wr.RegisterGradient("Tf1ApiTwice")(_g)
    with pytest.raises(TypeError):
        wr.RegisterGradient(3)
    with pytest.raises(TypeError):
        with wr.get_default_graph().gradient_override_map({"Square": 3}):
            pass
    x = wr.constant([1., 2.])
    with wr.get_default_graph().gradient_override_map({"Square": "Tf1ApiUnregistered"}):
        y = wr.square(x)
    with pytest.raises(LookupError):
        wr.gradients(y, x)

    @wr.RegisterGradient("Tf1ApiWrongCount")
    def _bad(op, grad):
        return [grad, grad]
    with wr.get_default_graph().gradient_override_map({"Exp": "Tf1ApiWrongCount"}):
        z = wr.exp(x)
    with pytest.raises(ValueError):
        wr.gradients(z, x)


def test_custom_gradient_refuses_captured_variables():
    v = wr.Variable([2.0], name="captured")

    @wr.custom_gradient
    def f(x):
        return x * v, lambda dy: dy

    with pytest.raises(TypeError, match="variables"):
        f(wr.constant([1.0]))

    @wr.custom_gradient
    def g(x, w):
        return x * w, lambda dy: (dy * w, dy * x)
    x = wr.constant([3.0])
    y = g(x, v.read_value())
    gx, gv = wr.gradients(y, [x, v])
    with wr.Session() as s:
        s.run(v.initializer)
        assert s.run([gx, gv]) == [pytest.approx([2.0]), pytest.approx([3.0])]


def test_mode_switches_and_shape_errors():
    with pytest.raises(NotImplementedError):
        wr.enable_v2_behavior()
    with pytest.raises(NotImplementedError):
        wr.enable_tensor_equality()
    wr.disable_tensor_equality()
    wr.disable_v2_tensorshape()
    wr.enable_control_flow_v2()
    assert wr.control_flow_v2_enabled()
    wr.disable_control_flow_v2()
    assert not wr.control_flow_v2_enabled()
    with pytest.raises(ValueError):
        wr.parallel_stack([wr.placeholder(wr.float32, [None])])
    with pytest.raises(ValueError):
        wr.losses.cosine_distance([1.], [1.])
    with pytest.raises(ValueError):
        wr.assert_rank_in(wr.zeros([2, 2]), [1, 3])
    with pytest.raises(ValueError):
        wr.assert_same_float_dtype([wr.constant(1.), wr.constant(1., wr.float64)])
    with pytest.raises(TypeError):
        wr.assert_proper_iterable(wr.constant([1]))
    wr.assert_proper_iterable([1, 2])
    with pytest.raises(ValueError):
        wr.nn.compute_average_loss([1.], global_batch_size=0)


def test_assert_equal_graph_def():
    with wr.Graph().as_default() as g1:
        wr.constant(1.0, name="a")
    with wr.Graph().as_default() as g2:
        wr.constant(1.0, name="a")
    with wr.Graph().as_default() as g3:
        wr.constant(2.0, name="a")
    wr.test.assert_equal_graph_def(g1.as_graph_def(), g2.as_graph_def())
    with pytest.raises(AssertionError):
        wr.test.assert_equal_graph_def(g1.as_graph_def(), g3.as_graph_def())


program("fixed_length_records", """
import os, tempfile
d = tempfile.mkdtemp()
paths = []
for k, body in enumerate([b"HDR" + b"abcdefghijkl" + b"FT", b"HDR" + b"0123456789" + b"FT",
                          b"HDR" + b"0123456789AB" + b"FT", b"HD"]):
    p = os.path.join(d, "f%d.bin" % k)
    with open(p, "wb") as f:
        f.write(body)
    paths.append(p)

def drain(s, nxt):
    out = []
    try:
        while True:
            out.append(s.run(nxt).decode())
    except tf.errors.OutOfRangeError:
        out.append("end")
    except tf.errors.InvalidArgumentError:
        out.append("InvalidArgumentError")
    return out

fn = tf.placeholder(tf.string, [None])
it = tf.data.make_initializable_iterator(
    tf.data.FixedLengthRecordDataset(fn, 5, header_bytes=3, footer_bytes=2).batch(2))
nxt = tf.data.make_one_shot_iterator(
    tf.data.FixedLengthRecordDataset(paths[:3], 4, header_bytes=3, footer_bytes=2)).get_next()
short = tf.data.make_one_shot_iterator(
    tf.data.FixedLengthRecordDataset(paths[3:], 4, header_bytes=3)).get_next()
out = []
with tf.Session() as s:
    out.append(drain(s, nxt))
    s.run(it.initializer, {fn: paths[1:2]})
    out.append([v.decode() for v in s.run(it.get_next())])
    out.append(drain(s, short))
RESULT = out + [str(nxt.dtype.name), nxt.shape.as_list()]
""")


program("match_filenames_batch_join", """
import os, tempfile
d = tempfile.mkdtemp()
for n in ("a.txt", "b.txt", "c.csv"):
    open(os.path.join(d, n), "w").close()
m = tf.train.match_filenames_once(os.path.join(d, "*.txt"))
m2 = tf.io.match_filenames_once([os.path.join(d, "*.csv"), os.path.join(d, "a*")], name="mf")
local_names = [v.op.name for v in tf.local_variables()]
x1 = tf.constant([1, 2, 3, 4])
x2 = tf.constant([10, 20, 30, 40])
b = tf.train.maybe_batch_join([[x1], [x2]], tf.constant([True, False, True, False]), 4,
                              enqueue_many=True)
sb = tf.train.maybe_shuffle_batch_join([[x1], [x2]], 2, 20, 0, tf.constant(True),
                                       enqueue_many=True, seed=3)
with tf.Session() as s:
    s.run(tf.local_variables_initializer())
    files = sorted(os.path.basename(f.decode()) for f in s.run(m))
    files2 = sorted(os.path.basename(f.decode()) for f in s.run(m2))
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(s, coord)
    got = sorted(s.run(b).tolist())
    got_sb = s.run(sb).tolist()
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=5)
# The enqueue threads race (each list is enqueued again and again): only the
# kept values may come out.
RESULT = [files, files2, local_names, len(got), all(v in (1, 3, 10, 30) for v in got), len(got_sb), all(v in (1, 2, 3, 4, 10, 20, 30, 40) for v in got_sb),
          b.shape.as_list(), m.op.name]
""")


program("more_extras", """
x = tf.constant([1., 2., 3.])
y = tf.grad_pass_through(lambda t: tf.round(t * 1.3))(x)
g = tf.gradients(tf.reduce_sum(y * y), x)[0]
v = tf.constant([-1., 0., 0.5, 1.9, 2.0, 5., 7.5, 100.])
img = tf.constant(np.linspace(-1, 1, 2 * 5 * 5 * 3, dtype=np.float32).reshape(2, 5, 5, 3))
filt = tf.constant(np.linspace(-1, 1, 3 * 3 * 3 * 2, dtype=np.float32).reshape(3, 3, 3, 2))
dw = tf.nn.depthwise_conv2d_native(img, filt, [1, 1, 1, 1], "SAME")
ob = tf.ones_like(dw)
x1 = tf.constant(np.arange(2 * 4 * 3, dtype=np.float32).reshape(2, 4, 3) / 10.)
f1 = tf.constant(np.linspace(-1, 1, 3 * 2 * 3, dtype=np.float32).reshape(3, 2, 3))
ops = [y, g, tf.histogram_fixed_width(v, [0., 5.], nbins=5),
       tf.histogram_fixed_width_bins(v, [0., 5.], nbins=5),
       tf.histogram_fixed_width(tf.constant([1, 2, 2, 9]), [0, 10], nbins=4, dtype=tf.int64),
       tf.vectorized_map(lambda r: r * 2.0 + 1.0, tf.constant([[1., 2.], [3., 4.]])),
       tf.math.cumulative_logsumexp(tf.constant([[0., 1., 2.], [-1000., 3., 1000.]]), axis=1),
       tf.math.cumulative_logsumexp(tf.constant([0., 1., 2.]), exclusive=True, reverse=True),
       tf.nn.depthwise_conv2d_native_backprop_filter(img, [3, 3, 3, 2], ob, [1, 1, 1, 1], "SAME"),
       tf.nn.depthwise_conv2d_backprop_input([2, 5, 5, 3], filt, ob, [1, 1, 1, 1], "SAME"),
       tf.nn.conv1d_transpose(x1, f1, [2, 8, 2], 2, "SAME"),
       tf.nn.conv1d_transpose(x1, f1, [2, 6, 2], 1, "VALID")]
a = tf.placeholder(tf.float32, [None, 3])
b = tf.placeholder(tf.float32, [None, None])
chk = tf.debugging.assert_shapes([(a, ("N", 3)), (b, ("N", "N"))])
with tf.control_dependencies([chk]):
    s_ab = tf.reduce_sum(a) + tf.reduce_sum(b)
with tf.Session() as s:
    out = [np.asarray(t).tolist() for t in s.run(ops)]
    out.append(float(s.run(s_ab, {a: np.ones([2, 3]), b: np.ones([2, 2])})))
    try:
        s.run(s_ab, {a: np.ones([2, 3]), b: np.ones([3, 3])})
        out.append("no error")
    except tf.errors.InvalidArgumentError:
        out.append("InvalidArgumentError")
errs = []
for shapes in ([(tf.zeros([2, 3]), (2, 4))], [(tf.zeros([2, 3]), ("N",))],
               [(tf.zeros([2, 3]), ("N", "M")), (tf.zeros([3]), ("N",))]):
    try:
        tf.debugging.assert_shapes(shapes)
        errs.append("ok")
    except ValueError:
        errs.append("ValueError")
tf.debugging.assert_shapes([(tf.zeros([4, 2, 3]), ("*", "M", 3)), (tf.zeros([]), [])])
RESULT = out + [errs, tf.test.is_built_with_rocm(), callable(tf.test.mock.MagicMock),
                tf.debugging.is_traceback_filtering_enabled()]
""")


@pytest.mark.parametrize("build,y_shape", [
    (lambda x: wr.math.cumulative_logsumexp(x, axis=1), [2, 3]),
    (lambda x: wr.math.cumulative_logsumexp(x, axis=0, exclusive=True, reverse=True)[:-1],
     [1, 3]),
    (lambda x: wr.sort(x, axis=1, direction="DESCENDING") * wr.constant([1., 2., 3.], wr.float64),
     [2, 3]),
    (lambda x: wr.repeat(x, [2, 1], axis=0) * 1.5, [3, 3]),
    (lambda x: wr.lbeta(wr.exp(x)), [2]),
    (lambda x: wr.math.segment_mean(x, [0, 0]), [1, 3]),
    (lambda x: wr.math.unsorted_segment_sqrt_n(x * x, [1, 1], 3), [3, 3]),
    (lambda x: wr.math.polyval([2., -1., 0.5], x), [2, 3]),
])
def test_composed_gradients_match_finite_differences(build, y_shape):
    x = wr.placeholder(wr.float64, [2, 3])
    y = build(x)
    init = np.array([[0.3, -1.2, 2.0], [1.1, 0.4, -0.7]])
    with wr.Session():
        err = wr.test.compute_gradient_error(x, [2, 3], y, y_shape, x_init_value=init,
                                             delta=1e-6)
    assert err < 1e-5


def test_gradient_checker_catches_a_wrong_gradient():
    @wr.RegisterGradient("Tf1ApiWrongSquare")
    def _wrong(op, grad):
        return grad * 3.0 * op.inputs[0]  # the true derivative is 2x
    x = wr.placeholder(wr.float64, [3])
    with wr.get_default_graph().gradient_override_map({"Square": "Tf1ApiWrongSquare"}):
        y = wr.square(x)
    with wr.Session():
        t, n = wr.test.compute_gradient(x, [3], y, [3], x_init_value=np.array([1., 2., 3.]))
        err = wr.test.compute_gradient_error(x, [3], y, [3], x_init_value=np.array([1., 2., 3.]))
    np.testing.assert_allclose(np.diag(t), [3., 6., 9.])
    np.testing.assert_allclose(np.diag(n), [2., 4., 6.], rtol=1e-6)
    assert err == pytest.approx(3.0, rel=1e-6)


program("config_module", """
cpu = tf.config.list_physical_devices("CPU")[0]
out = [[tuple(d) for d in tf.config.list_physical_devices()],
       tf.config.list_physical_devices("GPU"), tf.config.experimental.list_physical_devices("GPU"),
       [tuple(d) for d in tf.config.list_logical_devices("CPU")],
       [tuple(d) for d in tf.config.get_visible_devices()],
       tf.config.get_soft_device_placement(), tf.config.functions_run_eagerly()]
# (TensorFlow refuses thread settings once its context started: only read here.)
soft = tf.config.get_soft_device_placement()
tf.config.set_soft_device_placement(not soft)
out += [tf.config.threading.get_intra_op_parallelism_threads(),
        tf.config.threading.get_inter_op_parallelism_threads(),
        tf.config.get_soft_device_placement()]
tf.config.set_soft_device_placement(soft)
try:
    tf.config.experimental.set_memory_growth(cpu, True)
    out.append("no error")
except ValueError:
    out.append("ValueError")
for gpu in tf.config.experimental.list_physical_devices("GPU"):
    tf.config.experimental.set_memory_growth(gpu, True)
RESULT = out
""")


program("space_batch_scatter", """
x = tf.constant(np.arange(2 * 4 * 4 * 1, dtype=np.float32).reshape(2, 4, 4, 1))
s2b = tf.space_to_batch(x, [[0, 0], [1, 1]], block_size=2)
b2s = tf.batch_to_space(s2b, [[0, 0], [1, 1]], block_size=2)
p, c = tf.required_space_to_batch_paddings([5, 7], [2, 3], base_paddings=[[1, 0], [0, 2]])
p2, c2 = tf.required_space_to_batch_paddings(tf.constant([4, 4]), [2, 2])
v = tf.Variable(np.arange(2 * 4 * 2, dtype=np.float32).reshape(2, 4, 2))
upd = tf.batch_scatter_update(v, tf.constant([[3, 0], [1, 2]]),
                              tf.constant(-np.arange(2 * 2 * 2, dtype=np.float32).reshape(2, 2, 2)))
g = tf.guarantee_const(tf.constant([1, 2]))
with tf.Session() as s:
    s.run(tf.global_variables_initializer())
    out = [np.asarray(t).tolist() for t in s.run([s2b, b2s, tf.nn.space_to_batch(x, [[0, 0], [0, 0]], 2),
                                                  p, c, p2, c2, g])]
    out.append(s.run(upd).tolist())
    out.append(s.run(v).tolist())
RESULT = out + [sorted(d.name for d in tf.QUANTIZED_DTYPES), sorted(d.name for d in tf.dtypes.QUANTIZED_DTYPES),
                tf.data.INFINITE_CARDINALITY, tf.data.UNKNOWN_CARDINALITY,
                type(tf.train.ClusterDef()).__name__, type(tf.train.ServerDef()).__name__]
with tf.Session() as s:
    RESULT.append(s.run(tf.dtypes.saturate_cast(tf.constant([300., -5.]), tf.uint8)).tolist())
    RESULT.append(s.run(tf.dtypes.cast(tf.constant([1.7]), tf.int32)).tolist())
""")


program("override_with_control_flow", """
@tf.RegisterGradient("Sq10T")
def _g(op, grad):
    return grad * 10.0
v = tf.Variable([1., 2.])
with tf.get_default_graph().gradient_override_map({"Square": "Sq10T"}):
    y = tf.square(v)
p = tf.placeholder(tf.bool, [])
z = tf.cond(p, lambda: y * 2.0, lambda: y * 3.0)
_, w = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * 1.5), [tf.constant(0), z])
loss = tf.reduce_sum(w) + tf.reduce_sum(v * v)
g = tf.gradients(loss, v)[0]
gz = tf.gradients(loss, [z, y])
step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
with tf.Session() as s:
    s.run(tf.global_variables_initializer())
    out = [s.run(g, {p: True}).tolist(), s.run(g, {p: False}).tolist(),
           [t.tolist() for t in s.run(gz, {p: True})]]
    s.run(step, {p: True})
    out.append(s.run(v).tolist())
RESULT = out
""")


def test_python_gradient_inside_a_loop_is_a_clear_error():
    @wr.RegisterGradient("Tf1ApiInLoop")
    def _g(op, grad):
        return grad

    def body(i, a):
        with wr.get_default_graph().gradient_override_map({"Square": "Tf1ApiInLoop"}):
            return i + 1, wr.square(a)
    x = wr.constant([1.5])
    _, out = wr.while_loop(lambda i, a: i < 2, body, [wr.constant(0), x])
    assert list(wr.get_default_graph()._gradient_op_types.values()) == ["Tf1ApiInLoop"]
    with pytest.raises(NotImplementedError, match="inside a cond or while_loop"):
        wr.gradients(out, x)


program("warm_start", """
import os, tempfile
d = tempfile.mkdtemp()
with tf.Graph().as_default():
    a = tf.get_variable("a", initializer=tf.constant([1., 2.]))
    b = tf.get_variable("old_b", initializer=tf.constant([[3.]]))
    c = tf.get_variable("c", initializer=tf.constant(7.), trainable=False)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        path = tf.train.Saver().save(s, os.path.join(d, "m"))
out = []
for spec, renames in ((".*", {"b": "old_b"}), ([".*"], {"b": "old_b"}), ("a", None)):
    with tf.Graph().as_default():
        a = tf.get_variable("a", initializer=tf.constant([0., 0.]))
        b = tf.get_variable("b", initializer=tf.constant([[0.]]))
        c = tf.get_variable("c", initializer=tf.constant(0.), trainable=False)
        tf.train.warm_start(path, vars_to_warm_start=spec, var_name_to_prev_var_name=renames)
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            out.append([x.tolist() for x in s.run([a, b, c])])
with tf.Graph().as_default():
    tf.get_variable("a", initializer=tf.constant([0., 0.]))
    try:
        tf.train.warm_start(path, var_name_to_prev_var_name={"zz": "a"})
        out.append("no error")
    except ValueError:
        out.append("ValueError")
vi = tf.train.VocabInfo("new.txt", 10, 1, "old.txt")
RESULT = out + [vi.old_vocab_size, vi.axis, vi.backup_initializer]
""")


program("nest_module", """
import collections
P = collections.namedtuple("P", "x y")
s1 = {"b": [1, (2, 3)], "a": 4, "c": None}
out = [tf.nest.flatten(s1), tf.nest.flatten(P(1, [2, 3])), tf.nest.flatten("ab"),
       tf.nest.flatten(None), tf.nest.is_nested([1]), tf.nest.is_nested("x"),
       tf.nest.is_nested({"a": 1}), tf.nest.flatten(collections.OrderedDict([("z", 1), ("a", 2)]))]
packed = tf.nest.pack_sequence_as({"b": [0, (0, 0)], "a": 0}, [1, 2, 3, 4])
out.append([packed["a"], packed["b"][0], list(packed["b"][1]), type(packed["b"][1]).__name__])
pn = tf.nest.pack_sequence_as(P(0, [0, 0]), [5, 6, 7])
out.append([type(pn).__name__, pn.x, pn.y])
od = tf.nest.pack_sequence_as(collections.OrderedDict([("z", 0), ("a", 0)]), [1, 2])
out.append(list(od.items()))
m = tf.nest.map_structure(lambda a, b: a + b, {"x": 1, "y": [2]}, {"x": 10, "y": [20]})
out.append([m["x"], m["y"]])
errs = []
for a, b, kw in (([1, 2], [1], {}), ([1, 2], (1, 2), {}), ([1, 2], (1, 2), {"check_types": False}),
                 ({"a": 1}, {"b": 1}, {}), ([1, [2]], [1, 2], {}), (P(1, 2), (1, 2), {})):
    try:
        tf.nest.assert_same_structure(a, b, **kw)
        errs.append("ok")
    except ValueError:
        errs.append("ValueError")
    except TypeError:
        errs.append("TypeError")
for args in (([0, 0], [1]), ([0], 5)):
    try:
        tf.nest.pack_sequence_as(*args)
        errs.append("ok")
    except ValueError:
        errs.append("ValueError")
    except TypeError:
        errs.append("TypeError")
RESULT = out + [errs]
""")


program("metrics_at_top_k", """
labels = tf.constant([[2, -1], [0, 3], [1, 1], [4, 5]], tf.int64)
idx = tf.constant([[2, 0, 1], [3, 1, 0], [0, 2, 3], [5, 6, 4]], tf.int64)
scores = tf.constant(np.random.RandomState(0).rand(4, 7).astype(np.float32))
ms = [tf.metrics.precision_at_top_k(labels, idx), tf.metrics.recall_at_top_k(labels, idx),
      tf.metrics.precision_at_top_k(labels, idx, k=2), tf.metrics.recall_at_top_k(labels, idx, k=1),
      tf.metrics.precision_at_top_k(labels, idx, class_id=3),
      tf.metrics.recall_at_top_k(labels, idx, k=2, class_id=1,
                                 weights=tf.constant([1., 2., 0.5, 1.])),
      tf.metrics.sparse_precision_at_k(labels, scores, 3)]
for lab in ([[2, 5], [0, 3], [1, 1], [4, 6]], [[2, -1], [0, 3], [1, 1], [-1, -1]],
            [[2, 9], [0, 3], [1, 1], [4, 6]]):
    lab = tf.constant(lab, tf.int64)
    ms += [tf.metrics.average_precision_at_k(lab, scores, 3),
           tf.metrics.average_precision_at_k(lab, scores, 2, weights=tf.constant([1., 2., .5, 0.])),
           tf.metrics.sparse_average_precision_at_k(lab, scores, 7)]
ms.append(tf.metrics.average_precision_at_k(tf.constant([3, 1, 0, 6], tf.int64), scores, 4))
with tf.Session() as s:
    s.run(tf.local_variables_initializer())
    s.run([m[1] for m in ms])
    RESULT = [float(v) for v in s.run([m[0] for m in ms])]
""")


program("py_func_with_gradient", """
# The TF1 recipe for a py_func with a gradient: a registered name under a
# gradient_override_map of PyFunc.
def py_func(func, inp, Tout, grad, stateful=True, name=None):
    rnd_name = "PyFuncGradT" + str(np.random.randint(0, 1E+8))
    tf.RegisterGradient(rnd_name)(grad)
    g = tf.get_default_graph()
    with g.gradient_override_map({"PyFunc": rnd_name, "PyFuncStateless": rnd_name}):
        return tf.py_func(func, inp, Tout, stateful=stateful, name=name)

def _grad(op, grad):
    return grad * 2.0 * op.inputs[0], None

x = tf.constant([1., 2., 3.])
k = tf.constant(4.)
y = py_func(lambda a, b: (a * a + b).astype(np.float32), [x, k], [tf.float32], _grad)[0]
y.set_shape([3])
z = tf.reduce_sum(tf.sin(y) * x)
gx, gk = tf.gradients(z, [x, k])
with tf.Session() as s:
    RESULT = [v.tolist() for v in s.run([y, gx])] + [gk is None]
""")


def test_fixed_length_record_dataset_hostile(tmp_path):
    with pytest.raises(ValueError):
        wr.data.FixedLengthRecordDataset([str(tmp_path / "x")], 0)
    with pytest.raises(ValueError):
        wr.data.FixedLengthRecordDataset([str(tmp_path / "x")], 4, header_bytes=-1)
    with pytest.raises(TypeError):
        wr.data.FixedLengthRecordDataset([str(tmp_path / "x")], "four")
    p = tmp_path / "empty.bin"
    p.write_bytes(b"")  # no records at all
    nxt = wr.data.make_one_shot_iterator(
        wr.data.FixedLengthRecordDataset([str(p)], 4)).get_next()
    with wr.Session() as s:
        with pytest.raises(wr.errors.OutOfRangeError):
            s.run(nxt)


def test_checkpoints_iterator_and_basic_train_loop(tmp_path):
    v = wr.Variable(1.0, name="v")
    saver = wr.train.Saver()
    with wr.Session() as s:
        s.run(wr.global_variables_initializer())
        path = saver.save(s, str(tmp_path / "model"), global_step=7)
    found = list(wr.train.checkpoints_iterator(str(tmp_path), timeout=1))
    assert found == [path]
    calls = []
    found = list(wr.train.checkpoints_iterator(str(tmp_path / "none"), timeout=1,
                                               timeout_fn=lambda: calls.append(1) or True))
    assert found == [] and calls == [1]

    wr.reset_default_graph()
    step = wr.train.get_or_create_global_step()
    inc = wr.assign_add(step, 1)
    sv = wr.train.Supervisor(logdir=None, summary_op=None, saver=None)
    seen = []

    def train_step(sess, k):
        seen.append(sess.run(inc) * k)
        if len(seen) == 3:
            sv.request_stop()
    wr.train.basic_train_loop(sv, train_step, args=[10])
    assert seen == [10, 20, 30]


def test_create_local_cluster_runs_a_step():
    workers, ps = wr.test.create_local_cluster(2, 1)
    assert len(workers) == 2 and len(ps) == 1
    with wr.device("/job:ps/task:0"):
        v = wr.Variable([1.0, 2.0], name="cv")
    with wr.device("/job:worker/task:1"):
        out = wr.reduce_sum(v * 3.0)
    with wr.Session(workers[0].target) as s:
        s.run(wr.global_variables_initializer())
        assert s.run(out) == pytest.approx(9.0)
    with pytest.raises(ValueError):
        wr.test.create_local_cluster(0, 1)



def test_config_refusals():
    with pytest.raises(NotImplementedError):
        wr.config.run_functions_eagerly(True)
    with pytest.raises(NotImplementedError):
        wr.config.optimizer.set_jit(True)
    with pytest.raises(ValueError):
        wr.config.threading.set_intra_op_parallelism_threads(-1)
    with pytest.raises(ValueError):
        wr.config.set_visible_devices([])
    with pytest.raises(ValueError):
        wr.config.set_visible_devices([wr.config.PhysicalDevice("/physical_device:GPU:0", "GPU")])
    wr.config.threading.set_intra_op_parallelism_threads(2)
    assert wr.config.threading.get_intra_op_parallelism_threads() == 2
    wr.config.threading.set_intra_op_parallelism_threads(0)

# --- every program above, under TensorFlow and Weir (defined last: it collects PROGRAMS) ---
@pytest.fixture(scope="module")
def tf_results():
    tf1_run.require_tf()
    return tf1_run.run_tf_programs(PROGRAMS)


def _close(a, b, path=""):
    if isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b), "%s: length %d vs %d" % (path, len(a), len(b))
        for i, (u, v) in enumerate(zip(a, b)):
            _close(u, v, "%s[%d]" % (path, i))
    elif isinstance(a, float) or isinstance(b, float):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-6, err_msg=path)
    else:
        assert a == b, "%s: %r (weir) vs %r (TF)" % (path, a, b)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_against_tensorflow(tf_results, name):
    expected = tf1_run.tf_result(tf_results, name)
    wr.reset_default_graph()
    got = tf1_run.run_weir_program(PROGRAMS[name], name, weir_header=WEIR_V1_HEADER)
    _close(got, expected)


def test_n_d_convolution_and_pooling_take_three_spatial_dims():
    # tf.nn.convolution / conv_transpose / pool with 5-D inputs are TF's conv3d, conv3d_transpose
    # and max_pool3d / avg_pool3d (those are checked against TF in test_vision_ops.py).
    rng = np.random.RandomState(5)
    x = rng.randn(2, 5, 6, 4, 3).astype(np.float32)
    f = rng.randn(2, 3, 2, 3, 4).astype(np.float32)
    with wr.Graph().as_default():
        got = [wr.nn.convolution(x, f, padding="SAME", strides=[1, 2, 1]),
               wr.nn.pool(x, [2, 2, 2], "MAX", "VALID", strides=[2, 2, 2]),
               wr.nn.pool(x, [2, 2, 2], "AVG", "SAME", strides=[1, 1, 1]),
               wr.nn.conv_transpose(wr.ones([2, 5, 6, 4, 4]), f, [2, 5, 6, 4, 3], [1, 1, 1])]
        want = [wr.nn.conv3d(x, f, [1, 1, 2, 1, 1], "SAME"),
                wr.nn.max_pool3d(x, [1, 2, 2, 2, 1], [1, 2, 2, 2, 1], "VALID"),
                wr.nn.avg_pool3d(x, [1, 2, 2, 2, 1], [1, 1, 1, 1, 1], "SAME"),
                wr.nn.conv3d_transpose(wr.ones([2, 5, 6, 4, 4]), f, [2, 5, 6, 4, 3],
                                       [1, 1, 1, 1, 1])]
        with wr.Session() as sess:
            got, want = sess.run([got, want])
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-6)
    assert got[1].shape == (2, 2, 3, 2, 3)
