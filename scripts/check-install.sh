#!/usr/bin/env bash
# Checks the README's Install section by doing it, on this machine, into temporary folders:
#
# 1. `cargo install --locked --path .` (with --debug and the tests' target folder, so it reuses
#    the build `cargo test` made instead of a release build from scratch; the release profile
#    is the tarball's), then the installed binary runs;
# 2. the release tarball (scripts/release.sh, with the portable-check profile the tests'
#    portable build already made): unpacked as a prefix, its binary needs no glibc newer than
#    2.28 and no C++ runtime, finds its peers beside itself, its manual pages render without a
#    warning and its bash completions parse.
# (`cargo install --git` is the same manifest and lock file fetched from the repository; this
# machine has no access to a git host, so it is not run here.)
#
# usage: scripts/check-install.sh [--tarball PATH]     exit 0 when everything holds
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TARBALL=
[ "${1:-}" = --tarball ] && TARBALL=${2:?--tarball needs a path}
say() { echo "check-install: $*" >&2; }
fail() { say "FAILED: $*"; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# 1. cargo install
say "cargo install --locked --path . --debug --root $TMP/cargo"
CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target} \
  cargo install --locked --path . --debug --root "$TMP/cargo" --quiet
Z=$TMP/cargo/bin/zmqperf
[ -x "$Z" ] || fail "cargo install left no $Z"
"$Z" --version | head -n 1 | grep -q '^zmqperf ' || fail "$Z --version"
"$Z" inproc_thr 64 10000 >/dev/null || fail "$Z inproc_thr 64 10000"
say "installed by cargo: $("$Z" --version | head -n 1)"

# 2. the release tarball
if [ -z "$TARBALL" ]; then
  TARBALL=$(bash scripts/release.sh --profile portable-check --out "$TMP/dist" | tail -n 1)
fi
[ -f "$TARBALL" ] || fail "no tarball at $TARBALL"
mkdir -p "$TMP/prefix"
tar -xzf "$TARBALL" -C "$TMP/prefix" --strip-components=1
Z=$TMP/prefix/bin/zmqperf
[ -x "$Z" ] || fail "the tarball has no bin/zmqperf"
"$Z" --version | head -n 1 | grep -q '^zmqperf ' || fail "the tarball's zmqperf --version"
"$Z" inproc_thr 64 10000 >/dev/null || fail "the tarball's zmqperf inproc_thr 64 10000"

# No glibc symbol version newer than 2.28, no C++ runtime.
newest=$(readelf -V --wide "$Z" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -n 1)
[ -n "$newest" ] || fail "no GLIBC symbol versions read from $Z"
[ "$(printf '%s\n2.28\n' "$newest" | sort -V | tail -n 1)" = 2.28 ] ||
  fail "the tarball's binary needs GLIBC_$newest (at most 2.28)"
needed=$(readelf -d "$Z" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p')
for lib in $needed; do
  case "$lib" in
    libc.so.6|libm.so.6|libpthread.so.0|libdl.so.2|ld-linux-x86-64.so.2|librt.so.1) ;;
    *) fail "the tarball's binary needs $lib (only libc, libm, libpthread, libdl, librt, ld-linux)" ;;
  esac
done

# Its peers, beside it: the peers folder of the tarball, not the source tree's.
(unset ZMQPERF_PEERS_DIR; "$Z" peers list) > "$TMP/peers.txt" || fail "the tarball's zmqperf peers list"
grep -q '^pyzmq ' "$TMP/peers.txt" || fail "peers list does not list pyzmq: $(cat "$TMP/peers.txt")"
[ -f "$TMP/prefix/share/zmqperf/peers/pyzmq/peer.toml" ] || fail "the tarball has no share/zmqperf/peers"

# Manual pages and completions.
pages=$(ls "$TMP/prefix/share/man/man1" | wc -l)
[ "$pages" -gt 20 ] || fail "the tarball has $pages manual pages"
for p in "$TMP/prefix/share/man/man1"/*.1; do
  warn=$(MANWIDTH=80 man --warnings -l "$p" 2>&1 >/dev/null) || fail "man $p"
  [ -z "$warn" ] || fail "man $p warns: $warn"
done
bash -n "$TMP/prefix/share/bash-completion/completions/zmqperf" || fail "bash -n on the completions"
[ -s "$TMP/prefix/share/zsh/site-functions/_zmqperf" ] || fail "no zsh completions"
[ -s "$TMP/prefix/share/fish/vendor_completions.d/zmqperf.fish" ] || fail "no fish completions"

say "ok: cargo install and the tarball ($(basename "$TARBALL"): glibc <= $newest, $pages manual pages, peers beside the binary)"
