#!/usr/bin/env bash
# Convnet training throughput from TFRecord files through the graph's input
# pipeline (filename queue -> readers -> parse -> shuffle queue -> batched
# dequeue) against the in-memory feed, in one run: same model, seed, batch,
# threads and examples, the two interleaved (A B A B ...) so the machine's
# drift favours neither. Prints a Markdown table for docs/performance.md.
#   [BUILD_DIR=build/release] [ROUNDS=3] [EPOCHS=2] [EXAMPLES=6000] [READERS=2] \
#     bench/pipeline_bench.sh [threads]
# Each run trains EPOCHS epochs of EXAMPLES examples; its figure is the last
# epoch's examples_per_sec (the first WARMUP steps of each epoch untimed).
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS=${1:-$(nproc)}
BUILD_DIR=${BUILD_DIR:-build/release}
ROUNDS=${ROUNDS:-3}
EPOCHS=${EPOCHS:-2}
EXAMPLES=${EXAMPLES:-6000}
READERS=${READERS:-2}
MODEL=${MODEL:-cnn}
BATCH=100
WARMUP=10
cmake --build "$BUILD_DIR" --target weir-fashion-mnist >/dev/null
WEIR=$BUILD_DIR/examples/weir-fashion-mnist
RECORDS=$(mktemp -d /tmp/weir_pipeline_bench.XXXXXX)
trap 'rm -rf "$RECORDS"' EXIT
"$WEIR" --write-tfrecords "$RECORDS" --train-limit "$EXAMPLES" --test-limit 1000 >/dev/null

run() {  # run memory|tfrecord: prints the last epoch's examples/s
  local input=memory
  [[ $1 == tfrecord ]] && input=tfrecord:$RECORDS
  "$WEIR" --model "$MODEL" --epochs "$EPOCHS" --batch-size $BATCH --seed 1 \
    --train-limit "$EXAMPLES" --test-limit 1000 --threads "$THREADS" --untimed-steps $WARMUP \
    --no-progress --input "$input" --reader-threads "$READERS" |
    tail -1 | sed -E 's/.*examples_per_sec=([0-9.]+).*/\1/'
}

median() { sort -n | awk '{x[NR] = $1} END {print (NR % 2 ? x[(NR + 1) / 2] : (x[NR / 2] + x[NR / 2 + 1]) / 2)}'; }

declare -A all=()
for ((round = 0; round < ROUNDS; ++round)); do
  order="memory tfrecord"
  ((round % 2 == 1)) && order="tfrecord memory"
  for mode in $order; do
    all[$mode]+="$(run "$mode") "
  done
done
mem=$(tr ' ' '\n' <<<"${all[memory]}" | grep . | median)
rec=$(tr ' ' '\n' <<<"${all[tfrecord]}" | grep . | median)
echo "| input | examples/s (median of $ROUNDS) | runs | vs in-memory |"
echo "|---|---:|---|---:|"
echo "| in-memory feed | $mem | ${all[memory]% } | 1.000 |"
echo "| TFRecord pipeline, $READERS readers | $rec | ${all[tfrecord]% } | $(awk -v a="$rec" -v b="$mem" 'BEGIN {printf "%.3f", a / b}') |"
echo
echo "$MODEL, batch $BATCH, $EPOCHS epochs of $EXAMPLES examples per run (the last one's figure, first $WARMUP steps untimed), intra-op threads $THREADS, $(nproc) cores"
