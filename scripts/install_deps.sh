#!/usr/bin/env bash
# Installs everything Weir needs to build, test and benchmark. Idempotent: a
# second run finds everything present and returns quickly.
set -euo pipefail

DEBIAN_PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config
  libeigen3-dev libdnnl-dev
  libprotobuf-dev protobuf-compiler
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libcli11-dev zlib1g-dev
  dataset-fashion-mnist
)
PYTHON_PACKAGES=(numpy)

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
for pkg in "${PYTHON_PACKAGES[@]}"; do
  if ! "$PYTHON" -c "import $pkg" 2>/dev/null; then
    echo "install_deps: pip installing $pkg"
    "$PYTHON" -m pip install -q "$pkg"
  fi
done
