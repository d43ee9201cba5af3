#!/usr/bin/env bash
# Training throughput and peak memory: Weir against PyTorch and TensorFlow on
# the Fashion-MNIST MLP and convnet, same batch size, optimizer (Adam 1e-3),
# thread count and data, in one run on one machine. Prints a Markdown table
# for docs/performance.md. Needs the peers' virtualenv:
#   python3 -m venv /opt/weir-peers && /opt/weir-peers/bin/pip install torch tensorflow-cpu
#   [MODELS="mlp cnn"] [ROUNDS=1] bench/train_bench.sh [threads] [steps]
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS=${1:-$(nproc)}
STEPS=${2:-300}
BATCH=100
ROUNDS=${ROUNDS:-1}
WARMUP=20  # steps each framework runs before its clock starts (train_peers.py's default)
INTER_OP=$(nproc)  # ops side by side: Weir's default, and TensorFlow's (tried: 1 is no faster)
PEERS=${PEERS_PYTHON:-/opt/weir-peers/bin/python}
cmake --build build/release --target weir-fashion-mnist >/dev/null
WEIR=build/release/examples/weir-fashion-mnist

rss_and_output() {  # runs "$@"; prints "<peak RSS MiB>\t<last stdout line>"
  local out
  out=$( { /usr/bin/time -f 'RSS %M' "$@" 2>&1 >&3 | grep '^RSS' >&4; } 3>&1 4>/tmp/weir_bench_rss.$$ | tail -1)
  printf '%s\t%s\n' "$(awk '{printf "%.0f", $2/1024}' /tmp/weir_bench_rss.$$)" "$out"
  rm -f /tmp/weir_bench_rss.$$
}

# One framework's run of `model`: sets eps, rss and settings.
run_framework() {  # run_framework FRAMEWORK MODEL
  local fw=$1 model=$2 line
  if [[ $fw == weir ]]; then
    IFS=$'\t' read -r rss line < <(rss_and_output "$WEIR" --model "$model" --epochs 1 \
      --batch-size $BATCH --train-limit $(((WARMUP + STEPS) * BATCH)) --untimed-steps $WARMUP \
      --test-limit 1000 --threads "$THREADS" --no-progress)
    eps=$(sed -E 's/.*examples_per_sec=([0-9.]+).*/\1/' <<<"$line")
    settings="intra-op threads $THREADS, inter-op $INTER_OP, $STEPS steps timed after $WARMUP"
  else
    IFS=$'\t' read -r rss line < <(rss_and_output "$PEERS" bench/peers/train_peers.py \
      --framework "$fw" --model "$model" --threads "$THREADS" --steps "$STEPS" --batch-size $BATCH \
      --warmup $WARMUP --inter-op-threads "$INTER_OP")
    eps=$("$PEERS" -c 'import json,sys; print(round(json.loads(sys.argv[1])["examples_per_sec"], 1))' "$line")
    settings=$("$PEERS" -c 'import json,sys; print(json.loads(sys.argv[1])["settings"])' "$line")
  fi
}

median() { sort -n | awk '{x[NR] = $1} END {print (NR % 2 ? x[(NR + 1) / 2] : (x[NR / 2] + x[NR / 2 + 1]) / 2)}'; }

# ROUNDS runs of every framework, the order reversed every other round so
# the machine's drift favours none; the table has each one's median.
echo "| model | framework | examples/s (median of $ROUNDS) | runs | peak RSS (MiB) | settings |"
echo "|---|---|---:|---|---:|---|"
for model in ${MODELS:-mlp cnn}; do
  declare -A all_eps=() peak_rss=() how=()
  for ((round = 0; round < ROUNDS; ++round)); do
    order="weir torch tf"
    ((round % 2 == 1)) && order="tf torch weir"
    for fw in $order; do
      run_framework "$fw" "$model"
      all_eps[$fw]+="$eps "
      ((rss > ${peak_rss[$fw]:-0})) && peak_rss[$fw]=$rss
      how[$fw]=$settings
    done
  done
  for fw in weir torch tf; do
    med=$(tr ' ' '\n' <<<"${all_eps[$fw]}" | grep . | median)
    echo "| $model | $fw | $med | ${all_eps[$fw]% } | ${peak_rss[$fw]} | ${how[$fw]} |"
  done
done
