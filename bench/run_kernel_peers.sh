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
#                           (default 2); each side's best per case is kept, so
#                           the machine's drift does not favour one side
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
rounds=${WEIR_PEERS_ROUNDS:-2}
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

python3 - "$tmp" "$rounds" "$weir_filter" "$weir_min_time" <<'PY'
"""Joins the runs by case name, keeps each side's best round, prints the table."""
import json
import re
import sys

tmp, rounds, weir_filter, weir_min_time = sys.argv[1:]
rounds = int(rounds)

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

def weir_value(b):
    return next((v for _, _, read in METRICS if (v := read(b)) is not None), 0)


def torch_value(record):
    return next((record[key] for key, _, _ in METRICS if key in record), 0)


weir = {}
for r in range(rounds):
    weir_run = json.load(open(f"{tmp}/weir.{r}.json"))
    for b in weir_run["benchmarks"]:
        if b.get("run_type") == "aggregate":
            continue
        for pattern, case in CASES:
            m = re.match(pattern, b["name"] + "/")
            if m:
                if case(m) not in weir or weir_value(b) > weir_value(weir[case(m)]):
                    weir[case(m)] = b
                break

torch_settings, torch_cases = {}, {}
for r in range(rounds):
    for line in open(f"{tmp}/torch.{r}.jsonl"):
        record = json.loads(line)
        if "settings" in record:
            torch_settings = record["settings"]
        elif record["case"] not in torch_cases or torch_value(record) > torch_value(
                torch_cases[record["case"]]):
            torch_cases[record["case"]] = record


def fmt(value):
    if value is None:
        return "-"
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


context = weir_run["context"]
print("Settings")
print(f"- Both: best of {rounds} rounds per case, alternating which side runs first")
print(f"- Weir: kernels_bench, filter `{weir_filter}`, min time {weir_min_time} s, "
      f"{context.get('num_cpus')} CPUs at {context.get('mhz_per_cpu')} MHz, one intra-op thread "
      f"per core, Google Benchmark library build {context.get('library_build_type')}, {context.get('date')}")
print(f"- PyTorch: {json.dumps(torch_settings)}")
print()
print("| Case | Metric | Weir | PyTorch | Weir / PyTorch | PyTorch ran as |")
print("|---|---|---:|---:|---:|---|")
for case in list(weir) + [c for c in torch_cases if c not in weir]:
    theirs = torch_cases.get(case, {})
    ours = weir.get(case, {})
    for key, unit, read in METRICS:
        mine = read(ours) if ours else None
        peer = theirs.get(key)
        if mine is None and peer is None:
            continue
        ratio = f"{mine / peer:.2f}x" if mine and peer else "-"
        how = ", ".join(str(theirs[k]) for k in ("layout", "method") if k in theirs)
        print(f"| {case} | {unit} | {fmt(mine)} | {fmt(peer)} | {ratio} | {how} |")
        if key == "examples_per_s":
            break  # convolutions: examples/s is the headline; GFLOP/s follows from it
PY
