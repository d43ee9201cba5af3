"""wr.py_func / wr.numpy_function (TF1's tf.py_func): one program runs under
TensorFlow 2.21 and under Weir; the values, dtypes, static shapes, the error
class of each failing function and the missing gradient must agree."""
import threading

import numpy as np
import pytest

import weir as wr
from tf1_run import run_tf, run_weir

PROGRAM = '''
import numpy as np
calls = []
x = tf.placeholder(tf.float32, [None])
def clip_and_count(a):
    calls.append(len(a))
    return np.clip(a, 0, 1), np.int32((a > 1).sum())
y, n = tf.py_func(clip_and_count, [x], [tf.float32, tf.int32])
doubled = tf.numpy_function(lambda a: a * 2, [y], tf.float32, stateful=False)
words = tf.py_func(lambda a: np.array(["n=%d" % len(a), "ok"]), [x], tf.string)
two_inputs = tf.py_func(lambda a, b: (a + b).astype(np.float32), [x, tf.constant(1.5)], tf.float32)
scalar_out = tf.py_func(lambda a: np.float32(a.sum()), [x], [tf.float32])
side = tf.py_func(lambda: calls.append("side"), [], [])
failing = {
    "wrong_dtype": tf.py_func(lambda a: a.astype(np.float64), [x], tf.float32),
    "python_int": tf.py_func(lambda a: 3, [x], tf.int32),
    "value_error": tf.py_func(lambda a: int("x"), [x], tf.float32),
    "stop_iteration": tf.py_func(lambda a: next(iter([])), [x], tf.float32),
    "key_error": tf.py_func(lambda a: {}["k"], [x], tf.float32),
    "not_implemented": tf.py_func(lambda a: (_ for _ in ()).throw(NotImplementedError("no")), [x], tf.float32),
    "too_many": tf.py_func(lambda a: (a, a), [x], tf.float32),
}
grads = tf.gradients(tf.reduce_sum(y) + tf.reduce_sum(two_inputs), [x])
out = {"shapes": [t.shape.ndims for t in (y, n, doubled, words)], "dtypes": [t.dtype.name for t in (y, n, words)],
       "op_types": [y.op.type, doubled.op.type, side.type], "grad_is_none": [g is None for g in grads]}
feed = {x: np.array([-1.0, 0.5, 3.0], np.float32)}
with tf.Session() as sess:
    values = sess.run([y, n, doubled, words, two_inputs, scalar_out], feed)
    out["values"] = [np.asarray(v).tolist() if not isinstance(v, list) else [np.asarray(e).tolist() for e in v]
                     for v in values[:3]] + [[w.decode("utf-8") for w in values[3]], values[4].tolist(),
                                             [float(v) for v in values[5]]]
    sess.run(side)
    errors_seen = {}
    for key, t in sorted(failing.items()):
        try:
            sess.run(t, feed)
            errors_seen[key] = "no error"
        except tf.errors.OpError as e:
            errors_seen[key] = type(e).__name__
    out["errors"] = errors_seen
out["calls"] = calls
RESULT = out
'''


def test_py_func_as_tf():
    expected = run_tf(PROGRAM)
    got = run_weir(PROGRAM)
    assert got == expected
    assert got["values"][1] == 1 and got["values"][3] == ["n=3", "ok"]
    assert got["errors"]["wrong_dtype"] == "InvalidArgumentError"
    assert got["errors"]["stop_iteration"] == "OutOfRangeError"
    assert got["errors"]["key_error"] == "UnknownError"
    assert got["grad_is_none"] == [True]


def test_errors_carry_the_python_error_and_name_the_node():
    with wr.Graph().as_default():
        x = wr.placeholder(wr.float32, [None])

        def broken(a):
            raise ValueError("bad batch of %d" % len(a))
        y = wr.py_func(broken, [x], wr.float32, name="my_func")
        z = wr.py_func(lambda a: a.astype(np.float64), [x], wr.float32, name="wrong")
        with wr.Session() as sess:
            with pytest.raises(wr.errors.InvalidArgumentError) as info:
                sess.run(y, {x: [1.0, 2.0]})
            assert "my_func" in str(info.value) and "bad batch of 2" in str(info.value)
            assert "Traceback" in str(info.value) and info.value.op is y.op
            with pytest.raises(wr.errors.InvalidArgumentError,
                               match="expects float but the array is double"):
                sess.run(z, {x: [1.0]})


def test_concurrent_steps_call_the_function_from_executor_threads():
    # The kernel takes the GIL on whatever thread runs it; steps from several
    # Python threads (each releasing the GIL while it runs) must not deadlock.
    with wr.Graph().as_default():
        x = wr.placeholder(wr.float32, [])
        y = wr.py_func(lambda a: np.float32(a * a), [x], wr.float32)
        results = {}
        with wr.Session() as sess:
            def worker(i):
                results[i] = [float(sess.run(y, {x: float(i + k)})) for k in range(20)]
            threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=60)
            assert not any(t.is_alive() for t in threads)
        assert results == {i: [float((i + k) ** 2) for k in range(20)] for i in range(4)}


def test_bad_arguments():
    with wr.Graph().as_default():
        with pytest.raises(TypeError, match="callable"):
            wr.py_func(3, [], wr.float32)
        with pytest.raises(TypeError):
            wr.py_func(lambda: 0, [], "not a dtype")


def test_functions_are_released_with_their_graph():
    import gc
    import weakref
    from weir.ops import script_ops

    class Callback:
        def __call__(self, a):
            return a
    callback = Callback()
    alive = weakref.ref(callback)
    graph = wr.Graph()
    with graph.as_default():
        x = wr.placeholder(wr.float32, [])
        y = wr.py_func(callback, [x], wr.float32)
        with wr.Session() as sess:
            assert sess.run(y, {x: 2.0}) == 2.0
    token = y.op.get_attr("token")
    token = token.decode() if isinstance(token, bytes) else token
    assert token in script_ops._functions
    del callback, graph, x, y, sess
    gc.collect()
    assert token not in script_ops._functions and alive() is None


@pytest.mark.parametrize("func, tout, error, text", [
    (lambda a: {"a": 1}, wr.float32, wr.errors.InvalidArgumentError, "array of Python objects"),
    (lambda a: [[1.0], [1.0, 2.0]], [wr.float32], wr.errors.InvalidArgumentError,
     "returned 2 values, but Tout has 1"),
    (lambda a: None, wr.float32, wr.errors.InvalidArgumentError, "returned 0 values"),
    (lambda a: a, wr.resource, wr.errors.InvalidArgumentError, "expects resource"),
    (lambda a: (_ for _ in ()).throw(SystemExit(3)), wr.float32, wr.errors.UnknownError,
     "SystemExit: 3"),
    (lambda a: (_ for _ in ()).throw(KeyboardInterrupt()), wr.float32, wr.errors.CancelledError,
     "KeyboardInterrupt"),
])
def test_hostile_returns_fail_the_step_only(func, tout, error, text):
    with wr.Graph().as_default():
        x = wr.placeholder(wr.float32, [None])
        y = wr.py_func(func, [x], tout)
        ok = wr.py_func(lambda a: a * 2, [x], wr.float32)
        with wr.Session() as sess:
            with pytest.raises(error, match=text):
                sess.run(y, {x: [1.0]})
            assert sess.run(ok, {x: [1.0]}).tolist() == [2.0]  # the session still works
