#!/bin/sh
# Builds scripts/header-layout.c against Debian's libzmq (libzmq3-dev) and runs it:
#   scripts/header-layout.sh [ROUNDS] [COUNT] [SIZE]
set -e
here=$(dirname "$0")
out=${TMPDIR:-/tmp}/zmqperf-header-layout
cc -O2 -o "$out" "$here/header-layout.c" -lzmq -lpthread -lm
exec "$out" "$@"
