"""weir.Session: fetch structures, feeds and their validation, graph growth,
the plan cache, errors pointing at the user's line, make_callable, run
options and metadata, close semantics and concurrent runs."""
import collections
import json
import sys
import threading
import time

import numpy as np
import pytest

import weir as wr
from weir import raw_ops
from weir.client import session as session_lib
from weir.client import timeline
from weir.framework import constant_op
from weir.framework import errors
from weir.framework import ops


def placeholder(dtype, shape=None, name=None):
    if shape is None:
        return raw_ops.Placeholder(dtype=dtype, name=name)
    return raw_ops.Placeholder(dtype=dtype, shape=shape, name=name)


def const(value, dtype=None, name=None):
    return constant_op.constant(value, dtype=dtype, name=name or "Const")


def here():
    """The line number of the caller."""
    return sys._getframe(1).f_lineno


@pytest.fixture
def graph():
    g = ops.Graph()
    with g.as_default():
        yield g


Point = collections.namedtuple("Point", ["x", "y"])


def test_single_fetches(graph):
    c = const(3.5, name="c")
    s = const(b"ab", name="s")
    v = const([[1, 2], [3, 4]], dtype=wr.int32, name="v")
    with wr.Session() as sess:
        value = sess.run(c)
        assert type(value) is np.float32 and value == 3.5  # 0-d: a numpy scalar, as TF
        assert sess.run(s) == b"ab"
        m = sess.run(v)
        assert isinstance(m, np.ndarray) and m.dtype == np.int32
        np.testing.assert_array_equal(m, [[1, 2], [3, 4]])
        # names: "node:idx" is the tensor, "node" the operation (None)
        np.testing.assert_array_equal(sess.run("v:0"), [[1, 2], [3, 4]])
        assert sess.run("c") is None
        assert sess.run(c.op) is None


def test_nested_structures(graph):
    a = const(1.0, name="a")
    b = const([2.0, 3.0], name="b")
    p = placeholder(wr.float32, [2], name="p")
    add = raw_ops.AddV2(x=b, y=p, name="add")
    with wr.Session() as sess:
        feed = {p: np.array([10.0, 20.0], np.float32)}
        out = sess.run({"a": a, "list": [add, b.op, (a, "b:0")], "pt": Point(x=a, y=add)}, feed)
        assert set(out) == {"a", "list", "pt"}
        assert out["a"] == 1.0
        lst = out["list"]
        assert isinstance(lst, list) and len(lst) == 3
        np.testing.assert_array_equal(lst[0], [12.0, 23.0])
        assert lst[1] is None  # an Operation gives None
        assert isinstance(lst[2], tuple) and lst[2][0] == 1.0
        np.testing.assert_array_equal(lst[2][1], [2.0, 3.0])
        assert type(out["pt"]) is Point
        assert out["pt"].x == 1.0
        np.testing.assert_array_equal(out["pt"].y, [12.0, 23.0])

        ordered = sess.run(collections.OrderedDict([("z", a), ("y", b)]))
        assert type(ordered) is collections.OrderedDict and list(ordered) == ["z", "y"]
        dd = sess.run(collections.defaultdict(list, {"k": a}))
        assert type(dd) is collections.defaultdict and dd.default_factory is list and dd["k"] == 1.0
        assert sess.run([]) == []
        assert sess.run(()) == ()
        # A tuple and a namedtuple of the same tensors are equal as tuples: the
        # cache must still build each one's own type.
        assert type(sess.run((a, a))) is tuple
        assert type(sess.run(Point(a, a))) is Point
        assert type(sess.run((a, a))) is tuple


def test_duplicate_fetches_fetched_once(graph):
    r = raw_ops.RandomUniform(shape=const([4], dtype=wr.int32), dtype=wr.float32, name="r")
    with wr.Session() as sess:
        first, again, by_name = sess.run([r, r, "r:0"])
        # one step computes r once; all three positions hold that value
        np.testing.assert_array_equal(first, again)
        np.testing.assert_array_equal(first, by_name)
        plan = sess._plan([r, r, "r:0"], None)
        assert plan.fetch.fetch_names == ["r:0"]
        second = sess.run(r)
        assert not np.array_equal(first, second)  # a new step draws new numbers


def test_feeds_convert_and_check(graph):
    x = placeholder(wr.float32, [None, 3], name="x")
    i64 = placeholder(wr.int64, [], name="i64")
    i32 = placeholder(wr.int32, [], name="i32")
    strings = placeholder(wr.string, [2], name="strings")
    ident = raw_ops.Identity(input=x)
    with wr.Session() as sess:
        # Python lists convert to the placeholder's dtype
        out = sess.run(ident, {x: [[1, 2, 3], [4, 5, 6]]})
        assert out.dtype == np.float32
        np.testing.assert_array_equal(out, [[1, 2, 3], [4, 5, 6]])
        # float64 arrays too (a copy, not an error, as TF)
        out = sess.run(ident, {"x:0": np.ones((1, 3))})
        assert out.dtype == np.float32 and out.shape == (1, 3)
        big = 2**53 + 1  # not representable as a float64: int64 must be exact
        assert sess.run(raw_ops.Identity(input=i64), {i64: big}) == big
        np.testing.assert_array_equal(sess.run(raw_ops.Identity(input=strings), {strings: ["a", b"bc"]}),
                                      np.array([b"a", b"bc"], dtype=object))

        with pytest.raises(ValueError, match=r"Cannot feed value of shape \(2, 2\) for Tensor 'x:0', "
                                             r"which has shape '\(\?, 3\)'"):
            sess.run(ident, {x: np.zeros((2, 2), np.float32)})
        with pytest.raises(ValueError, match="Cannot feed value of shape"):
            sess.run(ident, {x: np.zeros(3, np.float32)})
        with pytest.raises(TypeError, match="is not compatible with Tensor type"):
            sess.run(i32, {i32: 2**40})
        with pytest.raises(TypeError, match="Cannot interpret feed_dict key as Tensor"):
            sess.run(ident, {"nope:0": 1.0})
        with pytest.raises(TypeError, match="Cannot interpret feed_dict key as Tensor"):
            sess.run(ident, {3: 1.0})
        with pytest.raises(TypeError, match="The value of a feed cannot be a tf.Tensor"):
            sess.run(ident, {x: ident})
        other = ops.Graph()
        with other.as_default():
            foreign = placeholder(wr.float32, [], name="foreign")
        with pytest.raises(TypeError, match="is not an element of this graph"):
            sess.run(ident, {foreign: 1.0, x: [[1, 2, 3]]})
        with pytest.raises(ValueError, match="is not an element of this graph"):
            sess.run(foreign)
        with pytest.raises(TypeError, match="Cannot be None"):
            sess.run([ident, None])
        with pytest.raises(TypeError, match="must be a string or Tensor"):
            sess.run(1)
        with pytest.raises(ValueError, match="cannot be interpreted as a Tensor"):
            sess.run("missing:0")
        # an unfed placeholder is the C++ session's error, with its class
        with pytest.raises(errors.InvalidArgumentError, match="x"):
            sess.run(ident)


def test_feed_any_tensor_and_fetch_fed(graph):
    a = const(2.0, name="a")
    b = raw_ops.Mul(x=a, y=const(3.0), name="b")
    with wr.Session() as sess:
        assert sess.run(b) == 6.0
        assert sess.run(b, {a: 5.0}) == 15.0  # a non-placeholder tensor can be fed
        assert sess.run(a, {a: 7.0}) == 7.0   # fetching a fed tensor gives the fed value
        fed = np.array(8.0, np.float32)
        assert sess.run(a, {a: fed}) is fed  # the fed array itself, as TF
        got = sess.run([a, b], {a: fed})
        assert got[0] is fed and got[1] == 24.0


def test_graph_grows_between_runs(graph):
    a = const(1.0, name="a")
    with wr.Session() as sess:
        assert sess.run(a) == 1.0
        b = raw_ops.AddV2(x=a, y=const(41.0), name="b")
        assert sess.run(b) == 42.0
        c = raw_ops.Mul(x=b, y=const(2.0), name="c")
        assert sess.run([c, b]) == [84.0, 42.0]


def test_plan_cache_follows_changes(graph):
    x = placeholder(wr.float32, None, name="x")
    y = raw_ops.Identity(input=x)
    z = raw_ops.Neg(x=x)
    with wr.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {x: [1.0, 2.0]}), [1.0, 2.0])
        # a refined static shape applies to the cached signature
        x.set_shape([3])
        with pytest.raises(ValueError, match="Cannot feed value of shape"):
            sess.run(y, {x: [1.0, 2.0]})
        np.testing.assert_array_equal(sess.run(y, {x: [1.0, 2.0, 3.0]}), [1.0, 2.0, 3.0])
        # the same list object, changed between calls, is fetched as it is now
        fetches = [y]
        assert len(sess.run(fetches, {x: [1.0, 2.0, 3.0]})) == 1
        fetches.append(z)
        got = sess.run(fetches, {x: [1.0, 2.0, 3.0]})
        np.testing.assert_array_equal(got[1], [-1.0, -2.0, -3.0])
        # feed key order is part of the signature
        w = placeholder(wr.float32, [], name="w")
        s = raw_ops.Sub(x=raw_ops.Sum(input=x, reduction_indices=const(0)), y=w)
        assert sess.run(s, {x: [1.0, 2.0, 3.0], w: 1.0}) == 5.0
        assert sess.run(s, {w: 1.0, x: [1.0, 2.0, 3.0]}) == 5.0
        assert sess.run(s, {w: 2.0, x: [1.0, 2.0, 4.0]}) == 5.0


def test_fetch_shares_buffer_and_feed_is_not_copied(graph):
    x = placeholder(wr.float32, [1024], name="x")
    y = raw_ops.Identity(input=x)
    fed = np.arange(1024, dtype=np.float32)
    with wr.Session() as sess:
        out = sess.run(y, {x: fed})
        np.testing.assert_array_equal(out, fed)
        # Identity forwards its input: zero-copy both ways means the fetched
        # array is the fed memory.
        assert out.__array_interface__["data"][0] == fed.__array_interface__["data"][0]
        strided = np.arange(2048, dtype=np.float32)[::2]
        np.testing.assert_array_equal(sess.run(y, {x: strided}), strided)


def test_runtime_error_points_at_user_line(graph):
    a = placeholder(wr.float32, name="a")
    b = placeholder(wr.float32, name="b")
    m = raw_ops.MatMul(a=a, b=b, name="mm"); line = here()  # noqa: E702
    with wr.Session() as sess:
        with pytest.raises(errors.InvalidArgumentError) as info:
            sess.run(m, {a: np.ones((2, 3), np.float32), b: np.ones((4, 5), np.float32)})
    e = info.value
    assert isinstance(e, errors.OpError)
    assert e.error_code == errors.INVALID_ARGUMENT
    assert e.node_name == "mm" and e.op_type == "MatMul"
    assert e.op is m.op
    assert e.source_location == "%s:%d" % (__file__, line)
    text = str(e)
    assert "'mm' (MatMul)" in text
    assert "Original stack trace for 'mm':" in text
    assert 'File "%s", line %d' % (__file__, line) in text
    assert e.message == text


def test_out_of_range_and_deadline(graph):
    q = raw_ops.FIFOQueueV2(component_types=[wr.float32], shapes=[[]], capacity=10, name="q")
    enq = raw_ops.QueueEnqueueV2(handle=q, components=[const(1.5)], name="enq")
    [deq] = raw_ops.QueueDequeueV2(handle=q, component_types=[wr.float32], name="deq"); line = here()  # noqa
    close = raw_ops.QueueCloseV2(handle=q, name="close")
    with wr.Session() as sess:
        start = time.monotonic()
        with pytest.raises(errors.DeadlineExceededError):
            sess.run(deq, options=wr.RunOptions(timeout_in_ms=100))
        assert time.monotonic() - start < 10
        sess.run(enq)
        assert sess.run(deq) == 1.5  # the session still works after the timeout
        sess.run(close)
        with pytest.raises(errors.OutOfRangeError) as info:
            sess.run(deq)
        assert info.value.op is deq.op
        assert "line %d" % line in str(info.value)


def test_config_deadline_default(graph):
    q = raw_ops.FIFOQueueV2(component_types=[wr.float32], shapes=[[]], capacity=1)
    [deq] = raw_ops.QueueDequeueV2(handle=q, component_types=[wr.float32])
    with wr.Session(config=wr.ConfigProto(operation_timeout_in_ms=50)) as sess:
        with pytest.raises(errors.DeadlineExceededError):
            sess.run(deq)


def test_make_callable(graph):
    x = placeholder(wr.float32, [], name="x")
    y = placeholder(wr.float32, [2], name="y")
    sx = raw_ops.Mul(x=x, y=const(2.0))
    s = raw_ops.AddV2(x=sx, y=y)
    with wr.Session() as sess:
        double = sess.make_callable(sx, [x])
        assert double(3.0) == 6.0
        assert double(np.float32(4.5)) == 9.0
        assert double(np.array(1.25, np.float32)) == 2.5
        with pytest.raises(TypeError, match="1 feed value"):
            double()
        with pytest.raises(ValueError, match="Cannot feed value of shape"):
            double([1.0, 2.0])
        both = sess.make_callable({"s": s, "sx": [sx, s.op]}, [x, y])
        out = both(1.0, [10.0, 20.0])
        np.testing.assert_array_equal(out["s"], [12.0, 22.0])
        assert out["sx"][0] == 2.0 and out["sx"][1] is None
        constant = sess.make_callable(const(7, dtype=wr.int32))
        assert constant() == 7
        traced = sess.make_callable(s, [x, y], accept_options=True)
        metadata = wr.RunMetadata()
        np.testing.assert_array_equal(
            traced(0.5, [0.0, 1.0], options=wr.RunOptions(trace_level=wr.RunOptions.FULL_TRACE),
                   run_metadata=metadata), [1.0, 2.0])
        assert s.op.name in {n.node_name for n in metadata.step_stats}
        np.testing.assert_array_equal(traced(0.5, [0.0, 1.0]), [1.0, 2.0])
    with pytest.raises(RuntimeError, match="closed Session"):
        double(1.0)


def test_run_metadata_trace(graph):
    a = placeholder(wr.float32, [3], name="trace_a")
    b = raw_ops.Neg(x=a, name="trace_neg")
    b2 = raw_ops.Square(x=b, name="trace_square")
    with wr.Session() as sess:
        metadata = wr.RunMetadata()
        sess.run(b2, {a: [1.0, 2.0, 3.0]},
                 options=wr.RunOptions(trace_level=wr.RunOptions.FULL_TRACE), run_metadata=metadata)
        names = {n.node_name for n in metadata.step_stats}
        assert "trace_neg" in names
        neg = [n for n in metadata.step_stats if n.node_name == "trace_neg"][0]
        assert neg.op == "Neg" and "CPU" in neg.device and neg.end_micros >= neg.start_micros > 0
        assert any(d.node_stats for d in metadata.step_stats.dev_stats)
        trace = json.loads(metadata.chrome_trace())
        assert "trace_neg" in json.dumps(trace)
        ours = json.loads(timeline.Timeline(metadata.step_stats, graph).generate_chrome_trace_format(
            show_memory=True))
        slices = [e for e in ours["traceEvents"] if e["ph"] == "X"]
        assert any(e["args"]["name"] == "trace_neg" and e["name"] == "Neg" for e in slices)
        # a dataflow arrow from Neg's slice to Square's
        square = [e for e in slices if e["args"]["name"] == "trace_square"][0]
        starts = [e for e in ours["traceEvents"] if e["ph"] == "s"]
        ends = [e for e in ours["traceEvents"] if e["ph"] == "f"]
        assert len(starts) == len(ends) >= 1
        assert any(e["ts"] == square["ts"] for e in ends)
        untraced = wr.RunMetadata()
        sess.run(b, {a: [1.0, 2.0, 3.0]}, run_metadata=untraced)
        assert "trace_neg" not in {n.node_name for n in untraced.step_stats}


def test_close_and_context_manager(graph):
    c = const(1.0)
    sess = wr.Session()
    assert session_lib.get_default_session() is None
    with sess as entered:
        assert entered is sess
        assert session_lib.get_default_session() is sess
        assert wr.get_default_session() is sess
        assert ops.get_default_graph() is graph
        assert sess.run(c) == 1.0
    assert session_lib.get_default_session() is None
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.run(c)
    sess.close()  # idempotent

    other = ops.Graph()
    with other.as_default():
        d = const(2.0)
    s2 = wr.Session(graph=other)
    with s2.as_default():
        assert session_lib.get_default_session() is s2
    assert session_lib.get_default_session() is None
    assert s2.run(d) == 2.0  # as_default does not close
    assert s2.graph is other
    s2.close()


def test_eval_and_run_through_default_session(graph):
    c = const(5.0)
    with wr.Session():
        assert c.eval() == 5.0
        assert c.op.run() is None
    interactive = wr.InteractiveSession()
    try:
        assert session_lib.get_default_session() is interactive
        assert c.eval() == 5.0
    finally:
        interactive.close()
    assert session_lib.get_default_session() is None


def test_config_and_devices(graph):
    with wr.Session(devices=2, threads=2) as sess:
        devices = sess.list_devices()
        assert len(devices) == 2
        assert all(d.device_type == "CPU" for d in devices)
    config = wr.ConfigProto(device_count={"CPU": 3}, intra_op_parallelism_threads=1,
                            inter_op_parallelism_threads=2, allow_soft_placement=True,
                            log_device_placement=False)
    config.gpu_options.allow_growth = True  # accepted, ignored
    with wr.Session(config=config) as sess:
        assert len(sess.list_devices()) == 3
    with pytest.raises(errors.InvalidArgumentError, match="no session factory"):
        wr.Session("nosuch://localhost:2222")
    with pytest.raises(ValueError, match="no \"bogus\" field"):
        wr.ConfigProto(bogus=1)
    with pytest.raises(ValueError, match="no \"bogus\" field"):
        wr.RunOptions(bogus=1)


def test_concurrent_runs(graph):
    x = placeholder(wr.float32, [64], name="x")
    y = raw_ops.Mul(x=x, y=x)
    q = raw_ops.FIFOQueueV2(component_types=[wr.float32], shapes=[[]], capacity=4)
    [deq] = raw_ops.QueueDequeueV2(handle=q, component_types=[wr.float32])
    enq = raw_ops.QueueEnqueueV2(handle=q, components=[const(9.0)])
    with wr.Session() as sess:
        # A step blocked in one thread does not block another thread's steps
        # (the GIL is released while the C++ step runs).
        got = []
        waiter = threading.Thread(target=lambda: got.append(sess.run(deq)))
        waiter.start()
        time.sleep(0.05)
        failures = []

        def worker(seed):
            rng = np.random.default_rng(seed)
            for _ in range(200):
                v = rng.standard_normal(64).astype(np.float32)
                if not np.array_equal(sess.run(y, {x: v}), v * v):
                    failures.append(seed)

        workers = [threading.Thread(target=worker, args=(i,)) for i in range(3)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        assert not failures
        assert waiter.is_alive() and not got
        sess.run(enq)
        waiter.join(10)
        assert got == [9.0]


def test_variables_as_fetches_and_graph_def(graph):
    v = wr.Variable(np.array([1.0, 2.0], np.float32), name="v")
    bump = v.assign_add([10.0, 10.0])
    with wr.Session() as sess:
        sess.run(wr.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])
        out = sess.run({"v": v, "bump": bump.op if hasattr(bump, "op") else bump})
        assert out["bump"] is None
        np.testing.assert_array_equal(sess.run([v])[0], [11.0, 12.0])
        names = {node.name for node in sess.graph_def.node}
        assert "v" in names and len(names) == len(sess.graph_def.node)


# The same TF1 program run by TensorFlow 2.21 (tf.compat.v1) and by Weir
# (`import weir as tf1`): result structures, types and values, and the
# exception class and text of each failure, must agree.
_TWIN_PROGRAM = r'''
import collections, json, sys
import numpy as np

def describe(value):
    if isinstance(value, dict):
        return {"dict": type(value).__name__, "items": [[k, describe(v)] for k, v in value.items()]}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return {"namedtuple": list(value._fields), "items": [describe(v) for v in value]}
    if isinstance(value, (list, tuple)):
        return {type(value).__name__: [describe(v) for v in value]}
    if value is None:
        return None
    if isinstance(value, bytes):
        return {"bytes": value.decode()}
    array = np.asarray(value)
    if array.dtype == object:
        return {"np": type(value).__name__, "strings": [v.decode() for v in array.ravel()]}
    return {"np": type(value).__name__, "dtype": str(array.dtype), "value": array.tolist()}

def program(tf1, errors):
    P = collections.namedtuple("P", ["first", "second"])
    out = {}
    a = tf1.constant(1.5)
    b = tf1.constant([2.0, 3.0])
    p = tf1.placeholder(tf1.float32, [None, 2], name="p")
    s = tf1.add(b, p)
    i = tf1.placeholder(tf1.int64, [], name="i")
    names = tf1.constant([b"x", b"yz"])
    with tf1.Session() as sess:
        out["nested"] = describe(sess.run(
            {"list": [a, (s, b.op)], "pt": P(a, s), "od": collections.OrderedDict([("z", i), ("a", a)])},
            {p: [[1, 1], [2, 2]], i: 2**40 + 1}))
        out["strings"] = describe(sess.run([names, tf1.constant(b"s")]))
        out["dups"] = describe(sess.run([a, a, a.op]))
        for case, call in [
                ("shape", lambda: sess.run(s, {p: [[1, 2, 3]]})),
                ("unknown_key", lambda: sess.run(s, {"nope:0": 1.0})),
                ("none_fetch", lambda: sess.run([a, None])),
                ("int_fetch", lambda: sess.run(7)),
                ("unfed", lambda: sess.run(s))]:
            try:
                call()
                out[case] = "no error"
            except Exception as e:
                out[case] = type(e).__name__
        x = tf1.placeholder(tf1.float32, name="x")
        y = tf1.placeholder(tf1.float32, name="y")
        mm = tf1.matmul(x, y)
        try:
            sess.run(mm, {x: np.ones((2, 3)), y: np.ones((4, 5))})
        except errors.OpError as e:
            out["matmul"] = [type(e).__name__, e.op is mm.op]
        q = tf1.FIFOQueue(3, [tf1.float32], shapes=[[]])
        deq = q.dequeue()
        try:
            sess.run(deq, options=tf1.RunOptions(timeout_in_ms=50))
        except errors.OpError as e:
            out["timeout"] = type(e).__name__
        sess.run(q.close())
        try:
            sess.run(deq)
        except errors.OpError as e:
            out["closed"] = [type(e).__name__, e.op is deq.op]
    return out

if __name__ == "__main__":
    import os
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    import tensorflow as tf
    tf.compat.v1.disable_eager_execution()
    print("RESULT " + json.dumps(program(tf.compat.v1, tf.errors)))
'''


def test_same_program_as_tensorflow(tmp_path):
    import os
    import subprocess
    from peers import PEERS_PYTHON as peers
    if not os.path.exists(peers):
        pytest.skip("TensorFlow reference needs the peers venv /opt/weir-peers (missing)")
    script = tmp_path / "twin.py"
    script.write_text(_TWIN_PROGRAM)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["CUDA_VISIBLE_DEVICES"] = ""
    proc = subprocess.run([peers, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    reference = json.loads([line for line in proc.stdout.splitlines()
                            if line.startswith("RESULT ")][-1][len("RESULT "):])
    namespace = {}
    exec(compile(_TWIN_PROGRAM, str(script), "exec"), namespace)
    with ops.Graph().as_default():
        ours = json.loads(json.dumps(namespace["program"](wr, wr.errors)))
    assert json.dumps(ours, sort_keys=True, indent=1) == json.dumps(reference, sort_keys=True, indent=1)


def test_close_cancels_a_blocked_step(graph):
    q = raw_ops.FIFOQueueV2(component_types=[wr.float32], shapes=[[]], capacity=1)
    [deq] = raw_ops.QueueDequeueV2(handle=q, component_types=[wr.float32])
    sess = wr.Session()
    caught = []

    def blocked():
        try:
            sess.run(deq)
        except Exception as e:  # noqa: BLE001  (the test inspects whatever arrives)
            caught.append(e)

    thread = threading.Thread(target=blocked)
    thread.start()
    time.sleep(0.1)
    assert thread.is_alive()  # waiting on the empty queue
    sess.close()
    thread.join(10)
    assert not thread.is_alive()
    assert len(caught) == 1 and isinstance(caught[0], errors.CancelledError)
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.run(deq)


def test_device_and_thread_counts_are_checked_before_the_runtime_starts():
    # Reviewer's find: devices=100000 crashed the process (SIGSEGV: 100000 intra-op
    # pools), threads=10**6 hung for minutes, 2**40 was "std::bad_cast" and "4"
    # or 2.5 were accepted. Now each is a clear error, raised before any thread.
    for kwargs, cls, text in [
            ({"devices": 100000}, wr.errors.InvalidArgumentError, "devices must be in"),
            ({"devices": 0}, wr.errors.InvalidArgumentError, "devices must be in"),
            ({"threads": 10 ** 6}, wr.errors.InvalidArgumentError, "intra_op_threads"),
            ({"threads": 2 ** 40}, wr.errors.InvalidArgumentError, "1099511627776"),
            ({"threads": -3}, wr.errors.InvalidArgumentError, "got -3"),
            ({"devices": 1024, "threads": 64}, wr.errors.InvalidArgumentError, "65600 threads"),
            ({"threads": "4"}, TypeError, "must be an int"),
            ({"devices": 2.5}, TypeError, "must be an int"),
            ({"config": wr.ConfigProto(inter_op_parallelism_threads=100000)},
             wr.errors.InvalidArgumentError, "inter_op_threads")]:
        with pytest.raises(cls, match=text):
            wr.Session(graph=wr.Graph(), **kwargs)
    with wr.Graph().as_default() as g:
        c = wr.constant(2.0) * 3
        with wr.Session(graph=g, devices=np.int64(3), threads=2) as sess:
            assert sess.run(c) == 6.0
            assert len(sess.list_devices()) == 3


def test_allow_soft_placement_places_unsatisfiable_requests():
    # Reviewer's find: ConfigProto(allow_soft_placement=True) was ignored, so the
    # common TF1 `with tf.device("/gpu:0")` script failed on Weir's CPU devices.
    with wr.Graph().as_default() as g:
        c = wr.constant(2.0)
        with wr.device("/device:GPU:0"):
            on_gpu = wr.identity(c, name="on_gpu") * 3
        with wr.device("/job:worker/task:3/cpu:0"):
            remote = wr.identity(c, name="remote") + 1
        with wr.device("/cpu:1"):
            second = wr.identity(c, name="second") - 1
        with wr.device("/cpu:5"):
            past = wr.identity(c, name="past") * 0
        assert on_gpu.op.inputs[0].device == "/device:GPU:0"  # the request is kept
        soft = wr.ConfigProto(allow_soft_placement=True, device_count={"CPU": 2})
        with wr.Session(graph=g, config=soft) as sess:
            assert sess.run([on_gpu, remote, second, past]) == [6.0, 3.0, 1.0, 0.0]
        with wr.Session(graph=g, config=wr.ConfigProto(device_count={"CPU": 2})) as sess:
            with pytest.raises(wr.errors.InvalidArgumentError, match="cannot place.*GPU:0"):
                sess.run(on_gpu)
