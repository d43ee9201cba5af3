#!/usr/bin/env bash
# examples/python/fashion_mnist.py against the C++ trainer (weir-fashion-mnist)
# on the same model and settings: runs C++, Python, C++, Python, ... (this
# machine's speed drifts from minute to minute, so only interleaved runs
# compare), prints each run's examples/s, each side's median and the ratio
# Python / C++, of the medians and as the median of each pair's ratio (the
# goal: within 3%, i.e. >= 0.97).
#
#   bench/python_train_bench.sh [--model cnn|mlp] [--reps 4] [--steps 80] [--threads 0]
#
# Each run trains one epoch of `steps` batches of 100 (the first 10 steps
# untimed, as warm-up) and evaluates on 200 test examples, without checkpoints.
# Needs the C++ trainer (build/release, else build/mainjob) and build/py (the Python package);
# WEIR_BUILD_DIR / WEIR_PY_BUILD_DIR (or WEIR_PYTHONPATH, a folder holding
# weir/) override them.
set -euo pipefail
cd "$(dirname "$0")/.."
model=cnn reps=4 steps=80 threads=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --model) model=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    *) echo "usage: $0 [--model cnn|mlp] [--reps N] [--steps N] [--threads N]" >&2; exit 2 ;;
  esac
done
# The C++ trainer of build/release, else of the main job's tree (scripts/main.sh builds it).
cxx=${WEIR_BUILD_DIR:-build/release}/examples/weir-fashion-mnist
if [[ -z ${WEIR_BUILD_DIR:-} && ! -x $cxx && -x build/mainjob/examples/weir-fashion-mnist ]]; then
  cxx=build/mainjob/examples/weir-fashion-mnist
fi
py_path=${WEIR_PYTHONPATH:-${WEIR_PY_BUILD_DIR:-build/py}/python}
[[ -x $cxx ]] || { echo "missing $cxx (cmake --build build/release --target weir-fashion-mnist)" >&2; exit 1; }
[[ -d $py_path/weir ]] || { echo "missing $py_path/weir (build the weir_python target)" >&2; exit 1; }

args=(--model "$model" --epochs 1 --batch-size 100 --seed 1 --train-limit $((steps * 100))
      --test-limit 200 --untimed-steps 10 --threads "$threads" --no-progress)
examples_per_sec() { sed -nE 's/^epoch 1 .*examples_per_sec=([0-9.]+).*/\1/p' | tail -1; }
run_side() {
  if [[ $1 == cxx ]]; then
    "$cxx" "${args[@]}" --checkpoint-dir "" | examples_per_sec
  else
    PYTHONPATH=$py_path python3 examples/python/fashion_mnist.py "${args[@]}" | examples_per_sec
  fi
}
median() { sort -n | awk '{x[NR] = $1} END {print (NR % 2 ? x[(NR + 1) / 2] : (x[NR / 2] + x[NR / 2 + 1]) / 2)}'; }

echo "model=$model steps=$steps reps=$reps threads=$threads (nproc $(nproc))"
declare -A runs
ratios=""
for ((i = 0; i < reps; ++i)); do
  declare -A pair
  for side in cxx python; do
    eps=$(run_side $side)
    [[ -n $eps ]] || { echo "$side run $i printed no epoch line" >&2; exit 1; }
    printf '%-6s %s\n' "$side" "$eps"
    runs[$side]+="$eps"$'\n'
    pair[$side]=$eps
  done
  ratios+=$(awk -v p="${pair[python]}" -v c="${pair[cxx]}" 'BEGIN {print p / c}')$'\n'
done
cxx_median=$(printf '%s' "${runs[cxx]}" | median)
py_median=$(printf '%s' "${runs[python]}" | median)
echo "C++    median $cxx_median examples/s"
echo "Python median $py_median examples/s"
awk -v p="$py_median" -v c="$cxx_median" 'BEGIN {printf "ratio python/c++ %.3f (of the medians)\n", p / c}'
# Neighbouring runs see about the same machine: the median of each pair's
# ratio is the steadier figure when the machine's speed drifts.
printf '%s' "$ratios" | median | awk '{printf "ratio python/c++ %.3f (median of the %d pairs)\n", $1, '"$reps"'}'
