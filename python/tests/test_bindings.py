"""weir._C directly: op registry, graph building, sessions, zero-copy feeds and
fetches, gradients, import, control flow, and errors mapped to weir.errors."""
import gc
import json
import time

import numpy as np
import pytest

from weir import _C
from weir.framework import errors

DT_FLOAT, DT_DOUBLE, DT_INT32, DT_STRING, DT_INT64, DT_BOOL, DT_RESOURCE = 1, 2, 3, 7, 9, 10, 20


class G:
    """A tiny builder over _C.Graph for the tests."""

    def __init__(self):
        self.g = _C.Graph()

    def add(self, op, name, inputs=(), attrs=None, **kw):
        return self.g.add_node(op, name, list(inputs), attrs or {}, **kw)

    def placeholder(self, name, dtype=DT_FLOAT, shape=None, **kw):
        return (self.add("Placeholder", name, [], {"dtype": dtype, "shape": shape}, **kw), 0)

    def const(self, name, value):
        value = np.asarray(value)
        dtype = {np.float32: DT_FLOAT, np.float64: DT_DOUBLE, np.int32: DT_INT32,
                 np.int64: DT_INT64}[value.dtype.type]
        return (self.add("Const", name, [], {"dtype": dtype, "value": value}), 0)

    def unary(self, op, name, x, **kw):
        return (self.add(op, name, [x], {}, **kw), 0)

    def binary(self, op, name, a, b, **kw):
        return (self.add(op, name, [a, b], {}, **kw), 0)

    def session(self, **config):
        return _C.Session(self.g.to_graph_def(), config)


def run(sess, feeds, fetches, targets=()):
    values, meta = sess.run(list(feeds.items()), list(fetches), list(targets))
    assert meta is None
    return values


# ---------------------------------------------------------------------------- op registry

def test_op_defs_are_sorted_and_describe_matmul():
    defs = _C.op_defs()
    names = [d["name"] for d in defs]
    assert names == sorted(names) and len(names) > 200
    mm = _C.op_def("MatMul")
    assert [a["name"] for a in mm["inputs"]] == ["a", "b"]
    assert mm["inputs"][0]["type_attr"] == "T" and mm["inputs"][0]["type"] == 0
    attrs = {a["name"]: a for a in mm["attrs"]}
    assert attrs["transpose_a"]["type"] == "bool"
    assert attrs["transpose_a"]["has_default"] and attrs["transpose_a"]["default"] is False
    assert DT_FLOAT in attrs["T"]["allowed_values"] and DT_STRING not in attrs["T"]["allowed_values"]
    assert mm["is_stateful"] is False and mm["summary"]
    assert _C.op_def("VarHandleOp")["is_stateful"] is True
    addn = {a["name"]: a for a in _C.op_def("AddN")["attrs"]}
    assert addn["N"]["has_minimum"] and addn["N"]["minimum"] == 1


def test_unknown_op_is_not_found():
    with pytest.raises(errors.NotFoundError) as e:
        _C.op_def("NoSuchOp")
    assert "NoSuchOp" in str(e.value)


# ---------------------------------------------------------------------------- graphs

def test_add_node_infers_types_and_shapes_and_answers_queries():
    b = G()
    x = b.placeholder("x", shape=[None, 3], device="/device:CPU:0")
    w = b.const("w", np.ones((3, 2), np.float32))
    y = b.binary("MatMul", "y", x, w, source_location="model.py:7")
    g = b.g
    assert g.num_node_ids() == 3 and g.find_node("y") == y[0] and g.find_node("nope") == -1
    assert g.node_name(y[0]) == "y" and g.node_op(y[0]) == "MatMul"
    assert g.node_device(x[0]) == "/device:CPU:0"
    assert g.output_dtype(y[0], 0) == DT_FLOAT and g.input_dtype(y[0], 1) == DT_FLOAT
    assert g.output_shape(y[0], 0) == [None, 2]
    assert g.output_shape(x[0], 0) == [None, 3]
    assert g.node_inputs(y[0]) == [x, w]
    assert g.node_outputs(x[0]) == [[(y[0], 0)]]
    assert g.num_outputs(y[0]) == 1
    attrs = g.node_attrs(y[0])
    assert attrs["T"] == DT_FLOAT and attrs["transpose_a"] is False
    np.testing.assert_array_equal(g.node_attrs(w[0])["value"], np.ones((3, 2), np.float32))
    assert g.node_source_location(y[0]) == "model.py:7"
    assert b"MatMul" in g.node_def(y[0]) and b"model.py:7" in g.node_def(y[0])
    unknown = b.placeholder("u", shape=None)
    assert g.output_shape(unknown[0], 0) is None


def test_list_inputs_control_inputs_colocation_and_tail_graph_def():
    b = G()
    a = b.const("a", np.float32(1))
    c = b.const("c", np.float32(2))
    start = b.g.num_node_ids()
    s = (b.add("AddN", "s", [[a, c]], {}, control_inputs=[a[0]], colocate_with=["a"]), 0)
    assert b.g.node_attrs(s[0])["N"] == 2
    assert b.g.node_attrs(s[0])["_class"] == [b"loc:@a"]
    assert b.g.node_control_inputs(s[0]) == [a[0]]
    tail = b.g.to_graph_def(start)
    assert b"AddN" in tail and b"Const" not in tail
    sess = _C.Session()
    sess.extend(b.g.to_graph_def(0))
    (out,) = run(sess, {}, ["s:0"])
    assert out == 3.0


def test_add_node_errors_name_the_node_and_leave_the_graph_unchanged():
    b = G()
    x = b.placeholder("x", shape=[2, 3])
    i = b.placeholder("i", dtype=DT_INT32, shape=[2, 3])
    n = b.g.num_node_ids()
    with pytest.raises(errors.InvalidArgumentError, match="'x'.*already used"):
        b.placeholder("x")
    with pytest.raises(errors.InvalidArgumentError) as e:
        b.binary("Add", "mixed", x, i)
    assert "mixed" in str(e.value)
    with pytest.raises(errors.InvalidArgumentError) as e:
        b.binary("MatMul", "mm", x, x, source_location="net.py:12")
    assert "mm" in str(e.value) and "net.py:12" in str(e.value) and "[2,3]" in str(e.value)
    with pytest.raises(errors.InvalidArgumentError, match="no attr 'bogus'"):
        b.add("Identity", "id", [x], {"bogus": 1})
    with pytest.raises(errors.InvalidArgumentError, match="dtype"):
        b.add("Placeholder", "p", [], {})  # dtype has no default
    with pytest.raises(errors.InvalidArgumentError):
        b.add("Identity", "bad_endpoint", [(x[0], 5)])
    with pytest.raises(errors.NotFoundError):
        b.add("NoSuchOp", "z", [])
    assert b.g.num_node_ids() == n
    assert b.unary("Identity", "after", x)[0] == n  # ids stay dense


def test_error_classes_are_the_registered_ones():
    assert issubclass(errors.InvalidArgumentError, errors.OpError)
    b = G()
    with pytest.raises(errors.OpError) as e:
        b.add("Placeholder", "p", [], {"dtype": 12345})
    assert isinstance(e.value, errors.InvalidArgumentError)


# ---------------------------------------------------------------------------- sessions

def test_run_feeds_and_fetches_values():
    b = G()
    x = b.placeholder("x", shape=[None, 2])
    y = b.binary("Mul", "y", x, b.const("two", np.float32(2)))
    sess = b.session()
    v = np.array([[1, 2], [3, 4]], np.float32)
    (out,) = run(sess, {"x": v}, ["y"])
    np.testing.assert_array_equal(out, v * 2)
    assert out.dtype == np.float32 and out.shape == (2, 2)
    (scalar,) = run(sess, {}, ["two"])
    assert scalar.shape == () and scalar == 2.0


def test_zero_copy_feed_and_fetch_share_one_buffer():
    b = G()
    x = b.placeholder("x", shape=[None])
    b.unary("Identity", "y", x)
    sess = b.session()
    fed = np.arange(1024, dtype=np.float32)
    (out,) = run(sess, {"x": fed}, ["y"])
    assert out.ctypes.data == fed.ctypes.data  # fed memory in, the same memory out
    np.testing.assert_array_equal(out, fed)
    assert not out.flags.writeable  # it is the caller's fed memory, shared


def test_misaligned_and_strided_feeds_are_copied_and_correct():
    b = G()
    x = b.placeholder("x")
    b.unary("Identity", "y", x)
    sess = b.session()
    raw = np.zeros(4 * 9 + 1, np.uint8)
    misaligned = raw[1:].view(np.float32)
    misaligned[:] = np.arange(9, dtype=np.float32)
    assert not misaligned.flags.aligned
    (out,) = run(sess, {"x": misaligned}, ["y"])
    assert out.ctypes.data != misaligned.ctypes.data
    np.testing.assert_array_equal(out, np.arange(9, dtype=np.float32))
    strided = np.arange(24, dtype=np.float32).reshape(4, 6)[:, ::2]
    (out,) = run(sess, {"x": strided}, ["y"])
    np.testing.assert_array_equal(out, strided)
    swapped = np.arange(5, dtype=">f4")
    (out,) = run(sess, {"x": swapped.astype(">f4")}, ["y"])
    np.testing.assert_array_equal(out, np.arange(5, dtype=np.float32))


def test_fresh_outputs_are_writeable_and_constants_are_protected():
    b = G()
    c = b.const("c", np.array([1, 2, 3], np.float32))
    b.binary("Add", "sum", c, c)
    sess = b.session()
    fresh, const = run(sess, {}, ["sum", "c"])
    assert fresh.flags.writeable
    fresh[0] = 100  # our own memory
    assert not const.flags.writeable
    with pytest.raises(ValueError):
        const[0] = 5
    (again,) = run(sess, {}, ["c"])
    np.testing.assert_array_equal(again, [1, 2, 3])


def _variable_graph():
    b = G()
    h = (b.add("VarHandleOp", "v", [], {"dtype": DT_FLOAT, "shape": [3], "shared_name": "v"}), 0)
    x = b.placeholder("x", shape=[3])
    b.add("AssignVariableOp", "assign", [h, x], {})
    b.add("AssignAddVariableOp", "assign_add", [h, x], {})
    b.add("ReadVariableOp", "read", [h], {"dtype": DT_FLOAT})
    return b


def test_mutating_a_fed_array_after_run_does_not_change_a_variable():
    sess = _variable_graph().session()
    fed = np.array([1, 2, 3], np.float32)
    run(sess, {"x": fed}, [], ["assign"])
    fed[:] = -7  # the variable must have copied
    (value,) = run(sess, {}, ["read"])
    np.testing.assert_array_equal(value, [1, 2, 3])
    delta = np.array([10, 20, 30], np.float32)
    run(sess, {"x": delta}, [], ["assign_add"])
    np.testing.assert_array_equal(delta, [10, 20, 30])  # not written into
    (value,) = run(sess, {}, ["read"])
    np.testing.assert_array_equal(value, [11, 22, 33])
    # A read is weir's buffer shared with the variable: read-only, and later
    # updates do not change it (copy-on-write).
    assert not value.flags.writeable
    run(sess, {"x": delta}, [], ["assign_add"])
    np.testing.assert_array_equal(value, [11, 22, 33])


def test_assign_add_never_writes_into_a_fed_buffer_it_was_assigned_from():
    sess = _variable_graph().session()
    fed = np.array([1, 2, 3], np.float32)
    run(sess, {"x": fed}, [], ["assign"])
    run(sess, {"x": fed}, [], ["assign_add"])
    np.testing.assert_array_equal(fed, [1, 2, 3])
    (value,) = run(sess, {}, ["read"])
    np.testing.assert_array_equal(value, [2, 4, 6])


def test_fetch_keeps_its_buffer_alive_after_session_and_graph_are_gone():
    b = G()
    b.binary("Add", "y", b.const("a", np.arange(100000, dtype=np.float32)),
             b.const("b", np.float32(1)))
    sess = b.session()
    (out,) = run(sess, {}, ["y"])
    sess.close()
    del sess, b
    gc.collect()
    junk = [np.full(100000, 5, np.float32) for _ in range(10)]  # reuse freed memory, if any
    np.testing.assert_array_equal(out[:3], [1, 2, 3])
    assert out[-1] == 100000
    del junk


def test_a_fed_array_outlives_its_python_name_while_weir_holds_it():
    b = G()
    x = b.placeholder("x", dtype=DT_DOUBLE)
    b.unary("Identity", "y", x)
    sess = b.session()
    (out,) = run(sess, {"x": np.arange(50, dtype=np.float64)}, ["y"])
    gc.collect()
    np.testing.assert_array_equal(out, np.arange(50, dtype=np.float64))


def test_strings_and_other_dtypes_round_trip():
    b = G()
    s = b.placeholder("s", dtype=DT_STRING)
    b.unary("Identity", "s_out", s)
    i = b.placeholder("i", dtype=DT_INT64)
    b.unary("Identity", "i_out", i)
    p = b.placeholder("p", dtype=DT_BOOL)
    b.unary("LogicalNot", "p_out", p)
    sess = b.session()
    strings = np.array([b"ab", "c\u00e9".encode(), b""], dtype=object)
    big = np.array([2 ** 62 + 1, -5], np.int64)
    s_out, i_out, p_out = run(sess, {"s": strings, "i": big, "p": np.array([True, False])},
                              ["s_out", "i_out", "p_out"])
    assert s_out.dtype == object and list(s_out) == [b"ab", "c\u00e9".encode(), b""]
    assert i_out.dtype == np.int64 and i_out[0] == 2 ** 62 + 1
    np.testing.assert_array_equal(p_out, [False, True])
    (u,) = run(sess, {"s": np.array(["x", "yz"])}, ["s_out"])  # str arrays are utf-8 encoded
    assert list(u) == [b"x", b"yz"]


def test_fetching_a_resource_is_an_error_naming_it():
    b = _variable_graph()
    sess = b.session()
    with pytest.raises(errors.InvalidArgumentError, match="'v'"):
        run(sess, {}, ["v"])


def test_runtime_errors_name_node_op_and_python_location():
    b = G()
    x = b.placeholder("x")
    shape = b.placeholder("shape", dtype=DT_INT32)
    b.binary("Reshape", "reshaped", x, shape, source_location="my_model.py:42")
    sess = b.session()
    with pytest.raises(errors.InvalidArgumentError) as e:
        run(sess, {"x": np.zeros(6, np.float32), "shape": np.array([4, 4], np.int32)}, ["reshaped"])
    message = str(e.value)
    assert "reshaped" in message and "Reshape" in message and "my_model.py:42" in message
    with pytest.raises(errors.InvalidArgumentError, match="'x'"):
        run(sess, {}, ["reshaped"])  # x not fed


def test_make_callable_runs_and_releases():
    b = G()
    x = b.placeholder("x")
    b.binary("Mul", "y", x, x)
    sess = b.session()
    h = sess.make_callable(["x"], ["y"], [])
    for v in (1.5, 3.0):
        (out,) = sess.run_callable(h, [np.float32(v)])
        assert out == np.float32(v * v)
    with pytest.raises(errors.InvalidArgumentError, match="takes 1 feeds"):
        sess.run_callable(h, [])
    sess.release_callable(h)
    with pytest.raises(errors.OpError):
        sess.run_callable(h, [np.float32(1)])


def test_run_metadata_has_a_chrome_trace():
    b = G()
    x = b.placeholder("x")
    b.unary("Neg", "y", x)
    sess = b.session()
    values, meta = sess.run([("x", np.ones(4, np.float32))], ["y"], [], {"trace_level": 3}, True)
    np.testing.assert_array_equal(values[0], -np.ones(4))
    names = [s["node_name"] for s in meta["step_stats"]]
    assert "y" in names
    stat = meta["step_stats"][names.index("y")]
    assert stat["op"] == "Neg" and stat["end_micros"] >= stat["start_micros"] > 0
    trace = json.loads(meta["chrome_trace"])
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    assert any(ev.get("name") == "y" or ev.get("args", {}).get("name") == "y" for ev in events)


def test_session_config_devices_and_target():
    sess = _C.Session(b"", {"devices": 2, "intra_op_threads": 1, "inter_op_threads": 1})
    devices = sess.list_devices()
    assert len(devices) == 2 and devices[1].endswith("CPU:1")
    # The build tree's module has the grpc factory (test_distributed.py); nobody listens on port 1.
    # A short connect timeout (the default retries a master that is not up yet for 30 s), and
    # none at all (one try): both Unavailable naming the address, both prompt.
    for connect_timeout_ms in (300, 0):
        start = time.monotonic()
        with pytest.raises(errors.UnavailableError, match="localhost:1"):
            _C.Session(b"", {"target": "grpc://localhost:1", "connect_timeout_ms": connect_timeout_ms})
        assert time.monotonic() - start < 10
    with pytest.raises(errors.InvalidArgumentError, match="no session factory"):
        _C.Session(b"", {"target": "nosuch://localhost:1"})
    with pytest.raises(errors.InvalidArgumentError):
        _C.Session(b"", {"devices": 0})


def test_closed_session_refuses_runs_and_close_is_idempotent():
    b = G()
    b.const("c", np.float32(1))
    sess = b.session()
    sess.close()
    sess.close()
    with pytest.raises(errors.OpError):
        run(sess, {}, ["c"])


# ---------------------------------------------------------------------------- gradients

def test_gradients_match_analytic_and_unreachable_is_none():
    b = G()
    x = b.placeholder("x", dtype=DT_DOUBLE, shape=[3])
    other = b.placeholder("other", dtype=DT_DOUBLE, shape=[3])
    sq = b.binary("Mul", "sq", x, x)
    axis = b.const("axis", np.int32(0))
    y = (b.add("Sum", "y", [sq, axis], {}), 0)
    grads = b.g.add_gradients([y], [x, other], [], "gradients", "train.py:3")
    assert grads[1] is None
    gx = grads[0]
    assert b.g.node_name(gx[0]).startswith("gradients/")
    assert b.g.node_source_location(gx[0]) == "train.py:3"
    sess = b.session()
    v = np.array([1.0, -2.0, 0.5])
    (out,) = run(sess, {"x": v}, [f"{b.g.node_name(gx[0])}:{gx[1]}"])
    np.testing.assert_allclose(out, 2 * v)
    # With a seed.
    start = b.g.num_node_ids()
    seed = b.const("seed", np.float64(3))
    (gx2,) = b.g.add_gradients([y], [x], [seed], "gradients_1")
    sess.extend(b.g.to_graph_def(start))
    (out,) = run(sess, {"x": v}, [f"{b.g.node_name(gx2[0])}:{gx2[1]}"])
    np.testing.assert_allclose(out, 6 * v)


# ---------------------------------------------------------------------------- import

def test_import_graph_def_with_prefix_and_input_map():
    src = G()
    a = src.placeholder("a", shape=[2])
    src.binary("Add", "out", a, src.const("one", np.float32(1)))
    data = src.g.to_graph_def()

    dst = G()
    feed = dst.const("feed", np.array([10, 20], np.float32))
    ids = dst.g.import_graph_def(data, "imported", {"a:0": feed}, "load.py:1")
    assert [dst.g.node_name(i) for i in ids] == ["imported/a", "imported/one", "imported/out"]
    out_id = dst.g.find_node("imported/out")
    assert dst.g.node_inputs(out_id)[0] == feed  # remapped to the existing tensor
    assert dst.g.node_source_location(out_id) == "load.py:1"
    sess = dst.session()
    (v,) = run(sess, {}, ["imported/out"])
    np.testing.assert_array_equal(v, [11, 21])
    n = dst.g.num_node_ids()
    with pytest.raises(errors.InvalidArgumentError, match="names no node"):
        dst.g.import_graph_def(data, "again", {"missing:0": feed})
    with pytest.raises(errors.InvalidArgumentError):
        dst.g.import_graph_def(b"\xff\xff\xff", "bad", {})
    assert dst.g.num_node_ids() == n


# ---------------------------------------------------------------------------- control flow

def test_cond_builds_both_branches_and_picks_one():
    b = G()
    x = b.placeholder("x", shape=[])
    pred = b.placeholder("pred", dtype=DT_BOOL, shape=[])

    def then_fn():
        return [b.binary("Mul", "c/doubled", x, b.const("c/two", np.float32(2)))]

    def else_fn():
        return [b.unary("Neg", "c/negated", x)]

    (out,) = b.g.cond(pred, then_fn, else_fn, "c")
    sess = b.session()
    name = f"{b.g.node_name(out[0])}:{out[1]}"
    assert run(sess, {"x": np.float32(3), "pred": np.bool_(True)}, [name])[0] == 6
    assert run(sess, {"x": np.float32(3), "pred": np.bool_(False)}, [name])[0] == -3


def test_exceptions_in_branch_functions_propagate_unchanged():
    b = G()
    pred = b.placeholder("pred", dtype=DT_BOOL, shape=[])

    class Boom(Exception):
        pass

    def bad():
        raise Boom("from the branch")

    with pytest.raises(Boom, match="from the branch"):
        b.g.cond(pred, bad, bad, "c")


def test_while_loop_counts():
    b = G()
    i0 = b.const("i0", np.int32(0))
    acc0 = b.const("acc0", np.float32(1))
    limit = b.placeholder("limit", dtype=DT_INT32, shape=[])
    count = [0]

    def cond_fn(vars_):
        return b.binary("Less", f"w/less{count[0]}", vars_[0], limit)

    def body_fn(vars_):
        count[0] += 1
        one = b.const(f"w/one{count[0]}", np.int32(1))
        two = b.const(f"w/two{count[0]}", np.float32(2))
        return [b.binary("Add", f"w/inc{count[0]}", vars_[0], one),
                b.binary("Mul", f"w/dbl{count[0]}", vars_[1], two)]

    i_out, acc_out = b.g.while_loop(cond_fn, body_fn, [i0, acc0], name="w")
    sess = b.session()
    names = [f"{b.g.node_name(t[0])}:{t[1]}" for t in (i_out, acc_out)]
    i, acc = run(sess, {"limit": np.int32(5)}, names)
    assert i == 5 and acc == 32.0


def test_set_output_shape_refines_what_later_nodes_infer():
    b = G()
    x = b.placeholder("x", shape=[None, 3])
    b.g.set_output_shape(x[0], 0, [5, None])
    assert b.g.output_shape(x[0], 0) == [5, 3]
    y = b.unary("Identity", "y", x)
    assert b.g.output_shape(y[0], 0) == [5, 3]
    with pytest.raises(errors.InvalidArgumentError, match="not compatible"):
        b.g.set_output_shape(x[0], 0, [4, 3])


def test_malformed_arguments_are_errors_not_crashes():
    b = G()
    b.placeholder("x")
    sess = b.session()
    with pytest.raises(errors.InvalidArgumentError, match="pair"):
        sess.run([["x"]], [], [])
    with pytest.raises(errors.InvalidArgumentError, match="options"):
        sess.run([], [], [], [1, 2])
    with pytest.raises(errors.InvalidArgumentError, match="config has no key"):
        _C.Session(b"", {"bogus": 1})
    with pytest.raises(errors.InvalidArgumentError):
        b.add("Identity", "i", ["not an endpoint"])
    with pytest.raises(errors.InvalidArgumentError):
        b.add("Identity", "i", [(10 ** 6, 0)])
    with pytest.raises(errors.InvalidArgumentError, match="no weir dtype"):
        run(sess, {"x": np.array([object()], dtype=object)[:0].astype("M8[s]")}, ["x"])
    (out,) = run(sess, {"x": np.ones(3, np.float32)}, ["x"])  # list-shaped feed pairs work too
    np.testing.assert_array_equal(sess.run([["x", np.ones(2, np.float32)]], ["x"], [])[0][0], [1, 1])


def test_error_messages_quoting_invalid_utf8_still_raise_the_right_class():
    b = G()
    x = b.placeholder("x", dtype=DT_STRING)
    b.add("StringToNumber", "n", [x], {})
    sess = b.session()
    with pytest.raises(errors.InvalidArgumentError, match="'n'.*abc"):
        run(sess, {"x": np.array([b"\xff\xfeabc"], dtype=object)}, ["n"])


@pytest.mark.parametrize("config", [{"devices": 2**40}, {"devices": "4"}, {"devices": True},
                                    {"devices": 100000}, {"intra_op_threads": -1},
                                    {"inter_op_threads": 1 << 20}])
def test_session_config_counts_out_of_range_are_invalid_argument(config):
    with pytest.raises(errors.InvalidArgumentError, match="devices|thread"):
        _C.Session(b"", config)
