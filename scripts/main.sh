#!/usr/bin/env bash
# The main job. Until training lands it builds and runs the first example
# graph end to end: build, run, print results and timings.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install_deps.sh
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
export CCACHE_BASEDIR=$PWD
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release -j "$(nproc)" --target first_graph
build/release/examples/first_graph "$@"
