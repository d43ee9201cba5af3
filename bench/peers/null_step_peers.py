"""TensorFlow's null-step latency over its own gRPC runtime (OSDI 2016, Fig. 6),
the peer of Weir's distributed null-step benchmark.

For each N, N worker tasks are started, each a tf.distribute.Server in its own
process on a free loopback port; a tf.compat.v1.Session on the first task's
target (its master) runs a step that fetches one scalar Const placed on each
/job:worker/task:i. After --warmup steps (which also register the partitions
with every worker), --steps steps are timed one by one; the script prints one
JSON line per N with the median, p90 and mean step latency in milliseconds,
the client's CPU time per step and the worker processes' CPU time per step
(all N together, from /proc, over the timed steps):

  /opt/weir-peers/bin/python bench/peers/null_step_peers.py --workers 1,2,4,8,16,32

The servers are started with one intra- and one inter-op thread each, so many
tasks fit on a small machine; they are killed when the N is done (or if the
script fails).

With --delay-us D and --proxy PATH (bench/delay_proxy, as bench/null_step.py
--delay-us runs it), the master is a server of its own, /job:master/task:0,
whose cluster lists the worker addresses of one delay_proxy process (one route
per worker, D us one way) while the workers are given the real addresses: a
tf.distribute.Server binds the port of its own entry only, so the views may
differ in the other entries.
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def free_ports(count):
    """`count` distinct free loopback ports (held open together, so no two
    are the same; a race with another program is possible but rare)."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def serve(cluster_json, task, job="worker"):
    """The body of a server process: one task, serving until killed."""
    import tensorflow as tf
    cluster = tf.train.ClusterSpec(json.loads(cluster_json))
    config = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=1,
                                      inter_op_parallelism_threads=1)
    server = tf.distribute.Server(cluster, job_name=job, task_index=task, config=config)
    print("ready", server.target, flush=True)
    server.join()


def wait_ready(processes):
    """Each process prints 'ready <target>' once its server listens (an
    empty line: it exited first)."""
    for p in processes:
        line = p.stdout.readline()
        if not line.startswith("ready"):
            raise RuntimeError("a worker did not start: %r" % line)


def process_cpu_seconds(pids):
    """utime + stime of these processes together, in seconds (/proc/<pid>/stat
    fields 14 and 15); None where /proc cannot tell."""
    total = 0.0
    try:
        for pid in pids:
            with open("/proc/%d/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return None
    return total / os.sysconf("SC_CLK_TCK")


def start_proxy(proxy, delay_us, spin_us, targets):
    """One delay_proxy process with a route per target; returns it and the
    proxy's addresses in the targets' order."""
    command = [proxy, "--delay-us", str(delay_us), "--spin-us", str(spin_us)]
    for target in targets:
        command += ["--route", "0=" + target]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    addresses = []
    for line in process.stdout:
        if line.startswith("route "):
            addresses.append("127.0.0.1:" + line.split()[1])
        elif line.startswith("ready"):
            break
    if len(addresses) != len(targets):
        process.kill()
        process.wait()
        raise RuntimeError("delay_proxy did not start: %s" % " ".join(command))
    return process, addresses


def measure(n, steps, warmup, delay_us=None, proxy=None, spin_us=40):
    import tensorflow as tf
    tf.compat.v1.disable_eager_execution()
    ports = free_ports(n + 1)
    addresses = ["127.0.0.1:%d" % port for port in ports[:n]]
    cluster = {"worker": addresses}
    if delay_us is not None:
        cluster["master"] = ["127.0.0.1:%d" % ports[n]]
    cluster_json = json.dumps(cluster)
    processes = []
    proxy_process = None
    target = addresses[0]
    try:
        for task in range(n):
            processes.append(subprocess.Popen(
                [sys.executable, __file__, "--serve-task", str(task), "--cluster", cluster_json],
                stdout=subprocess.PIPE, text=True))
        if delay_us is not None:
            proxy_process, proxied = start_proxy(proxy, delay_us, spin_us, addresses)
            master_view = json.dumps({"worker": proxied, "master": cluster["master"]})
            processes.append(subprocess.Popen(
                [sys.executable, __file__, "--serve-task", "0", "--serve-job", "master",
                 "--cluster", master_view], stdout=subprocess.PIPE, text=True))
            target = cluster["master"][0]
        wait_ready(processes)
        graph = tf.Graph()
        with graph.as_default():
            fetches = []
            for task in range(n):
                with tf.device("/job:worker/task:%d" % task):
                    fetches.append(tf.constant(float(task), name="scalar_%d" % task))
        config = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=1,
                                          inter_op_parallelism_threads=1)
        with tf.compat.v1.Session("grpc://" + target, graph=graph, config=config) as sess:
            for _ in range(warmup):
                values = sess.run(fetches)
            assert values == [float(task) for task in range(n)], values
            times = []
            servers_start = process_cpu_seconds([p.pid for p in processes])
            cpu_start = time.process_time()
            for _ in range(steps):
                start = time.perf_counter()
                sess.run(fetches)
                times.append(time.perf_counter() - start)
            cpu = time.process_time() - cpu_start
            servers_end = process_cpu_seconds([p.pid for p in processes])
        times.sort()
        result = {
            "peer": "tensorflow " + tf.__version__,
            "workers": n,
            "steps": steps,
            "median_ms": round(1e3 * statistics.median(times), 3),
            "p90_ms": round(1e3 * times[int(0.9 * (len(times) - 1))], 3),
            "mean_ms": round(1e3 * statistics.fmean(times), 3),
            "client_cpu_ms_per_step": round(1e3 * cpu / steps, 3),
        }
        if servers_start is not None and servers_end is not None:
            result["server_cpu_ms_per_step"] = round(1e3 * (servers_end - servers_start) / steps, 3)
        if delay_us is not None:
            result["delay_us"] = delay_us
        return result
    finally:
        others = processes + ([proxy_process] if proxy_process else [])
        for p in others:
            p.kill()
        for p in others:
            p.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", default="1,2,4,8,16,32",
                        help="comma-separated numbers of worker tasks")
    parser.add_argument("--steps", type=int, default=1000, help="timed steps per N")
    parser.add_argument("--warmup", type=int, default=50, help="untimed steps first")
    parser.add_argument("--delay-us", type=float, default=None,
                        help="one-way delay of every master->worker link (needs --proxy)")
    parser.add_argument("--proxy", default=None, help="bench/delay_proxy's binary")
    parser.add_argument("--spin-us", type=float, default=40, help="delay_proxy --spin-us")
    parser.add_argument("--serve-task", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--serve-job", default="worker", help=argparse.SUPPRESS)
    parser.add_argument("--cluster", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_task is not None:
        serve(args.cluster, args.serve_task, args.serve_job)
        return
    if args.delay_us is not None and not args.proxy:
        parser.error("--delay-us needs --proxy (bench/delay_proxy)")
    for n in [int(x) for x in args.workers.split(",")]:
        print(json.dumps(measure(n, args.steps, args.warmup, args.delay_us, args.proxy,
                                 args.spin_us)), flush=True)


if __name__ == "__main__":
    main()
