"""wr.train.replica_device_setter against TensorFlow 2.21's tf.compat.v1.train.replica_device_setter
(run in the peers' interpreter): the device of every op of the same graphs -- variables round-robin
over the ps tasks, other ops on the worker, inner scopes merged, a variable's own ops on its
device -- and a ps/worker graph built with it trains on a two-task cluster."""
import json
import os
import pathlib
import socket
import subprocess
import time

import numpy as np
import pytest

import weir as wr
from peers import PEERS_PYTHON

# Run with `lib` bound to tf.compat.v1 or to weir; prints one JSON document: for each case the
# device of every op by name (or what the setter returned when it is not a function).
DEVICE_SETTER_PROBE = r"""
import json

def devices(graph):
    return {op.name: op.device for op in graph.get_operations()}

def case(build):
    graph = lib.Graph()
    with graph.as_default():
        result = build()
    return result if result is not None else devices(graph)

def round_robin():
    setter = lib.train.replica_device_setter(ps_tasks=3, worker_device="/job:worker/task:1")
    with lib.device(setter):
        vs = [lib.Variable(float(i), name="v%d" % i) for i in range(4)]
        w = lib.get_variable("w", [2, 3])
        with lib.device("/job:ps/task:2"):
            pinned = lib.Variable(5.0, name="pinned")
        with lib.device("/device:CPU:1"):
            cpu1 = lib.Variable(6.0, name="cpu1")
        with lib.device("/job:other"):
            other = lib.Variable(7.0, name="other")
        total = lib.add_n([v.read_value() for v in vs] + [pinned.read_value(), cpu1.read_value(),
                                                          other.read_value()], name="total")
        lib.matmul(lib.ones([1, 2]), w, name="product")
        with lib.device("/job:worker/task:0"):
            lib.identity(total, name="moved")

def from_cluster():
    cluster = lib.train.ClusterSpec({"ps": ["a:1", "b:2"], "worker": ["c:3"]})
    with lib.device(lib.train.replica_device_setter(cluster=cluster)):
        for i in range(3):
            lib.Variable(float(i), name="c%d" % i)
        lib.constant(1.0, name="k")

def options():
    with lib.device(lib.train.replica_device_setter(
            ps_tasks=2, ps_device="/job:params", worker_device="", ps_ops=["VarHandleOp", "Mul"],
            ps_strategy=lambda op: 1)):
        a = lib.Variable(1.0, name="a")
        lib.multiply(a.read_value(), 2.0, name="scaled")
        lib.add(a.read_value(), 2.0, name="shifted")

def scopes():
    # Device scopes and functions in general: innermost first, a None scope hides the outer ones.
    pick = lambda op: "/job:a/task:1" if op.type == "Const" else ""
    with lib.device("/job:ps/task:1"):
        with lib.device("/cpu:0"):
            lib.constant(1.0, name="s1")
        with lib.device(None):
            lib.constant(1.0, name="s2")
        with lib.device(pick):
            lib.constant(1.0, name="s3")
            lib.no_op(name="s4")
            with lib.device("/device:CPU:1"):
                lib.constant(1.0, name="s5")
    with lib.device(pick), lib.device("/job:b"):
        lib.constant(1.0, name="s6")

def nothing():
    return {"no_ps_tasks": repr(lib.train.replica_device_setter()),
            "cluster_without_ps": repr(lib.train.replica_device_setter(
                cluster={"worker": ["a:1"]}))}

print(json.dumps({name: case(build) for name, build in
                  [("round_robin", round_robin), ("from_cluster", from_cluster),
                   ("options", options), ("scopes", scopes), ("nothing", nothing)]},
                 sort_keys=True))
"""

# Ops whose devices must be compared (present in both graphs): each case's variables, their
# reads and initializers, and the plain ops.
MUST_COMPARE = {
    "round_robin": ["v0", "v1", "v2", "v3", "w", "pinned", "cpu1", "other", "v0/Assign",
                    "v0/Read/ReadVariableOp", "pinned/Read/ReadVariableOp", "total", "product",
                    "moved"],
    "from_cluster": ["c0", "c1", "c2", "k"],
    "options": ["a", "scaled", "shifted", "a/Read/ReadVariableOp"],
    "scopes": ["s1", "s2", "s3", "s4", "s5", "s6"],
}


# Where Weir differs on purpose: a variable's initial value is computed on the device of the
# scope it is created in (TF clears the device and colocates it with the variable; Weir creates
# the value before the handle, whose creation order the random seeds depend on), and its
# VarIsInitializedOp goes on the variable's device (TF leaves it on the scope's: Weir's placer
# keeps every op on a resource with the resource).
NOT_COMPARED = ("/Initializer/", "/IsInitialized/")


def weir_behaviour():
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(DEVICE_SETTER_PROBE, {"lib": wr})
    return json.loads(out.getvalue())


@pytest.mark.skipif(not os.path.exists(PEERS_PYTHON),
                    reason="TensorFlow 2.21 (the peers' venv) is not installed")
def test_replica_device_setter_places_as_tensorflow():
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    program = "import tensorflow as tf\nlib = tf.compat.v1\n" + DEVICE_SETTER_PROBE
    done = subprocess.run([PEERS_PYTHON, "-c", program], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    expected = json.loads(done.stdout.strip().splitlines()[-1])
    got = weir_behaviour()
    assert got["nothing"] == expected["nothing"] == {"no_ps_tasks": "None",
                                                    "cluster_without_ps": "None"}
    for case, names in MUST_COMPARE.items():
        common = sorted(n for n in set(got[case]) & set(expected[case])
                        if not any(part in n + "/" for part in NOT_COMPARED))
        assert set(names) <= set(common), (case, sorted(set(names) - set(common)))
        assert {n: got[case][n] for n in common} == {n: expected[case][n] for n in common}, case


def test_replica_device_setter_without_tensorflow():
    g = wr.Graph()
    with g.as_default():
        with wr.device(wr.train.replica_device_setter(ps_tasks=2)):
            a, b, c = (wr.Variable(1.0, name=n) for n in "abc")
            s = a + b
    assert [v.device for v in (a, b, c)] == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:0"]
    assert s.device == "/job:worker"
    ops = {op.name: op for op in g.get_operations()}
    assert a.initializer.device == a.device
    assert ops["b/Read/ReadVariableOp"].device == ops["b/IsInitialized/VarIsInitializedOp"].device \
        == b.device
    with pytest.raises(ValueError, match="ps_tasks must not be negative"):
        wr.train.replica_device_setter(ps_tasks=-1)
    with pytest.raises(TypeError, match="ps_strategy must be callable"):
        wr.train.replica_device_setter(ps_tasks=1, ps_strategy=3)


BUILD = pathlib.Path(os.environ.get("WEIR_BUILD_DIR", pathlib.Path(__file__).resolve().parents[2] /
                                    "build" / "release"))
SERVER = BUILD / "tools" / "weir-server"


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_replica_device_setter_trains_on_a_cluster():
    """The variables and Adam's state on ps, the math on the worker: the same losses as one
    process (a local session of the same graph without devices)."""
    if not SERVER.exists():
        pytest.fail(f"{SERVER} is missing: build the weir-server target (WEIR_BUILD_DIR={BUILD})")
    worker, ps = f"127.0.0.1:{_free_port()}", f"127.0.0.1:{_free_port()}"
    procs = [subprocess.Popen([str(SERVER), "--cluster", f"worker={worker};ps={ps}", "--job", job,
                               "--task", "0"], stderr=subprocess.DEVNULL)
             for job in ("worker", "ps")]
    try:
        for address in (worker, ps):
            host, port = address.split(":")
            for _ in range(200):
                try:
                    socket.create_connection((host, int(port)), timeout=0.2).close()
                    break
                except OSError:
                    time.sleep(0.05)
            else:
                pytest.fail(f"weir-server at {address} did not come up")
        x_value = np.array([[1.0, 2.0], [-1.0, 0.5], [3.0, 1.0]], np.float32)
        losses = []
        for target, setter in [("", None),
                               ("grpc://" + worker, wr.train.replica_device_setter(
                                   cluster={"ps": [ps], "worker": [worker]},
                                   worker_device="/job:worker/task:0"))]:
            g = wr.Graph()
            with g.as_default(), wr.device(setter):
                wr.set_random_seed(3)
                w = wr.get_variable("w", [2, 2])
                x = wr.placeholder(wr.float32, [None, 2])
                loss = wr.reduce_sum(wr.matmul(x, w) ** 2)
                step = wr.train.get_or_create_global_step()
                train = wr.train.AdamOptimizer(0.1).minimize(loss, global_step=step)
                init = wr.global_variables_initializer()
            if setter:
                slots = [op for op in g.get_operations()
                         if op.type in ("VarHandleOp", "ResourceApplyAdam")]
                assert len(slots) >= 6 and all(op.device == "/job:ps/task:0" for op in slots)
            with wr.Session(target, graph=g) as sess:
                sess.run(init)
                losses.append([sess.run([loss, train], {x: x_value})[0] for _ in range(4)])
                assert sess.run(step) == 4
        np.testing.assert_array_equal(losses[0], losses[1])
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(timeout=30)
