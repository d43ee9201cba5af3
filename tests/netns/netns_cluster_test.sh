#!/usr/bin/env bash
# A cluster of three hosts in network namespaces, made by this test: each
# host is a namespace with one veth link to a bridge in a fourth ("switch")
# namespace, on 10.213.0.0/24, and runs weir-server bound to its own address
# (not loopback). The test checks every task answers from another namespace,
# then trains a small MLP across the three hosts (weir_cluster_probe --train,
# the client on host 0 with worker 0's master: variables and Adam's state on
# the ps task on host 2, the layers and the backward pass on the workers of
# hosts 0 and 1), asserting the loss falls at least 10x in 300 steps and the
# variables live on the ps. While training continues, it cuts the ps host's
# link (ip link set ... down) and asserts that the running training step
# fails with Unavailable naming that task and its address within 5 s, that
# the trainer then exits (no hang), and that a health monitor in another host
# reports the same within 5 s. Then, with that host back, a client on host 1
# holds a step mastered on host 0, blocked in a dequeue on host 2 and in a
# Recv of its value on host 1, and host 0's link is cut: hosts 1 and 2 must
# drop the session when its lease (4 s) runs out, aborting their parts of
# the step, and log it; the client's untimed step must fail Unavailable
# within its keepalive bound (5 s + 5 s). Nothing is made in the caller's
# namespace, and
# everything is removed on exit, failure included.
#
#   netns_cluster_test.sh WEIR_SERVER WEIR_CLUSTER_PROBE
#
# Needs root (CI runs as root). Without it the test FAILS, saying so: a test
# that cannot run is not a test that passed.
set -euo pipefail

SERVER=${1:?usage: netns_cluster_test.sh WEIR_SERVER WEIR_CLUSTER_PROBE}
PROBE=${2:?usage: netns_cluster_test.sh WEIR_SERVER WEIR_CLUSTER_PROBE}

fail() {
  echo "netns_cluster_test: FAIL: $*" >&2
  exit 1
}

if [[ $(id -u) -ne 0 ]]; then
  fail "creating network namespaces needs root (uid 0; this is uid $(id -u)); CI runs as root"
fi
command -v ip >/dev/null || fail "the 'ip' command (iproute2) is missing"

PREFIX="weir$$"
SWITCH="$PREFIX-sw"
HOSTS=("$PREFIX-h0" "$PREFIX-h1" "$PREFIX-h2")
ADDRESSES=(10.213.0.1 10.213.0.2 10.213.0.3)
PORT=2222
CLUSTER="worker=${ADDRESSES[0]}:$PORT,${ADDRESSES[1]}:$PORT;ps=${ADDRESSES[2]}:$PORT"
TASKS=("worker 0" "worker 1" "ps 0")
DIR=$(mktemp -d /tmp/netns_cluster_test.XXXXXX)
PIDS=()

cleanup() {
  local status=$?
  for pid in "${PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  for ns in "${HOSTS[@]}" "$SWITCH"; do ip netns del "$ns" 2>/dev/null || true; done
  if [[ $status -ne 0 ]]; then
    for log in "$DIR"/*.log; do
      [[ -f $log ]] && { echo "--- $log"; cat "$log"; }
    done >&2
  fi
  rm -rf "$DIR"
  exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "netns_cluster_test: namespaces $SWITCH ${HOSTS[*]}, cluster $CLUSTER"
ip netns add "$SWITCH" || fail "ip netns add $SWITCH failed"
ip -n "$SWITCH" link add br0 type bridge
ip -n "$SWITCH" link set br0 up
for i in 0 1 2; do
  ns=${HOSTS[$i]}
  ip netns add "$ns" || fail "ip netns add $ns failed"
  # One veth pair: "port$i" on the switch's bridge, "eth0" in the host.
  ip -n "$SWITCH" link add "port$i" type veth peer name eth0 netns "$ns"
  ip -n "$SWITCH" link set "port$i" master br0
  ip -n "$SWITCH" link set "port$i" up
  ip -n "$ns" addr add "${ADDRESSES[$i]}/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
done

for i in 0 1 2; do
  read -r job task <<<"${TASKS[$i]}"
  ip netns exec "${HOSTS[$i]}" "$SERVER" --cluster "$CLUSTER" --job "$job" --task "$task" \
    --host "${ADDRESSES[$i]}" --intra-op-threads 1 --address-file "$DIR/address$i" \
    --session-lease-ms 4000 \
    2>"$DIR/server$i.log" &
  PIDS+=($!)
done
for i in 0 1 2; do
  for _ in $(seq 200); do
    [[ -s $DIR/address$i ]] && break
    kill -0 "${PIDS[$i]}" 2>/dev/null || fail "the server of ${TASKS[$i]} exited"
    sleep 0.1
  done
  [[ $(cat "$DIR/address$i" 2>/dev/null) == "${ADDRESSES[$i]}:$PORT" ]] ||
    fail "the server of ${TASKS[$i]} did not report ${ADDRESSES[$i]}:$PORT in 20 s"
done

# Every task answers from the other hosts' namespaces.
for i in 0 1; do
  out=$(ip netns exec "${HOSTS[$i]}" "$PROBE" --cluster "$CLUSTER" --once) ||
    fail "from ${HOSTS[$i]}: $out"
  [[ $out == healthy ]] || fail "from ${HOSTS[$i]}: $out"
done
echo "netns_cluster_test: every task reachable across namespaces"
# The servers bound their namespace address, not loopback.
if ip netns exec "${HOSTS[0]}" "$PROBE" --cluster "worker=127.0.0.1:$PORT" --once \
  --timeout-ms 500 >/dev/null; then
  fail "a server answered on loopback; it should listen only on its host address"
fi

# Train across the hosts from host 0; the probe checks the loss and where
# the variables live, prints "trained: ...", then trains on until a step
# fails.
ip netns exec "${HOSTS[0]}" "$PROBE" --train "grpc://${ADDRESSES[0]}:$PORT" --steps 300 \
  --min-loss-drop 10 --limit-s 30 >"$DIR/train.log" 2>&1 &
TRAINER=$!
PIDS+=("$TRAINER")
train_start=$(date +%s%N)
for _ in $(seq 400); do
  grep -q "^trained:" "$DIR/train.log" && break
  kill -0 $TRAINER 2>/dev/null || break
  sleep 0.1
done
grep -q "^trained:" "$DIR/train.log" || fail "training across the hosts: $(cat "$DIR/train.log")"
echo "netns_cluster_test: $(grep "^trained:" "$DIR/train.log")" \
  "($(( ($(date +%s%N) - train_start) / 1000000 )) ms)"

# Watch from host 0, then cut host 2's link (the ps, during training).
ip netns exec "${HOSTS[0]}" "$PROBE" --cluster "$CLUSTER" --watch --interval-ms 500 \
  --timeout-ms 1500 --limit-s 20 >"$DIR/watch.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do
  grep -q watching "$DIR/watch.log" && break
  sleep 0.1
done
grep -q watching "$DIR/watch.log" || fail "the watching probe did not start"
sleep 1  # a few healthy rounds
grep -q FAILED "$DIR/watch.log" && fail "a failure before the cut: $(cat "$DIR/watch.log")"

cut_ns=$(date +%s%N)
ip -n "${HOSTS[2]}" link set eth0 down
detected=""
step_failed=""
while (( ($(date +%s%N) - cut_ns) / 1000000 < 10000 )); do
  if [[ -z $detected ]] && grep -q FAILED "$DIR/watch.log"; then
    detected=$(( ($(date +%s%N) - cut_ns) / 1000000 ))
  fi
  if [[ -z $step_failed ]] && grep -q FAILED "$DIR/train.log"; then
    step_failed=$(( ($(date +%s%N) - cut_ns) / 1000000 ))
  fi
  [[ -n $detected && -n $step_failed ]] && break
  sleep 0.02
done
[[ -n $step_failed ]] ||
  fail "no training step failed within 10 s of the cut: $(cat "$DIR/train.log")"
step_message=$(grep FAILED "$DIR/train.log")
echo "netns_cluster_test: the training step failed in $step_failed ms: $step_message"
(( step_failed < 5000 )) || fail "the training step failed after $step_failed ms (the limit is 5000)"
[[ $step_message == *"Unavailable"* ]] || fail "the training step's error is not Unavailable: $step_message"
[[ $step_message == *"task /job:ps/replica:0/task:0 at ${ADDRESSES[2]}:$PORT"* ]] ||
  fail "the training step's error does not name /job:ps/replica:0/task:0 at ${ADDRESSES[2]}:$PORT: $step_message"
for _ in $(seq 100); do
  kill -0 $TRAINER 2>/dev/null || break
  sleep 0.02
done
kill -0 $TRAINER 2>/dev/null && fail "the trainer did not exit within 2 s of its failed step (a hang)"
wait $TRAINER && trainer_status=0 || trainer_status=$?
(( trainer_status == 2 )) || fail "the trainer exited $trainer_status, not 2 (a failed step): $(cat "$DIR/train.log")"
for i in 0 1; do
  kill -0 "${PIDS[$i]}" 2>/dev/null || fail "the server of ${TASKS[$i]} died when the ps was cut off"
done
[[ -n $detected ]] || fail "no failure reported within 10 s of the cut: $(cat "$DIR/watch.log")"
message=$(grep FAILED "$DIR/watch.log")
echo "netns_cluster_test: detected in $detected ms: $message"
(( detected < 5000 )) || fail "detection took $detected ms (the limit is 5000)"
[[ $message == *"Unavailable"* ]] || fail "not Unavailable: $message"
[[ $message == *"task /job:ps/replica:0/task:0 at ${ADDRESSES[2]}:$PORT"* ]] ||
  fail "the message does not name /job:ps/replica:0/task:0 at ${ADDRESSES[2]}:$PORT: $message"

# Leases: host 2 back (a session waits out its connect timeout for a task
# that does not answer), then a step mastered on host 0, blocked in a
# dequeue on host 2 and a Recv on host 1 (its client on host 1), then host
# 0 cut off.
ip -n "${HOSTS[2]}" link set eth0 up
out=""
for _ in $(seq 100); do
  out=$(ip netns exec "${HOSTS[0]}" "$PROBE" --cluster "$CLUSTER" --once --timeout-ms 500 2>&1) &&
    break
  sleep 0.1
done
[[ $out == healthy ]] || fail "host 2 did not come back: $out"
# The training session failed with the ps cut off; its master deleted it on
# the hosts it could reach, and host 2 drops it a lease (4 s) after its last
# renewal, which can be one sent before the cut and delivered by TCP's
# retransmission after the link came back (so seconds later). Wait for that
# drop (at most 20 s), then count only the drops that come after.
declare -A drops_before
for _ in $(seq 400); do
  drops_before[2]=$(grep -c "dropped worker session" "$DIR/server2.log" || true)
  (( drops_before[2] >= 1 )) && break
  sleep 0.05
done
(( drops_before[2] >= 1 )) ||
  fail "host 2 kept the failed training session for 20 s: $(cat "$DIR/server2.log")"
drops_before[1]=$(grep -c "dropped worker session" "$DIR/server1.log" || true)
new_drops() {  # new_drops HOST: the drop lines host HOST logged since the count above
  grep "dropped worker session" "$DIR/server$1.log" | tail -n "+$((drops_before[$1] + 1))"
}
ip netns exec "${HOSTS[1]}" "$PROBE" --hold-step "grpc://${ADDRESSES[0]}:$PORT" \
  --on /job:ps/task:0 --fetch-on /job:worker/task:1 >"$DIR/hold.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do
  grep -q holding "$DIR/hold.log" && break
  sleep 0.1
done
grep -q holding "$DIR/hold.log" || fail "the held step did not start: $(cat "$DIR/hold.log")"
sleep 1  # renewed a few times
for i in 1 2; do
  [[ -z $(new_drops $i) ]] || fail "host $i dropped the session early: $(new_drops $i)"
done
cut_ns=$(date +%s%N)
ip -n "${HOSTS[0]}" link set eth0 down
dropped=""
while (( ($(date +%s%N) - cut_ns) / 1000000 < 10000 )); do
  if [[ -n $(new_drops 1) ]]; then
    dropped=$(( ($(date +%s%N) - cut_ns) / 1000000 ))
    break
  fi
  sleep 0.02
done
[[ -n $dropped ]] || fail "host 1 kept the session of its cut-off master for 10 s"
echo "netns_cluster_test: host 1 dropped the session $dropped ms after its master's host was cut"
# The last renewal came at most an interval (0.5 s) before the cut.
(( dropped > 3000 && dropped < 5500 )) || fail "dropped $dropped ms after the cut (lease 4000 ms)"
sleep 0.5  # host 2's lease ends at about the same time
for i in 1 2; do
  line=$(new_drops $i)
  [[ -n $line ]] || fail "host $i kept the session: $(cat "$DIR/server$i.log")"
  echo "netns_cluster_test: host $i: $line"
  [[ $line == *"its master (/job:worker/replica:0/task:0)"* ]] || fail "no master named: $line"
done
# Host 2's part waits in the dequeue until its lease ends it; host 1's, in a
# Recv from host 2, ends with its own lease or with host 2's abort, which
# can come a few ms first (both leases were renewed by one round).
line=$(new_drops 2)
[[ $line == *"aborted 1 running step"* ]] || fail "host 2's part was not aborted: $line"
# The client's step: no deadline of its own, ended by its channel's
# keepalive (the master's host answers no ping).
ended=""
while (( ($(date +%s%N) - cut_ns) / 1000000 < 20000 )); do
  if grep -q "step ended" "$DIR/hold.log"; then
    ended=$(( ($(date +%s%N) - cut_ns) / 1000000 ))
    break
  fi
  sleep 0.05
done
[[ -n $ended ]] || fail "the client's step still waits 20 s after its master's host was cut"
echo "netns_cluster_test: the client's step ended $ended ms after the cut: $(grep "step ended" "$DIR/hold.log")"
(( ended < 12000 )) || fail "the client's step ended $ended ms after the cut (keepalive 5 s + 5 s)"
grep -q "step ended: Unavailable" "$DIR/hold.log" || fail "not Unavailable: $(cat "$DIR/hold.log")"
echo "netns_cluster_test: PASS"
