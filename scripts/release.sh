#!/usr/bin/env bash
# The release tarball: the portable zmqperf (scripts/build-portable.sh: glibc 2.28, no C++
# runtime, stripped) with everything an installation needs beside it, laid out as a prefix:
#
#   zmqperf-VERSION-x86_64-linux-gnu/
#     bin/zmqperf
#     share/man/man1/zmqperf.1, zmqperf-COMMAND.1      (zmqperf man --dir)
#     share/bash-completion/completions/zmqperf         (zmqperf completions bash)
#     share/zsh/site-functions/_zmqperf
#     share/fish/vendor_completions.d/zmqperf.fish
#     share/zmqperf/peers/, spec/, topologies/, schema/ (the peers' sources, the header
#                                                        vectors, the built-in graphs, the
#                                                        JSON schemas)
#     share/doc/zmqperf/README.md, docs/
#
# Unpacked anywhere (e.g. `tar -xzf ... -C ~/.local --strip-components=1`), bin/zmqperf
# finds its peers in ../share/zmqperf/peers by itself.
#
# usage: scripts/release.sh [--profile release|portable-check] [--bin PATH] [--out DIR]
#   --profile  the Cargo profile of the portable build (default: release, what users get)
#   --bin      package this portable binary instead of building one
#   --out      where the tarball goes (default: target/dist)
# prints the tarball's path on its last line; progress goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PROFILE=release
BIN=
OUT=$ROOT/target/dist
say() { echo "release: $*" >&2; }
die() { say "error: $*"; exit 1; }
while [ $# -gt 0 ]; do
  case "$1" in
    --profile) PROFILE=${2:?--profile needs a value}; shift 2 ;;
    --bin) BIN=${2:?--bin needs a path}; shift 2 ;;
    --out) OUT=${2:?--out needs a folder}; shift 2 ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done

if [ -z "$BIN" ]; then
  say "building the portable binary (profile $PROFILE; minutes from scratch)"
  BIN=$(bash scripts/build-portable.sh --profile "$PROFILE" | tail -n 1)
fi
[ -x "$BIN" ] || die "no executable at $BIN"

VERSION=$("$BIN" --version | head -n 1 | awk '{print $2}')
[ -n "$VERSION" ] || die "$BIN --version printed no version"
NAME=zmqperf-$VERSION-x86_64-linux-gnu
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
P=$STAGE/$NAME

mkdir -p "$P/bin" "$P/share/man/man1" "$P/share/bash-completion/completions" \
  "$P/share/zsh/site-functions" "$P/share/fish/vendor_completions.d" \
  "$P/share/zmqperf" "$P/share/doc/zmqperf"
cp "$BIN" "$P/bin/zmqperf"
strip "$P/bin/zmqperf" 2>/dev/null || say "strip failed; the binary is packaged as built"
Z=$P/bin/zmqperf
"$Z" man --dir "$P/share/man/man1" 2>/dev/null
"$Z" completions bash > "$P/share/bash-completion/completions/zmqperf"
"$Z" completions zsh > "$P/share/zsh/site-functions/_zmqperf"
"$Z" completions fish > "$P/share/fish/vendor_completions.d/zmqperf.fish"
# The files git tracks only: no build output a peer's setup may have left in the tree.
git -C "$ROOT" ls-files -z peers spec topologies schema \
  | tar -C "$ROOT" --null -T - -cf - | tar -C "$P/share/zmqperf" -xf -
cp README.md "$P/share/doc/zmqperf/"
cp -r docs "$P/share/doc/zmqperf/docs"

mkdir -p "$OUT"
TARBALL=$OUT/$NAME.tar.gz
tar -C "$STAGE" -czf "$TARBALL" "$NAME"
say "$(du -h "$TARBALL" | cut -f1) $TARBALL ($(du -h "$P/bin/zmqperf" | cut -f1) binary)"
echo "$TARBALL"
