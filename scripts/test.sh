#!/usr/bin/env bash
# The test command: installs dependencies, builds Weir, runs every unit and
# integration test, then the runtime tests again under ASan+UBSan and TSan.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install_deps.sh

# Includes keep to DESIGN.md's layers (and the checker itself catches a
# violation); seconds, so before anything is built.
echo "== layering"
scripts/check_layering.py --self-test
scripts/check_layering.py

JOBS=${JOBS:-$(nproc)}
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
# Relative paths in the cache key, so a fresh clone elsewhere hits the cache.
export CCACHE_BASEDIR=$PWD

configure() {  # configure DIR [cmake args...]
  local dir=$1; shift
  cmake -S . -B "$dir" -G Ninja -DCMAKE_EXPORT_COMPILE_COMMANDS=ON "$@" >/dev/null
}

echo "== release build and all tests"
configure build/release -DCMAKE_BUILD_TYPE=Release
cmake --build build/release -j "$JOBS"
ctest --test-dir build/release --output-on-failure -j "$JOBS"

# The runtime's tests (and the layers under it) under the sanitizers, and
# the distributed runtime's under ASan+UBSan, in process and across
# weir-server and weir processes built the same way (weir_server_test,
# distributed_test: about 10 s and 35 s; LSan's suppressions for leaks
# in c-ares: tests/sanitizers/lsan.supp, set by ctest). Not under TSan:
# Debian's gRPC and abseil are not built with TSan, so TSan sees none of
# their synchronization and reports every hand-off through gRPC as a race
# (over 5000 reports, every one through gRPC/abseil/protobuf frames); the
# TSan tree runs only weir_distributed_test's tests without gRPC.
SANITIZED_TESTS=(weir_base_test weir_framework_test weir_graph_test weir_runtime_test
                 weir_distributed_test weir_server_test distributed_test)

# The ASan+UBSan tree is built by clang 16 (14 lacks std::source_location
# with libstdc++ 12) with libFuzzer's coverage hooks
# (WEIR_FUZZ), so the same build also gives the fuzzers (tests/fuzz). A tree
# configured by another compiler is started afresh (CMake cannot switch).
FUZZERS=(graph_def_binary_fuzzer graph_def_text_fuzzer tensor_proto_fuzzer npy_fuzzer
         checkpoint_fuzzer run_op_fuzzer tfrecord_fuzzer
         example_fuzzer worker_wire_fuzzer step_stats_wire_fuzzer image_decode_fuzzer)
if [[ -f build/asan/CMakeCache.txt ]] && ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang++-16$' build/asan/CMakeCache.txt; then
  rm -rf build/asan
fi
echo "== ASan+UBSan build (clang) of the runtime tests and the fuzzers"
configure build/asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEIR_SANITIZE=address -DWEIR_BUILD_BENCHMARKS=OFF -DWEIR_BUILD_PYTHON=OFF \
  -DCMAKE_CXX_COMPILER=clang++-16 -DWEIR_FUZZ=ON
cmake --build build/asan -j "$JOBS" --target "${SANITIZED_TESTS[@]}" weir_kernels_test \
  weir_fuzz_seeds "${FUZZERS[@]}"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan --output-on-failure -j "$JOBS" \
  -R "^($(IFS='|'; echo "${SANITIZED_TESTS[*]}")|weir_kernels_test)\$"

# Each fuzzer for a fixed short time from its seeds and regression inputs;
# any crash, hang or sanitizer report fails. scripts/fuzz.sh runs longer.
echo "== fuzzing, ${FUZZ_SECONDS:-12} s per harness"
scripts/fuzz.sh --ci --no-build --build build/asan --time "${FUZZ_SECONDS:-12}" --jobs "$JOBS"

echo "== TSan build of the runtime tests"
configure build/tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEIR_SANITIZE=thread -DWEIR_BUILD_BENCHMARKS=OFF -DWEIR_BUILD_PYTHON=OFF
cmake --build build/tsan -j "$JOBS" --target weir_base_test weir_runtime_test weir_distributed_test
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  ctest --test-dir build/tsan --output-on-failure -j "$JOBS" -R '^(weir_base_test|weir_runtime_test)$'
# The distributed worker's own concurrency, driven without gRPC (TSan cannot
# see Debian's gRPC synchronizing; see SANITIZED_TESTS above).
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  build/tsan/src/weir/distributed/weir_distributed_test --gtest_filter='WorkerConcurrencyTest.*'
