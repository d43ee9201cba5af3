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
#       [--delays none,0.1ms,1ms] [--steps 500] [--proxy-delays 0,50,500]
#
# Without netem (this kernel has none), --proxy-delays D1,D2 (one-way, us)
# delays the links in user space instead: bench/delay_proxy runs on host 0
# with one route per worker (D us each way), the master task is given a
# cluster whose worker addresses are the proxy's (the workers get the real
# one and bind their own ports), and the round trip is measured as the
# median of 5000 TCP pings from host 0 through the proxy to an echo on
# host 1 (delay_proxy --ping / --echo-port).
#
# Needs root (ip netns, tc). Everything is removed on exit.
set -euo pipefail

BUILD=build/release
if [[ $# -gt 0 && $1 != --* ]]; then BUILD=$1; shift; fi
WORKERS=2,4,8
NUM_HOSTS=2
DELAYS=none,0.1ms,1ms
STEPS=500
PROXY_DELAYS=
while [[ $# -gt 0 ]]; do
  case $1 in
    --workers) WORKERS=$2; shift 2 ;;
    --hosts) NUM_HOSTS=$2; shift 2 ;;
    --delays) DELAYS=$2; shift 2 ;;
    --steps) STEPS=$2; shift 2 ;;
    --proxy-delays) PROXY_DELAYS=$2; shift 2 ;;
    *) echo "null_step_netns.sh: unknown argument $1" >&2; exit 64 ;;
  esac
done
SERVER=$BUILD/tools/weir-server
CLIENT=$BUILD/bench/null_step_client
[[ -x $SERVER && -x $CLIENT ]] ||
  { echo "null_step_netns.sh: build weir-server and null_step_client in $BUILD first" >&2; exit 1; }
PROXY=$BUILD/bench/delay_proxy
[[ -z $PROXY_DELAYS || -x $PROXY ]] ||
  { echo "null_step_netns.sh: build delay_proxy in $BUILD first (--proxy-delays)" >&2; exit 1; }
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

# Waits for a line starting with $2 in file $1 and prints its second field.
field() {
  for _ in $(seq 300); do
    if grep -q "^$2 " "$1" 2>/dev/null; then awk -v k="$2" '$1 == k {print $2; exit}' "$1"; return; fi
    sleep 0.02
  done
  echo "null_step_netns.sh: no '$2' line in $1" >&2; exit 1
}

# One cluster per N: the master task on host 0, worker k on host 1 + k % H
# at port 2300 + k / H; with a second argument D, the master reaches the
# workers through a delay_proxy on host 0 (D us one way).
run_cluster() {
  local n=$1 proxy_delay=${2:-} k workers=() hosts=() ports=()
  for ((k = 0; k < n; ++k)); do
    hosts+=($((1 + k % NUM_HOSTS)))
    ports+=($((2300 + k / NUM_HOSTS)))
    workers+=("$(address "${hosts[$k]}"):${ports[$k]}")
  done
  local cluster master_cluster
  cluster="master=$(address 0):2222;worker=$(IFS=,; echo "${workers[*]}")"
  master_cluster=$cluster
  local pids=()
  rm -f "$DIR"/address* "$DIR"/proxy
  if [[ -n $proxy_delay ]]; then
    local routes=() proxied=()
    for w in "${workers[@]}"; do routes+=(--route "0=$w"); done
    ip netns exec "${HOSTS[0]}" "$PROXY" --delay-us "$proxy_delay" "${routes[@]}" \
      >"$DIR/proxy" &
    pids+=($!)
    for _ in $(seq 300); do grep -q '^ready' "$DIR/proxy" && break; sleep 0.02; done
    mapfile -t proxied < <(awk '$1 == "route" {print "127.0.0.1:" $2}' "$DIR/proxy")
    [[ ${#proxied[@]} -eq $n ]] || { echo "null_step_netns.sh: delay_proxy did not start" >&2; exit 1; }
    master_cluster="master=$(address 0):2222;worker=$(IFS=,; echo "${proxied[*]}")"
  fi
  ip netns exec "${HOSTS[0]}" "$SERVER" --cluster "$master_cluster" --job master --task 0 \
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

# The median TCP round trip (ms) from host 0 through a delay_proxy (D us
# one way) on host 0 to an echo server on host 1.
proxy_rtt() {
  local echo proxy port
  ip netns exec "${HOSTS[1]}" "$PROXY" --listen-host "$(address 1)" --echo-port 2298 \
    >"$DIR/echo" &
  echo=$!
  ip netns exec "${HOSTS[0]}" "$PROXY" --delay-us "$1" --route "0=$(address 1):2298" \
    >"$DIR/rtt_proxy" &
  proxy=$!
  field "$DIR/echo" echo >/dev/null
  port=$(field "$DIR/rtt_proxy" route)
  ip netns exec "${HOSTS[0]}" "$PROXY" --ping "127.0.0.1:$port" --count 5000 |
    python3 -c 'import json, sys; print("%.3f" % (json.load(sys.stdin)["median_us"] / 1e3))'
  kill $echo $proxy 2>/dev/null || true
  wait $echo $proxy 2>/dev/null || true
}

if [[ -n $PROXY_DELAYS ]]; then
  echo "| delay_proxy one-way delay us | TCP RTT via proxy ms | N workers (hosts) | step median ms | step p90 ms | median - RTT ms | client CPU ms/step |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
  IFS=, read -r -a worker_list <<<"$WORKERS"
  for delay in ${PROXY_DELAYS//,/ }; do
    rtt=$(proxy_rtt "$delay")
    for n in "${worker_list[@]}"; do
      json=$(run_cluster "$n" "$delay")
      median=$(sed -n 's/.*"median_ms": \([0-9.]*\).*/\1/p' <<<"$json")
      p90=$(sed -n 's/.*"p90_ms": \([0-9.]*\).*/\1/p' <<<"$json")
      cpu=$(sed -n 's/.*"client_cpu_ms_per_step": \([0-9.]*\).*/\1/p' <<<"$json")
      extra=$(awk -v m="$median" -v r="$rtt" 'BEGIN {printf "%.3f", m - r}')
      echo "| $delay | $rtt | $n ($NUM_HOSTS) | $median | $p90 | $extra | $cpu |"
    done
  done
  exit 0
fi

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
