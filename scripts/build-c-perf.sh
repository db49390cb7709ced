#!/usr/bin/env bash
# Builds libzmq's own perf tools (local_lat, remote_lat, local_thr, remote_thr, inproc_lat,
# inproc_thr) from the libzmq sources build.rs compiled, linked against the very libzmq.a
# (and libsodium.a, for CURVE) that zmqperf links, so both sides of a comparison run the
# same library.
#
# usage: scripts/build-c-perf.sh [release|debug] [--no-cargo]    (default: release)
#   --no-cargo: do not run cargo (the tests call it while cargo already built everything).
# Also builds scripts/c-inproc-header.c beside them (scripts/bench-header-cost.py).
# prints the folder holding the binaries on its last line.
set -euo pipefail
profile=${1:-release}
cd "$(dirname "$0")/.."
root=$(pwd)
target=${CARGO_TARGET_DIR:-$root/target}

if [ "${2:-}" != --no-cargo ]; then
  if [ "$profile" = release ]; then
    cargo build --release --quiet
  else
    cargo build --quiet
  fi
fi

# What build.rs built: libzmq.a (libzmq's own CMake build), the libsodium.a it needs for
# CURVE, the installed headers and the libzmq source tree whose perf/ folder holds the tools.
env_file=$(ls -t "$target/$profile"/build/zmqperf-*/out/libzmq-build.env 2>/dev/null | head -n 1 || true)
[ -n "$env_file" ] || { echo "build-c-perf: libzmq-build.env not found under $target/$profile/build; did cargo build succeed?" >&2; exit 1; }
# shellcheck disable=SC1090
. "$env_file"
lib=$LIBZMQ_A
perf="$LIBZMQ_SRC/perf"
[ -d "$perf" ] || { echo "build-c-perf: no perf sources at $perf" >&2; exit 1; }

out="$target/c-perf/$profile"
mkdir -p "$out"
for tool in local_lat remote_lat local_thr remote_thr inproc_lat inproc_thr; do
  if [ ! -x "$out/$tool" ] || [ "$perf/$tool.cpp" -nt "$out/$tool" ] || [ "$lib" -nt "$out/$tool" ]; then
    g++ -O2 -std=c++11 -I"$LIBZMQ_INCLUDE" -I"$LIBZMQ_PLATFORM" -I"$LIBZMQ_SRC/src" -o "$out/$tool" "$perf/$tool.cpp" "$lib" "$SODIUM_A" -lpthread
  fi
done
# The same inproc throughput with zmqperf's header, for scripts/bench-header-cost.py.
src="$root/scripts/c-inproc-header.c"
if [ ! -x "$out/c-inproc-header" ] || [ "$src" -nt "$out/c-inproc-header" ] || [ "$lib" -nt "$out/c-inproc-header" ]; then
  gcc -O2 -I"$LIBZMQ_INCLUDE" -o "$out/c-inproc-header" "$src" "$lib" "$SODIUM_A" -lstdc++ -lpthread -lm
fi
echo "$out"
