"""wr.Session("grpc://host:port"): a graph placed across two weir-server processes (a worker task and
a ps task, started here on free loopback ports) gives what the in-process session gives; errors
name the node and the task; an unreachable master is an UnavailableError."""
import os
import pathlib
import socket
import subprocess
import time

import numpy as np
import pytest

import weir as wr
from weir.framework import errors

BUILD = pathlib.Path(os.environ.get("WEIR_BUILD_DIR", pathlib.Path(__file__).resolve().parents[2] /
                                    "build" / "release"))
SERVER = BUILD / "tools" / "weir-server"


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def cluster():
    if not SERVER.exists():
        pytest.fail(f"{SERVER} is missing: build the weir-server target (WEIR_BUILD_DIR={BUILD})")
    worker, ps = f"127.0.0.1:{_free_port()}", f"127.0.0.1:{_free_port()}"
    spec = f"worker={worker};ps={ps}"
    procs = [subprocess.Popen([str(SERVER), "--cluster", spec, "--job", job, "--task", "0"],
                              stderr=subprocess.DEVNULL) for job in ("worker", "ps")]
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
        yield {"worker": worker, "ps": ps}
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(timeout=30)


def _model(ps_device, worker_device):
    g = wr.Graph()
    with g.as_default():
        with wr.device(ps_device):
            w = wr.Variable(np.array([[1.0, -2.0], [0.5, 3.0]], np.float32), name="w")
        with wr.device(worker_device):
            x = wr.placeholder(wr.float32, [None, 2], name="x")
            y = wr.matmul(x, w)
            loss = wr.reduce_sum(y * y)
            grad, = wr.gradients(loss, [w])
        with wr.device(ps_device):
            train = w.assign_sub(0.01 * grad)
        init = wr.global_variables_initializer()
    return g, x, y, loss, train, init


def test_remote_session_matches_local(cluster):
    x_value = np.array([[1.0, 2.0], [-1.0, 0.5], [3.0, 1.0]], np.float32)
    results = []
    for target, ps_device, worker_device in [("", None, None),
                                             ("grpc://" + cluster["worker"], "/job:ps/task:0",
                                              "/job:worker/task:0")]:
        g, x, y, loss, train, init = _model(ps_device, worker_device)
        with wr.Session(target, graph=g) as sess:
            sess.run(init)
            losses = [sess.run([loss, train], {x: x_value})[0] for _ in range(3)]
            results.append((losses, sess.run(y, {x: x_value})))
            if target:
                names = sess.list_devices()
                assert {d.name for d in names} == {"/job:worker/replica:0/task:0/device:CPU:0",
                                                   "/job:ps/replica:0/task:0/device:CPU:0"}
    (local_losses, local_y), (remote_losses, remote_y) = results
    np.testing.assert_array_equal(local_losses, remote_losses)
    np.testing.assert_array_equal(local_y, remote_y)


def test_large_values_cross_processes_bit_identical(cluster):
    # weir-server processes use the bulk-transfer channel by default for
    # values of 1 MiB and more (src/weir/distributed/README.md): 4 MiB of
    # random floats go to ps with the feed, to worker and back, unchanged.
    rng = np.random.default_rng(16)
    g = wr.Graph()
    with g.as_default():
        fed = wr.placeholder(wr.float32, [None], name="fed")
        with wr.device("/job:ps/task:0"):
            on_ps = wr.identity(fed, name="on_ps")
        with wr.device("/job:worker/task:0"):
            on_worker = wr.identity(on_ps, name="on_worker")
    with wr.Session("grpc://" + cluster["worker"], graph=g) as sess:
        for n in (1 << 20, 3 + (1 << 20)):
            value = rng.standard_normal(n).astype(np.float32)
            np.testing.assert_array_equal(sess.run(on_worker, {fed: value}), value)


def test_error_on_ps_names_node_and_task(cluster):
    g = wr.Graph()
    with g.as_default():
        with wr.device("/job:worker/task:0"):
            x = wr.placeholder(wr.float32, [None], name="x")
        with wr.device("/job:ps/task:0"):
            bad = wr.reshape(x * 2.0, [7], name="bad_reshape")
        with wr.device("/job:worker/task:0"):
            out = wr.identity(bad, name="out")
    with wr.Session("grpc://" + cluster["worker"], graph=g) as sess:
        with pytest.raises(errors.InvalidArgumentError) as info:
            sess.run(out, {x: np.ones(3, np.float32)})
    assert "bad_reshape" in str(info.value) and "/job:ps/replica:0/task:0" in str(info.value)


def test_unreachable_master_is_unavailable():
    # connect_timeout_ms=0: no wait for a master that may start later (test_remote_session.py).
    with pytest.raises(errors.UnavailableError, match="127.0.0.1"):
        wr.Session(f"grpc://127.0.0.1:{_free_port()}",
                   remote=wr.distribute.RemoteSessionOptions(connect_timeout_ms=0))
