#!/usr/bin/env bash
# LSTM training throughput and peak memory: `weir-fashion-mnist --model lstm`
# against PyTorch (nn.LSTM) and TensorFlow (Keras LSTM, plain, unrolled and
# XLA), same model, batch 100, Adam 1e-3, same threads and data, in one run
# on one machine; peak RSS from /usr/bin/time -v. Also prints the CPU time
# (user + sys, all threads) per training step, which other processes on the
# machine change far less than examples/s: the peers time their own loop
# (time.process_time); Weir's is the difference of /usr/bin/time's CPU
# seconds between this run and one of 2 timed steps, so start-up, warm-up
# and evaluation cancel. Prints a Markdown table for docs/performance.md.
# Needs the peers' virtualenv (/opt/weir-peers).
#   [WEIR=build/release/examples/weir-fashion-mnist] [WEIR_BASE=other/weir-fashion-mnist] \
#     [WEIR_ARGS=...] [WEIR_BASE_ARGS=...] bench/lstm_bench.sh [threads] [steps]
# WEIR_BASE adds a row for a second Weir binary (a baseline build), run
# right after the first, so a before/after pair shares the machine's load.
# WEIR_ARGS and WEIR_BASE_ARGS add flags to WEIR's and WEIR_BASE's runs
# (e.g. WEIR_BASE=$WEIR WEIR_BASE_ARGS="--towers 1": the same binary
# without towers); by default Weir runs one LSTM tower per thread.
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS=${1:-$(nproc)}
STEPS=${2:-200}
WARMUP=20
BATCH=100
INTER_OP=$(nproc)  # ops side by side: Weir's default; TensorFlow gets the same
PEERS=${PEERS_PYTHON:-/opt/weir-peers/bin/python}
WEIR=${WEIR:-build/release/examples/weir-fashion-mnist}
[[ -x $WEIR ]] || { echo "build $WEIR first" >&2; exit 1; }
((STEPS > 2)) || { echo "steps must be more than 2 (Weir's CPU per step is against a 2-step run)" >&2; exit 1; }

# Runs "$@"; prints "<peak RSS MiB>\t<CPU s, user + sys>\t<last stdout line>".
measure() {
  local log out
  log=$(mktemp)
  out=$(/usr/bin/time -v -o "$log" "$@" 2>/dev/null | tail -1)
  printf '%s\t%s\t%s\n' "$(awk '/Maximum resident/ {printf "%.0f", $NF / 1024}' "$log")" \
    "$(awk -F': ' '/User time|System time/ {s += $2} END {printf "%.3f", s}' "$log")" "$out"
  rm -f "$log"
}

echo "| framework | settings | examples/s | CPU ms per step | peak RSS (MiB) |"
echo "|---|---|---:|---:|---:|"
weir_run() {  # weir_run BINARY TIMED_STEPS EXTRA_FLAGS
  # shellcheck disable=SC2086 # EXTRA_FLAGS is a list of flags
  measure "$1" --model lstm --epochs 1 --batch-size $BATCH \
    --train-limit $(((WARMUP + $2) * BATCH)) --untimed-steps $WARMUP --test-limit 1000 \
    --threads "$THREADS" --no-progress $3
}
weir() {  # weir LABEL BINARY EXTRA_FLAGS
  local rss cpu line rss2 cpu2 line2
  IFS=$'\t' read -r rss cpu line < <(weir_run "$2" "$STEPS" "$3")
  IFS=$'\t' read -r rss2 cpu2 line2 < <(weir_run "$2" 2 "$3")
  local ms
  ms=$(awk -v a="$cpu" -v b="$cpu2" -v n="$STEPS" 'BEGIN {printf "%.1f", 1000 * (a - b) / (n - 2)}')
  echo "| $1 | WhileLoop + LSTMBlockCell, $THREADS intra-op threads${3:+ $3} | $(sed -E 's/.*examples_per_sec=([0-9.]+).*/\1/' <<<"$line") | $ms | $rss |"
}
weir Weir "$WEIR" "${WEIR_ARGS:-}"
if [[ -n ${WEIR_BASE:-} ]]; then
  [[ -x $WEIR_BASE ]] || { echo "no $WEIR_BASE" >&2; exit 1; }
  weir "Weir ($WEIR_BASE)" "$WEIR_BASE" "${WEIR_BASE_ARGS:-}"
fi
peer() {  # peer LABEL ARGS...
  local label=$1
  shift
  IFS=$'\t' read -r rss cpu line < <(measure "$PEERS" bench/peers/lstm_peers.py "$@" \
    --threads "$THREADS" --inter-op-threads "$INTER_OP" --steps "$STEPS" --warmup $WARMUP \
    --batch-size $BATCH)
  read -r eps ms < <("$PEERS" -c 'import json,sys; r = json.loads(sys.argv[1]); print(round(r["examples_per_sec"], 1), round(r["cpu_ms_per_step"], 1))' "$line")
  echo "| $label | $* | $eps | $ms | $rss |"
}
peer "PyTorch nn.LSTM" --framework torch
peer "TensorFlow Keras LSTM" --framework tf
peer "TensorFlow Keras LSTM" --framework tf --unroll
peer "TensorFlow Keras LSTM" --framework tf --xla
