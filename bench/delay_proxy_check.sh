#!/usr/bin/env bash
# The delay proxy's own cost and accuracy (bench/delay_proxy.cc): round trips
# of a 64-byte message to an echo server on loopback, directly and through
# bench/delay_proxy at each one-way delay (default 0, 50 and 500 us: the
# round trip should gain the proxy's own overhead, measured at 0, plus
# 2 * delay). Prints a Markdown table of medians, p10 and p90 in us, then
# checks that a 16 MiB random stream sent through the proxy (last delay)
# comes back from the echo byte-identical and that a half-close passes.
#
#   cmake --build build/release -j2 --target delay_proxy
#   bench/delay_proxy_check.sh [BUILD_DIR] [--delays 0,50,500] [--count 5000]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=build/release
if [[ $# -gt 0 && $1 != --* ]]; then BUILD=$1; shift; fi
DELAYS=0,50,500
COUNT=5000
while [[ $# -gt 0 ]]; do
  case $1 in
    --delays) DELAYS=$2; shift 2 ;;
    --count) COUNT=$2; shift 2 ;;
    *) echo "delay_proxy_check.sh: unknown argument $1" >&2; exit 64 ;;
  esac
done
PROXY=$BUILD/bench/delay_proxy
[[ -x $PROXY ]] || { echo "delay_proxy_check.sh: build delay_proxy in $BUILD first" >&2; exit 1; }
DIR=$(mktemp -d /tmp/delay_proxy_check.XXXXXX)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$DIR"
}
trap cleanup EXIT

# Waits for a line starting with $2 in file $1 and prints its second field.
field() {
  for _ in $(seq 200); do
    if grep -q "^$2 " "$1" 2>/dev/null; then awk -v k="$2" '$1 == k {print $2; exit}' "$1"; return; fi
    sleep 0.02
  done
  echo "delay_proxy_check.sh: no '$2' line in $1" >&2; exit 1
}
json() { python3 -c "import json,sys; r=json.loads(sys.argv[1]); print('%.1f | %.1f | %.1f' % (r['median_us'], r['p10_us'], r['p90_us']))" "$1"; }

"$PROXY" --echo-port 0 >"$DIR/echo" & PIDS+=($!)
ECHO=$(field "$DIR/echo" echo)
echo "| path | one-way delay us | RTT median us | p10 us | p90 us |"
echo "| --- | ---: | ---: | ---: | ---: |"
echo "| direct | - | $(json "$("$PROXY" --ping 127.0.0.1:$ECHO --count "$COUNT")") |"
for d in ${DELAYS//,/ }; do
  "$PROXY" --delay-us "$d" --route 0=127.0.0.1:$ECHO >"$DIR/proxy$d" & PIDS+=($!)
  PORT=$(field "$DIR/proxy$d" route)
  echo "| delay_proxy | $d | $(json "$("$PROXY" --ping 127.0.0.1:$PORT --count "$COUNT")") |"
done

python3 - "$PORT" <<'PY'
import os, socket, sys, threading
data = os.urandom(16 << 20)
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
got = bytearray()
def read():
    while len(got) < len(data):
        chunk = s.recv(1 << 20)
        if not chunk:
            break
        got.extend(chunk)
reader = threading.Thread(target=read)
reader.start()
s.sendall(data)
reader.join()
s.shutdown(socket.SHUT_WR)
if bytes(got) != data or s.recv(1) != b"":
    sys.exit("delay_proxy_check.sh: the stream through the proxy came back wrong")
print("16 MiB stream through the proxy: byte-identical, EOF passed")
PY
