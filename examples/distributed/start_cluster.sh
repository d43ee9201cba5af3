#!/usr/bin/env bash
# Starts a local Weir cluster -- one ps task and one worker task, each a weir-server on a free
# loopback port under supervisor.py (which restarts it when it dies) -- waits until both listen,
# prints their addresses, and stops them on exit.
#
#   examples/distributed/start_cluster.sh [options] [-- COMMAND ARGS...]
#
# With a COMMAND it runs it with WEIR_PS_ADDRESS and WEIR_WORKER_ADDRESS set and stops the
# cluster when it ends (exiting with its status); without one it serves until SIGINT/SIGTERM.
#
# Options:
#   --server PATH        the weir-server binary (default: $WEIR_SERVER, else
#                        build/release/tools/weir-server of this repository)
#   --state-dir DIR      where the logs (ps.log, worker.log: supervisor and server output), pid
#                        files (ps.pid, worker.pid: the running servers), the servers' address
#                        files (ps.address, worker.address) and cluster.env go
#                        (default: a new temporary directory, kept)
#   --max-restarts N     restarts of each task before its supervisor gives up (default 5)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
server=${WEIR_SERVER:-$repo/build/release/tools/weir-server}
state_dir=""
max_restarts=5
while [[ $# -gt 0 ]]; do
  case $1 in
    --server) server=$2; shift 2 ;;
    --state-dir) state_dir=$2; shift 2 ;;
    --max-restarts) max_restarts=$2; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "start_cluster.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if [[ ! -x $server ]]; then
  echo "start_cluster.sh: no weir-server at '$server' (build the weir-server target or pass --server)" >&2
  exit 1
fi
if [[ -z $state_dir ]]; then
  state_dir=$(mktemp -d "${TMPDIR:-/tmp}/weir-cluster.XXXXXX")
fi
mkdir -p "$state_dir"

supervisors=()
command_pid=""
stop_supervisors() {
  if [[ ${#supervisors[@]} -gt 0 ]]; then
    kill -TERM "${supervisors[@]}" 2>/dev/null || true
    wait "${supervisors[@]}" 2>/dev/null || true
  fi
  supervisors=()
}
stop_cluster() {
  local status=$?
  trap - EXIT INT TERM
  if [[ -n $command_pid ]]; then
    kill -TERM "$command_pid" 2>/dev/null || true
    wait "$command_pid" 2>/dev/null || true
  fi
  if [[ ${#supervisors[@]} -gt 0 ]]; then
    stop_supervisors
    echo "cluster stopped (logs in $state_dir)" >&2
  fi
  exit "$status"
}
trap stop_cluster EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Starts both tasks on two free loopback ports (bound to port 0 at once, so they differ, and
# released; a server that restarts binds its port again: gRPC sets SO_REUSEADDR) and waits until
# each server has written its --address-file, which it does once it serves. Returns 1 when a
# server exits first (another process took its port between the pick and the bind), 2 after
# 30 s.
start_tasks() {
  read -r ps_port worker_port < <(python3 -c '
import socket
a, b = socket.socket(), socket.socket()
a.bind(("127.0.0.1", 0)); b.bind(("127.0.0.1", 0))
print(a.getsockname()[1], b.getsockname()[1])')
  ps_address=127.0.0.1:$ps_port
  worker_address=127.0.0.1:$worker_port
  local cluster="worker=$worker_address;ps=$ps_address" job try
  for job in ps worker; do
    rm -f "$state_dir/$job.address"
    python3 "$here/supervisor.py" --name "$job" --max-restarts "$max_restarts" \
      --pid-file "$state_dir/$job.pid" -- \
      "$server" --cluster "$cluster" --job "$job" --task 0 \
      --address-file "$state_dir/$job.address" >"$state_dir/$job.log" 2>&1 &
    supervisors+=($!)
  done
  for ((try = 0; try < 300; try++)); do
    if [[ -s $state_dir/ps.address && -s $state_dir/worker.address ]]; then return 0; fi
    if grep -q "exited with status" "$state_dir/ps.log" "$state_dir/worker.log"; then return 1; fi
    sleep 0.1
  done
  return 2
}

for attempt in 1 2 3; do
  status=0
  start_tasks || status=$?
  if ((status == 0)); then break; fi
  stop_supervisors
  if ((status == 2 || attempt == 3)); then
    echo "start_cluster.sh: the cluster did not come up (attempt $attempt); the tasks' logs:" >&2
    for job in ps worker; do tail -n 20 "$state_dir/$job.log" >&2; done
    exit 1
  fi
  echo "start_cluster.sh: a task could not start (its port was taken?): trying other ports" >&2
done

export WEIR_PS_ADDRESS=$ps_address WEIR_WORKER_ADDRESS=$worker_address
printf 'WEIR_PS_ADDRESS=%s\nWEIR_WORKER_ADDRESS=%s\n' "$ps_address" "$worker_address" \
  >"$state_dir/cluster.env"
echo "cluster ready: ps=$ps_address worker=$worker_address state=$state_dir"

if [[ $# -gt 0 ]]; then
  # In the background and waited for, so that SIGTERM stops the cluster at once.
  "$@" &
  command_pid=$!
  set +e
  wait "$command_pid"
  status=$?
  set -e
  command_pid=""
  exit "$status"
fi
# No command: serve until a signal, or until a supervisor gives up (then the other task stops
# too, and the exit status is that supervisor's).
wait -n "${supervisors[@]}"
