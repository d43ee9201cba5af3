#!/usr/bin/env bash
# The main job: trains the convnet of the TensorFlow layers tutorial on
# Fashion-MNIST (Debian's dataset-fashion-mnist) on the embedded runtime,
# printing one line per epoch. Checkpoints go to $WEIR_CHECKPOINT_DIR
# (default checkpoints/fashion_mnist_<model>); running again resumes from the
# newest one. Extra arguments go to weir-fashion-mnist (see --help), e.g.
#   scripts/main.sh --model mlp --epochs 20
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install_deps.sh
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
export CCACHE_BASEDIR=$PWD
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release -j "$(nproc)" --target weir-fashion-mnist
# Each model resumes from checkpoints of its own kind: the default directory
# follows the last --model given (a later flag wins, as in the trainer).
model=cnn
args=("$@")
for ((i = 0; i < ${#args[@]}; ++i)); do
  case "${args[i]}" in
    --model) model=${args[i + 1]:-cnn} ;;
    --model=*) model=${args[i]#--model=} ;;
  esac
done
build/release/examples/weir-fashion-mnist --model cnn \
  --checkpoint-dir "${WEIR_CHECKPOINT_DIR:-checkpoints/fashion_mnist_$model}" "$@"
