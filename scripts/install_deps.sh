#!/usr/bin/env bash
# Installs everything Weir needs to build, test and benchmark. Idempotent: a
# second run finds everything present and returns quickly.
set -euo pipefail

DEBIAN_PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config
  libeigen3-dev
  libprotobuf-dev protobuf-compiler
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libcli11-dev zlib1g-dev
  # libjpeg-turbo and libpng, the image codecs' libraries.
  libjpeg62-turbo-dev libpng-dev
  # RE2, the regex string kernels' engine (also a gRPC dependency).
  libre2-dev
  # FarmHash: Fingerprint64, the hash of TensorFlow's string hash buckets.
  libfarmhash-dev
  # gRPC, the distributed runtime's transport, and its protoc plugin.
  libgrpc++-dev protobuf-compiler-grpc
  # Its tests: TLS material made at test time (openssl) and the cluster in
  # network namespaces (ip, from iproute2).
  openssl iproute2
  dataset-fashion-mnist
  # The ASan+UBSan tree and the fuzzers (scripts/test.sh, scripts/fuzz.sh):
  # clang 16 (clang 14 has no std::source_location with libstdc++ 12), its
  # libFuzzer and sanitizer runtimes, and the omp.h it compiles against (the
  # runtime linked stays GNU OpenMP, oneDNN's).
  clang-16 libclang-rt-16-dev libomp-16-dev
  # scripts/format.sh (the .clang-format at the root).
  clang-format-16
)
# tensorboard: tests/tensorboard_test reads Weir's event files with it.
# nanobind and scikit-build-core build the Python package (python/);
# pytest runs its tests; protobuf reads its GraphDefs.
PYTHON_PACKAGES=(numpy tensorboard nanobind scikit_build_core pytest google.protobuf)

missing=()
for pkg in "${DEBIAN_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
if ((${#missing[@]})); then
  echo "install_deps: installing ${missing[*]}"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

PYTHON=${PYTHON:-python3}

# oneDNN 3.2 from PyPI (Intel's CPU-only build on GNU OpenMP): Debian 12
# has 2.6, whose float convolutions are slower. Installed whole into a
# temporary prefix and renamed into place, so an interrupted install is
# never mistaken for a finished one. CMakeLists.txt looks in the same place.
ONEDNN_ROOT=${WEIR_ONEDNN_ROOT:-$HOME/.cache/weir-deps/onednn-3.2}
if [[ ! -f $ONEDNN_ROOT/lib/cmake/dnnl/dnnl-config.cmake ]]; then
  echo "install_deps: pip installing oneDNN 3.2 into $ONEDNN_ROOT"
  mkdir -p "$(dirname "$ONEDNN_ROOT")"
  tmp=$(mktemp -d "$ONEDNN_ROOT.tmp.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT  # a failed install leaves nothing behind
  "$PYTHON" -m pip install -q --no-deps --prefix "$tmp" \
    onednn-cpu-gomp==2023.2.0 onednn-devel-cpu-gomp==2023.2.0
  rm -rf "$ONEDNN_ROOT"
  mv "$tmp" "$ONEDNN_ROOT"
fi
for pkg in "${PYTHON_PACKAGES[@]}"; do
  if ! "$PYTHON" -c "import $pkg" 2>/dev/null; then
    case $pkg in  # import name -> PyPI name
      scikit_build_core) dist=scikit-build-core ;;
      google.protobuf) dist=protobuf ;;
      *) dist=$pkg ;;
    esac
    echo "install_deps: pip installing $dist"
    "$PYTHON" -m pip install -q "$dist"
  fi
done

# The peers' virtualenv: TensorFlow 2.21 from PyPI, which the Python tests run
# in a subprocess as their reference (graphs and checkpoints it writes, TF1
# programs run by both). tf-keras gives TF 2.21 its tf.compat.v1.layers. The
# benchmarks add torch to the same venv (bench/train_bench.sh). A venv cannot
# be moved once made, so a half-made one (no imports) is removed and redone.
PEERS=${WEIR_PEERS:-/opt/weir-peers}
if ! "$PEERS/bin/python" -c "import tensorflow, tf_keras" 2>/dev/null; then
  echo "install_deps: making the peers' virtualenv $PEERS (tensorflow-cpu 2.21, tf-keras)"
  if [[ ! -x $PEERS/bin/python ]]; then
    rm -rf "$PEERS"
    "$PYTHON" -m venv "$PEERS"
  fi
  "$PEERS/bin/python" -m pip install -q tensorflow-cpu==2.21.0 tf-keras==2.21.0
fi
