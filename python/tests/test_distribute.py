"""wr.train.ClusterSpec against TensorFlow 2.21's tf.train.ClusterSpec (run in
the peers' interpreter), and wr.distribute.Server as a real in-process
server: its target answers GetStatus over gRPC, with TLS and a token too."""
import json
import os
import re
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import weir as wr
from weir import _C
from weir.distribute import server_lib
from peers import PEERS_PYTHON

# Runs with `lib` bound to tf.train or wr.train and prints one JSON document:
# the observable behaviour of ClusterSpec on these inputs, errors included.
CLUSTER_SPEC_PROBE = r"""
import json

def outcome(thunk):
    try:
        return ["ok", repr(thunk())]
    except Exception as e:
        return [type(e).__name__, str(e)]

SPECS = [
    {"worker": ["a:1", "b:2"], "ps": {3: "c:3"}, "chief": ["d:4"]},
    {"worker": ("h:1", "h:2", "h:3")},
    {"w": {"0": "a:1", "2": "a:3"}},
    {"w": ["a:1", "a:1"]},
    {b"bytes_job": [b"x:1"]},
    {},
]
BAD = [5, "worker", {"w": "a:1"}, {"w": {"x": "a:1"}}, {1: ["a:1"]}, {"w": [1]}, None]

result = {"specs": [], "bad": [outcome(lambda b=b: lib.ClusterSpec(b)) for b in BAD]}
for spec in SPECS:
    c = lib.ClusterSpec(spec)
    entry = {
        "jobs": repr(c.jobs), "str": str(c), "repr": repr(c), "as_dict": repr(c.as_dict()),
        "bool": bool(c), "eq_copy": c == lib.ClusterSpec(c), "ne_empty": c != lib.ClusterSpec({}),
        "eq_dict": c == spec,
        "from_def": lib.ClusterSpec(c.as_cluster_def()) == c,
        "cluster_def": c.as_cluster_def().SerializeToString(deterministic=True).hex(),
        "missing_job": [outcome(lambda: c.num_tasks("nope")), outcome(lambda: c.job_tasks("nope")),
                        outcome(lambda: c.task_indices("nope")),
                        outcome(lambda: c.task_address("nope", 0))],
        "hash": outcome(lambda: hash(c)),
    }
    for job in c.jobs:
        entry[repr(job)] = [c.num_tasks(job), c.task_indices(job), c.job_tasks(job),
                      [c.task_address(job, i) for i in c.task_indices(job)],
                      outcome(lambda: c.task_address(job, 99))]
    result["specs"].append(entry)
print(json.dumps(result, sort_keys=True, default=repr))
"""


def weir_cluster_spec_behaviour():
    scope = {"lib": wr.train}
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(CLUSTER_SPEC_PROBE, scope)
    return json.loads(out.getvalue())


@pytest.mark.skipif(not os.path.exists(PEERS_PYTHON),
                    reason="TensorFlow 2.21 (the peers' venv) is not installed")
def test_cluster_spec_behaves_as_tensorflows():
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    program = "import tensorflow as tf\nlib = tf.train\n" + CLUSTER_SPEC_PROBE
    done = subprocess.run([PEERS_PYTHON, "-c", program], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    expected = json.loads(done.stdout.strip().splitlines()[-1])
    got = weir_cluster_spec_behaviour()
    assert got["bad"] == expected["bad"]
    assert len(got["specs"]) == len(expected["specs"])
    for ours, theirs in zip(got["specs"], expected["specs"]):
        assert ours == theirs


def test_cluster_spec_basics_without_tensorflow():
    c = wr.train.ClusterSpec({"worker": ["a:1", "b:2"], "ps": {3: "c:3"}})
    assert c.jobs == ["worker", "ps"]
    assert c.as_dict() == {"worker": ["a:1", "b:2"], "ps": {3: "c:3"}}
    assert c.job_tasks("ps") == [None, None, None, "c:3"]
    assert c.task_address("worker", 1) == "b:2"
    assert c.num_tasks("ps") == 1 and c.task_indices("ps") == [3]
    assert wr.train.ClusterSpec(c.as_cluster_def()) == c
    assert not wr.train.ClusterSpec({})
    with pytest.raises(ValueError, match="No such job in cluster: 'x'"):
        c.num_tasks("x")
    assert wr.distribute.ClusterSpec is wr.train.ClusterSpec


needs_runtime = pytest.mark.skipif(not server_lib.available(),
                                   reason="this build has no distributed runtime (gRPC)")


@needs_runtime
def test_server_serves_its_devices_at_its_target():
    server = wr.distribute.Server({"worker": ["localhost:0"], "ps": ["localhost:1"]},
                                  job_name="worker", task_index=0,
                                  config={"device_count": {"CPU": 2},
                                          "intra_op_parallelism_threads": 1})
    assert re.fullmatch(r"grpc://127\.0\.0\.1:\d+", server.target), server.target
    assert not server.target.endswith(":0")
    address = server.target[len("grpc://"):]
    names = _C.distributed_get_status(address, 5.0)
    assert names == ["/job:worker/replica:0/task:0/device:CPU:0",
                     "/job:worker/replica:0/task:0/device:CPU:1"]
    assert server.devices() == names
    assert server.server_def.job_name == "worker"
    server.start()  # again: a no-op, as TensorFlow's

    joined = threading.Event()
    thread = threading.Thread(target=lambda: (server.join(), joined.set()))
    thread.start()
    time.sleep(0.1)
    assert not joined.is_set()
    server.stop()
    thread.join(10)
    assert joined.is_set()
    with pytest.raises((wr.errors.UnavailableError, wr.errors.DeadlineExceededError),
                       match="GetStatus to " + re.escape(address)):
        _C.distributed_get_status(address, 2.0)


@needs_runtime
def test_create_local_server_and_server_def():
    server = wr.distribute.Server.create_local_server()
    names = _C.distributed_get_status(server.target[len("grpc://"):], 5.0)
    assert names == ["/job:localhost/replica:0/task:0/device:CPU:0"]
    server.stop()
    assert wr.train.Server is wr.distribute.Server

    from weir.core import protos
    server_def = protos.ServerDef()
    server_def.cluster.CopyFrom(wr.train.ClusterSpec({"ps": ["localhost:7"]}).as_cluster_def())
    server_def.job_name = "ps"
    server_def.task_index = 0
    server_def.port = 0
    unstarted = wr.distribute.Server(server_def, start=False)
    unstarted.start()
    assert _C.distributed_get_status(unstarted.target[len("grpc://"):], 5.0) == [
        "/job:ps/replica:0/task:0/device:CPU:0"]
    unstarted.stop()


@needs_runtime
def test_server_argument_errors():
    two_jobs = {"worker": ["localhost:0"], "ps": ["localhost:0"]}
    with pytest.raises(ValueError, match="Must specify an explicit `job_name`"):
        wr.distribute.Server(two_jobs, start=False)
    with pytest.raises(ValueError, match="Must specify an explicit `task_index`"):
        wr.distribute.Server({"worker": ["localhost:0", "localhost:0"]}, job_name="worker",
                             start=False)
    with pytest.raises(ValueError, match="protocol 'grpc\\+verbs' is not supported"):
        wr.distribute.Server({"w": ["localhost:0"]}, protocol="grpc+verbs", start=False)
    with pytest.raises(wr.errors.InvalidArgumentError, match="no task 5"):
        wr.distribute.Server({"w": ["localhost:0"]}, job_name="w", task_index=5, start=False)
    with pytest.raises(wr.errors.InvalidArgumentError, match="an auth token needs TLS"):
        wr.distribute.Server({"w": ["localhost:0"]}, auth_token="t", start=False)


@needs_runtime
def test_server_with_tls_and_a_token(tmp_path):
    def openssl(*args):
        subprocess.run(["openssl", *args], check=True, capture_output=True, cwd=tmp_path)

    curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl("req", "-x509", *curve, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
            "-subj", "/CN=test-ca")
    openssl("req", *curve, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost")
    (tmp_path / "ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "ext")
    server = wr.distribute.Server({"worker": ["localhost:0"]},
                                  tls_cert_file=str(tmp_path / "server.pem"),
                                  tls_key_file=str(tmp_path / "server.key"), auth_token="py-token")
    address = server.target[len("grpc://"):]
    ca = str(tmp_path / "ca.pem")
    assert _C.distributed_get_status(address, 5.0, ca, "py-token") == [
        "/job:worker/replica:0/task:0/device:CPU:0"]
    with pytest.raises(wr.errors.UnauthenticatedError, match="auth token is wrong") as wrong:
        _C.distributed_get_status(address, 5.0, ca, "wrong")
    assert wrong.value.error_code == wr.errors.UNAUTHENTICATED
    with pytest.raises(wr.errors.UnauthenticatedError, match="carries no auth token"):
        _C.distributed_get_status(address, 5.0, ca)  # TLS, no token
    with pytest.raises(wr.errors.UnavailableError):
        _C.distributed_get_status(address, 5.0)  # plaintext
    server.stop()


@needs_runtime
def test_server_session_lease():
    import socket
    ports = []
    for _ in range(2):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            ports.append(s.getsockname()[1])
    cluster = {"worker": ["127.0.0.1:%d" % ports[0]], "ps": ["127.0.0.1:%d" % ports[1]]}
    with pytest.raises(wr.errors.InvalidArgumentError, match="at least 4000"):
        wr.distribute.Server(cluster, job_name="worker", task_index=0, session_lease_ms=1000,
                             start=False)
    ps = wr.distribute.Server(cluster, job_name="ps", task_index=0)
    master = wr.distribute.Server(cluster, job_name="worker", task_index=0, session_lease_ms=4000)
    g = wr.Graph()
    with g.as_default():
        with wr.device("/job:ps/task:0"):
            on_ps = wr.identity(wr.constant([1.5, 2.5]), name="on_ps")
    with wr.Session(master.target, graph=g) as sess:
        np.testing.assert_array_equal(sess.run(on_ps), [1.5, 2.5])
        # Idle for longer than the lease: the master's health checks renew it
        # on ps, so ps still holds the session.
        time.sleep(5.0)
        np.testing.assert_array_equal(sess.run(on_ps), [1.5, 2.5])
    master.stop()
    ps.stop()


def _two_task_cluster():
    import socket
    ports = []
    for _ in range(2):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            ports.append(s.getsockname()[1])
    return {"worker": ["127.0.0.1:%d" % ports[0]], "ps": ["127.0.0.1:%d" % ports[1]]}


@needs_runtime
@pytest.mark.parametrize("bulk_transfer", [True, False])
def test_bulk_transfer_option(bulk_transfer):
    # A 4 MiB value made on ps crosses to worker over the bulk channel (on by
    # default) or the gRPC stream (bulk_transfer=False): the same bytes.
    cluster = _two_task_cluster()
    with pytest.raises(wr.errors.InvalidArgumentError, match="bulk-transfer threshold"):
        wr.distribute.Server(cluster, job_name="ps", task_index=0, bulk_transfer_min_bytes=0,
                             start=False)
    ps = wr.distribute.Server(cluster, job_name="ps", task_index=0, bulk_transfer=bulk_transfer)
    master = wr.distribute.Server(cluster, job_name="worker", task_index=0,
                                  bulk_transfer=bulk_transfer)
    assert (ps.bulk_transfer_port > 0) == bulk_transfer
    assert (master.bulk_transfer_port > 0) == bulk_transfer
    value = np.random.default_rng(16).standard_normal(1 << 20).astype(np.float32)
    g = wr.Graph()
    with g.as_default():
        fed = wr.placeholder(wr.float32, [None], name="fed")
        with wr.device("/job:ps/task:0"):
            on_ps = wr.identity(fed, name="on_ps") * 2.0
        with wr.device("/job:worker/task:0"):
            on_worker = wr.identity(on_ps, name="on_worker")
    with wr.Session(master.target, graph=g) as sess:
        for _ in range(2):
            np.testing.assert_array_equal(sess.run(on_worker, {fed: value}), value * 2.0)
    master.stop()
    ps.stop()
# A client in another process: a session on TARGET whose step waits in a
# dequeue from the server's shared queue "q"; prints "ready" first.
BLOCKED_CLIENT = r"""
import sys, threading, time
import weir as wr
g = wr.Graph()
with g.as_default():
    q = wr.FIFOQueue(4, [wr.float32], shapes=[[]], shared_name="q", name="q")
    out = q.dequeue()
sess = wr.Session(sys.argv[1], graph=g)
threading.Timer(0.5, lambda: print("ready", flush=True)).start()
sess.run(out)  # blocks until this process is killed
"""


def _queue_graph():
    g = wr.Graph()
    with g.as_default():
        q = wr.FIFOQueue(4, [wr.float32], shapes=[[]], shared_name="q", name="q")
        enqueue = q.enqueue([wr.constant(5.0)])
        out = q.dequeue()
    return g, enqueue, out


@needs_runtime
def test_server_client_session_lease():
    with pytest.raises(wr.errors.InvalidArgumentError, match="client session lease of 100 ms"):
        wr.distribute.Server({"worker": ["localhost:0"]}, client_session_lease_ms=100, start=False)
    # Port 0: the one task calls itself at the port it bound.
    server = wr.distribute.Server({"worker": ["localhost:0"]}, client_session_lease_ms=1000)
    g, enqueue, out = _queue_graph()
    with wr.Session(server.target, graph=g) as sess:
        time.sleep(2.5)  # idle for longer than the lease: the client renews it
        sess.run(enqueue)
        assert sess.run(out) == 5.0

    # A client SIGKILLed under a blocked dequeue: the master closes its
    # session at the lease, aborting the dequeue, which would otherwise take
    # the next value enqueued.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.dirname(os.path.dirname(wr.__file__))] +
        [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    client = subprocess.Popen([sys.executable, "-c", BLOCKED_CLIENT, server.target],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert client.stdout.readline().strip() == "ready", client.stderr.read()
        time.sleep(0.5)
        client.kill()
        client.wait()
    finally:
        if client.poll() is None:
            client.kill()
    time.sleep(1.0 + 0.5)  # the lease, and room for the collector's Close
    with wr.Session(server.target, graph=g) as sess:
        sess.run(enqueue)
        options = wr.RunOptions(timeout_in_ms=5000)
        assert sess.run(out, options=options) == 5.0
    server.stop()


@needs_runtime
def test_local_server_runs_a_session():
    server = wr.distribute.Server.create_local_server()
    g = wr.Graph()
    with g.as_default():
        y = wr.constant(2.0) * 21.0
    with wr.Session(server.target, graph=g) as sess:
        assert sess.run(y) == 42.0
    server.stop()


def test_server_without_the_runtime_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(server_lib, "available", lambda: False)
    with pytest.raises(wr.errors.UnimplementedError, match="no distributed runtime"):
        wr.distribute.Server({"worker": ["localhost:0"]})
