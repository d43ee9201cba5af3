#!/usr/bin/env bash
# Distributed null-step latency, Weir against TensorFlow 2.21's gRPC runtime,
# for N = 1, 2, 4, 8, 16, 32 worker tasks on loopback (bench/null_step.py
# says how; extra arguments go to it, e.g. --workers 1,8 --rounds 3;
# --delay-us 0,50,500 runs it over links delayed by bench/delay_proxy).
# Build first:
#   cmake --build build/release -j2 --target weir-server null_step_client delay_proxy
#   bench/null_step.sh [--build build/release] [--steps 1000] [--rounds 1] [--delay-us 0,50,500]
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 bench/null_step.py "$@"
