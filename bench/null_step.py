"""Distributed null-step latency, Weir against TensorFlow (OSDI 2016, Fig. 6),
like for like: for each N, N server processes on free loopback ports (one
intra-op thread each) and one client process that runs a step fetching one
scalar Const placed on each /job:worker/task:i through a grpc:// session to
task 0's master, with the same warm-up and timed step counts.

  Weir: N weir-server processes (started here) and bench/null_step_client;
  TensorFlow: bench/peers/null_step_peers.py (N tf.distribute.Server
  processes and a tf.compat.v1.Session), run with TensorFlow's Python.

The two sides run one after the other for each N (their order alternating
with N and round), so they share the machine's load, and the script prints
one Markdown table: median and p90 step latency, the client's CPU time per
step and the servers' CPU time per step (all N processes together, over the
timed steps). Run it through bench/null_step.sh, which builds nothing and
takes the binaries from a build folder.

With --delay-us D1,D2,... (the kernel has no netem) each N is run once per
one-way delay D over delayed links instead: the master is a task of its own,
/job:master/task:0, and every master->worker link goes through
bench/delay_proxy (one process, one route per worker, each chunk released D
us after it was read, per direction, so a round trip gains 2 D). The workers
are given the real cluster and bind their own ports; the master is given a
view of the cluster whose worker addresses are the proxy's ports (a task
binds only the port of its own entry, so the views may differ there). TF's
side (bench/peers/null_step_peers.py --delay-us D) does the same. For each D
the round trip through the proxy is measured first (64-byte pings to an echo
server, bench/delay_proxy --ping), and the table gives each median against
it.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


# The peers' script imports TensorFlow only where it runs it.
sys.path.insert(0, os.path.join(HERE, "peers"))
from null_step_peers import free_ports, start_proxy  # noqa: E402


def measure_rtt(args, delay_us):
    """The median round trip (ms) of 64-byte pings to an echo server on
    loopback, directly (delay_us None) or through the proxy."""
    echo = subprocess.Popen([args.proxy, "--echo-port", "0"], stdout=subprocess.PIPE, text=True)
    proxy = None
    try:
        target = "127.0.0.1:" + echo.stdout.readline().split()[1]
        if delay_us is not None:
            proxy, [target] = start_proxy(args.proxy, delay_us, args.spin_us, [target])
        out = subprocess.run([args.proxy, "--ping", target, "--count", "5000"], check=True,
                             capture_output=True, text=True, timeout=120)
        return json.loads(out.stdout)["median_us"] / 1e3
    finally:
        for p in (proxy, echo):
            if p is not None:
                p.kill()
                p.wait()


def proc_cpu_seconds(pid):
    """utime + stime of a process (/proc/<pid>/stat fields 14 and 15)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_for_address_files(processes, paths):
    deadline = time.monotonic() + 60
    for task, (process, path) in enumerate(zip(processes, paths)):
        while not (os.path.exists(path) and os.path.getsize(path) > 0):
            if process.poll() is not None:
                raise RuntimeError("weir-server %d exited (%d)" % (task, process.returncode))
            if time.monotonic() > deadline:
                raise RuntimeError("weir-server %d did not start in 60 s" % task)
            time.sleep(0.02)


def run_weir(args, n, delay_us=None):
    """Task 0 of the workers is the master; with delay_us, /job:master/task:0
    is, and it reaches every worker through the delay proxy."""
    ports = free_ports(n + 1)
    addresses = ["127.0.0.1:%d" % port for port in ports[:n]]
    master = "127.0.0.1:%d" % ports[n]
    processes = []
    proxy = None
    with tempfile.TemporaryDirectory(prefix="null_step.") as tmp:
        try:
            cluster = "worker=" + ",".join(addresses)
            if delay_us is not None:
                cluster = "master=%s;%s" % (master, cluster)
            paths = []
            for task in range(n):
                paths.append(os.path.join(tmp, "address%d" % task))
                processes.append(subprocess.Popen(
                    [args.weir_server, "--cluster", cluster, "--job", "worker", "--task",
                     str(task), "--intra-op-threads", "1", "--address-file", paths[-1]],
                    stderr=subprocess.DEVNULL))
            target = addresses[0]
            if delay_us is not None:
                proxy, proxied = start_proxy(args.proxy, delay_us, args.spin_us, addresses)
                paths.append(os.path.join(tmp, "address_master"))
                processes.append(subprocess.Popen(
                    [args.weir_server, "--cluster",
                     "master=%s;worker=%s" % (master, ",".join(proxied)), "--job", "master",
                     "--task", "0", "--intra-op-threads", "1", "--address-file", paths[-1]],
                    stderr=subprocess.DEVNULL))
                target = master
            wait_for_address_files(processes, paths)
            proxy_start = proc_cpu_seconds(proxy.pid) if proxy else None
            out = subprocess.run(
                [args.client, "--target", "grpc://" + target, "--job", "worker",
                 "--tasks", str(n), "--steps", str(args.steps), "--warmup", str(args.warmup),
                 "--server-pids", ",".join(str(p.pid) for p in processes)],
                check=True, capture_output=True, text=True, timeout=600)
            result = json.loads(out.stdout.strip().splitlines()[-1])
            if proxy:
                # Over the client's whole run, warm-up and start included.
                result["proxy_cpu_ms_per_step"] = round(
                    1e3 * (proc_cpu_seconds(proxy.pid) - proxy_start) /
                    (args.steps + args.warmup), 3)
            return result
        finally:
            for p in processes + ([proxy] if proxy else []):
                p.kill()
            for p in processes + ([proxy] if proxy else []):
                p.wait()


def run_tf(args, n, delay_us=None):
    command = [args.tf_python, os.path.join(HERE, "peers", "null_step_peers.py"), "--workers",
               str(n), "--steps", str(args.steps), "--warmup", str(args.warmup)]
    if delay_us is not None:
        command += ["--delay-us", str(delay_us), "--proxy", args.proxy, "--spin-us",
                    str(args.spin_us)]
    out = subprocess.run(command, check=True, capture_output=True, text=True, timeout=900)
    return json.loads(out.stdout.strip().splitlines()[-1])


def combine(results):
    """The median of each field over the rounds."""
    merged = dict(results[0])
    for key in ("median_ms", "p90_ms", "mean_ms", "client_cpu_ms_per_step",
                "server_cpu_ms_per_step"):
        values = [r[key] for r in results if key in r]
        if values:
            merged[key] = round(statistics.median(values), 3)
    return merged


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(HERE, "..", "build", "release"),
                        help="the build folder holding tools/weir-server and bench/null_step_client")
    parser.add_argument("--tf-python", default="/opt/weir-peers/bin/python",
                        help="a Python with TensorFlow")
    parser.add_argument("--workers", default="1,2,4,8,16,32", help="comma-separated N")
    parser.add_argument("--steps", type=int, default=1000, help="timed steps per N and side")
    parser.add_argument("--warmup", type=int, default=50, help="untimed steps first")
    parser.add_argument("--rounds", type=int, default=1,
                        help="runs of each side per N (the table gives their medians)")
    parser.add_argument("--no-tf", action="store_true", help="Weir only")
    parser.add_argument("--json", action="store_true", help="also print each run's JSON line")
    parser.add_argument("--delay-us", default=None,
                        help="comma-separated one-way delays in us: run over delayed links "
                        "(a master task of its own, bench/delay_proxy on every master->worker "
                        "link)")
    parser.add_argument("--spin-us", type=float, default=40,
                        help="bench/delay_proxy --spin-us (wake early, spin to each release)")
    args = parser.parse_args()
    args.weir_server = os.path.join(args.build, "tools", "weir-server")
    args.client = os.path.join(args.build, "bench", "null_step_client")
    args.proxy = os.path.abspath(os.path.join(args.build, "bench", "delay_proxy"))
    needed = [args.weir_server, args.client] + ([args.proxy] if args.delay_us else [])
    for path in needed:
        if not os.access(path, os.X_OK):
            sys.exit("null_step.py: %s is missing; build weir-server, null_step_client "
                     "(and delay_proxy for --delay-us)" % path)
    if args.delay_us:
        delayed(args)
        return

    rows = []
    for i, n in enumerate(int(x) for x in args.workers.split(",")):
        weir, tf = [], []
        for r in range(args.rounds):
            sides = [("weir", run_weir, weir)]
            if not args.no_tf:
                sides.append(("tf", run_tf, tf))
            if (i + r) % 2:
                sides.reverse()
            for _, run, results in sides:
                results.append(run(args, n))
                if args.json:
                    print(json.dumps(results[-1]), file=sys.stderr, flush=True)
        rows.append((n, combine(weir), combine(tf) if tf else None))

    def cell(result, key):
        return "%.3f" % result[key] if result and key in result else "-"

    print("| N | Weir median ms | Weir p90 ms | Weir client CPU ms/step | Weir servers CPU "
          "ms/step | TF median ms | TF p90 ms | TF client CPU ms/step | TF servers CPU "
          "ms/step | TF / Weir (median) |")
    print("| ---: " * 10 + "|")
    for n, weir, tf in rows:
        ratio = "%.2fx" % (tf["median_ms"] / weir["median_ms"]) if tf else "-"
        print("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            n, cell(weir, "median_ms"), cell(weir, "p90_ms"), cell(weir, "client_cpu_ms_per_step"),
            cell(weir, "server_cpu_ms_per_step"), cell(tf, "median_ms"), cell(tf, "p90_ms"),
            cell(tf, "client_cpu_ms_per_step"), cell(tf, "server_cpu_ms_per_step"), ratio))


def delayed(args):
    """The null step over delayed links: one table row per delay and N."""
    delays = [float(x) for x in args.delay_us.split(",")]
    workers = [int(x) for x in args.workers.split(",")]
    direct = measure_rtt(args, None)
    print("Loopback RTT without the proxy (64-byte ping, median): %.3f ms" % direct, flush=True)
    print("| one-way delay us | RTT via proxy ms | N | Weir median ms | Weir p90 ms | "
          "Weir median - RTT ms | TF median ms | TF p90 ms | TF median - RTT ms | "
          "TF / Weir (median) |")
    print("| ---: " * 10 + "|", flush=True)
    for delay in delays:
        rtt = measure_rtt(args, delay)
        for i, n in enumerate(workers):
            weir, tf = [], []
            for r in range(args.rounds):
                sides = [(run_weir, weir)] + ([] if args.no_tf else [(run_tf, tf)])
                if (i + r) % 2:
                    sides.reverse()
                for run, results in sides:
                    results.append(run(args, n, delay))
                    if args.json:
                        print(json.dumps(results[-1]), file=sys.stderr, flush=True)
            weir = combine(weir)
            tf = combine(tf) if tf else None

            def cells(result):
                if not result:
                    return "- | - | -"
                return "%.3f | %.3f | %.3f" % (result["median_ms"], result["p90_ms"],
                                               result["median_ms"] - rtt)
            ratio = "%.2fx" % (tf["median_ms"] / weir["median_ms"]) if tf else "-"
            print("| %g | %.3f | %d | %s | %s | %s |" % (delay, rtt, n, cells(weir), cells(tf),
                                                       ratio), flush=True)


if __name__ == "__main__":
    main()
