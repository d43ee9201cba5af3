#!/usr/bin/env bash
# The test command: installs dependencies, builds Weir, runs every unit and
# integration test, then the runtime tests again under ASan+UBSan and TSan.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install_deps.sh
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

# The runtime's tests (and the layers under it) under the sanitizers.
SANITIZED_TESTS=(weir_base_test weir_framework_test weir_graph_test weir_runtime_test)

echo "== ASan+UBSan build of the runtime tests"
configure build/asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEIR_SANITIZE=address -DWEIR_BUILD_BENCHMARKS=OFF
cmake --build build/asan -j "$JOBS" --target "${SANITIZED_TESTS[@]}" weir_kernels_test
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan --output-on-failure -j "$JOBS" \
  -R "^($(IFS='|'; echo "${SANITIZED_TESTS[*]}")|weir_kernels_test)\$"

echo "== TSan build of the runtime tests"
configure build/tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEIR_SANITIZE=thread -DWEIR_BUILD_BENCHMARKS=OFF
cmake --build build/tsan -j "$JOBS" --target weir_base_test weir_runtime_test
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  ctest --test-dir build/tsan --output-on-failure -j "$JOBS" -R '^(weir_base_test|weir_runtime_test)$'
