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
#                        files (ps.pid, worker.pid: the running servers) and cluster.env go
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

# Two free loopback ports: bound to port 0 at once (so they differ) and released. A server that
# restarts binds its port again (gRPC sets SO_REUSEADDR).
read -r ps_port worker_port < <(python3 -c '
import socket
a, b = socket.socket(), socket.socket()
a.bind(("127.0.0.1", 0)); b.bind(("127.0.0.1", 0))
print(a.getsockname()[1], b.getsockname()[1])')
ps_address=127.0.0.1:$ps_port
worker_address=127.0.0.1:$worker_port
cluster="worker=$worker_address;ps=$ps_address"

supervisors=()
command_pid=""
stop_cluster() {
  local status=$?
  trap - EXIT INT TERM
  if [[ -n $command_pid ]]; then
    kill -TERM "$command_pid" 2>/dev/null || true
    wait "$command_pid" 2>/dev/null || true
  fi
  if [[ ${#supervisors[@]} -gt 0 ]]; then
    kill -TERM "${supervisors[@]}" 2>/dev/null || true
    wait "${supervisors[@]}" 2>/dev/null || true
    echo "cluster stopped (logs in $state_dir)" >&2
  fi
  exit "$status"
}
trap stop_cluster EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

for job in ps worker; do
  python3 "$here/supervisor.py" --name "$job" --max-restarts "$max_restarts" \
    --pid-file "$state_dir/$job.pid" -- \
    "$server" --cluster "$cluster" --job "$job" --task 0 >"$state_dir/$job.log" 2>&1 &
  supervisors+=($!)
done

# Ready when both ports accept a connection (30 s at most).
for address in "$ps_address" "$worker_address"; do
  for ((try = 0; ; try++)); do
    if (exec 3<>"/dev/tcp/${address%:*}/${address##*:}") 2>/dev/null; then break; fi
    if ((try >= 300)); then
      echo "start_cluster.sh: $address did not listen within 30 s; its log:" >&2
      for job in ps worker; do tail -n 20 "$state_dir/$job.log" >&2; done
      exit 1
    fi
    sleep 0.1
  done
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
