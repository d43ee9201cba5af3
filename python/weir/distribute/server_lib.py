"""Server: one task of a Weir cluster in this process (TensorFlow's
tf.distribute.Server / tf.train.Server), serving the distributed runtime's
worker service over gRPC on loopback unless told otherwise.

    server = wr.distribute.Server({"worker": ["localhost:0"]}, job_name="worker",
                                  task_index=0)
    server.target          # "grpc://127.0.0.1:41234" (port 0: a free one)
    server.join()          # until stop()

Beyond TensorFlow's arguments: `host` (the interface to listen on), TLS
(`tls_cert_file`, `tls_key_file`, `tls_ca_file`), `auth_token` (needs TLS)
and `max_message_bytes` (src/weir/distributed/credentials.h), and
`session_lease_ms`: how long another task keeps a session this task masters
without hearing from it (renewed by the master's health checks every 500 ms;
0: no lease, else at least 4000; default 10000). A task whose lease runs out
(this process died or was cut off) drops the session and aborts its steps.
`bulk_transfer` (default True) and `bulk_transfer_min_bytes` (default 1 MiB):
numeric values of at least that size cross tasks over a TCP connection of
their own, read straight into the receiver's tensor, when both tasks allow it
and neither uses TLS (src/weir/distributed/README.md, "Bulk transfer").
`client_session_lease_ms`: how long this task's master keeps a session
without a call from its client (a living client renews it every quarter of
it; 0: no lease, else at least 400; default 60000); a session whose client
died is then closed on every task, and a later call on it raises AbortedError.

Builds without the distributed runtime (the pip wheel, built without gRPC)
have ClusterSpec but no Server: creating one raises UnimplementedError.
"""
import json

from weir import _C
from weir.distribute.cluster_spec import ClusterSpec
from weir.framework import errors

__all__ = ["Server"]


def available():
    """Whether this build has the distributed runtime (gRPC)."""
    return bool(getattr(_C, "HAS_DISTRIBUTED", False))


def _require_runtime():
    if not available():
        raise errors.UnimplementedError(
            None, None,
            "wr.distribute.Server: this build of weir has no distributed runtime (it was built "
            "without gRPC, as the pip wheel is: WEIR_PYTHON_ONLY); build weir from source with "
            "gRPC (scripts/install_deps.sh) to serve a cluster task")


def _config_counts(config):
    """(CPU devices, intra-op threads) from a ConfigProto-like object or dict."""
    if config is None:
        return 1, 0
    get = config.get if isinstance(config, dict) else lambda key, default: getattr(
        config, key, default)
    device_count = get("device_count", None) or {}
    devices = int(device_count.get("CPU", 1)) if hasattr(device_count, "get") else 1
    threads = int(get("intra_op_parallelism_threads", 0) or 0)
    return devices, threads


class Server:
    """An in-process server of task `task_index` of job `job_name`.

    `server_or_cluster_def` is a ServerDef message (its cluster, job, task
    and port), a ClusterDef, a ClusterSpec or a dict (ClusterSpec's forms).
    Without `job_name`, the cluster must have exactly one job; without
    `task_index`, the job must have exactly one task. `protocol` must be
    None or "grpc". `config` (a ConfigProto or a dict) may give
    device_count["CPU"] and intra_op_parallelism_threads.
    """

    def __init__(self, server_or_cluster_def, job_name=None, task_index=None, protocol=None,
                 config=None, start=True, *, host="127.0.0.1", tls_cert_file=None,
                 tls_key_file=None, tls_ca_file=None, auth_token=None, max_message_bytes=None,
                 session_lease_ms=None, client_session_lease_ms=None, bulk_transfer=None,
                 bulk_transfer_min_bytes=None):
        _require_runtime()
        port = None
        if hasattr(server_or_cluster_def, "cluster") and hasattr(server_or_cluster_def,
                                                                 "job_name"):
            server_def = server_or_cluster_def
            cluster = ClusterSpec(server_def.cluster)
            job_name = job_name if job_name is not None else (server_def.job_name or None)
            task_index = task_index if task_index is not None else server_def.task_index
            protocol = protocol if protocol is not None else (server_def.protocol or None)
            port = server_def.port or None
        else:
            cluster = ClusterSpec(server_or_cluster_def)
        if protocol not in (None, "grpc"):
            raise ValueError("protocol %r is not supported: Weir's servers speak 'grpc'" % protocol)
        if job_name is None:
            if len(cluster.jobs) != 1:
                raise ValueError("Must specify an explicit `job_name`.")
            job_name = cluster.jobs[0]
        if task_index is None:
            indices = cluster.task_indices(job_name)
            if len(indices) != 1:
                raise ValueError("Must specify an explicit `task_index`.")
            task_index = indices[0]
        jobs = cluster.as_dict()
        if port is not None:  # the ServerDef's port replaces the task's
            address = cluster.task_address(job_name, task_index)
            tasks = dict(enumerate(jobs[job_name])) if isinstance(jobs[job_name], list) \
                else dict(jobs[job_name])
            tasks[task_index] = "%s:%d" % (address.rsplit(":", 1)[0], port)
            jobs[job_name] = {str(i): a for i, a in tasks.items()}
        tf_config = json.dumps({"cluster": _json_jobs(jobs),
                                "task": {"type": _text(job_name), "index": int(task_index)}})
        devices, threads = _config_counts(config)
        options = {"host": host, "cpu_devices": devices, "intra_op_threads": threads}
        for key, value in (("tls_cert_file", tls_cert_file), ("tls_key_file", tls_key_file),
                           ("tls_ca_file", tls_ca_file), ("auth_token", auth_token),
                           ("max_message_bytes", max_message_bytes),
                           ("session_lease_ms", session_lease_ms),
                           ("client_session_lease_ms", client_session_lease_ms),
                           ("bulk_transfer", None if bulk_transfer is None else bool(bulk_transfer)),
                           ("bulk_transfer_min_bytes", bulk_transfer_min_bytes)):
            if value is not None:
                options[key] = value
        self._cluster_spec = cluster
        self._job_name = job_name
        self._task_index = int(task_index)
        self._server = _C.DistributedServer(tf_config, options)
        if start:
            self.start()

    @staticmethod
    def create_local_server(config=None, start=True):
        """A single-task server on a free loopback port (job "localhost")."""
        return Server({"localhost": ["localhost:0"]}, protocol="grpc", config=config,
                      start=start)

    def start(self):
        """Starts serving (a no-op if already started)."""
        self._server.start()

    def join(self):
        """Blocks until the server stops (stop(), or the process ends)."""
        self._server.join()

    def stop(self):
        """Stops serving: calls in flight finish; join() returns. (Weir's
        addition: TensorFlow's servers cannot be stopped.)"""
        self._server.stop()

    @property
    def target(self):
        """"grpc://host:port", the address it listens on (a session target)."""
        return "grpc://" + self._server.bound_address()

    @property
    def server_def(self):
        """A ServerDef message of this task (weir's; TensorFlow's field numbers)."""
        from weir.core import protos
        server_def = protos.ServerDef()
        server_def.cluster.CopyFrom(self._cluster_spec.as_cluster_def())
        server_def.job_name = self._job_name
        server_def.task_index = self._task_index
        server_def.protocol = "grpc"
        return server_def

    def devices(self):
        """The full names of the task's devices."""
        return self._server.device_names()

    @property
    def bulk_transfer_port(self):
        """The port of the bulk-transfer listener (on the host of `target`);
        0 when the channel is off (bulk_transfer=False, TLS, or not started)."""
        return self._server.bulk_transfer_port()


def _text(value):
    return value.decode("utf-8") if isinstance(value, bytes) else value


def _json_jobs(jobs):
    """TF_CONFIG's cluster: lists, or dicts with string indices; text only."""
    return {_text(job): ([_text(a) for a in tasks] if isinstance(tasks, list)
                         else {str(i): _text(a) for i, a in tasks.items()})
            for job, tasks in jobs.items()}
