#!/usr/bin/env bash
# LSTM training throughput and peak memory: `weir-fashion-mnist --model lstm`
# against PyTorch (nn.LSTM) and TensorFlow (Keras LSTM, plain, unrolled and
# XLA), same model, batch 100, Adam 1e-3, same threads and data, in one run
# on one machine; peak RSS from /usr/bin/time -v. Prints a Markdown table
# for docs/performance.md. Needs the peers' virtualenv (/opt/weir-peers).
#   [WEIR=build/release/examples/weir-fashion-mnist] [WEIR_BASE=other/weir-fashion-mnist] \
#     bench/lstm_bench.sh [threads] [steps]
# WEIR_BASE adds a row for a second Weir binary (a baseline build), run
# right after the first, so a before/after pair shares the machine's load.
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

# Runs "$@"; prints "<peak RSS MiB>\t<last stdout line>".
measure() {
  local log out
  log=$(mktemp)
  out=$(/usr/bin/time -v -o "$log" "$@" 2>/dev/null | tail -1)
  printf '%s\t%s\n' "$(awk '/Maximum resident/ {printf "%.0f", $NF / 1024}' "$log")" "$out"
  rm -f "$log"
}

echo "| framework | settings | examples/s | peak RSS (MiB) |"
echo "|---|---|---:|---:|"
weir() {  # weir LABEL BINARY
  IFS=$'\t' read -r rss line < <(measure "$2" --model lstm --epochs 1 --batch-size $BATCH \
    --train-limit $(((WARMUP + STEPS) * BATCH)) --untimed-steps $WARMUP --test-limit 1000 \
    --threads "$THREADS" --no-progress)
  echo "| $1 | WhileLoop + LSTMBlockCell, $THREADS intra-op threads | $(sed -E 's/.*examples_per_sec=([0-9.]+).*/\1/' <<<"$line") | $rss |"
}
weir Weir "$WEIR"
if [[ -n ${WEIR_BASE:-} ]]; then
  [[ -x $WEIR_BASE ]] || { echo "no $WEIR_BASE" >&2; exit 1; }
  weir "Weir ($WEIR_BASE)" "$WEIR_BASE"
fi
peer() {  # peer LABEL ARGS...
  local label=$1
  shift
  IFS=$'\t' read -r rss line < <(measure "$PEERS" bench/peers/lstm_peers.py "$@" \
    --threads "$THREADS" --inter-op-threads "$INTER_OP" --steps "$STEPS" --warmup $WARMUP \
    --batch-size $BATCH)
  eps=$("$PEERS" -c 'import json,sys; print(round(json.loads(sys.argv[1])["examples_per_sec"], 1))' "$line")
  echo "| $label | $* | $eps | $rss |"
}
peer "PyTorch nn.LSTM" --framework torch
peer "TensorFlow Keras LSTM" --framework tf
peer "TensorFlow Keras LSTM" --framework tf --unroll
peer "TensorFlow Keras LSTM" --framework tf --xla
