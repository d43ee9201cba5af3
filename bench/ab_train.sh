#!/usr/bin/env bash
# Interleaved A/B of two weir-fashion-mnist binaries (or wrappers) on the
# convnet: runs A, B, A, B, ... and prints each run and each side's median.
# This machine's speed drifts by up to 30% from minute to minute, so only
# runs interleaved like this (or columns of one train_bench.sh run) compare.
#
#   bench/ab_train.sh BIN_A BIN_B [reps=4] [steps=80]
set -euo pipefail
a=$1 b=$2 reps=${3:-4} steps=${4:-80}
run() {
  "$1" --model cnn --epochs 1 --train-limit $((steps * 100)) --test-limit 200 \
    --checkpoint-dir "" --no-progress | tail -1 | sed -E 's/.*examples_per_sec=([0-9.]+).*/\1/'
}
declare -A runs
for ((i = 0; i < reps; ++i)); do
  for side in A B; do
    bin=$a; [[ $side == B ]] && bin=$b
    eps=$(run "$bin")
    echo "$side $eps"
    runs[$side]+="$eps"$'\n'
  done
done
for side in A B; do
  median=$(printf '%s' "${runs[$side]}" | sort -n | awk '{x[NR] = $1} END {
    print (NR % 2 ? x[(NR + 1) / 2] : (x[NR / 2] + x[NR / 2 + 1]) / 2)}')
  echo "$side median $median examples/s over $reps runs"
done
