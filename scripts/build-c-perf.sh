#!/usr/bin/env bash
# Builds libzmq's own perf tools (local_lat, remote_lat, local_thr, remote_thr, inproc_lat,
# inproc_thr) from the sources in the zeromq-src crate, linked against the very libzmq.a
# that zmqperf links, so both sides of a comparison run the same library.
#
# usage: scripts/build-c-perf.sh [release|debug] [--no-cargo]    (default: release)
#   --no-cargo: do not run cargo (the tests call it while cargo already built everything).
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

# The zeromq-src version cargo resolved, from Cargo.lock, and its unpacked sources.
version=$(awk '/^name = "zeromq-src"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
[ -n "$version" ] || { echo "build-c-perf: zeromq-src is not in Cargo.lock" >&2; exit 1; }
src=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"zeromq-src-$version" 2>/dev/null | head -n 1 || true)
[ -n "$src" ] || { echo "build-c-perf: sources of zeromq-src $version not found under ${CARGO_HOME:-$HOME/.cargo}/registry/src" >&2; exit 1; }
perf="$src/vendor/perf"
[ -d "$perf" ] || { echo "build-c-perf: no perf sources at $perf" >&2; exit 1; }

lib=$(ls -t "$target/$profile"/build/zmq-sys-*/out/lib/libzmq.a 2>/dev/null | head -n 1 || true)
[ -n "$lib" ] || { echo "build-c-perf: libzmq.a not found under $target/$profile/build; did cargo build succeed?" >&2; exit 1; }

out="$target/c-perf/$profile"
mkdir -p "$out"
for tool in local_lat remote_lat local_thr remote_thr inproc_lat inproc_thr; do
  if [ ! -x "$out/$tool" ] || [ "$perf/$tool.cpp" -nt "$out/$tool" ] || [ "$lib" -nt "$out/$tool" ]; then
    g++ -O2 -std=c++11 -I"$src/vendor/include" -I"$(dirname "$(dirname "$lib")")" -I"$src/vendor/src" -o "$out/$tool" "$perf/$tool.cpp" "$lib" -lpthread
  fi
done
echo "$out"
