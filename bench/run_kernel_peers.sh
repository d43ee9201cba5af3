#!/usr/bin/env bash
# Weir's kernel benchmarks (bench/kernels_bench.cc) beside PyTorch's on the
# same shapes (bench/peers/torch_kernels.py), printed as a Markdown table
# with the settings each side ran with. Run it on a quiet machine: both
# sides use one thread per core.
#
#   bench/run_kernel_peers.sh [BUILD_DIR]      # BUILD_DIR defaults to build/
#
# Environment (all optional):
#   WEIR_BENCH_FILTER       Google Benchmark regex over Weir's benchmarks
#   WEIR_BENCH_MIN_TIME     seconds per Weir benchmark (default 1)
#   WEIR_PEERS_FILTER       regex over the case names, for PyTorch's side
#   WEIR_PEERS_MIN_SECONDS  seconds per PyTorch measurement (default 1)
#   WEIR_PEERS_ROUNDS       rounds of both sides, alternating which goes first
#                           (default 3), so the machine's drift does not favour
#                           one side
#   WEIR_PEERS_STAT         median (default) or best: what the table keeps of
#                           each side's rounds. PyTorch's convolutions take the
#                           better memory format's statistic; taking the best
#                           of its two formats in every round would give it
#                           twice Weir's draws from the machine's noise
#   PEERS_PYTHON            the peers' Python (default /opt/weir-peers/bin/python)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
bench=$build/bench/kernels_bench
python=${PEERS_PYTHON:-/opt/weir-peers/bin/python}
if [[ ! -x $bench ]]; then
  echo "no $bench; build it with:" >&2
  echo "  cmake -S $root -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release -DWEIR_BUILD_BENCHMARKS=ON" >&2
  echo "  cmake --build $build --target kernels_bench" >&2
  exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
weir_filter=${WEIR_BENCH_FILTER:-BM_MatMul|BM_Conv2D|BM_Binary|BM_Unary|BM_BiasLikeAdd|BM_Sum}
weir_min_time=${WEIR_BENCH_MIN_TIME:-1}
rounds=${WEIR_PEERS_ROUNDS:-3}
stat=${WEIR_PEERS_STAT:-median}
run_weir() {
  echo "running $bench ..." >&2
  "$bench" --benchmark_filter="$weir_filter" --benchmark_min_time="$weir_min_time" \
    --benchmark_format=json >"$tmp/weir.$1.json"
}
run_torch() {
  echo "running PyTorch with $python ..." >&2
  "$python" "$root/bench/peers/torch_kernels.py" >"$tmp/torch.$1.jsonl"
}
for ((round = 0; round < rounds; ++round)); do
  if ((round % 2 == 0)); then run_weir $round; run_torch $round; else run_torch $round; run_weir $round; fi
done

python3 - "$tmp" "$rounds" "$stat" "$weir_filter" "$weir_min_time" <<'PY'
"""Joins the runs by case name, keeps each side's median (or best) round,
counts the rounds each side won, prints the table."""
import json
import re
import statistics
import sys

tmp, rounds, stat, weir_filter, weir_min_time = sys.argv[1:]
rounds = int(rounds)
keep = {"median": statistics.median, "best": max}[stat]

# Weir's benchmark names -> the case names torch_kernels.py prints.
CASES = [
    # Products without transposes (PyTorch's side has only those).
    (r"^BM_MatMul/(\d+)/(\d+)/(\d+)/0/0/", lambda m: f"MatMul/{m[1]}x{m[2]}x{m[3]}"),
    (r"^BM_MatMulBFloat16/(\d+)/(\d+)/(\d+)/0/0/", lambda m: f"MatMul/bfloat16/{m[1]}x{m[2]}x{m[3]}"),
    (r"^BM_Conv2D/(\w+?)_(float|bfloat16)/batch:(\d+)/size:(\d+)/in:(\d+)/window:(\d+)/out:(\d+)/",
     lambda m: f"Conv2D/{m[1]}/{m[2]}/{m[3]}x{m[4]}x{m[5]}x{m[6]}x{m[7]}"),
    (r"^BM_(?:Binary|Unary)/(\w+)/", lambda m: m[1]),
    (r"^BM_BiasLikeAdd/(\d+)/(\d+)/", lambda m: f"BiasLikeAdd/{m[1]}x{m[2]}"),
    (r"^BM_Sum/\d+/\d+/(-1|0|1)/", lambda m: {"-1": "Sum/all", "0": "Sum/axis0", "1": "Sum/axis1"}[m[1]]),
]
# How each metric reads in Google Benchmark's JSON and in PyTorch's lines.
METRICS = [("examples_per_s", "examples/s", lambda b: b.get("items_per_second")),
           ("gflops", "GFLOP/s", lambda b: b.get("GFLOP/s", 0) / 1e9 or None),
           ("gb_per_s", "GB/s", lambda b: b.get("bytes_per_second", 0) / 1e9 or None)]


def headline(values):
    """The first metric a record has, as (key, unit, value)."""
    return next(((key, unit, values[key]) for key, unit, _ in METRICS if values.get(key)),
                (None, None, None))


# Per case and round: {metric key: value}, from Weir's JSON and PyTorch's lines.
weir, peer, peer_how = {}, {}, {}
for r in range(rounds):
    weir_run = json.load(open(f"{tmp}/weir.{r}.json"))
    for b in weir_run["benchmarks"]:
        if b.get("run_type") == "aggregate":
            continue
        for pattern, case in CASES:
            m = re.match(pattern, b["name"] + "/")
            if m:
                values = {key: read(b) for key, _, read in METRICS if read(b) is not None}
                weir.setdefault(case(m), []).append(values)
                break

torch_settings = {}
for r in range(rounds):
    for line in open(f"{tmp}/torch.{r}.jsonl"):
        record = json.loads(line)
        if "settings" in record:
            torch_settings = record["settings"]
            continue
        values = {key: record[key] for key, _, _ in METRICS if key in record}
        if "examples_per_s_by_layout" in record:
            values["by_layout"] = record["examples_per_s_by_layout"]
        peer.setdefault(record["case"], []).append(values)
        peer_how[record["case"]] = record.get("method", "")


def peer_summary(case):
    """PyTorch's kept value per metric for `case`, and the layout it ran as."""
    runs = peer.get(case, [])
    if not runs:
        return {}, ""
    if "by_layout" not in runs[0]:
        return {key: keep([v[key] for v in runs]) for key in runs[0]}, ""
    # The better memory format by its kept statistic; the metrics follow
    # from examples/s by the same factor.
    kept = {layout: keep([v["by_layout"][layout] for v in runs]) for layout in runs[0]["by_layout"]}
    layout = max(kept, key=kept.get)
    scale = runs[0]["gflops"] / runs[0]["examples_per_s"]
    return {"examples_per_s": kept[layout], "gflops": kept[layout] * scale}, layout


def best_format(values, key):
    """PyTorch's figure of one round: its faster memory format's, for a convolution."""
    return max(values["by_layout"].values()) if "by_layout" in values else values[key]


def fmt(value):
    if value is None:
        return "-"
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


context = weir_run["context"]
print("Settings")
print(f"- Both: the {stat} of {rounds} rounds per case, alternating which side runs first; "
      "'Weir ahead' counts the rounds where Weir beat PyTorch's better format of that round")
print(f"- Weir: kernels_bench, filter `{weir_filter}`, min time {weir_min_time} s, "
      f"{context.get('num_cpus')} CPUs at {context.get('mhz_per_cpu')} MHz, one intra-op thread "
      f"per core, Google Benchmark library build {context.get('library_build_type')}, {context.get('date')}")
print(f"- PyTorch: {json.dumps(torch_settings)}")
print()
print("| Case | Metric | Weir | PyTorch | Weir / PyTorch | Weir ahead | PyTorch ran as |")
print("|---|---|---:|---:|---:|---:|---|")
for case in list(weir) + [c for c in peer if c not in weir]:
    ours = {key: keep([v[key] for v in weir[case]]) for key in weir[case][0]} if case in weir else {}
    theirs, layout = peer_summary(case)
    key, unit, mine = headline(ours)
    if key is None:
        key, unit, _ = headline(theirs)
    other = theirs.get(key)
    ratio = f"{mine / other:.2f}x" if mine and other else "-"
    wins = "-"
    if case in weir and case in peer:
        pairs = list(zip(weir[case], peer[case]))
        wins = f"{sum(w[key] > best_format(p, key) for w, p in pairs)}/{len(pairs)}"
    how = ", ".join(x for x in (layout, peer_how.get(case, "")) if x)
    print(f"| {case} | {unit} | {fmt(mine)} | {fmt(other)} | {ratio} | {wins} | {how} |")
PY
