#!/usr/bin/env bash
# Training throughput and peak memory: Weir against PyTorch and TensorFlow on
# the Fashion-MNIST MLP and convnet, same batch size, optimizer (Adam 1e-3),
# thread count and data, in one run on one machine. Prints a Markdown table
# for docs/performance.md. Needs the peers' virtualenv:
#   python3 -m venv /opt/weir-peers && /opt/weir-peers/bin/pip install torch tensorflow-cpu
#   [MODELS="mlp cnn"] bench/train_bench.sh [threads] [steps]
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS=${1:-$(nproc)}
STEPS=${2:-300}
BATCH=100
WARMUP=20  # steps each framework runs before its clock starts (train_peers.py's default)
PEERS=${PEERS_PYTHON:-/opt/weir-peers/bin/python}
cmake --build build/release --target weir-fashion-mnist >/dev/null
WEIR=build/release/examples/weir-fashion-mnist

rss_and_output() {  # runs "$@"; prints "<peak RSS MiB>\t<last stdout line>"
  local out
  out=$( { /usr/bin/time -f 'RSS %M' "$@" 2>&1 >&3 | grep '^RSS' >&4; } 3>&1 4>/tmp/weir_bench_rss.$$ | tail -1)
  printf '%s\t%s\n' "$(awk '{printf "%.0f", $2/1024}' /tmp/weir_bench_rss.$$)" "$out"
  rm -f /tmp/weir_bench_rss.$$
}

echo "| model | framework | examples/s | peak RSS (MiB) | settings |"
echo "|---|---|---:|---:|---|"
for model in ${MODELS:-mlp cnn}; do
  IFS=$'\t' read -r rss line < <(rss_and_output "$WEIR" --model "$model" --epochs 1 \
    --batch-size $BATCH --train-limit $(((WARMUP + STEPS) * BATCH)) --untimed-steps $WARMUP \
    --test-limit 1000 --threads "$THREADS" --no-progress)
  eps=$(sed -E 's/.*examples_per_sec=([0-9.]+).*/\1/' <<<"$line")
  echo "| $model | weir | $eps | $rss | intra-op threads $THREADS, $STEPS steps timed after $WARMUP |"
  for fw in torch tf; do
    IFS=$'\t' read -r rss line < <(rss_and_output "$PEERS" bench/peers/train_peers.py \
      --framework $fw --model "$model" --threads "$THREADS" --steps "$STEPS" --batch-size $BATCH \
      --warmup $WARMUP)
    eps=$("$PEERS" -c 'import json,sys; print(round(json.loads(sys.argv[1])["examples_per_sec"], 1))' "$line")
    settings=$("$PEERS" -c 'import json,sys; print(json.loads(sys.argv[1])["settings"])' "$line")
    echo "| $model | $fw | $eps | $rss | $settings |"
  done
done
