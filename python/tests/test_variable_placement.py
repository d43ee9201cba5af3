"""Ops on a variable built under another device scope than the variable's
run where the variable lives, as in TensorFlow (whose placer lets a
resource's device win over its consumer's request): read_value(),
is_variable_initialized(), report_uninitialized_variables() (Scaffold's
ready_op), assign; in one session with several CPU devices, and between
graphs: two worker clients, each with its own graph built under
replica_device_setter, against in-process servers of a ps and two worker
tasks. So do the ops on an accumulator's string handle."""
import socket

import numpy as np
import pytest

import weir as wr
from weir.distribute import server_lib
from weir.framework.op_def_library import apply_op


def test_variable_ops_under_another_device_scope():
    with wr.Graph().as_default() as g:
        with wr.device("/device:CPU:1"):
            v = wr.Variable(np.array([1.0, 2.0], np.float32), name="v")
        with wr.device("/device:CPU:2"):
            u = wr.Variable(np.float32(5.0), name="u")
        with wr.device("/device:CPU:0"):
            read = v.read_value()
            initialized = wr.is_variable_initialized(v)
            report = wr.report_uninitialized_variables()
            assign = u.assign(7.0)
            total = wr.reduce_sum(read) + u
            ready = wr.train.Scaffold().finalize().ready_op
        assert read.op.device == "/device:CPU:0"  # the request stays; the placer overrides it
        config = wr.ConfigProto(device_count={"CPU": 3})
        with wr.Session(graph=g, config=config) as sess:
            assert list(sess.run(report)) == [b"v", b"u"]
            assert not sess.run(initialized)
            sess.run(v.initializer)
            assert list(sess.run(ready)) == [b"u"]
            sess.run(u.initializer)
            assert sess.run(initialized) and len(sess.run(report)) == 0
            np.testing.assert_array_equal(sess.run(read), [1.0, 2.0])
            sess.run(assign)
            assert sess.run(total) == 10.0
            metadata = wr.RunMetadata()
            sess.run([read, assign], options=wr.RunOptions(trace_level=wr.RunOptions.FULL_TRACE),
                     run_metadata=metadata)
            devices = {s.node_name: s.device for s in metadata.step_stats}
            assert devices[read.op.name].endswith("CPU:1"), devices
            assert devices[assign.op.name].endswith("CPU:2"), devices


def test_a_variable_without_a_device_stays_where_its_first_run_put_it():
    """The initializer's run places `count` (no device request) on its own;
    the loop's run, whose cost-model placement on two CPUs could choose the
    other device, must find the initialized variable where it is, as in
    TensorFlow, which keeps a session's stateful nodes on their first
    device."""
    with wr.Graph().as_default() as g:
        count = wr.Variable(0, name="count")
        with wr.device("/device:CPU:1"):
            def body(i):
                with wr.control_dependencies([count.assign_add(1)]):
                    return i + 1
            loop = wr.while_loop(lambda i: i < 5, body, [wr.constant(0)])
        init = wr.global_variables_initializer()
    config = wr.ConfigProto(device_count={"CPU": 2})
    with wr.Session(graph=g, config=config) as sess:
        sess.run(init)
        assert sess.run(loop) == 5
        assert sess.run(count) == 5
        assert sess.run(loop) == 5
        assert sess.run(count) == 10


def test_string_handle_accumulator_ops_run_with_the_accumulator():
    """TensorFlow's ConditionalAccumulator with a Ref(string) handle: its ops,
    unplaced or requested elsewhere, run on the accumulator's device, where
    the handle names it (elsewhere the handle would name nothing: NotFound)."""
    with wr.Graph().as_default() as g:
        with wr.device("/device:CPU:1"):
            handle = apply_op("ConditionalAccumulator", "acc", dtype=wr.float32, shape=[2])
        step = wr.constant(0, wr.int64)
        apply = apply_op("AccumulatorApplyGradient", "apply", handle=handle, local_step=step,
                         gradient=wr.constant([1.0, 3.0]))
        with wr.device("/device:CPU:0"):
            apply2 = apply_op("AccumulatorApplyGradient", "apply2", handle=handle,
                              local_step=step, gradient=wr.constant([3.0, 5.0]))
            num = apply_op("AccumulatorNumAccumulated", "num", handle=handle)
        take = apply_op("AccumulatorTakeGradient", "take", handle=handle,
                        num_required=wr.constant(2), dtype=wr.float32)
        with wr.Session(graph=g, config=wr.ConfigProto(device_count={"CPU": 2})) as sess:
            sess.run(apply)
            sess.run(apply2)
            assert sess.run(num) == 2
            metadata = wr.RunMetadata()
            value = sess.run(take, options=wr.RunOptions(trace_level=wr.RunOptions.FULL_TRACE),
                             run_metadata=metadata)
            np.testing.assert_array_equal(value, [2.0, 4.0])
            devices = {s.node_name: s.device for s in metadata.step_stats}
            assert devices["take"].endswith("CPU:1"), devices


def _ports(n):
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _worker_graph(cluster, task):
    """The model as each worker's client builds it (between-graph replication)."""
    g = wr.Graph()
    with g.as_default():
        setter = wr.train.replica_device_setter(
            cluster=cluster, worker_device="/job:worker/task:%d" % task)
        with wr.device(setter):
            w = wr.Variable(np.array([1.0, -1.0], np.float32), name="w")
            step = wr.train.get_or_create_global_step()
            ready = wr.report_uninitialized_variables()
            read = w.read_value()
            scaled = read * 2.0
            train = w.assign_add(np.array([0.5, 0.5], np.float32))
            init = wr.global_variables_initializer()
    assert w.device == "/job:ps/task:0" and read.op.device == "/job:worker/task:%d" % task
    return g, dict(w=w, step=step, ready=ready, read=read, scaled=scaled, train=train, init=init)


@pytest.mark.skipif(not server_lib.available(), reason="this build has no distributed runtime")
def test_between_graph_reads_under_the_worker_scope():
    ports = _ports(3)
    cluster = wr.train.ClusterSpec({"ps": ["127.0.0.1:%d" % ports[0]],
                                    "worker": ["127.0.0.1:%d" % p for p in ports[1:]]})
    servers = [wr.distribute.Server(cluster, job_name="ps", task_index=0)]
    servers += [wr.distribute.Server(cluster, job_name="worker", task_index=i) for i in (0, 1)]
    try:
        graphs = [_worker_graph(cluster, task) for task in (0, 1)]
        sessions = [wr.Session(servers[1 + task].target, graph=graphs[task][0])
                    for task in (0, 1)]
        chief, other = graphs[0][1], graphs[1][1]
        assert sorted(sessions[1].run(other["ready"])) == [b"global_step", b"w"]
        sessions[0].run(chief["init"])  # the chief initializes the variables on ps
        assert len(sessions[1].run(other["ready"])) == 0
        np.testing.assert_array_equal(sessions[1].run(other["read"]), [1.0, -1.0])
        sessions[1].run(other["train"])
        np.testing.assert_array_equal(sessions[0].run(chief["scaled"]), [3.0, -1.0])
        for sess in sessions:
            sess.close()
    finally:
        for server in servers:
            server.stop()
