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

run() {  # run memory|tfrecord: prints "<last epoch's examples/s> <CPU seconds of the whole run>"
  local input=memory line
  [[ $1 == tfrecord ]] && input=tfrecord:$RECORDS
  line=$( { /usr/bin/time -f 'CPU %U %S' "$WEIR" --model "$MODEL" --epochs "$EPOCHS" \
    --batch-size $BATCH --seed 1 --train-limit "$EXAMPLES" --test-limit 1000 --threads "$THREADS" \
    --untimed-steps $WARMUP --no-progress --input "$input" --reader-threads "$READERS" \
    2>&1 >&3 | grep '^CPU' >&4; } 3>&1 4>"$RECORDS/cpu" | tail -1)
  printf '%s %s\n' "$(sed -E 's/.*examples_per_sec=([0-9.]+).*/\1/' <<<"$line")" \
    "$(awk '{printf "%.1f", $2 + $3}' "$RECORDS/cpu")"
}

median() { sort -n | awk '{x[NR] = $1} END {print (NR % 2 ? x[(NR + 1) / 2] : (x[NR / 2] + x[NR / 2 + 1]) / 2)}'; }

declare -A all=() cpu=()
for ((round = 0; round < ROUNDS; ++round)); do
  order="memory tfrecord"
  ((round % 2 == 1)) && order="tfrecord memory"
  for mode in $order; do
    read -r eps seconds < <(run "$mode")
    all[$mode]+="$eps "
    cpu[$mode]+="$seconds "
  done
done
mem=$(tr ' ' '\n' <<<"${all[memory]}" | grep . | median)
rec=$(tr ' ' '\n' <<<"${all[tfrecord]}" | grep . | median)
mem_cpu=$(tr ' ' '\n' <<<"${cpu[memory]}" | grep . | median)
rec_cpu=$(tr ' ' '\n' <<<"${cpu[tfrecord]}" | grep . | median)
echo "| input | examples/s (median of $ROUNDS) | runs | vs in-memory | CPU s per run (median) |"
echo "|---|---:|---|---:|---:|"
echo "| in-memory feed | $mem | ${all[memory]% } | 1.000 | $mem_cpu |"
echo "| TFRecord pipeline, $READERS readers | $rec | ${all[tfrecord]% } | $(awk -v a="$rec" -v b="$mem" 'BEGIN {printf "%.3f", a / b}') | $rec_cpu |"
echo
echo "$MODEL, batch $BATCH, $EPOCHS epochs of $EXAMPLES examples per run (the last one's figure, first $WARMUP steps of each untimed; CPU: user+sys of the whole process, loading and evaluation included), intra-op threads $THREADS, $(nproc) cores"
