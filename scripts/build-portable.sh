#!/usr/bin/env bash
# Builds the portable zmqperf: a release binary that starts on any Linux with glibc 2.28 or
# newer (RHEL 8, Ubuntu 20.04, Debian 10) and needs no C++ runtime (libstdc++, libgcc_s) at
# run time, so that it can be copied, or shipped by zmqperf itself (`ship = true`), to the
# hosts of a multi-host run. docs/hosts.md ("Shipping") says why it is built this way.
#
#   scripts/build-portable.sh            -> target/portable/zmqperf (stripped), its path printed last
#   scripts/build-portable.sh --profile portable-check
#                                        -> target/portable/portable-check/zmqperf: the same toolchain,
#                                           glibc and link, built with Cargo.toml's cheaper
#                                           profile (what tests/portable.rs checks); the
#                                           default, release, is the build users get
#
# How: cargo-zigbuild links against glibc 2.28's symbol versions with zig's C/C++ compilers
# (zig links its own libc++ statically). Both come from PyPI (the `ziglang` and
# `cargo-zigbuild` wheels, pinned below) and are installed by this script, once, into a
# virtual environment under target/portable-tools/ (CI keeps target/ between steps of a run).
# libzmq's CMake gets a *native* toolchain file that only names zig's compilers: the
# toolchain file cargo-zigbuild would give it sets CMAKE_SYSTEM_NAME, so CMake believes it
# cross-compiles, skips its run-time probes and silently drops SOCK_CLOEXEC, SO_KEEPALIVE,
# TCP_KEEP* and TIPC (tests/portable.rs compares the features with the normal build's).
# The link asks for a GNU build-id (zmqperf names builds by it; zig's linker adds none
# unless asked).
#
# The build has its own target folder (target/portable-build), so it never waits on, or
# invalidates, the normal build's. Progress goes to stderr; the output path to stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
case "$TARGET" in /*) ;; *) TARGET=$ROOT/$TARGET ;; esac
TOOLS=$TARGET/portable-tools
OUT=$TARGET/portable
GLIBC=2.28
ZIG_VERSION=0.17.0
ZIGBUILD_VERSION=0.24.0
say() { echo "build-portable: $*" >&2; }
die() { say "error: $*"; exit 1; }

PROFILE=release
while [ $# -gt 0 ]; do
  case "$1" in
    --profile)
      [ $# -ge 2 ] || die "--profile needs a name: a profile of Cargo.toml (release, portable-check)"
      PROFILE=$2
      shift 2
      ;;
    *) die "unknown argument '$1': the only option is --profile NAME (default release)" ;;
  esac
done
case "$PROFILE" in
  release) ;;
  *[!A-Za-z0-9_-]* | "") die "--profile '$PROFILE': a profile name is letters, digits, '-' and '_'" ;;
  *) OUT=$TARGET/portable/$PROFILE ;;
esac

HOST=$(rustc -vV | sed -n 's/^host: //p')
case "$HOST" in
  *-unknown-linux-gnu) ;;
  *) die "the portable build is for Linux glibc hosts; this one is $HOST" ;;
esac

# 1. The tools, once: zig and cargo-zigbuild from PyPI in a venv of their own.
VENV=$TOOLS/venv
STAMP=$TOOLS/installed-$ZIG_VERSION-$ZIGBUILD_VERSION
if [ ! -e "$STAMP" ]; then
  say "installing ziglang $ZIG_VERSION and cargo-zigbuild $ZIGBUILD_VERSION from PyPI into $VENV"
  command -v python3 >/dev/null || die "python3 is needed to install zig (apt-get install python3 python3-venv)"
  rm -rf "$VENV"
  mkdir -p "$TOOLS"
  python3 -m venv "$VENV" ||
    die "python3 -m venv failed: install python3-venv (Debian: apt-get install python3-venv)"
  "$VENV/bin/python3" -m pip install --quiet --disable-pip-version-check \
    "ziglang==$ZIG_VERSION" "cargo-zigbuild==$ZIGBUILD_VERSION" >&2 ||
    die "pip could not install ziglang==$ZIG_VERSION and cargo-zigbuild==$ZIGBUILD_VERSION (is PyPI reachable?)"
  touch "$STAMP"
fi
# cargo-zigbuild runs `python3 -m ziglang` when no `zig` is on PATH: the venv's python3 has it.
export PATH=$VENV/bin:$PATH
[ -x "$VENV/bin/cargo-zigbuild" ] || die "$VENV/bin/cargo-zigbuild is missing: rm -rf $TOOLS and run again"
say "zig $(python3 -m ziglang version), $(cargo-zigbuild --version 2>/dev/null || echo cargo-zigbuild)"

# 2. A native CMake toolchain file: zig's compilers, nothing that says "cross-compiling".
T=${HOST//-/_}
TOOLCHAIN=$TOOLS/native-toolchain.cmake
cat > "$TOOLCHAIN.new" <<CMAKE
# Written by scripts/build-portable.sh: zig's compilers as a *native* toolchain, so libzmq's
# CMake runs its run-time probes (a CMAKE_SYSTEM_NAME here would switch them off).
set(CMAKE_C_COMPILER \$ENV{CC_$T})
set(CMAKE_CXX_COMPILER \$ENV{CXX_$T})
set(CMAKE_C_LINKER_DEPFILE_SUPPORTED FALSE)
set(CMAKE_CXX_LINKER_DEPFILE_SUPPORTED FALSE)
CMAKE
# Rewritten only when it changes, so CMake's configuration is not redone for nothing.
if cmp -s "$TOOLCHAIN.new" "$TOOLCHAIN"; then rm "$TOOLCHAIN.new"; else mv "$TOOLCHAIN.new" "$TOOLCHAIN"; fi

# 3. The build.
say "cargo zigbuild --profile $PROFILE --target $HOST.$GLIBC (minutes from scratch; incremental after)"
start=$(date +%s)
env "CMAKE_TOOLCHAIN_FILE_$T=$TOOLCHAIN" \
  RUSTFLAGS="${RUSTFLAGS:-} -C link-arg=-Wl,--build-id=sha1" \
  cargo zigbuild --profile "$PROFILE" --locked --target "$HOST.$GLIBC" --target-dir "$TARGET/portable-build" >&2 ||
  die "cargo zigbuild failed (above)"
BUILT=$TARGET/portable-build/$HOST/$PROFILE/zmqperf
[ -x "$BUILT" ] || die "cargo zigbuild left no $BUILT"

# 4. The output: stripped (the GNU build-id survives), as a user would copy it.
mkdir -p "$OUT"
if command -v strip >/dev/null; then
  strip -o "$OUT/zmqperf.new" "$BUILT"
else
  say "strip (binutils) not found: target/portable/zmqperf keeps its debug information"
  cp "$BUILT" "$OUT/zmqperf.new"
fi
chmod +x "$OUT/zmqperf.new"
mv "$OUT/zmqperf.new" "$OUT/zmqperf"
say "built in $(( $(date +%s) - start )) s: $OUT/zmqperf ($(du -h "$OUT/zmqperf" | cut -f1)), $("$OUT/zmqperf" --version | grep '^build-id:' || echo 'no build-id line')"
echo "$OUT/zmqperf"
