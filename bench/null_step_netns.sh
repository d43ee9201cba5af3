#!/usr/bin/env bash
# The distributed null step (bench/null_step_client) across hosts in network
# namespaces, with tc netem delays: the client and the master task
# (/job:master/task:0) on host 0, N worker tasks spread over hosts 1..H
# (several tasks per host), each host a namespace with one veth link to a
# bridge in a "switch" namespace. For each delay D (default none, 0.1 ms,
# 1 ms) every host's eth0 gets `tc qdisc add dev eth0 root netem delay D`,
# so a round trip between two hosts crosses two delayed links (about 2 D);
# the script measures it (the median of 200 UDP echoes from host 0 to host
# 1, as ping would) and prints a Markdown table of the null step's median and p90
# against that round trip. A step sends one RunGraph to every worker at once,
# so it should cost about one round trip, not one per worker.
#
#   bench/null_step_netns.sh [BUILD_DIR] [--workers 2,4,8] [--hosts 2]
#       [--delays none,0.1ms,1ms] [--steps 500]
#
# Needs root (ip netns, tc). Everything is removed on exit.
set -euo pipefail

BUILD=build/release
if [[ $# -gt 0 && $1 != --* ]]; then BUILD=$1; shift; fi
WORKERS=2,4,8
NUM_HOSTS=2
DELAYS=none,0.1ms,1ms
STEPS=500
while [[ $# -gt 0 ]]; do
  case $1 in
    --workers) WORKERS=$2; shift 2 ;;
    --hosts) NUM_HOSTS=$2; shift 2 ;;
    --delays) DELAYS=$2; shift 2 ;;
    --steps) STEPS=$2; shift 2 ;;
    *) echo "null_step_netns.sh: unknown argument $1" >&2; exit 64 ;;
  esac
done
SERVER=$BUILD/tools/weir-server
CLIENT=$BUILD/bench/null_step_client
[[ -x $SERVER && -x $CLIENT ]] ||
  { echo "null_step_netns.sh: build weir-server and null_step_client in $BUILD first" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || { echo "null_step_netns.sh: needs root (ip netns, tc)" >&2; exit 1; }

PREFIX="wns$$"
SWITCH="$PREFIX-sw"
HOSTS=()
for ((h = 0; h <= NUM_HOSTS; ++h)); do HOSTS+=("$PREFIX-h$h"); done
address() { echo "10.214.0.$(($1 + 1))"; }
DIR=$(mktemp -d /tmp/null_step_netns.XXXXXX)
PIDS=()

cleanup() {
  local status=$?
  for pid in "${PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  for ns in "${HOSTS[@]}" "$SWITCH"; do ip netns del "$ns" 2>/dev/null || true; done
  rm -rf "$DIR"
  exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add "$SWITCH"
ip -n "$SWITCH" link add br0 type bridge
ip -n "$SWITCH" link set br0 up
for h in "${!HOSTS[@]}"; do
  ns=${HOSTS[$h]}
  ip netns add "$ns"
  ip -n "$SWITCH" link add "port$h" type veth peer name eth0 netns "$ns"
  ip -n "$SWITCH" link set "port$h" master br0
  ip -n "$SWITCH" link set "port$h" up
  ip -n "$ns" addr add "$(address "$h")/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
done

# One cluster per N: the master task on host 0, worker k on host 1 + k % H
# at port 2300 + k / H.
run_cluster() {
  local n=$1 k workers=() hosts=() ports=()
  for ((k = 0; k < n; ++k)); do
    hosts+=($((1 + k % NUM_HOSTS)))
    ports+=($((2300 + k / NUM_HOSTS)))
    workers+=("$(address "${hosts[$k]}"):${ports[$k]}")
  done
  local cluster
  cluster="master=$(address 0):2222;worker=$(IFS=,; echo "${workers[*]}")"
  local pids=()
  rm -f "$DIR"/address*
  ip netns exec "${HOSTS[0]}" "$SERVER" --cluster "$cluster" --job master --task 0 \
    --host "$(address 0)" --intra-op-threads 1 --address-file "$DIR/address_m" 2>/dev/null &
  pids+=($!)
  for ((k = 0; k < n; ++k)); do
    ip netns exec "${HOSTS[${hosts[$k]}]}" "$SERVER" --cluster "$cluster" --job worker \
      --task $k --host "$(address "${hosts[$k]}")" --intra-op-threads 1 \
      --address-file "$DIR/address_$k" 2>/dev/null &
    pids+=($!)
  done
  PIDS+=("${pids[@]}")
  for f in address_m $(for ((k = 0; k < n; ++k)); do echo "address_$k"; done); do
    for _ in $(seq 300); do [[ -s $DIR/$f ]] && break; sleep 0.05; done
    [[ -s $DIR/$f ]] || { echo "null_step_netns.sh: a server did not start ($f)" >&2; exit 1; }
  done
  ip netns exec "${HOSTS[0]}" "$CLIENT" --target "grpc://$(address 0):2222" --job worker \
    --tasks "$n" --steps "$STEPS" --warmup 50
  kill "${pids[@]}" 2>/dev/null || true
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}

# The median round trip of 200 small UDP packets from host 0 to an echo on
# host 1 (like ping, which the machine may lack), in ms.
udp_rtt() {
  ip netns exec "${HOSTS[1]}" python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("'"$(address 1)"'", 2299))
s.settimeout(10)
try:
    while True:
        data, peer = s.recvfrom(64)
        s.sendto(data, peer)
except socket.timeout:
    pass' &
  local echo=$!
  sleep 0.3
  ip netns exec "${HOSTS[0]}" python3 -c '
import socket, statistics, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(1)
times = []
for _ in range(200):
    start = time.perf_counter()
    s.sendto(b"x", ("'"$(address 1)"'", 2299))
    s.recvfrom(64)
    times.append(time.perf_counter() - start)
print("%.3f" % (1e3 * statistics.median(times)))'
  kill $echo 2>/dev/null || true
  wait $echo 2>/dev/null || true
}

echo "| netem delay per link | UDP RTT median ms | N workers (hosts) | step median ms | step p90 ms | median - RTT ms | client CPU ms/step |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
IFS=, read -r -a delay_list <<<"$DELAYS"
# netem is a kernel module (CONFIG_NET_SCH_NETEM); without it, say so and
# measure without delays rather than fail.
if tc -n "${HOSTS[0]}" qdisc add dev lo root netem delay 1ms 2>/dev/null; then
  tc -n "${HOSTS[0]}" qdisc del dev lo root
else
  echo "null_step_netns.sh: this kernel has no netem qdisc (CONFIG_NET_SCH_NETEM);" \
    "measuring without delays only" >&2
  delay_list=(none)
fi
IFS=, read -r -a worker_list <<<"$WORKERS"
for delay in "${delay_list[@]}"; do
  for ns in "${HOSTS[@]}"; do
    ip -n "$ns" link set eth0 up
    tc -n "$ns" qdisc del dev eth0 root 2>/dev/null || true
    [[ $delay == none ]] || tc -n "$ns" qdisc add dev eth0 root netem delay "$delay"
  done
  rtt=$(udp_rtt)
  for n in "${worker_list[@]}"; do
    json=$(run_cluster "$n")
    median=$(sed -n 's/.*"median_ms": \([0-9.]*\).*/\1/p' <<<"$json")
    p90=$(sed -n 's/.*"p90_ms": \([0-9.]*\).*/\1/p' <<<"$json")
    cpu=$(sed -n 's/.*"client_cpu_ms_per_step": \([0-9.]*\).*/\1/p' <<<"$json")
    extra=$(awk -v m="$median" -v r="$rtt" 'BEGIN {printf "%.3f", m - r}')
    echo "| $delay | $rtt | $n ($NUM_HOSTS) | $median | $p90 | $extra | $cpu |"
  done
done
