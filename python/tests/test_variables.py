"""wr.Variable (resource variables with TF1's API), initialization, state ops,
variable scopes / get_variable, and the global step."""
import numpy as np
import pytest

import weir as wr
from weir.framework import errors
from weir.framework import ops
from weir.ops import state_ops
from weir.ops import variable_scope
from weir.ops import variables
from weir.train import training_util


@pytest.fixture
def graph():
    g = ops.Graph()
    with g.as_default():
        yield g


def test_variable_basics(graph):
    init = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    v = wr.Variable(init, name="v")
    assert v.name == "v:0"
    assert v.op.name == "v" and v.op.type == "VarHandleOp"
    assert v.op.get_attr("shared_name") in (b"v", "v")
    assert v.dtype == wr.float32
    assert v.shape.as_list() == [2, 2] and v.get_shape().as_list() == [2, 2]
    assert v.graph is graph
    assert v.initializer.type == "AssignVariableOp"
    # TF's resource-variable names
    assert v.initial_value.op.name == "v/Initializer/initial_value"
    assert v.initializer.name == "v/Assign"
    assert v._as_graph_element().name == "v/Read/ReadVariableOp:0"
    assert variables.global_variables() == [v]
    assert variables.trainable_variables() == [v]
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(v), init)
        np.testing.assert_array_equal(v.eval(session=sess), init)
        np.testing.assert_array_equal(sess.run(v.read_value()), init)
        np.testing.assert_array_equal(sess.run(v.value()), init)


def test_unique_names_and_scopes(graph):
    a = wr.Variable(1.0)
    b = wr.Variable(2.0)
    with wr.name_scope("outer"):
        c = wr.Variable(lambda: np.float32(3.0), name="w")
    assert (a.name, b.name, c.name) == ("Variable:0", "Variable_1:0", "outer/w:0")
    # a callable's ops are built under "<var>/Initializer"
    assert c.initial_value.op.name == "outer/w/Initializer/initial_value"


def test_uninitialized_read_names_the_variable(graph):
    v = wr.Variable(np.zeros([3], np.float32), name="never_initialized")
    with wr.Session() as sess:
        with pytest.raises(errors.FailedPreconditionError) as info:
            sess.run(v)
        assert "never_initialized" in str(info.value)


def test_assign_family(graph):
    v = wr.Variable(np.array([1.0, 2.0], np.float32), name="v")
    assign = v.assign([5.0, 6.0])
    add = v.assign_add(np.array([1.0, 1.0], np.float32))
    sub = state_ops.assign_sub(v, [0.5, 0.5])
    no_read = v.assign([0.0, 0.0], read_value=False)
    assert isinstance(no_read, ops.Operation)
    with wr.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(assign), [5.0, 6.0])
        np.testing.assert_array_equal(sess.run(add), [6.0, 7.0])
        np.testing.assert_array_equal(sess.run(sub), [5.5, 6.5])
        np.testing.assert_array_equal(sess.run(state_ops.assign_add(v, [1.0, 2.0])), [6.5, 8.5])
        assert sess.run(no_read) is None
        np.testing.assert_array_equal(sess.run(v), [0.0, 0.0])
        # load: sets the value by feeding the initializer
        v.load(np.array([9.0, 8.0], np.float32), sess)
        np.testing.assert_array_equal(sess.run(v), [9.0, 8.0])
    with pytest.raises(TypeError):
        state_ops.assign(wr.constant(1.0), 2.0)


def test_assign_shape_mismatch_names_variable(graph):
    v = wr.Variable(np.zeros([2], np.float32), name="shaped")
    p = wr.placeholder(wr.float32)
    bad = v.assign(p)
    with wr.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(errors.InvalidArgumentError) as info:
            sess.run(bad, {p: np.zeros([3], np.float32)})
        assert "shaped" in str(info.value)


def test_operators_and_conversion(graph):
    v = wr.Variable(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32), name="m")
    x = wr.constant(np.array([[1.0, 0.0], [0.0, 2.0]], np.float32))
    outs = [v * 2, 2 * v, v + v, -v, v - 1.0, v[0], v[:, 1], wr.matmul(x, v), x @ v,
            wr.reduce_sum(v)]
    with wr.Session() as sess:
        sess.run(v.initializer)
        got = sess.run(outs)
    m = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    xm = np.array([[1.0, 0.0], [0.0, 2.0]], np.float32)
    expected = [m * 2, 2 * m, m + m, -m, m - 1, m[0], m[:, 1], xm @ m, xm @ m, m.sum()]
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e)
    t = ops.convert_to_tensor(v)
    assert t.op.type == "ReadVariableOp" and t.dtype == wr.float32
    with pytest.raises(ValueError):
        ops.convert_to_tensor(v, dtype=wr.int32)
    with pytest.raises(TypeError):
        bool(v)


def test_read_after_control_dependency(graph):
    v = wr.Variable(1.0, name="counter")
    inc = v.assign_add(1.0, read_value=False)
    with wr.control_dependencies([inc]):
        after = v * 10.0  # a new read, ordered after the increment
    with wr.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(after) == 20.0
        assert sess.run(after) == 30.0


def test_initializer_ignores_outer_control_dependencies(graph):
    gate = wr.constant(1.0, name="gate")
    with wr.control_dependencies([gate.op]):
        v = wr.Variable(2.0, name="v")
        w = v * 3.0
    assert v.initializer.control_inputs == []
    assert v.initial_value.op.control_inputs == []
    assert gate.op in w.op.control_inputs or any(
        gate.op in i.op.control_inputs for i in w.op.inputs)


def test_collections_and_initializers(graph):
    a = wr.Variable(1.0, name="a")
    b = wr.Variable(2.0, name="b", trainable=False)
    loc = wr.Variable(3.0, name="loc", trainable=False,
                      collections=[wr.GraphKeys.LOCAL_VARIABLES])
    assert variables.global_variables() == [a, b]
    assert variables.trainable_variables() == [a]
    assert variables.local_variables() == [loc]
    assert wr.global_variables_initializer().type == "NoOp"
    report = variables.report_uninitialized_variables()
    only_a = variables.variables_initializer([a])
    with wr.Session() as sess:
        assert sorted(sess.run(report).tolist()) == [b"a", b"b", b"loc"]
        assert not sess.run(variables.is_variable_initialized(a))
        sess.run(only_a)
        assert sess.run(variables.is_variable_initialized(a))
        assert sorted(sess.run(report).tolist()) == [b"b", b"loc"]
        sess.run(variables.local_variables_initializer())
        assert sess.run(report).tolist() == [b"b"]
        check = variables.assert_variables_initialized([a, b])
        with pytest.raises(errors.InvalidArgumentError):
            sess.run(check)
        sess.run(variables.initialize_all_variables())
        assert sess.run(report).tolist() == []
        sess.run(check)
        assert sess.run(loc) == 3.0


def test_variable_from_other_variable_and_validate(graph):
    a = wr.Variable(np.arange(4, dtype=np.float64), name="a")
    b = wr.Variable(a.initial_value * 2, name="b")
    assert b.dtype == wr.float64
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(b), np.arange(4) * 2.0)
    with pytest.raises(ValueError):
        wr.Variable(None)
    p = wr.placeholder(wr.float32, [None])
    with pytest.raises(ValueError):
        wr.Variable(p)  # unknown shape with validate_shape=True
    u = wr.Variable(p, validate_shape=False, name="unshaped")
    assert u.shape.ndims is None
    grows = wr.Variable(np.zeros([2], np.float32), shape=[None], name="grows")
    assert grows.shape.as_list() == [None]
    longer = grows.assign(np.ones([3], np.float32))
    with wr.Session() as sess:
        sess.run(grows.initializer)
        np.testing.assert_array_equal(sess.run(longer), [1.0, 1.0, 1.0])
        sess.run(u.initializer, {p: np.ones([4], np.float32)})
        assert sess.run(u).shape == (4,)
    with pytest.raises(ValueError):
        wr.Variable(np.zeros([2], np.float32), shape=[3])


def test_initialized_value(graph):
    a = wr.Variable(np.float32(2.0), name="a")
    # b's initial value reads a once a is initialized, else uses a's initial value
    b = wr.Variable(a.initialized_value() * 3.0, name="b")
    with wr.Session() as sess:
        sess.run(b.initializer)  # a is not initialized: its initial value is used
        assert sess.run(b) == 6.0
        sess.run(a.initializer)
        sess.run(a.assign(5.0))
        sess.run(b.initializer)
        assert sess.run(b) == 15.0


def test_scatter_and_count_up_to(graph):
    v = wr.Variable(np.zeros([4], np.float32), name="rows")
    upd = state_ops.scatter_update(v, [1, 3], np.array([5.0, 7.0], np.float32))
    add = state_ops.scatter_add(v, [1], np.array([1.0], np.float32))
    c = wr.Variable(np.int64(0), name="count")
    up = state_ops.count_up_to(c, 2)
    gather = v.sparse_read([3, 1])
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(upd), [0, 5, 0, 7])
        np.testing.assert_array_equal(sess.run(add), [0, 6, 0, 7])
        np.testing.assert_array_equal(sess.run(gather), [7, 6])
        assert sess.run(up) == 0
        assert sess.run(up) == 1
        with pytest.raises(errors.OutOfRangeError):
            sess.run(up)


# --- variable scopes ------------------------------------------------------------

def test_get_variable_names_and_reuse(graph):
    with variable_scope.variable_scope("layer"):
        w = variable_scope.get_variable("w", [3, 4])
        b = variable_scope.get_variable("b", [4], initializer=wr.zeros_initializer())
    assert w.name == "layer/w:0" and b.name == "layer/b:0"
    with variable_scope.variable_scope("layer", reuse=True):
        assert variable_scope.get_variable("w", [3, 4]) is w
        with variable_scope.variable_scope("inner"):  # reuse is inherited
            assert variable_scope.get_variable_scope().reuse is True
    with variable_scope.variable_scope("layer") as scope:
        scope.reuse_variables()
        assert variable_scope.get_variable("b") is b
    with pytest.raises(ValueError, match="Variable layer/w already exists, disallowed. Did "
                                         "you mean to set reuse=True"):
        with variable_scope.variable_scope("layer"):
            variable_scope.get_variable("w", [3, 4])
    with pytest.raises(ValueError, match="Variable layer/missing does not exist, or was not "
                                         "created with tf.get_variable()"):
        with variable_scope.variable_scope("layer", reuse=True):
            variable_scope.get_variable("missing", [1])
    with pytest.raises(ValueError, match="Trying to share variable layer/w, but specified "
                                         "shape"):
        with variable_scope.variable_scope("layer", reuse=True):
            variable_scope.get_variable("w", [4, 4])
    with variable_scope.variable_scope("auto", reuse=variable_scope.AUTO_REUSE):
        x1 = variable_scope.get_variable("x", [2])
    with variable_scope.variable_scope("auto", reuse=variable_scope.AUTO_REUSE):
        x2 = variable_scope.get_variable("x", [2])
    assert x1 is x2


def test_get_variable_initializers(graph):
    w = variable_scope.get_variable("glorot", [20, 30])
    i = variable_scope.get_variable("ints", [3], dtype=wr.int32)
    c = variable_scope.get_variable("const", initializer=np.array([1.5, 2.5], np.float32))
    with variable_scope.variable_scope("scoped", initializer=wr.constant_initializer(4.0)):
        s = variable_scope.get_variable("s", [2])
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        wv, iv, cv, sv = sess.run([w, i, c, s])
    limit = np.sqrt(6.0 / (20 + 30))
    assert wv.shape == (20, 30) and np.abs(wv).max() <= limit
    assert wv.std() > limit / 4  # not all zeros: uniform(-limit, limit) has std limit/sqrt(3)
    np.testing.assert_array_equal(iv, [0, 0, 0])
    assert i.dtype == wr.int32
    np.testing.assert_array_equal(cv, [1.5, 2.5])
    np.testing.assert_array_equal(sv, [4.0, 4.0])
    with pytest.raises(ValueError, match="must be fully defined"):
        variable_scope.get_variable("partial", [None, 3])


def test_variable_scope_name_scopes_and_defaults(graph):
    # Every expected name below is what TensorFlow 2.21's tf.compat.v1 gives
    # for the same code (checked side by side).
    vs, get = variable_scope.variable_scope, variable_scope.get_variable
    with vs("foo") as foo:
        v = get("v", [1])
        assert wr.constant(1.0, name="c").op.name == "foo/c"
    assert foo.name == "foo" and foo.original_name_scope == "foo/"
    with vs("foo", reuse=True):
        assert get("v") is v
        # the name scope is made unique, the variable scope not
        assert wr.constant(1.0, name="c").op.name == "foo_1/c"
        assert variable_scope.get_variable_scope().original_name_scope == "foo_1/"
    with vs("a"):
        with vs(foo):  # a scope object: its variable scope, a new name scope
            assert get("x", [1]).name == "foo/x:0"
            assert wr.constant(1.0, name="d").op.name == "a/foo/d"
            assert variable_scope.get_variable_scope().original_name_scope == "foo/"
    with vs(foo):
        assert wr.constant(1.0, name="d").op.name == "foo_2/d"
    with vs("r", reuse=True):
        with vs("in", reuse=False):  # reuse cannot be turned off
            assert variable_scope.get_variable_scope().reuse is True
        with vs(foo):  # a scope object keeps its own reuse
            assert variable_scope.get_variable_scope().reuse is False
    with wr.name_scope("ns"):
        assert get("z", [1]).name == "z:0"  # name scopes do not name variables
    with vs("aux", auxiliary_name_scope=False):
        assert wr.constant(1.0, name="f").op.name == "f"
        assert get("g", [1]).name == "aux/g:0"
    with vs("a"):
        with vs("b"):
            assert get("w", [1]).name == "a/b/w:0"
    with pytest.raises(ValueError, match="reuse=True cannot be used without a name_or_scope"):
        with vs(None, default_name="d", reuse=True):
            pass


def test_default_names_restart_when_a_scope_is_reentered(graph):
    vs, get = variable_scope.variable_scope, variable_scope.get_variable
    names = []
    with vs("outer"):
        for _ in range(2):
            with vs(None, default_name="dense"):
                names.append(get("k", [1]).name)
    with vs("outer", reuse=True):  # as a model built twice with reuse=True
        for _ in range(2):
            with vs(None, default_name="dense"):
                names.append(get("k", [1]).name)
                names.append(wr.constant(1.0, name="e").name)
    assert names == ["outer/dense/k:0", "outer/dense_1/k:0", "outer/dense/k:0",
                     "outer_1/dense/e:0", "outer/dense_1/k:0", "outer_1/dense_1/e:0"]
    with vs("foo"):
        pass
    with vs("foo"):
        pass
    with vs(None, default_name="foo"):
        assert get("h", [1]).name == "foo_1/h:0"
    with vs(None, default_name="outer"):
        assert get("y", [1]).name == "outer_1/y:0"


def test_regularizer_and_custom_getter(graph):
    def l2(x):
        return wr.reduce_sum(x * x)
    with variable_scope.variable_scope("reg", regularizer=l2):
        w = variable_scope.get_variable("w", initializer=np.array([1.0, 2.0], np.float32))
        variable_scope.get_variable("free", [1], regularizer=variable_scope.no_regularizer)
    losses = wr.get_collection(wr.GraphKeys.REGULARIZATION_LOSSES)
    assert len(losses) == 1
    seen = []

    def getter(next_getter, name, *args, **kwargs):
        seen.append(name)
        return next_getter(name, *args, **kwargs)
    with variable_scope.variable_scope("custom", custom_getter=getter):
        variable_scope.get_variable("g", [2])
    assert seen == ["custom/g"]
    with wr.Session() as sess:
        sess.run(w.initializer)
        assert sess.run(losses[0]) == pytest.approx(5.0)


# --- global step ------------------------------------------------------------------

def test_global_step(graph):
    assert training_util.get_global_step() is None
    gs = training_util.get_or_create_global_step()
    assert gs.op.name == "global_step" and gs.dtype == wr.int64
    assert gs.shape.as_list() == []
    assert training_util.get_global_step() is gs
    assert training_util.get_or_create_global_step() is gs
    assert gs in variables.global_variables() and gs not in variables.trainable_variables()
    with pytest.raises(ValueError, match="already exists"):
        training_util.create_global_step()
    training_util.assert_global_step(gs)
    with pytest.raises(TypeError):
        training_util.assert_global_step(wr.constant(1.0))
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        assert training_util.global_step(sess, gs) == 0
        sess.run(gs.assign_add(np.int64(5)))
        assert training_util.global_step(sess, gs) == 5


def test_assign_of_an_incompatible_shape_is_a_value_error_when_built():
    # Reviewer's find: assign([1, 2, 3]) to a [2] variable used to build and fail
    # only at run time; TF raises ValueError when the graph is built.
    with wr.Graph().as_default():
        v = wr.Variable([1, 2], name="iv")
        with pytest.raises(ValueError, match="Shape mismatch"):
            v.assign([1, 2, 3])
        with pytest.raises(ValueError, match="Shape mismatch"):
            v.assign_add([[1, 2]])
        grow = wr.Variable([1.0], shape=[None], name="grow")  # a partial shape may change size
        bigger = grow.assign([1.0, 2.0, 3.0])
        with wr.Session() as sess:
            sess.run(wr.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(v.assign([5, 6])), [5, 6])
            np.testing.assert_array_equal(sess.run(bigger), [1.0, 2.0, 3.0])


def test_get_variable_shape_rules_match_tf():
    # Reviewer's find: get_variable("v") without a shape made a scalar and a
    # constant initializer with a shape was accepted; TF raises ValueError for
    # both (checked against TF 2.21's tf.compat.v1.get_variable).
    with wr.Graph().as_default():
        with pytest.raises(ValueError, match="must be fully defined, but instead was <unknown>"):
            wr.get_variable("no_shape")
        with pytest.raises(ValueError, match="must be fully defined"):
            wr.get_variable("no_shape_init", initializer=wr.zeros_initializer())
        for value in ([1.0, 2.0], np.ones(2, np.float32), wr.constant([1.0, 2.0])):
            with pytest.raises(ValueError, match="If initializer is a constant, do not specify"):
                wr.get_variable("const_and_shape", [2], initializer=value)
        assert wr.get_variable("from_value", initializer=np.ones([2, 3], np.float32)).shape == [2, 3]
        assert wr.get_variable("scalar", [], initializer=wr.ones_initializer()).shape == []
        step = wr.train.get_or_create_global_step()
        assert (step.dtype, step.shape.as_list()) == (wr.int64, [])


def test_string_get_variable_defaults_to_empty_strings():
    # TF1's default initializer for a string variable is zeros (b""); weir
    # raised "An initializer ... is required" and zeros_initializer failed.
    with wr.Graph().as_default():
        v = wr.get_variable("names", [2], dtype=wr.string)
        with wr.Session() as sess:
            sess.run(wr.global_variables_initializer())
            assert sess.run(v).tolist() == [b"", b""]
            assert sess.run(v.assign(["a", "bc"])).tolist() == [b"a", b"bc"]
            assert sess.run(wr.zeros_initializer()([1], dtype=wr.string)).tolist() == [b""]


_VALUE_DTYPE_PROGRAM = '''
import json
import numpy as np
CASES = [("np_int32", dict(initializer=np.int32(0))), ("np_float64", dict(initializer=np.float64(1.5))),
         ("py_float", dict(initializer=1.5)), ("py_int", dict(initializer=3)), ("py_bool", dict(initializer=True)),
         ("int64_array", dict(initializer=np.array([1, 2], np.int64))), ("float_list", dict(initializer=[1.0, 2.0])),
         ("float64_array", dict(initializer=np.array([1.0, 2.0]))),
         ("int64_tensor", dict(initializer=tf.constant(2, tf.int64))),
         ("same_dtype", dict(initializer=np.float64(2.0), dtype=tf.float64)),
         ("float32_as_float64", dict(initializer=np.float32(1), dtype=tf.float64)),
         ("int_as_float32", dict(initializer=3, dtype=tf.float32)),
         ("int_as_int64", dict(initializer=3, dtype=tf.int64))]
out = {}
for name, kwargs in CASES:
    try:
        v = tf.get_variable(name, **kwargs)
        out[name] = [v.dtype.base_dtype.name, v.shape.as_list()]
    except ValueError as e:
        out[name] = ["ValueError", str(e)]
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    out["values"] = [repr(sess.run(v).tolist()) for v in tf.global_variables()]
print("RESULT " + json.dumps(out))
'''


def test_get_variable_infers_the_dtype_of_a_value_initializer_as_tf():
    # Another helper's find: get_variable("t", initializer=np.int32(0)) made a
    # float32 variable; TF takes the dtype from the value and refuses an
    # explicit dtype that differs. Checked against TF 2.21 run on the same text.
    import json
    import os
    import pathlib
    import subprocess
    from peers import PEERS_PYTHON
    if not pathlib.Path(PEERS_PYTHON).exists():
        pytest.skip(f"TensorFlow's interpreter {PEERS_PYTHON} is missing")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    env.pop("PYTHONPATH", None)
    tf_text = "import tensorflow.compat.v1 as tf\ntf.disable_eager_execution()\n" + _VALUE_DTYPE_PROGRAM
    proc = subprocess.run([PEERS_PYTHON, "-c", tf_text], env=env, capture_output=True, text=True,
                          timeout=300)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, proc.stderr[-3000:]
    expected = json.loads(lines[-1][len("RESULT "):])
    with wr.Graph().as_default():
        namespace = {"tf": wr}
        import contextlib
        import io
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(_VALUE_DTYPE_PROGRAM, namespace)
    got = json.loads(buf.getvalue().split("RESULT ", 1)[1])
    assert got == expected
    assert got["np_int32"] == ["int32", []] and got["np_float64"] == ["float64", []]
    assert got["int_as_int64"][0] == "ValueError"


def test_a_fetched_variable_is_its_value_at_the_end_of_the_step(graph):
    # TF1 programs print the global step they fetch with the train op; TensorFlow's
    # reference variables give the incremented value (TF 2.21 with disable_v2_behavior:
    # 1, 2, 3), so weir's v1 variables do too.
    x = wr.compat.v1.placeholder(wr.float32, [None, 2])
    w = wr.compat.v1.get_variable("w", initializer=np.array([[0.5], [-1.0]], np.float32))
    step = wr.compat.v1.train.get_or_create_global_step()
    loss = wr.reduce_sum(wr.matmul(x, w))
    train = wr.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    bump = w.assign(w + 1.0)
    xv = np.array([[1.0, 2.0]], np.float32)
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        want_w = np.array([[0.5], [-1.0]], np.float32)
        for want_step in (1, 2, 3):
            _, got_step, got_w = sess.run([train, step, w], {x: xv})
            want_w = want_w - 0.1 * xv.T
            assert got_step == want_step
            np.testing.assert_allclose(got_w, want_w, rtol=1e-6)
        _, got_w = sess.run([bump, w])
        np.testing.assert_allclose(got_w, want_w + 1.0, rtol=1e-6)
        assert sess.run(step) == 3


def test_resource_variables_keep_the_unordered_read(graph):
    # use_resource=True (or enable_resource_variables()) gives TF2's resource variables,
    # whose fetched read is not ordered after the step's updates.
    ref = wr.Variable(1.0, name="ref")
    res = wr.Variable(1.0, name="res", use_resource=True)
    assert ref._graph_element.op.get_attr("_fetch_at_step_end") is True
    assert res._graph_element.op.get_attr("_fetch_at_step_end") is False
    assert not variables.resource_variables_enabled()
    wr.compat.v1.enable_resource_variables()
    try:
        assert variables.resource_variables_enabled()
        with wr.compat.v1.variable_scope("s"):
            v = wr.compat.v1.get_variable("v", [], use_resource=None)
        assert v._graph_element.op.get_attr("_fetch_at_step_end") is False
    finally:
        wr.compat.v1.disable_resource_variables()
    with wr.compat.v1.variable_scope("t", use_resource=True):
        v = wr.compat.v1.get_variable("v", [])
    assert v._graph_element.op.get_attr("_fetch_at_step_end") is False
