#!/usr/bin/env bash
# Runs the libFuzzer harnesses of tests/fuzz for as long as asked.
#
#   scripts/fuzz.sh [--time SECONDS | --runs N] [--jobs J] [--harness NAME]...
#                   [--build DIR] [--corpus DIR] [--ci] [--no-build]
#
# --time / --runs   per harness (default --time 60)
# --jobs J          harnesses fuzzed at once (default 1)
# --harness NAME    only these (graph_def_binary graph_def_text tensor_proto
#                   npy checkpoint run_op tfrecord example worker_wire
#                   step_stats_wire image_decode;
#                   default all)
# --build DIR       the clang ASan+UBSan tree with WEIR_FUZZ=ON, configured
#                   and built here unless --no-build (default build/asan, the
#                   tree scripts/test.sh builds)
# --corpus DIR      where each harness's corpus grows, DIR/<harness>; kept
#                   between runs (default DIR_OF_BUILD/fuzz-corpus). The
#                   seeds (weir_fuzz_seeds) and the regression inputs are
#                   read too, never written.
# --ci              a throw-away corpus, and crashes are reported, not saved
#
# A crash, leak, timeout, out-of-memory or sanitizer report fails the run.
# Outside --ci each crashing input is minimized and saved as
# tests/fuzz/regressions/<harness>/crash-<sha1>, which ctest then replays in
# the normal build. Prints executions per harness (and appends them, with the
# command, to DIR_OF_BUILD/fuzz-stats.tsv).
set -euo pipefail
cd "$(dirname "$0")/.."

ALL_HARNESSES=(graph_def_binary graph_def_text tensor_proto npy checkpoint run_op tfrecord example
               worker_wire step_stats_wire image_decode)
TIME=60 RUNS="" JOBS=1 BUILD=build/asan CORPUS="" CI_MODE=0 DO_BUILD=1
HARNESSES=()
COMMAND_LINE="scripts/fuzz.sh $*"
while (($#)); do
  case $1 in
    --time) TIME=$2; RUNS=""; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    --harness) HARNESSES+=("$2"); shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --corpus) CORPUS=$2; shift 2 ;;
    --ci) CI_MODE=1; shift ;;
    --no-build) DO_BUILD=0; shift ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
    *) echo "fuzz.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
((${#HARNESSES[@]})) || HARNESSES=("${ALL_HARNESSES[@]}")

if ((DO_BUILD)); then
  export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache} CCACHE_BASEDIR=$PWD
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DCMAKE_CXX_COMPILER=clang++-16 \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEIR_SANITIZE=address -DWEIR_BUILD_BENCHMARKS=OFF \
    -DWEIR_FUZZ=ON >/dev/null
  cmake --build "$BUILD" -j "${BUILD_JOBS:-$(nproc)}" --target weir_fuzz_seeds \
    $(printf '%s_fuzzer ' "${HARNESSES[@]}")
fi
FUZZ_DIR=$BUILD/tests/fuzz

WORK=$(mktemp -d "${TMPDIR:-/tmp}/weir_fuzz.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
"$FUZZ_DIR/weir_fuzz_seeds" "$WORK/seeds" tests/data/tf_style_graph.pbtxt \
  tests/data/tf_while_cond.pbtxt tests/data/tf_nested_while.pbtxt >/dev/null
if ((CI_MODE)); then CORPUS=$WORK/corpus; else CORPUS=${CORPUS:-$BUILD/fuzz-corpus}; fi

# Options of the fuzzers' own (fuzz_support.cc sets ASan's allocation
# ceiling); -rss_limit_mb bounds a run's memory, -timeout a run's time.
FUZZ_FLAGS=(-rss_limit_mb=2048 -timeout=10 -print_final_stats=1 -close_fd_mask=1)
if [[ -n $RUNS ]]; then FUZZ_FLAGS+=(-runs="$RUNS"); else FUZZ_FLAGS+=(-max_total_time="$TIME"); fi
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export WEIR_MIN_LOG_LEVEL=${WEIR_MIN_LOG_LEVEL:-2}

fuzz_one() {  # fuzz_one HARNESS: fuzzes, then saves what crashed; 0 when clean
  local h=$1 bin=$FUZZ_DIR/${1}_fuzzer log=$WORK/$1.log artifacts=$WORK/artifacts-$1/
  mkdir -p "$CORPUS/$h" "$artifacts"
  # libFuzzer exits on a missing corpus folder, and git keeps no empty one:
  # a harness with no saved regression yet has no regressions/<harness>/.
  local inputs=("$CORPUS/$h" "$WORK/seeds/$h")
  [[ -d tests/fuzz/regressions/$h ]] && inputs+=("tests/fuzz/regressions/$h")
  local status=0
  nice "$bin" "${FUZZ_FLAGS[@]}" -artifact_prefix="$artifacts" "${inputs[@]}" >"$log" 2>&1 || status=$?
  local execs
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  printf '%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$h" "${execs:-0}" "$status" >>"$WORK/stats.tsv"
  if ((status == 0)); then
    echo "fuzz $h: ${execs:-?} executions, clean"
    return 0
  fi
  echo "fuzz $h: FAILED (exit $status) after ${execs:-?} executions; the fuzzer's log ends:"
  grep -v '^#\|^INFO' "$log" | tail -60 || true
  for crash in "$artifacts"*; do
    [[ -f $crash ]] || continue
    if ((CI_MODE)); then
      echo "fuzz $h: crashing input (base64): $(base64 -w0 "$crash" | head -c 4000)"
      continue
    fi
    local kind dest
    kind=$(basename "$crash" | cut -d- -f1)  # crash, leak, timeout, oom, slow-unit
    dest=tests/fuzz/regressions/$h/$kind-$(sha1sum "$crash" | cut -c1-16)
    # libFuzzer minimizes crashes only (not timeouts or out-of-memory).
    if [[ $kind == crash ]] &&
        nice "$bin" -minimize_crash=1 -max_total_time=60 -rss_limit_mb=2048 -timeout=10 \
          -exact_artifact_path="$dest" "$crash" >"$log.min" 2>&1 && [[ -f $dest ]]; then
      echo "fuzz $h: saved minimized input $dest"
    else
      cp "$crash" "$dest"
      echo "fuzz $h: saved input $dest"
    fi
  done
  return 1
}

for h in "${HARNESSES[@]}"; do
  fuzz_one "$h" &
  while (($(jobs -rp | wc -l) >= JOBS)); do wait -n || true; done
done
wait
# Each harness's outcome is in the stats file.
failed=0
if awk -F'\t' '$4 != 0 {bad = 1} END {exit !bad}' "$WORK/stats.tsv"; then failed=1; fi

total=$(awk -F'\t' '{s += $3} END {print s + 0}' "$WORK/stats.tsv")
echo "fuzz: $total executions in all"
if ((!CI_MODE)); then
  while IFS=$'\t' read -r when h execs status; do
    printf '%s\t%s\t%s\t%s\t%s\n' "$when" "$h" "$execs" "$status" "$COMMAND_LINE"
  done <"$WORK/stats.tsv" >>"$BUILD/fuzz-stats.tsv"
fi
exit "$failed"
