"""wr.Session("grpc://host:port") beyond results (test_distributed.py): step statistics of every
task in run_metadata, TLS and the auth token (wr.distribute.RemoteSessionOptions), and waiting for
a master that is not listening yet. In-process servers (wr.distribute.Server) on free loopback
ports; certificates made with openssl here."""
import json
import socket
import subprocess
import threading
import time

import numpy as np
import pytest

import weir as wr
from weir.distribute import server_lib

pytestmark = pytest.mark.skipif(not server_lib.available(),
                                reason="a build without the distributed runtime (the wheel)")

WORKER_CPU = "/job:worker/replica:0/task:0/device:CPU:0"
PS_CPU = "/job:ps/replica:0/task:0/device:CPU:0"


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _two_tasks():
    cluster = {"worker": ["127.0.0.1:%d" % _free_port()], "ps": ["127.0.0.1:%d" % _free_port()]}
    return [wr.distribute.Server(cluster, job_name=job, task_index=0) for job in ("worker", "ps")]


def test_traced_remote_step_fills_run_metadata_with_both_tasks():
    worker, ps = _two_tasks()
    g = wr.Graph()
    with g.as_default():
        with wr.device("/job:ps/task:0"):
            a = wr.placeholder(wr.float32, [], name="a")  # fed: constants would be folded
            b = wr.square(a, name="b")
        with wr.device("/job:worker/task:0"):
            c = wr.multiply(b, 3.0, name="c")
    with wr.Session(worker.target, graph=g) as sess:
        md = wr.RunMetadata()
        options = wr.RunOptions(trace_level=wr.RunOptions.FULL_TRACE)
        assert sess.run(c, {a: 2.0}, options=options, run_metadata=md) == 12.0
        by_name = {s.node_name: s for s in md.step_stats}
        assert by_name["b"].device == PS_CPU and by_name["b"].op == "Square"
        assert by_name["c"].device == WORKER_CPU and by_name["c"].op == "Mul"
        assert {d.device for d in md.step_stats.dev_stats} == {PS_CPU, WORKER_CPU}
        for s in md.step_stats:
            assert 0 < s.start_micros <= s.end_micros, s
        # One process (one clock) here: the value crosses from ps before c runs.
        assert by_name["b"].end_micros <= by_name["c"].start_micros
        trace = json.loads(md.chrome_trace())
        rows = {e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "process_name"}
        assert rows == {PS_CPU, WORKER_CPU}
        untraced = wr.RunMetadata()
        sess.run(c, {a: 2.0}, run_metadata=untraced)
        assert len(untraced.step_stats) == 0
    worker.stop()
    ps.stop()


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    d = tmp_path_factory.mktemp("certs")

    def openssl(*args):
        subprocess.run(["openssl", *args], check=True, capture_output=True, cwd=d)

    curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    for ca in ("ca", "other_ca"):
        openssl("req", "-x509", *curve, "-keyout", ca + ".key", "-out", ca + ".pem", "-days", "2",
                "-subj", "/CN=" + ca)
    openssl("req", *curve, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost")
    (d / "ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "ext")
    (d / "token").write_text("py-token\n")
    (d / "wrong").write_text("not-it\n")
    return d


def _tls_server(certs, port=None):
    # The master calls its own task at the cluster's address: a real port, and a CA it trusts.
    address = "localhost:%d" % (port or _free_port())
    return wr.distribute.Server({"worker": [address]}, tls_cert_file=str(certs / "server.pem"),
                                tls_key_file=str(certs / "server.key"),
                                tls_ca_file=str(certs / "ca.pem"), auth_token="py-token")


def _run_constant(target, remote):
    g = wr.Graph()
    with g.as_default():
        c = wr.constant(5.0)
    with wr.Session(target, graph=g, remote=remote) as sess:
        return sess.run(c)


def test_tls_and_token_session(certs):
    server = _tls_server(certs)
    good = wr.distribute.RemoteSessionOptions(tls_ca_file=str(certs / "ca.pem"),
                                              auth_token_file=str(certs / "token"))
    assert _run_constant(server.target, good) == 5.0
    start = time.monotonic()
    with pytest.raises(wr.errors.UnavailableError, match="TLS handshake failed"):
        _run_constant(server.target, wr.distribute.RemoteSessionOptions(
            tls_ca_file=str(certs / "other_ca.pem"), auth_token_file=str(certs / "token")))
    # A missing or wrong token is UNAUTHENTICATED (16), as in TF and gRPC; not PERMISSION_DENIED.
    with pytest.raises(wr.errors.UnauthenticatedError, match="carries no auth token") as missing:
        _run_constant(server.target,
                      wr.distribute.RemoteSessionOptions(tls_ca_file=str(certs / "ca.pem")))
    assert missing.value.error_code == wr.errors.UNAUTHENTICATED == 16
    assert not isinstance(missing.value, wr.errors.PermissionDeniedError)
    assert str(missing.value).count("Unauthenticated") == 0  # the class says it, not the text
    with pytest.raises(wr.errors.UnauthenticatedError, match="auth token is wrong") as wrong:
        _run_constant(server.target, wr.distribute.RemoteSessionOptions(
            tls_ca_file=str(certs / "ca.pem"), auth_token_file=str(certs / "wrong")))
    assert wrong.value.error_code == wr.errors.UNAUTHENTICATED
    # Refusals do not wait for connect_timeout_ms (30 s by default).
    assert time.monotonic() - start < 10
    with pytest.raises(wr.errors.InvalidArgumentError, match="an auth token needs TLS"):
        _run_constant(server.target,
                      wr.distribute.RemoteSessionOptions(auth_token_file=str(certs / "token")))
    with pytest.raises(TypeError, match="RemoteSessionOptions"):
        wr.Session(server.target, remote={"tls_ca_file": "x"})
    with pytest.raises(ValueError, match="need a grpc:// target"):
        wr.Session(remote=good)
    server.stop()


def test_session_waits_for_a_master_that_starts_later(certs):
    port = _free_port()
    remote = wr.distribute.RemoteSessionOptions(tls_ca_file=str(certs / "ca.pem"),
                                                auth_token_file=str(certs / "token"),
                                                connect_timeout_ms=20000)
    result = {}

    def client():
        try:
            result["value"] = _run_constant("grpc://localhost:%d" % port, remote)
        except Exception as e:  # reported below
            result["error"] = e

    thread = threading.Thread(target=client)
    thread.start()
    time.sleep(0.7)
    server = _tls_server(certs, port)
    thread.join(timeout=30)
    assert result == {"value": np.float32(5.0)}, result
    server.stop()


def test_waiting_for_a_master_is_bounded():
    port = _free_port()
    start = time.monotonic()
    with pytest.raises(wr.errors.UnavailableError, match="127.0.0.1:%d did not answer in 300 ms"
                       % port):
        wr.Session("grpc://127.0.0.1:%d" % port,
                   remote=wr.distribute.RemoteSessionOptions(connect_timeout_ms=300))
    assert 0.3 <= time.monotonic() - start < 5
