#!/usr/bin/env bash
# The main job for now: one latency and one throughput measurement over tcp loopback, with
# the full distribution, using zmqperf's libzmq-compatible pairs.
#
# usage: scripts/loopback.sh [message-size] [roundtrips] [messages]   (default 64 20000 1M)
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-64}
roundtrips=${2:-20000}
messages=${3:-1M}
cargo build --release --quiet
bin=target/release/zmqperf
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pair() { # local-cmd remote-cmd count [flags for both sides...]
  local local_cmd=$1 remote_cmd=$2 count=$3
  shift 3
  "$bin" "$local_cmd" 'tcp://127.0.0.1:*' "$size" "$count" --timeout 10s "$@" >"$tmp/local.out" 2>"$tmp/local.err" &
  local pid=$!
  local ep=""
  for _ in $(seq 1 100); do
    ep=$(grep -o 'tcp://[0-9.]*:[0-9]*' "$tmp/local.err" 2>/dev/null || true)
    [ -n "$ep" ] && break
    sleep 0.05
  done
  [ -n "$ep" ] || { cat "$tmp/local.err" >&2; kill "$pid" 2>/dev/null; exit 1; }
  "$bin" "$remote_cmd" "$ep" "$size" "$count" --timeout 10s "$@"
  wait "$pid"
  cat "$tmp/local.out"
}

echo "== latency: REQ/REP over tcp loopback, $size B, $roundtrips round trips"
pair local_lat remote_lat "$roundtrips" --detail
echo
echo "== throughput: PUSH/PULL over tcp loopback, $size B, $messages messages"
pair local_thr remote_thr "$messages" --detail
